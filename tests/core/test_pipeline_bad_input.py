"""Bad input through the whole pipeline (framing, JSON, every adapter, reducer): never an exception, never a hang,
and everything received before the damage is kept."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import FORMATS
from core.pipeline import decode_bytes

from tests.corpus import CORPUS, expected

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
