"""Lone surrogate escapes (`"\\ud800"` with no partner) in peer JSON: JSON the stdlib accepts, but the string it
gives cannot be encoded as UTF-8, so every writer (decode's stdout, replay, exports, the tap's capture) failed on
it. The wire layer's parsers replace each with U+FFFD (a `lone-surrogate` diagnostic for a frame), so nothing
downstream ever holds one; the frame's raw bytes are left as they are."""
from __future__ import annotations

import json
import re

import pytest

from core.wire import jsonfast
from core.wire.formats import FORMATS
from core.wire.jsonfast import REPLACEMENT, loads, loads_repaired
from core.wire.pipeline import decode_bytes
from tests.core.wire.test_hostile_json import HEAD, TAIL, frame, text_of

_SURROGATE = re.compile("[\ud800-\udfff]")


def holds_surrogate(value) -> bool:
    """Whether any string in `value` (keys included) holds a surrogate code point (iterative)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


# -- the parser ------------------------------------------------------------------------------------------
PARSERS = [loads, lambda t: loads_repaired(t)[0], jsonfast._stdlib_loads]   # (the last: where orjson is absent)


@pytest.mark.parametrize("parse", PARSERS)
def test_lone_surrogates_read_as_replacement_characters(parse):
    assert parse('"a\\ud800b"') == f"a{REPLACEMENT}b"
    assert parse('"\\uDFFF"') == REPLACEMENT                       # a low one alone, upper-case hex
    assert parse('"\\ud83d"') == REPLACEMENT                       # a high one at the end
    assert parse('"\\ude00\\ud83d"') == REPLACEMENT * 2            # the wrong order is no pair
    assert parse('{"\\ud800k": ["\\udc00", {"x": "\\ud800"}]}') == {f"{REPLACEMENT}k": [REPLACEMENT,
                                                                                         {"x": REPLACEMENT}]}
    assert parse(b'["\\ud800"]') == [REPLACEMENT]
    assert parse('"x\ud800"') == f"x{REPLACEMENT}"                 # a surrogate character in the text itself


@pytest.mark.parametrize("parse", PARSERS)
def test_pairs_and_escaped_backslashes_are_left_alone(parse):
    assert parse('"\\ud83d\\ude00"') == "\U0001F600"
    assert parse('"\\\\ud800"') == "\\ud800"                       # a backslash, then the letters: no escape
    assert parse('{"a": [1, 2.5, null, true, "\\u00e9"]}') == {"a": [1, 2.5, None, True, "é"]}


def test_the_count_of_what_was_replaced():
    assert loads_repaired('["\\ud800", "\\udc00x\\udc01", "\\ud83d\\ude00"]') == (
        [REPLACEMENT, f"{REPLACEMENT}x{REPLACEMENT}", "\U0001F600"], 3)
    assert loads_repaired('{"a": "b"}') == ({"a": "b"}, 0)
    assert loads_repaired('[NaN, "\\\\ud800"]')[1] == 0
    assert jsonfast._stdlib_loads_repaired('["\\ud800"]') == ([REPLACEMENT], 1)


def test_a_deep_value_with_a_lone_surrogate_is_walked_without_recursion():
    depth = 900   # (parses; a recursive walk would pass the interpreter's limit)
    v, n = loads_repaired("[" * depth + '"\\ud800"' + "]" * depth)
    assert n == 1
    for _ in range(depth):
        v = v[0]
    assert v == REPLACEMENT


# -- through the whole pipeline, every format --------------------------------------------------------------
HOSTILE = "x\ud800y"   # json.dumps writes it as the escape `x\ud800y` (ensure_ascii)


def hostile_frames(fmt: str) -> str:
    """A text delta, a key and a kept object (usage or error) of `fmt`, each with a lone surrogate escape."""
    d = json.dumps
    return {
        "openai-chat": frame(d({"id": "c1", "choices": [{"index": 0, "delta": {"content": HOSTILE}}]}))
        + frame(d({"id": "c1", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                                                         "\udc00": HOSTILE}})),
        "anthropic": frame(d({"type": "content_block_delta", "index": 0,
                              "delta": {"type": "text_delta", "text": HOSTILE}}), "content_block_delta")
        + frame(d({"type": "error", "error": {"type": "x\udfff", "message": HOSTILE}}), "error"),
        "openai-responses": frame(d({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                                     "delta": HOSTILE}), "response.output_text.delta")
        + frame(d({"type": "error", "code": "\udc00", "message": HOSTILE}), "error"),
        "gemini": frame(d({"candidates": [{"content": {"role": "model", "parts": [{"text": HOSTILE}]}}]}))
        + frame(d({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {
            "name": "f\ud800", "args": {"k\udc00": HOSTILE}}}]}}]})),
    }[fmt]


def surrogate_body(fmt: str) -> bytes:
    return (HEAD[fmt] + hostile_frames(fmt) + TAIL[fmt]).encode()


def check(d, fmt: str) -> dict:
    r = d.result()
    assert not holds_surrogate(r)
    json.dumps(r, ensure_ascii=False).encode("utf-8")      # what decode, replay and every export do
    assert f"x{REPLACEMENT}y" in text_of(r)
    assert [x["code"] for x in r["diagnostics"]].count("lone-surrogate") == 2, r["diagnostics"]
    # the frames' raw bytes are the bytes received: the escape is still there
    raw = b"".join(getattr(i, "raw", b"") for i in d.items)
    assert raw.count(b"\\ud800") >= 1 and b"\xef\xbf\xbd" not in raw
    return r


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_in_any_format_is_a_diagnostic_and_a_replacement(fmt):
    body = surrogate_body(fmt)
    whole = check(decode_bytes(fmt, body), fmt)
    assert check(decode_bytes(fmt, body, 1), fmt) == whole          # byte by byte
    assert whole["terminated"] is True


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_split_at_every_offset(fmt):
    body = surrogate_body(fmt)
    whole = decode_bytes(fmt, body).result()
    assert not holds_surrogate(whole)
    from core.wire.pipeline import StreamDecoder

    for cut in range(1, len(body)):
        d = StreamDecoder(fmt)
        d.feed(body[:cut])
        d.feed(body[cut:])
        d.end()
        assert d.result() == whole, cut


def test_tool_arguments_holding_a_lone_surrogate_escape_translate_and_compare():
    from core.wire.answer_diff import _parse
    from core.wire.translate import translate_bytes

    args = '{"city": "Pa\\ud800ris"}'   # the escape inside the arguments' own JSON
    body = (frame(json.dumps({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": args}}]}}]}))
        + frame(json.dumps({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
        + frame("[DONE]")).encode()
    for dst in FORMATS:
        out, _notes = translate_bytes("openai-chat", dst, body)   # (it raised UnicodeEncodeError for Gemini)
        out.decode("utf-8")
        assert not holds_surrogate(decode_bytes(dst, out).result())
    assert _parse(args) == (True, {"city": f"Pa{REPLACEMENT}ris"})


def test_decode_command_prints_a_stream_with_a_lone_surrogate(tmp_path):
    import subprocess
    import sys

    from tests.corpus import ROOT
    f = tmp_path / "s.sse"
    f.write_bytes(b'data: {"choices":[{"index":0,"delta":{"content":"a\\ud800b"}}]}\n\ndata: [DONE]\n\n')
    p = subprocess.run([sys.executable, str(ROOT / "main.py"), "decode", "--format", "openai-chat", str(f)],
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-400:]
    out = json.loads(p.stdout.decode("utf-8"))
    assert out["blocks"][0]["text"] == f"a{REPLACEMENT}b"
    assert [(x["code"], x["frame"]) for x in out["diagnostics"]] == [("lone-surrogate", 0)]
