"""Bad input through the whole pipeline (framing, JSON, every adapter, reducer): never an exception, never a hang,
and everything received before the damage is kept."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from core.wire.formats import FORMATS
from core.wire.pipeline import decode_bytes

from tests.corpus import CORPUS, expected
from tests.wrong_types import WRONG_TYPES, json_paths, replaced

FILES = sorted(CORPUS.glob("*/*.sse"))


def fmt_of(path: Path) -> str:
    return expected(path)["wire_format"]


FRAGMENTS = [b"data: ", b"event: ", b"\n", b"\r\n", b"\n\n", b"{", b"}", b"[DONE]", b'"choices":[', b"]",
             b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}',
             b'{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}', b'"usage":null', b"message_stop",
             b'{"type":"response.output_text.delta","output_index":0,"delta":"y"}', b"\xff", "é".encode(), b":"]


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=60), size=st.integers(1, 64))
@pytest.mark.slow
def test_random_streams_never_raise(fmt, parts, size):
    d = decode_bytes(fmt, b"".join(parts), size)
    out = d.result()
    assert out["format"] == fmt and isinstance(out["blocks"], list)
    json.dumps(out)  # the result is always printable


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=100, deadline=None)
@given(body=st.binary(max_size=400))
def test_random_bytes_never_raise(fmt, body):
    assert decode_bytes(fmt, body, 3).result()["format"] == fmt


@pytest.mark.skipif(not FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_truncated_recordings_keep_what_arrived(path):
    """A body cut anywhere decodes, says it was cut, and keeps a prefix of the text the whole body has."""
    data = path.read_bytes()
    fmt = fmt_of(path)
    def texts(result):
        by_choice: dict[int, str] = {}
        for b in result["blocks"]:
            if b["type"] == "text":
                by_choice[b["choice"]] = by_choice.get(b["choice"], "") + (b["text"] or "")
        return by_choice

    whole = texts(decode_bytes(fmt, data).result())
    for cut in sorted({len(data) // 3, len(data) // 2, len(data) - 7}):
        part = decode_bytes(fmt, data[:cut]).result()
        for choice, text in texts(part).items():
            assert whole[choice].startswith(text), (cut, choice, text[:40])
        codes = {d["code"] for d in part["diagnostics"]}
        if not part["terminated"]:
            assert "missing-terminator" in codes


@pytest.mark.parametrize("fmt", FORMATS)
def test_non_json_data_is_a_diagnostic(fmt):
    out = decode_bytes(fmt, b"data: {not json\n\n").result()
    assert "data-not-json" in {d["code"] for d in out["diagnostics"]}
    assert out["frames"] == 1 and out["error"] is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_ten_megabyte_event(fmt):
    blob = "x" * (10 * 1024 * 1024)
    payloads = {
        "openai-chat": {"choices": [{"index": 0, "delta": {"content": blob}}]},
        "openai-responses": {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                             "delta": blob},
        "anthropic": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": blob}},
        "gemini": {"candidates": [{"content": {"parts": [{"text": blob}], "role": "model"}}]},
    }
    body = b"data: " + json.dumps(payloads[fmt]).encode() + b"\n\n"
    d = decode_bytes(fmt, body, 1 << 16)
    texts = [b.text for b in d.reply.blocks.values() if b.text]
    assert texts and len(texts[0]) == len(blob)


# -- JSON of the wrong type ------------------------------------------------------------------------------
# Well-formed JSON whose fields have the wrong JSON type (a number where text goes, a list as an index, a string
# as a token count) is bad input like any other: a diagnostic, never an exception, and no ill-typed value in the
# reply. Every node of one frame of each shape is replaced in turn by each value of `WRONG_TYPES`.
def _shape(event: str, obj) -> tuple:
    """Frames of the same event name and the same key paths exercise the same adapter code."""
    return (event, tuple(p for p in json_paths(obj) if not any(isinstance(k, int) and k > 0 for k in p)))


def _frames(body: bytes) -> list[tuple[str, object]]:
    from core.wire.sse import SSEDecoder, SSEFrame

    d = SSEDecoder()
    out = []
    for f in d.feed(body) + d.end():
        if isinstance(f, SSEFrame):
            try:
                out.append((f.event, json.loads(f.data)))
            except ValueError:
                out.append((f.event, f.data))
    return out


def _body(frames: list[tuple[str, object]], crlf: bool) -> bytes:
    le = "\r\n" if crlf else "\n"
    return "".join((f"event: {e}{le}" if e != "message" else "")
                   + f"data: {d if isinstance(d, str) else json.dumps(d)}{le}{le}" for e, d in frames).encode()


def _assert_well_typed(d) -> None:
    out = d.result()
    json.dumps(out)
    for b in out["blocks"]:
        for key in ("text", "arguments", "signature", "id", "name"):
            assert b[key] is None or type(b[key]) is str, (key, b)
    for key, v in out["usage"].items():
        assert key == "raw" or v is None or type(v) is int, (key, v)
    assert out["finish_reason"]["canonical"] is None or type(out["finish_reason"]["canonical"]) is str


def _mutations(frames: list[tuple[str, object]]):
    seen = set()
    for i, (event, obj) in enumerate(frames):
        if isinstance(obj, str) or _shape(event, obj) in seen:
            continue
        seen.add(_shape(event, obj))
        for path in json_paths(obj):
            for value in WRONG_TYPES:
                mutated = list(frames)
                mutated[i] = (event, replaced(obj, path, value))
                yield i, path, value, mutated


def _emulated(fmt: str) -> bytes:
    from core.wire.encoders import encode_bytes
    from core.wire.script import ScriptBlock, ScriptedReply, ScriptIds, ScriptUsage

    blocks = [ScriptBlock("thinking", ["Let me", " think."], signature="c2lnbmF0dXJl"),
              ScriptBlock("text", ["The", " capital", " is", " Paris", "."]),
              ScriptBlock("tool_call", ['{"ci', 'ty":"Pa', 'ris"}'], id="call_1", name="get_weather")]
    reply = ScriptedReply(blocks=blocks, usage=ScriptUsage(20, 9, cache_read_tokens=4, reasoning_tokens=3),
                          finish="tool_calls", ids=ScriptIds(seed=7, model="m"))
    return encode_bytes(fmt, reply, **({"include_usage": True} if fmt == "openai-chat" else {}))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.slow
def test_fields_of_the_wrong_json_type_never_raise_nor_reach_the_reply(fmt):
    body = _emulated(fmt)
    frames = _frames(body)
    crlf = b"\r\n" in body
    cases = 0
    for i, path, value, mutated in _mutations(frames):
        cases += 1
        d = decode_bytes(fmt, _body(mutated, crlf))
        _assert_well_typed(d)
        assert d.frames == len(frames), (i, path, value)
    assert cases > 200


def test_a_wrong_type_is_reported_and_the_rest_of_the_stream_decodes():
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","usage":'
            b'{"input_tokens":"many","output_tokens":1}}}\n\n'
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":""}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":42}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"Paris"}}\n\n'
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":[0]}\n\n'
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
            b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":["end_turn"]},'
            b'"usage":{"output_tokens":5}}\n\n'
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    out = decode_bytes("anthropic", body).result()
    assert [b["text"] for b in out["blocks"]] == ["Paris"]
    assert out["usage"]["input_tokens"] is None and out["usage"]["output_tokens"] == 5
    assert out["finish_reason"] == {"canonical": "other", "raw": ["end_turn"]}
    assert out["terminated"] is True
    malformed = [d["frame"] for d in out["diagnostics"] if d["code"] == "malformed-event"]
    assert malformed == [2, 4]   # the text that is a number, the stop whose index is a list


CORPUS_SAMPLE = 400   # mutations per recording (a fixed sample: all of them take minutes)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.slow
def test_recordings_with_fields_of_the_wrong_type_never_raise(path):
    import random

    fmt = fmt_of(path)
    body = path.read_bytes()
    frames = _frames(body)
    crlf = b"\r\n" in body
    cases = list(_mutations(frames))
    for i, p, value, mutated in random.Random(path.name).sample(cases, min(CORPUS_SAMPLE, len(cases))):
        d = decode_bytes(fmt, _body(mutated, crlf))
        _assert_well_typed(d)


OUTSIDE_FRAGMENTS = FRAGMENTS + [b"id: 1", b"retry: 5", b"garbage", b'{"error": {"message": "m"}}', b" ", b"\r",
                                 b"\xef\xbb\xbf", b": keepalive"]


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(OUTSIDE_FRAGMENTS), max_size=40), size=st.integers(1, 32))
def test_no_finding_about_dropped_events_means_nothing_but_white_space_outside_the_items(parts, size):
    # the recorder skips the exact (costly) walk when the decoder says nothing can lie outside its items
    body = b"".join(parts)
    d = decode_bytes("openai-chat", body, size)
    if not d.may_hold_bytes_outside_items:
        assert not d.bytes_outside_items(body).strip()


def test_a_comment_between_an_events_lines_is_not_taken_for_bytes_outside_the_items():
    """Hypothesis found it: the event is listed after the comment that sat inside it, so the spans came unsorted."""
    body = b"data: \n: keepalive\r\r"
    for size in (1, len(body)):
        d = decode_bytes("openai-chat", body, size)
        assert not d.bytes_outside_items(body).strip()


def test_an_unframed_error_is_said_to_lie_outside_the_items():
    body = b'data: {"choices": []}\n\n{"error": {"message": "m"}}\n\n'
    d = decode_bytes("openai-chat", body)
    assert d.may_hold_bytes_outside_items and b'"error"' in d.bytes_outside_items(body)
