"""The printed lines of a run opened from a recording that held no timing say `n/a`, not `0 ms`; `replay --headless`
of such a recording (at its original pace too) prints the same result and ends at once."""
from __future__ import annotations

import json
import subprocess
import sys

from core.cli.run import summary_line
from core.live.importers import parse_capture
from tests.core.live.test_importers import browser_har, cassette
from tests.core.live.test_timing import live_run
from tests.core.servers.tap.faulty import ANTHROPIC, BODY
from tests.corpus import ROOT


def test_the_line_of_a_cassette_run_says_na():
    line = summary_line(parse_capture(cassette([("openai-chat", BODY)]), "c.yaml").runs[0])
    assert "ttft n/a" in line and "total n/a" in line and "0 ms" not in line


def test_the_line_of_a_browsers_har_run_has_its_total_only():
    line = summary_line(parse_capture(browser_har([("anthropic", ANTHROPIC)]), "s.har").runs[0])
    assert "ttft n/a" in line and "total 121 ms" in line


def test_a_live_line_is_unchanged():
    line = summary_line(live_run())
    assert "ttft 50 ms" in line and "total 851 ms" in line


def test_headless_replay_of_a_cassette_at_its_own_pace(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(cassette([("openai-chat", BODY)]))
    want = parse_capture(path.read_bytes(), str(path)).runs[0].result()
    for speed in ([], ["--speed", "1"]):
        p = subprocess.run([sys.executable, "main.py", "replay", "--headless", *speed, str(path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        [got] = [json.loads(x) for x in p.stdout.splitlines()]
        assert got == want      # (the contract's shape: no key added)
