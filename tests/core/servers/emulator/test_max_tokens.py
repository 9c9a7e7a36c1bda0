"""max_tokens on every scenario, as the real APIs honour it: the reply stops at the limit with the format's own
"length" finish (length / max_tokens / MAX_TOKENS / incomplete) and reports the limit as its output."""
from __future__ import annotations

import asyncio

import pytest

from core.live.config import demo_providers
from core.live.request import PromptSpec
from core.live.transport import run_prompt
from core.servers.emulator.responder import Conversation
from core.servers.emulator.scenarios import SCENARIOS, build_plan, count_tokens, schedule
from core.wire.formats import FORMATS
from core.wire.pipeline import decode_bytes

from tests.core.servers.emulator.conftest import PROMPT

LIMIT = 12
RAW_LENGTH = {"openai-chat": "length", "openai-responses": "incomplete", "anthropic": "max_tokens",
              "gemini": "MAX_TOKENS"}
NO_REPLY = ("http-429", "http-500")            # an HTTP error: there is no reply to cut
CUT_SHORT = ("mid-stream-error", "drop", "stall")   # the fault ends the stream before any finish


def _decoded(fmt: str, scenario: str, conv: Conversation) -> dict:
    plan = build_plan(fmt, scenario, conv)
    if fmt == "openai-chat":
        plan.encode_options = {"include_usage": True}   # (as the request builder always asks)
    return decode_bytes(fmt, b"".join(data for _, data in schedule(fmt, plan, 0))).result()


def _content_tokens(result: dict) -> int:
    """The tokens of the reply's text, thinking and tool arguments, as the emulator counts them."""
    n = 0
    for b in result["blocks"]:
        if b["type"] == "tool_call":
            n += count_tokens(b["arguments"] or "") + 4
        else:
            n += count_tokens(b.get("text") or "")
    return n


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s not in NO_REPLY])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_scenario_stops_at_max_tokens(fmt, scenario):
    conv = Conversation(prompt=PROMPT, max_tokens=LIMIT, thinking=True)   # (thinking asked for: shown)
    full = build_plan(fmt, scenario, Conversation(prompt=PROMPT, thinking=True)).reply
    assert full.usage.output_tokens > LIMIT   # (each scenario says more than LIMIT tokens)
    got = _decoded(fmt, scenario, conv)
    assert got["blocks"] or (fmt == "gemini" and "tool" in scenario)   # (a call that does not fit is left out)
    assert _content_tokens(got) <= LIMIT
    if scenario == "no-terminator" and fmt in ("openai-responses", "gemini"):
        return   # (the finish rides on the end marker's event, which this scenario leaves out)
    if scenario in CUT_SHORT:
        assert got["finish_reason"]["canonical"] in (None, "error")   # no finish of its own: the fault ends it
        return
    assert got["finish_reason"]["canonical"] == "length", got["finish_reason"]
    assert got["finish_reason"]["raw"] == RAW_LENGTH[fmt]
    assert got["usage"]["output_tokens"] == LIMIT


@pytest.mark.parametrize("scenario", NO_REPLY)
def test_the_http_error_scenarios_have_no_reply_to_cut(scenario):
    assert build_plan("anthropic", scenario, Conversation(prompt=PROMPT, max_tokens=LIMIT)).reply is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_limit_above_the_reply_changes_nothing(fmt):
    full = build_plan(fmt, "text", Conversation(prompt=PROMPT))
    roomy = build_plan(fmt, "text", Conversation(prompt=PROMPT, max_tokens=full.reply.usage.output_tokens))
    assert roomy.reply.finish == "stop" and roomy.reply.blocks == full.reply.blocks


def test_each_of_several_choices_is_cut_on_its_own():
    conv = Conversation(prompt=PROMPT, n=3, max_tokens=8)
    got = _decoded("openai-chat", "text", conv)
    fins = got["finish_by_choice"] if "finish_by_choice" in got else None
    per_choice = {}
    for b in got["blocks"]:
        per_choice.setdefault(b.get("choice", 0), []).append(b)
    assert sorted(per_choice) == [0, 1, 2]
    for blocks in per_choice.values():
        assert sum(count_tokens(b["text"] or "") for b in blocks) <= 8
    assert got["finish_reason"]["canonical"] == "length"
    assert got["usage"]["output_tokens"] == 24
    if fins is not None:
        assert all(f["canonical"] == "length" for f in fins.values())


@pytest.mark.parametrize("scenario, limit", [("long", 50), ("firehose", 50), ("text", 6), ("tool-call", 8),
                                             ("thinking", 10)])
def test_run_with_max_tokens_stops_every_provider(emulator, scenario, limit):
    """`run --model long --max-tokens 50` gave 2,646 tokens and finish stop: now length, everywhere."""
    runs = asyncio.run(run_prompt(demo_providers(emulator, scenario), PromptSpec(PROMPT, max_tokens=limit),
                                  read_timeout=10))
    for r in runs:
        assert r.status == "done", (r.name, r.error)
        assert r.reply.finish.canonical == "length", (r.name, r.reply.finish)
        assert r.reply.usage.output_tokens == limit
