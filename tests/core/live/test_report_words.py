"""The `.md` report and the `run` lines never print Python's None, and count in words right ("1 frame",
"2 frames"), on every scenario of every format, finished, failed, stalled or cut short."""
from __future__ import annotations

import asyncio
import re

import pytest

from core.cli.run import summary_line
from core.live.capture import markdown_report
from core.live.config import demo_providers
from core.live.recorder import prepare_runs
from core.live.request import PromptSpec
from core.live.transport import Session
from core.servers.emulator.scenarios import SCENARIOS

from tests.core.servers.emulator.conftest import PROMPT

NONE = re.compile(r"\bNone\b")
NOUNS = "frame|keepalive|chunk|byte|provider|finding|time|token|turn|choice|result"
SINGULAR_WRONG = re.compile(rf"(?<![\d.,])1 ({NOUNS})s\b")
PLURAL_WRONG = re.compile(rf"(?<![\d.,])(0|[2-9]|\d\d+|\d{{1,3}}(?:,\d{{3}})+) ({NOUNS})\b(?!s)")


def _problems(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if NONE.search(line) or SINGULAR_WRONG.search(line) or PLURAL_WRONG.search(line)]


@pytest.fixture(scope="module")
def every_scenario(emulator):
    async def go():
        out = {}
        for s in SCENARIOS:
            runs = prepare_runs(demo_providers(emulator, s), PromptSpec(PROMPT, max_tokens=40))
            await Session(runs, read_timeout=0.5 if s == "stall" else 10).run()
            out[s] = runs
        return out

    return asyncio.run(go())


@pytest.mark.slow
def test_no_none_and_right_plurals_in_the_report(every_scenario):
    for scenario, runs in every_scenario.items():
        report = markdown_report(runs)
        assert not _problems(report), (scenario, _problems(report))
        for r in runs:
            assert not _problems(summary_line(r)), (scenario, summary_line(r))


def test_the_checks_catch_what_they_should():
    assert _problems("reasoning None") and _problems("1 frames") and _problems("3 keepalive,")
    assert not _problems("1 frame, 3 frames, 1,024 bytes, 0.5 s, frame 1 (1 keepalive)")
