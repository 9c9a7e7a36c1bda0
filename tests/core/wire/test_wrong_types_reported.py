"""Fields of the wrong JSON type, or indexes no block or choice can have, are reported as `malformed-event` (the
README's promise), what cannot be used is skipped, and the rest of the frame and stream decodes; the result is
the same whole, byte by byte and split at every offset."""
from __future__ import annotations

import pytest

from core.wire.pipeline import StreamDecoder, decode_bytes


def fr(data: str, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


CASES = {
    "openai-chat": (
        fr('{"choices":"x"}')
        + fr('{"choices":[{"index":0,"delta":{"content":5}}]}')
        + fr('{"choices":[],"usage":[]}')
        + fr('{"choices":[{"index":-1,"delta":{"content":"A"}}]}')
        + fr('{"choices":[{"index":0,"delta":{"tool_calls":"x"}}]}')
        + fr('{"choices":[{"index":0,"delta":{"tool_calls":[7]}}]}')
        + fr('{"choices":[{"index":0,"delta":{"content":"B"},"finish_reason":"stop"}]}')
        + fr("[DONE]"),
        ["AB"], [0, 1, 2, 3, 4, 5]),   # (the choice index -1 is taken as 0, as a non-integer one is)
    "anthropic": (
        fr('{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}}', "message_start")
        + fr('{"type":"content_block_start","index":-5,"content_block":{"type":"text","text":""}}',
             "content_block_start")
        + fr('{"type":"content_block_delta","index":-5,"delta":{"type":"text_delta","text":"neg"}}',
             "content_block_delta")
        + fr('{"type":"content_block_start","index":1e30,"content_block":{"type":"text","text":""}}',
             "content_block_start")
        + fr('{"type":"content_block_delta","index":1e30,"delta":{"type":"text_delta","text":"big"}}',
             "content_block_delta")
        + fr('{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
             "content_block_start")
        + fr('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}',
             "content_block_delta")
        + fr('{"type":"content_block_stop","index":0}', "content_block_stop")
        + fr('{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
             "message_delta")
        + fr('{"type":"message_stop"}', "message_stop"),
        ["ok"], [1, 2, 3, 4]),
    "anthropic-message-fields": (
        fr('{"type":"message_start","message":{"id":"m","model":"c","usage":[]}}', "message_start")
        + fr('{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
             "content_block_start")
        + fr('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}',
             "content_block_delta")
        + fr('{"type":"content_block_stop","index":0}', "content_block_stop")
        + fr('{"type":"message_delta","delta":[],"usage":"x"}', "message_delta")
        + fr('{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}',
             "message_delta")
        + fr('{"type":"message_stop"}', "message_stop"),
        ["ok"], [0, 4, 4]),
    "openai-responses": (
        fr('{"type":"response.created","response":{"id":"r","output":"x"}}', "response.created")
        + fr('{"type":"response.output_item.added","output_index":-1,"item":{"type":"message","content":[]}}',
             "response.output_item.added")
        + fr('{"type":"response.output_text.delta","output_index":-1,"content_index":0,"delta":"neg"}',
             "response.output_text.delta")
        + fr('{"type":"response.output_text.delta","output_index":1e30,"content_index":0,"delta":"big"}',
             "response.output_text.delta")
        + fr('{"type":"response.output_text.delta","output_index":0,"content_index":-2,"delta":"negc"}',
             "response.output_text.delta")
        + fr('{"type":"response.output_text.delta","output_index":true,"content_index":0,"delta":"bool"}',
             "response.output_text.delta")
        + fr('{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":5}',
             "response.output_text.delta")
        + fr('{"type":"response.output_item.added","output_index":0,"item":"x"}', "response.output_item.added")
        + fr('{"type":"response.output_item.added","output_index":0,"item":{"type":5}}',
             "response.output_item.added")
        + fr('{"type":"response.output_item.added","output_index":0,"item":{"type":"message","content":[]}}',
             "response.output_item.added")
        + fr('{"type":"response.content_part.added","output_index":0,"content_index":0,"part":[]}',
             "response.content_part.added")
        + fr('{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"ok"}',
             "response.output_text.delta")
        + fr('{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c",'
             '"name":"f"}}', "response.output_item.added")
        + fr('{"type":"response.function_call_arguments.delta","output_index":1,"delta":{"a":1}}',
             "response.function_call_arguments.delta")
        + fr('{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}',
             "response.function_call_arguments.delta")
        + fr('{"type":"response.completed","response":{"id":"r","status":"completed","usage":[]}}',
             "response.completed"),
        ["ok"], [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 15]),
    "gemini": (
        fr('{"candidates":[{"index":-1,"content":{"parts":[{"text":"A"}]}}]}')
        + fr('{"candidates":[{"index":1e30,"content":{"parts":[{"text":"B"}]}}]}')
        + fr('{"candidates":[{"index":false,"content":{"parts":[{"text":"C"}]}}]}')
        + fr('{"candidates":[{"content":"x"}]}')
        + fr('{"candidates":[7]}')
        + fr('{"candidates":[{"content":{"parts":[7,{"text":"D"}]}}]}')
        + fr('{"candidates":[{"content":{"parts":[{"text":"ok"}]}}],"usageMetadata":[]}')
        + fr('{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}],'
             '"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2,"totalTokenCount":3}}'),
        ["ABCDok"], [0, 1, 2, 3, 4, 5, 6]),
}

#: what the diagnostics say, in order (each message names the field and what it should be)
MESSAGES = {
    "anthropic-message-fields": ["message.usage is a JSON array, not an object",
                                 "message_delta delta is a JSON array, not an object",
                                 "message_delta usage is a JSON string, not an object"],
    "openai-responses": ["response.output is a JSON string, not an array",
                         "output_index -1, not a non-negative integer",
                         "output_index -1, not a non-negative integer",
                         "output_index 1e+30, not a non-negative integer",
                         "content_index -2, not a non-negative integer",
                         "output_index True, not a non-negative integer",
                         "delta is a JSON number, not a string",
                         "item is a JSON string, not an object",
                         "item.type is a JSON number, not a string",
                         "part is a JSON array, not an object",
                         "delta is a JSON object, not a string",
                         "response.usage is a JSON array, not an object"],
    "gemini": ["candidate index -1 is not a non-negative integer; taken as its position in candidates (0)",
               "candidate index 1e+30 is not a non-negative integer",
               "candidate index False is not a non-negative integer",
               "content is a JSON string, not an object",
               "a candidate is a JSON number, not an object",
               "a part is a JSON number, not an object",
               "usageMetadata is a JSON array, not an object"],
}


def check(r: dict, texts, malformed) -> None:
    assert [b["text"] for b in r["blocks"] if b["type"] == "text"] == texts
    assert all(b["choice"] == 0 for b in r["blocks"])       # no choice -1
    assert [d["frame"] for d in r["diagnostics"] if d["code"] == "malformed-event"] == malformed
    assert r["terminated"] is True


@pytest.mark.parametrize("case", sorted(CASES))
def test_wrong_types_and_bad_indexes_are_malformed_events(case):
    body, texts, malformed = CASES[case]
    fmt = case if case in ("openai-chat", "openai-responses") else case.split("-")[0]
    data = body.encode()
    whole = decode_bytes(fmt, data).result()
    check(whole, texts, malformed)
    if case in MESSAGES:
        said = [d["message"] for d in whole["diagnostics"] if d["code"] == "malformed-event"]
        assert len(said) == len(MESSAGES[case])
        for message, expected in zip(said, MESSAGES[case]):
            assert expected in message
    if case == "anthropic-message-fields":   # the good message_delta still counts
        assert whole["finish_reason"] == {"canonical": "stop", "raw": "end_turn"}
        assert whole["usage"]["output_tokens"] == 3
    if case == "openai-responses":           # the call's string fragment is kept, the object one not
        assert [b["arguments"] for b in whole["blocks"] if b["type"] == "tool_call"] == ["{}"]
        assert whole["usage"]["raw"] is None
    if case == "gemini":                     # candidate -1 is no choice -1; the last usage is the usage
        assert whole["usage"]["input_tokens"] == 1 and whole["usage"]["output_tokens"] == 2
        assert whole["finish_reason"]["canonical"] == "stop"
        assert not any(d["code"] == "missing-terminator" for d in whole["diagnostics"])
    assert decode_bytes(fmt, data, 1).result() == whole      # byte by byte
    for cut in range(1, len(data)):
        d = StreamDecoder(fmt)
        d.feed(data[:cut])
        d.feed(data[cut:])
        d.end()
        assert d.result() == whole, cut
