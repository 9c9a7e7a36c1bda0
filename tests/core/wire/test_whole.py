"""A whole (non-stream) JSON reply read as the stream of the same reply: `core.wire.whole` and
`StreamDecoder.whole`. The emulator's non-stream answer of a scenario must decode to what its stream decodes to."""
from __future__ import annotations

import json

import pytest

from core.servers.emulator.responder import Conversation, weather_tool
from core.servers.emulator.scenarios import build_plan
from core.wire.encoders import encode_bytes
from core.wire.encoders.assemble import assemble
from core.wire.errors import LocalProtocolError
from core.wire.pipeline import WHOLE_BODY_EVENT, StreamDecoder, decode_bytes
from core.wire.whole import stream_payloads

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")
SCENARIOS = ("text", "tool-call", "parallel-tools", "thinking", "thinking-tools", "split-utf8")
COMPARED = ("blocks", "finish_reason", "usage", "error", "terminated")


def whole(fmt: str, obj) -> StreamDecoder:
    d = StreamDecoder(fmt)
    d.whole(json.dumps(obj, ensure_ascii=False).encode("utf-8"))
    return d


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_whole_reply_decodes_as_its_stream_does(fmt, scenario):
    reply = build_plan(fmt, scenario, Conversation(prompt="Weather in Paris and Rome?", tools=[weather_tool()])).reply
    options = {"include_usage": True} if fmt == "openai-chat" else {}
    streamed = decode_bytes(fmt, encode_bytes(fmt, reply, **options)).result()
    got = whole(fmt, assemble(fmt, reply)).result()
    assert {k: got[k] for k in COMPARED} == {k: streamed[k] for k in COMPARED}
    assert got["blocks"] and got["usage"]["output_tokens"]
    assert got["diagnostics"] == []          # nothing a client of the whole reply did not see (no usage-only chunk)
    assert got["frames"] == 1


def test_the_body_is_kept_as_one_frame_and_every_event_is_of_it():
    body = json.dumps(assemble("anthropic", build_plan("anthropic", "text", Conversation(prompt="hi")).reply))
    d = StreamDecoder("anthropic")
    events = d.whole(body.encode())
    assert events and {e.frame for e in events} == {0}
    [frame] = d.items
    assert (frame.n, frame.event, frame.data, frame.raw) == (0, WHOLE_BODY_EVENT, body, body.encode())
    with pytest.raises(LocalProtocolError):
        d.feed(b"data: {}\n\n")


def test_what_is_no_reply_of_the_format_is_left_alone():
    for fmt, body in [("openai-chat", b'{"object": "list", "data": [{"id": "gpt-x"}]}'),
                      ("anthropic", b'{"type": "error", "error": {"type": "x", "message": "y"}}'),
                      ("gemini", b'{"models": []}'), ("openai-responses", b"not json"),
                      ("openai-chat", b"\xff\xfe"), ("openai-chat", b"[" * 100_000),
                      ("anthropic", json.dumps({"choices": []}).encode())]:     # another format's shape
        d = StreamDecoder(fmt)
        assert d.whole(body) == [] and d.items == [] and d.frames == 0
        d.feed(b"")      # (left as it was: still a decoder a stream can be fed to)
    fed = StreamDecoder("openai-chat")
    fed.feed(b"data: {}\n\n")
    with pytest.raises(LocalProtocolError):
        fed.whole(b"{}")


def test_several_choices_and_tool_calls_keep_their_order_and_numbers():
    body = {"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"},
        {"index": 1, "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
            {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
         "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}
    got = whole("openai-chat", body).result()
    assert [(b["choice"], b["type"], b["text"] or b["arguments"], b["id"]) for b in got["blocks"]] == [
        (0, "text", "A", None), (1, "tool_call", '{"x":1}', "call_1"), (1, "tool_call", "{}", "call_2")]
    assert (got["usage"]["input_tokens"], got["usage"]["output_tokens"]) == (5, 7)
    assert got["terminated"] and got["diagnostics"] == []


def test_gemini_streamgeneratecontent_without_sse_is_a_json_array_of_chunks():
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}, "index": 0}]},
              {"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": "STOP",
                               "index": 0}], "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 2,
                                                               "totalTokenCount": 4}}]
    got = whole("gemini", chunks).result()
    assert [b["text"] for b in got["blocks"]] == ["Hello"]
    assert (got["finish_reason"]["canonical"], got["usage"]["output_tokens"], got["terminated"]) == ("stop", 2, True)
    assert stream_payloads("gemini", [1, 2]) is None and stream_payloads("gemini", []) is None


def test_a_responses_object_ends_as_its_status_says():
    obj = {"id": "resp_1", "object": "response", "status": "incomplete", "model": "m",
           "incomplete_details": {"reason": "max_output_tokens"},
           "output": [{"type": "message", "id": "msg_1", "role": "assistant",
                       "content": [{"type": "output_text", "text": "Cut", "annotations": []}]}],
           "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}}
    got = whole("openai-responses", obj).result()
    assert got["finish_reason"] == {"canonical": "length", "raw": "incomplete"}
    assert [b["text"] for b in got["blocks"]] == ["Cut"] and got["usage"]["output_tokens"] == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_whole_reply_tells_its_format_by_its_shape(fmt):
    from core.wire.whole import whole_format

    reply = build_plan(fmt, "tool-call", Conversation(prompt="Weather?", tools=[weather_tool()])).reply
    assert whole_format(assemble(fmt, reply)) == fmt
    assert whole_format({"object": "list", "data": []}) is None and whole_format("x") is None


def test_a_body_past_the_bound_is_not_read_whole(monkeypatch):
    from core.wire import pipeline

    body = json.dumps(assemble("gemini", build_plan("gemini", "text", Conversation(prompt="hi")).reply)).encode()
    monkeypatch.setattr(pipeline, "MAX_WHOLE_BODY", len(body) - 1)
    d = StreamDecoder("gemini")
    assert d.whole(body) == [] and d.frames == 0
