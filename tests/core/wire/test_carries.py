"""core.wire.carries: what a frame contributed, and its kinds, in every format (from the normalized events)."""
from __future__ import annotations

import json

import pytest

from core.wire.carries import KINDS, carries, events_by_frame, frame_kinds
from core.wire.encoders import encode_bytes
from core.wire.formats import FORMATS
from core.wire.pipeline import StreamDecoder
from core.wire.script import ScriptBlock, ScriptedReply, ScriptUsage


def _frames(fmt: str, reply: ScriptedReply) -> tuple[list, dict[int, list]]:
    d = StreamDecoder(fmt)
    options = {"include_usage": True} if fmt == "openai-chat" else {}   # (usage only when asked for)
    events = d.feed(encode_bytes(fmt, reply, **options)) + d.end()
    frames = [i for i in d.items if hasattr(i, "event")]
    return frames, events_by_frame(events)


TOOL = ScriptedReply(blocks=[ScriptBlock("text", ["Let me check."]),
                             ScriptBlock("tool_call", ['{"ci', 'ty":"Paris"}'], id="call_1", name="get_weather")],
                     usage=ScriptUsage(20, 13), finish="tool_calls")
THINK = ScriptedReply(blocks=[ScriptBlock("thinking", ["The sky", " blue"], signature="sig" * 20),
                              ScriptBlock("text", ["Paris"])], usage=ScriptUsage(20, 13))


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_frame_says_what_it_carried(fmt):
    frames, by_frame = _frames(fmt, TOOL)
    lines = [carries(by_frame.get(f.n, [])) for f in frames]
    joined = "\n".join(lines)
    assert 'text +"Let me check."' in joined
    args = json.dumps('{"ci')
    assert f"args +{args}" in joined or fmt == "gemini"          # Gemini sends whole argument objects
    assert "tool_call" in joined and "usage in 20 out 13" in joined
    assert "finish tool_calls" in joined
    assert all(line for line in lines)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_kind_filter_works_the_same_in_every_format(fmt):
    frames, by_frame = _frames(fmt, THINK)
    kinds = [frame_kinds(by_frame.get(f.n, [])) for f in frames]
    assert any("thinking" in k for k in kinds) and any("text" in k for k in kinds)
    assert any("usage" in k for k in kinds)
    assert all(k <= set(KINDS) for k in kinds)


def test_a_frame_that_produced_nothing_says_so():
    assert carries([]) == "(nothing)" and frame_kinds([]) == {"nothing"}


def test_keepalives_errors_and_diagnostics():
    d = StreamDecoder("anthropic")
    body = (b'event: ping\ndata: {"type": "ping"}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
            b'data: not json\n\n')
    by_frame = events_by_frame(d.feed(body) + d.end())
    assert "keepalive" in carries(by_frame[0]) and "keepalive" in frame_kinds(by_frame[0])
    assert carries(by_frame[1]).startswith("error overloaded_error: Overloaded") and "error" in frame_kinds(by_frame[1])
    assert "diagnostic data-not-json" in carries(by_frame[2]) and "diagnostic" in frame_kinds(by_frame[2])


def test_long_fragments_are_elided_and_quoted():
    from core.wire import events as ev
    line = carries([ev.TextDelta(0, 0, 'a "quoted" ' + "x" * 100)])
    assert line.startswith('text +"a \\"quoted\\"') and line.endswith('…"') and len(line) < 40
