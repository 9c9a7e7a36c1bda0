"""Hostile JSON through the whole pipeline, every format: nesting past every parser's limit, huge indexes, control
characters. Never an exception, never a RecursionError, the rest of the stream still decoded, and a result that
every encoder a consumer uses (json.dumps compact or indented) can print."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from core.wire.formats import FORMATS
from core.wire.jsonfast import MAX_DEPTH
from core.wire.pipeline import decode_bytes
from tests.core.wire.test_jsonfast import depth_of, nested


def frame(data: str, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


# -- one ordinary stream per format, text in pieces, with room for hostile frames between them ----------------
def chat_text(t: str) -> str:
    return frame(json.dumps({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": t}}]}))


def anthropic_text(t: str) -> str:
    return frame(json.dumps({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
                 "content_block_delta")


def responses_text(t: str) -> str:
    return frame(json.dumps({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                             "delta": t}), "response.output_text.delta")


def gemini_text(t: str) -> str:
    return frame(json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]}))


TEXT = {"openai-chat": chat_text, "anthropic": anthropic_text, "openai-responses": responses_text,
        "gemini": gemini_text}
HEAD = {
    "openai-chat": "",
    "anthropic": frame('{"type":"message_start","message":{"id":"m1","model":"c","usage":{"input_tokens":3}}}',
                       "message_start")
    + frame('{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
            "content_block_start"),
    "openai-responses": frame('{"type":"response.created","response":{"id":"r1","model":"g","output":[]}}',
                              "response.created"),
    "gemini": "",
}
TAIL = {
    "openai-chat": frame('{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}')
    + frame("[DONE]"),
    "anthropic": frame('{"type":"content_block_stop","index":0}', "content_block_stop")
    + frame('{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}',
            "message_delta") + frame('{"type":"message_stop"}', "message_stop"),
    "openai-responses": frame('{"type":"response.completed","response":{"id":"r1","status":"completed",'
                              '"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}',
                              "response.completed"),
    "gemini": frame('{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],'
                    '"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}'),
}

# frames of each format whose kept objects (usage, error, raw blocks, finish reasons) nest `DEEP` levels: JSON
# orjson still parses (its limit is 1024) but every encoder after it would recurse past the interpreter's limit
DEEP = 1000
KEPT_DEEP = {
    "openai-chat": [
        frame('{"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"x":' + nested(DEEP) + "}}"),
        frame('{"id":"c1","choices":[],"error":{"code":' + nested(DEEP) + "}}"),
        frame('{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","function":'
              '{"name":"f","arguments":' + nested(DEEP) + "}}]}}]}"),
        frame('{"error":{"message":' + nested(DEEP) + "}}", "error"),
    ],
    "anthropic": [
        frame('{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"t","name":"f",'
              '"input":' + nested(DEEP, "{}") + "}}", "content_block_start")
        + frame('{"type":"content_block_stop","index":5}', "content_block_stop"),
        frame('{"type":"content_block_start","index":6,"content_block":{"type":"x_tool_result","content":'
              + nested(DEEP) + "}}", "content_block_start"),
        frame('{"type":"error","error":{"type":"overloaded_error","message":' + nested(DEEP) + "}}", "error"),
    ],
    "openai-responses": [
        frame('{"type":"response.output_item.added","output_index":3,"item":{"type":"web_search_call","a":'
              + nested(DEEP) + "}}", "response.output_item.added"),
        frame('{"type":"error","code":' + nested(DEEP) + "}", "error"),
    ],
    "gemini": [
        frame('{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":' + nested(DEEP)
              + "}}}]}}]}"),
        frame('{"candidates":[{"content":{"parts":[{"executableCode":' + nested(DEEP) + "}]}}]}"),
        frame('{"error":{"code":500,"status":' + nested(DEEP) + "}}"),
    ],
}


def printable(result: dict) -> None:
    """Every encoder a consumer uses copes with the result (decode, replay, the GUI's indented views, exports)."""
    json.dumps(result, ensure_ascii=False)
    json.dumps(result, indent=2, default=str)
    assert depth_of(result) < MAX_DEPTH + 10


def body(fmt: str, *hostile: str) -> bytes:
    text = TEXT[fmt]
    return (HEAD[fmt] + text("Hel") + "".join(hostile) + text("lo") + TAIL[fmt]).encode()


def text_of(result: dict) -> str:
    return "".join(b["text"] or "" for b in result["blocks"] if b["type"] == "text" and b["choice"] == 0)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("depth", [1025, 5000, 100_000])
def test_a_frame_nested_past_the_parsers_limit_is_a_diagnostic(fmt, depth):
    for hostile in (frame(nested(depth)), frame('{"a":' + nested(depth) + "}"),
                    frame('{"a":NaN,"b":' + nested(depth) + "}")):   # (orjson refuses NaN: the stdlib fallback)
        r = decode_bytes(fmt, body(fmt, hostile)).result()
        assert text_of(r) == "Hello" and r["terminated"] is True, hostile[:40]
        assert "json-too-deep" in {d["code"] for d in r["diagnostics"]}
        printable(r)


@pytest.mark.parametrize("fmt", FORMATS)
def test_kept_objects_nested_a_thousand_deep_are_bounded(fmt):
    for hostile in KEPT_DEEP[fmt]:
        d = decode_bytes(fmt, body(fmt, hostile))
        r = d.result()
        assert text_of(r) == "Hello" and r["terminated"] is True, hostile[:60]
        assert "json-too-deep" in {x["code"] for x in r["diagnostics"]}
        printable(r)
        repr(d.reply)   # reprs and comparisons recurse too
        assert d.reply == d.reply


@pytest.mark.parametrize("fmt", FORMATS)
def test_deep_json_within_the_limit_is_kept_whole(fmt):
    depth = MAX_DEPTH - 10
    hostile = {"openai-chat": frame('{"id":"c1","choices":[],"usage":{"prompt_tokens":3,"x":' + nested(depth) + "}}"),
               "anthropic": frame('{"type":"message_delta","delta":{},"usage":{"output_tokens":2,"x":'
                                  + nested(depth) + "}}", "message_delta"),
               "openai-responses": frame('{"type":"response.output_item.added","output_index":3,"item":'
                                         '{"type":"web_search_call","a":' + nested(depth) + "}}",
                                         "response.output_item.added"),
               "gemini": frame('{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":'
                               + nested(depth) + "}}}]}}]}")}[fmt]
    r = decode_bytes(fmt, body(fmt, hostile)).result()
    assert "json-too-deep" not in {x["code"] for x in r["diagnostics"]}
    assert nested(depth) in json.dumps(r, separators=(",", ":"))   # (Gemini's inside its arguments' text)


def test_decode_command_prints_a_deep_stream(tmp_path):
    import subprocess
    import sys

    from tests.corpus import ROOT
    f = tmp_path / "deep.sse"
    f.write_bytes(body("openai-chat", frame(nested(100_000)), *KEPT_DEEP["openai-chat"]))
    p = subprocess.run([sys.executable, str(ROOT / "main.py"), "decode", "--format", "openai-chat", str(f)],
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-300:]
    out = json.loads(p.stdout)
    assert text_of(out) == "Hello" and out["terminated"] is True
    assert [d["code"] for d in out["diagnostics"]].count("json-too-deep") == 1 + len(KEPT_DEEP["openai-chat"])


# -- the fuzz test: deep nesting, huge indexes and control characters, in every format ----------------------------
CONTROL = st.text(alphabet=st.sampled_from(["\x00", "\x1b", "\x07", "\u202e", "\r", "\n", "\t", "\x7f", "\u2028",
                                            "<", "é", "a"]), max_size=12)
HUGE = st.sampled_from([2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64, 10 ** 30, -1, 10 ** 7])


def hostile_json(fmt: str) -> st.SearchStrategy[str]:
    """Frames of `fmt`'s own shapes with a deep, huge or control-character value somewhere."""
    deep = st.integers(MAX_DEPTH - 2, 1100).map(nested)
    s = st.one_of(CONTROL.map(json.dumps),   # escaped, and raw (invalid JSON: a data-not-json frame)
                  CONTROL.filter(lambda x: "\n" not in x and "\r" not in x).map(lambda x: f'"{x}"'))
    huge = HUGE.map(str)
    value = st.one_of(deep, s, huge)
    shapes = {
        "openai-chat": [
            st.builds(lambda v: '{"choices":[{"index":0,"delta":{"content":' + v + "}}]}", value),
            st.builds(lambda i, v: '{"choices":[{"index":' + i + ',"delta":{"tool_calls":[{"index":' + i
                      + ',"id":"t","function":{"name":' + v + ',"arguments":"{}"}}]}}]}', huge, value),
            st.builds(lambda v: '{"choices":[],"usage":{"prompt_tokens":' + v + ',"completion_tokens":1}}', value),
            st.builds(lambda v: '{"choices":[{"index":0,"delta":{},"finish_reason":' + v + "}]}", value),
        ],
        "anthropic": [
            st.builds(lambda i, v: '{"type":"content_block_start","index":' + i + ',"content_block":{"type":'
                      + v + "}}", huge, value),
            st.builds(lambda v: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":'
                      + v + "}}", value),
            st.builds(lambda v: '{"type":"message_delta","delta":{"stop_reason":' + v + '},"usage":{"x":' + v
                      + "}}", value),
        ],
        "openai-responses": [
            st.builds(lambda i, v: '{"type":"response.output_text.delta","output_index":' + i
                      + ',"content_index":' + i + ',"delta":' + v + "}", huge, value),
            st.builds(lambda i, v: '{"type":"response.output_item.done","output_index":' + i
                      + ',"item":{"type":"function_call","call_id":"c","arguments":' + v + "}}", huge, value),
            st.builds(lambda v: '{"type":' + v + "}", s),
        ],
        "gemini": [
            st.builds(lambda v: '{"candidates":[{"content":{"parts":[{"text":' + v + "}]}}]}", value),
            st.builds(lambda i, v: '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f",'
                      '"partialArgs":[{"jsonPath":"$.a[' + i.lstrip("-") + ']","stringValue":' + v
                      + '}],"willContinue":true}}]}}]}', huge, value),
            st.builds(lambda v: '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":'
                      + v + "}}}]}}]}", value),
            st.builds(lambda v: '{"usageMetadata":{"promptTokenCount":' + v + "}}", value),
        ],
    }[fmt]
    return st.one_of(shapes)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_fuzz_hostile_values_never_raise_and_keep_the_rest(fmt, data):
    frames = []
    for text in data.draw(st.lists(hostile_json(fmt), min_size=1, max_size=4)):
        name = None
        if fmt == "anthropic":
            name = json.loads(text[:text.index(",")] + "}")["type"]
        elif fmt == "openai-responses":
            name = data.draw(st.one_of(st.just("message"), CONTROL.filter(lambda x: x and "\n" not in x
                                                                          and "\r" not in x)))
        frames.append(frame(text, name))
    chunk = data.draw(st.sampled_from([None, 1, 7, 64]))
    d = decode_bytes(fmt, body(fmt, *frames), chunk)
    r = d.result()
    t = text_of(r)   # the text sent around the hostile frames is all there, in order (they may add to it)
    assert r["terminated"] is True and "Hel" in t and "lo" in t[t.index("Hel") + 3:]
    printable(r)
