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
}


def check(r: dict, texts, malformed) -> None:
    assert [b["text"] for b in r["blocks"] if b["type"] == "text"] == texts
    assert all(b["choice"] == 0 for b in r["blocks"])       # no choice -1
    assert [d["frame"] for d in r["diagnostics"] if d["code"] == "malformed-event"] == malformed
    assert r["terminated"] is True


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_wrong_types_and_bad_indexes_are_malformed_events(fmt):
    body, texts, malformed = CASES[fmt]
    data = body.encode()
    whole = decode_bytes(fmt, data).result()
    check(whole, texts, malformed)
    assert decode_bytes(fmt, data, 1).result() == whole      # byte by byte
    for cut in range(1, len(data)):
        d = StreamDecoder(fmt)
        d.feed(data[:cut])
        d.feed(data[cut:])
        d.end()
        assert d.result() == whole, cut
