"""The pipeline object that ties framing, one adapter and the reducer together."""
from __future__ import annotations

import pytest

from core.errors import ProtocolError
from core.pipeline import StreamDecoder, decode_bytes


def test_stream_decoder_refuses_bytes_after_end():
    d = StreamDecoder("anthropic")
    d.feed(b"event: ping\ndata: {\"type\": \"ping\"}\n\n")
    d.end()
    with pytest.raises(ProtocolError):
        d.feed(b"partial line without end")


def test_items_keep_frames_and_comments_in_order_and_events_fold_into_the_reply():
    body = (b": keepalive\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n"
            b"event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n")
    d = decode_bytes("anthropic", body, 5)
    assert [type(i).__name__ for i in d.items] == ["SSEComment", "SSEFrame", "SSEFrame"]
    assert d.frames == 2 and d.bytes_received == len(body)
    assert d.reply.keepalives == 1 and d.reply.terminated


def test_unknown_format_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        StreamDecoder("openai-completions")
