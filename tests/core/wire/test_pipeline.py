"""The pipeline object that ties framing, one adapter and the reducer together."""
from __future__ import annotations

import pytest

from core.wire.errors import LocalProtocolError
from core.wire.formats import FORMATS
from core.wire.pipeline import StreamDecoder, decode_bytes
from tests.corpus import corpus_files


def test_stream_decoder_refuses_bytes_after_end():
    d = StreamDecoder("anthropic")
    d.feed(b"event: ping\ndata: {\"type\": \"ping\"}\n\n")
    d.end()
    with pytest.raises(LocalProtocolError):
        d.feed(b"partial line without end")


def test_items_keep_frames_and_comments_in_order_and_events_fold_into_the_reply():
    body = (b": keepalive\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n"
            b"event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n")
    d = decode_bytes("anthropic", body, 5)
    assert [type(i).__name__ for i in d.items] == ["SSEComment", "SSEFrame", "SSEFrame"]
    assert d.frames == 2 and d.bytes_received == len(body)
    assert d.reply.keepalives == 1 and d.reply.terminated


def test_unknown_format_is_a_protocol_error():
    with pytest.raises(LocalProtocolError):
        StreamDecoder("openai-completions")


_CORPUS = [(fmt, path) for fmt in FORMATS for path in corpus_files(fmt)]


@pytest.mark.skipif(not _CORPUS, reason="../shared/corpus is absent")
@pytest.mark.parametrize("fmt,path", _CORPUS, ids=[f"{p.parent.name}/{p.stem}" for _, p in _CORPUS])
def test_iter_events_gives_what_feed_per_chunk_gives(fmt, path):
    data = path.read_bytes()
    for size in (1, 7, 1024):
        pieces = [data[i:i + size] for i in range(0, len(data), size)]
        fed = StreamDecoder(fmt)
        expected = [e for p in pieces for e in fed.feed(p)] + fed.end()
        it = StreamDecoder(fmt)
        got = list(it.iter_events(iter(pieces)))
        assert got == expected, size
        assert it.result() == fed.result()
        assert it.items == fed.items
        assert it.bytes_received == len(data)


def test_iter_events_folds_each_event_before_yielding_it_and_can_stop_before_end():
    body = (b"event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\"id\": \"m\", \"usage\": {}}}\n\n"
            b"event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, "
            b"\"content_block\": {\"type\": \"text\", \"text\": \"\"}}\n\n"
            b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, "
            b"\"delta\": {\"type\": \"text_delta\", \"text\": \"hi\"}}\n\n")
    d = StreamDecoder("anthropic")
    seen = []
    for e in d.iter_events([body[i:i + 3] for i in range(0, len(body), 3)], end=False):
        seen.append((type(e).__name__, d.reply.events))
    assert seen[-1] == ("TextDelta", len(seen))
    assert not d.reply.terminated and d.reply.blocks[0].text == "hi"
    tail = d.end()
    assert [e.code for e in tail if hasattr(e, "code")] == ["missing-terminator"]
    with pytest.raises(LocalProtocolError):
        list(d.iter_events([b"data: {}\n\n"]))


def test_frames_a_decoder_keeps_hold_no_second_copy_of_their_data():
    from core.wire.sse import SSEDecoder, SSEFrame

    body = b"".join(b'data: {"n": %d, "text": "%s"}\n\n' % (i, b"x" * 50) for i in range(20)) + b"data: [DONE]\n\n"
    kept = StreamDecoder("openai-chat")          # keeps its items, as a pane does
    for i in range(0, len(body), 100):
        kept.feed(body[i:i + 100])
    kept.end()
    plain = SSEDecoder()
    expected = plain.feed(body) + plain.end()
    assert kept.items == expected                # the same frames by value...
    assert all(type(f) is not SSEFrame for f in kept.items)   # ...compact: their data is read from their bytes
    assert [f.data for f in kept.items] == [f.data for f in expected]
    lean = StreamDecoder("openai-chat", keep_items=False)   # nothing kept: its frames hold their text (fastest)
    lean.feed(body)
    assert lean.items == [] and type(lean.sse.feed(b"data: {}\n\n")[0]) is SSEFrame
