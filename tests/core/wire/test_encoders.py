"""Encoders: random scripted replies, encoded in every format, decode back to the same reply at every chunking;
and the framing details the real providers use (checked against the recordings in ../shared/corpus)."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core.wire.encoders import encode, encode_bytes
from core.wire.script import ScriptBlock, ScriptedReply, ScriptedError, ScriptIds, ScriptUsage
from core.wire.pipeline import decode_bytes

from core.wire.formats import FORMATS
from tests.corpus import CORPUS

CHUNKINGS = (None, 1, 3, 17, 256)

KINDS = {"openai-chat": ("text", "thinking", "tool_call", "refusal"),
         "openai-responses": ("text", "thinking", "tool_call", "refusal"),
         "anthropic": ("text", "thinking", "tool_call"),
         "gemini": ("text", "thinking", "tool_call")}

fragment = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
json_value = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6)
                          | st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
                          lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3), max_leaves=6)
args_object = st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8),
                              json_value, max_size=4)


@st.composite
def fragments_of(draw, text: str) -> list[str]:
    """`text` cut at random points into non-empty pieces."""
    if not text:
        return [text]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=min(8, len(text) - 1))))
    bounds = [0] + [c for c in cuts if 0 < c < len(text)] + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


@st.composite
def replies(draw, fmt: str) -> ScriptedReply:
    kinds: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        options = [k for k in KINDS[fmt] if not (kinds and kinds[-1] == k and k != "tool_call")]
        kinds.append(draw(st.sampled_from(options)))
    blocks = []
    for i, k in enumerate(kinds):
        if k == "tool_call":
            args = json.dumps(draw(args_object), ensure_ascii=draw(st.booleans()),
                              separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
            blocks.append(ScriptBlock("tool_call", draw(fragments_of(args)), id=f"call_{i:04d}abc",
                                      name=draw(st.sampled_from(["get_weather", "lookup", "sum_numbers"]))))
        else:
            sig = None
            if k == "thinking" and fmt in ("anthropic", "gemini") and draw(st.booleans()):
                sig = draw(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=4,
                                   max_size=60))
            blocks.append(ScriptBlock(k, draw(st.lists(fragment, min_size=1, max_size=6)), signature=sig))
    has_tools = any(b.kind == "tool_call" for b in blocks)
    finish = draw(st.sampled_from(["tool_calls", "length"] if has_tools else ["stop", "length", "content_filter"]))
    cache_read = draw(st.integers(0, 500))
    cache_write = draw(st.integers(0, 500)) if fmt == "anthropic" else 0
    inp = cache_read + cache_write + draw(st.integers(0, 5000))
    reasoning = draw(st.integers(0, 300))
    out = reasoning + draw(st.integers(0, 3000))
    usage = ScriptUsage(inp, out, cache_read, cache_write, reasoning)
    return ScriptedReply(blocks=blocks, usage=usage, finish=finish,
                         ids=ScriptIds(seed=draw(st.integers(0, 2**32)), model="emulator-test"))


def expected_blocks(fmt: str, reply: ScriptedReply) -> list[dict]:
    """What `decode` must report for this reply in this format."""
    out: list[dict] = []
    by_kind: dict[str, dict] = {}
    for b in reply.blocks:
        if b.kind == "tool_call":
            args = b.arguments
            if fmt == "gemini":
                args = json.dumps(json.loads(args), separators=(",", ":"), ensure_ascii=False)
            out.append({"type": "tool_call", "id": None if fmt == "gemini" else b.id, "name": b.name,
                        "arguments": args})
            continue
        if fmt == "openai-chat" and b.kind in by_kind:   # one content stream per kind and choice
            by_kind[b.kind]["text"] += b.text
            continue
        d = {"type": b.kind, "text": b.text}
        if b.kind == "thinking":
            d["signature"] = b.signature if fmt in ("anthropic", "gemini") else None
        by_kind[b.kind] = d
        out.append(d)
    return out


def actual_blocks(result: dict) -> list[dict]:
    out = []
    for b in result["blocks"]:
        if b["type"] == "tool_call":
            out.append({"type": "tool_call", "id": b["id"], "name": b["name"], "arguments": b["arguments"]})
        else:
            d = {"type": b["type"], "text": b["text"]}
            if b["type"] == "thinking":
                d["signature"] = b["signature"]
            out.append(d)
    return out


def check_usage(fmt: str, reply: ScriptedReply, usage: dict) -> None:
    u = reply.usage
    assert usage["input_tokens"] == u.input_tokens
    assert usage["output_tokens"] == u.output_tokens
    assert usage["total_tokens"] == u.input_tokens + u.output_tokens
    assert (usage["cache_read_tokens"] or 0) == u.cache_read_tokens
    if fmt == "anthropic":
        assert usage["cache_write_tokens"] == u.cache_write_tokens
    else:
        assert (usage["reasoning_tokens"] or 0) == u.reasoning_tokens


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.slow
def test_decode_reproduces_the_scripted_reply(fmt, data):
    reply = data.draw(replies(fmt))
    opts = {"include_usage": True} if fmt == "openai-chat" else {}
    body = encode_bytes(fmt, reply, **opts)
    want = expected_blocks(fmt, reply)
    first = None
    for size in CHUNKINGS:
        got = decode_bytes(fmt, body, size).result()
        if first is None:
            first = got
            assert actual_blocks(got) == want
            assert got["finish_reason"]["canonical"] == reply.finish
            check_usage(fmt, reply, got["usage"])
            assert got["terminated"] is True and got["error"] is None
            codes = {d["code"] for d in got["diagnostics"]}
            assert not codes & {"data-not-json", "unknown-event", "missing-terminator", "event-after-terminator",
                                "unterminated-final-event", "tool-arguments-invalid-json", "tool-call-id-changed",
                                "delta-without-block-start"}, got["diagnostics"]
        else:
            assert got == first   # the result never depends on where the bytes were cut


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_cut_streams_and_in_band_errors(fmt, data):
    reply = data.draw(replies(fmt))
    keep = data.draw(st.integers(1, reply.fragment_count()))
    cut = reply.truncated(keep)
    if data.draw(st.booleans()):
        cut.error = ScriptedError("overloaded_error" if fmt == "anthropic" else "server_error", "try again later",
                                503 if fmt == "gemini" else None)
    else:
        cut.complete = False
    body = encode_bytes(fmt, cut)
    got = decode_bytes(fmt, body, data.draw(st.sampled_from(CHUNKINGS))).result()
    texts = [b.text for b in cut.blocks if b.kind != "tool_call"]
    got_texts = [b["text"] for b in got["blocks"] if b["type"] != "tool_call"]
    if fmt != "openai-chat":
        assert got_texts == texts
    assert "".join(got_texts) == "".join(texts) or fmt == "openai-chat"
    if cut.error is not None:
        assert got["error"]["message"] == "try again later"
    else:
        assert got["error"] is None and got["finish_reason"]["canonical"] is None
        assert got["terminated"] is False
        assert "missing-terminator" in {d["code"] for d in got["diagnostics"]}


def test_chat_n_choices_round_trip():
    blocks = [ScriptBlock("text", ["Hel", "lo"], choice=0), ScriptBlock("text", ["Bon", "jour", "!"], choice=1),
              ScriptBlock("tool_call", ['{"a"', ":1}"], id="call_x", name="f", choice=1)]
    reply = ScriptedReply(blocks=blocks, n_choices=2, finish="stop", usage=ScriptUsage(5, 7))
    got = decode_bytes("openai-chat", encode_bytes("openai-chat", reply, include_usage=True), 5).result()
    assert [(b["choice"], b["type"], b["text"] or b["arguments"]) for b in got["blocks"]] == [
        (0, "text", "Hello"), (1, "text", "Bonjour!"), (1, "tool_call", '{"a":1}')]


# -- framing details, as the recordings show them --------------------------------------------------------------

def _reply(kinds=("text",)) -> ScriptedReply:
    blocks = []
    for i, k in enumerate(kinds):
        if k == "tool_call":
            blocks.append(ScriptBlock("tool_call", ['{"ci', 'ty":"Pa', 'ris"}'], id=f"call_{i}", name="get_weather"))
        elif k == "thinking":
            blocks.append(ScriptBlock("thinking", ["Let me", " think."], signature="c2lnbmF0dXJl"))
        else:
            blocks.append(ScriptBlock(k, ["The", " capital", " is", " Paris", "."]))
    return ScriptedReply(blocks=blocks, usage=ScriptUsage(20, 9), finish="tool_calls" if "tool_call" in kinds
                         else "stop", ids=ScriptIds(seed=7, model="gpt-4o-mini"))


def _datas(body: bytes, sep: bytes = b"\n\n") -> list[dict]:
    out = []
    for ev in body.split(sep):
        for line in ev.splitlines():
            if line.startswith(b"data: ") and line != b"data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


def test_openai_chat_framing():
    body = encode_bytes("openai-chat", _reply(), include_usage=True)
    assert body.endswith(b"data: [DONE]\n\n") and b"\r" not in body
    chunks = _datas(body)
    assert list(chunks[0]) == ["id", "object", "created", "model", "service_tier", "system_fingerprint", "choices",
                               "usage", "obfuscation"]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert all(c["usage"] is None for c in chunks[:-1])
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 9
    assert chunks[-2]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert len({c["id"] for c in chunks}) == 1
    without = _datas(encode_bytes("openai-chat", _reply()))
    assert all("usage" not in c for c in without) and without[-1]["choices"][0]["finish_reason"] == "stop"


def test_openai_chat_tool_call_fragments():
    chunks = _datas(encode_bytes("openai-chat", _reply(("tool_call", "tool_call"))))
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": None, "refusal": None}
    tcs = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if "tool_calls" in c["choices"][0]["delta"]]
    firsts = [t for t in tcs if "id" in t]
    assert [t["index"] for t in firsts] == [0, 1]
    assert firsts[0] == {"index": 0, "id": "call_0", "type": "function",
                         "function": {"name": "get_weather", "arguments": ""}}
    assert all(set(t) == {"index", "function"} and set(t["function"]) == {"arguments"} for t in tcs if "id" not in t)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_responses_framing():
    body = encode_bytes("openai-responses", _reply(("thinking", "text", "tool_call")))
    names = re.findall(rb"^event: (\S+)$", body, re.M)
    datas = _datas(body)
    assert [d["sequence_number"] for d in datas] == list(range(len(datas)))
    assert all(d["type"] == n.decode() for d, n in zip(datas, names))
    assert names[:3] == [b"response.created", b"response.in_progress", b"response.output_item.added"]
    assert names[-1] == b"response.completed"
    final = datas[-1]["response"]
    assert [o["type"] for o in final["output"]] == ["reasoning", "message", "function_call"]
    assert final["usage"] == {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9,
                              "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 29}
    assert final["output"][2]["arguments"] == '{"city":"Paris"}' and final["output"][2]["call_id"] == "call_2"
    for must in (b"response.reasoning_summary_part.added", b"response.reasoning_summary_text.delta",
                 b"response.content_part.added", b"response.output_text.done", b"response.content_part.done",
                 b"response.function_call_arguments.delta", b"response.function_call_arguments.done",
                 b"response.output_item.done"):
        assert must in names


def test_anthropic_framing():
    body = encode_bytes("anthropic", _reply(("thinking", "text", "tool_call")))
    names = re.findall(rb"^event: (\S+)$", body, re.M)
    assert names[:3] == [b"message_start", b"content_block_start", b"ping"]
    assert names[-2:] == [b"message_delta", b"message_stop"]
    assert b'data: {"type": "ping"}\n\n' in body
    datas = _datas(body)
    start = datas[0]["message"]
    assert list(start)[:2] == ["model", "id"] and start["usage"]["input_tokens"] == 20
    sig = [d for d in datas if d.get("delta", {}).get("type") == "signature_delta"]
    assert sig and sig[0]["index"] == 0
    tool_start = [d for d in datas if d["type"] == "content_block_start" and d["index"] == 2][0]
    assert tool_start["content_block"] == {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {}}
    assert datas[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert datas[-2]["usage"]["output_tokens"] == 9


def test_gemini_framing():
    body = encode_bytes("gemini", _reply(("thinking", "text", "tool_call")))
    assert body.endswith(b"}\r\n\r\n") and body.count(b"data: ") == body.count(b"\r\n\r\n")
    assert b'{"candidates": [{"content": {"parts": [{"text": "Let me","thought": true}],"role": "model"}' in body
    chunks = _datas(body, b"\r\n\r\n")
    assert all("usageMetadata" in c for c in chunks)
    assert [("finishReason" in c["candidates"][0]) for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1]["candidates"][0]["content"]["parts"] == [{"functionCall": {"name": "get_weather",
                                                                                 "args": {"city": "Paris"}}}]
    assert chunks[-1]["usageMetadata"]["totalTokenCount"] == 29


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("fmt,recording,kinds", [
    ("openai-chat", "openai-chat/text-include-usage-obfuscation-gpt-4o-mini.sse", ("text",)),
    ("openai-chat", "openai-chat/tool-call-include-usage-obfuscation-gpt-4o-mini.sse", ("tool_call",)),
    ("openai-responses", "openai-responses/function-call-gpt-5.5.sse", ("tool_call",)),
    ("anthropic", "anthropic/text-then-two-tool-use-sonnet-4.6.sse", ("text", "tool_call", "tool_call")),
    ("anthropic", "anthropic/thinking-signature-sonnet-4.5.sse", ("thinking", "text")),
    ("gemini", "gemini/usage-on-every-chunk-gemini-2.5-flash.sse", ("text",)),
])
def test_same_event_sequence_shape_as_the_recordings(fmt, recording, kinds):
    """Event names / JSON key sets of ours and the recording's agree (ignoring fields models add over time)."""
    real = (CORPUS / recording).read_bytes()
    ours = encode_bytes(fmt, _reply(kinds), **({"include_usage": True} if fmt == "openai-chat" else {}))
    sep = b"\r\n\r\n" if fmt == "gemini" else b"\n\n"
    assert (b"\r\n" in real) == (b"\r\n" in ours)

    def shape(body: bytes) -> list:
        out = []
        for d in _datas(body, sep):
            typ = d.get("type") or ("usage" if d.get("choices") == [] else "chunk")
            out.append(typ)
        dedup = [t for i, t in enumerate(out) if i == 0 or t != out[i - 1]]
        return dedup

    assert shape(ours) == shape(real)
    if fmt != "gemini":
        real_keys = {tuple(sorted(d)) for d in _datas(real, sep) if d.get("type") != "ping"}
        ours_keys = {tuple(sorted(d)) for d in _datas(ours, sep) if d.get("type") != "ping"}
        assert ours_keys <= real_keys | {k for k in ours_keys if "obfuscation" in k or "sequence_number" in k}


def test_events_carry_their_kind():
    events = encode("anthropic", _reply(("text",)))
    assert [e.kind for e in events][:3] == ["head", "start", "ping"]
    assert events[-1].kind == "end"
    bad = [e for e in events if e.kind == "delta"][0].corrupted()
    with pytest.raises(ValueError):
        json.loads(bad.data[bad.payload_start:bad.payload_end])
