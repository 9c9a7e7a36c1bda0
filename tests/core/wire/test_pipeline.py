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
    from core.wire.sse import SSEComment, SSEFrame

    assert [isinstance(i, SSEFrame) for i in d.items] == [False, True, True]
    assert isinstance(d.items[0], SSEComment)
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
    from core.wire.sse import CompactSSEFrame, SSEDecoder, SSEFrame

    body = b"".join(b'data: {"n": %d, "text": "%s"}\n\n' % (i, b"x" * 50) for i in range(20)) + b"data: [DONE]\n\n"
    kept = StreamDecoder("openai-chat")          # keeps its items, as a pane does
    for i in range(0, len(body), 100):
        kept.feed(body[i:i + 100])
    kept.end()
    plain = SSEDecoder()
    expected = plain.feed(body) + plain.end()
    assert kept.items == expected                # the same frames by value...
    assert kept.compact_frames and all(isinstance(f, CompactSSEFrame) for f in kept.items)   # ...read from bytes
    assert [f.data for f in kept.items] == [f.data for f in expected]
    lean = StreamDecoder("openai-chat", keep_items=False)   # nothing kept: its frames hold their text (fastest)
    lean.feed(body)
    assert not lean.compact_frames
    assert lean.items == [] and type(lean.sse.feed(b"data: {}\n\n")[0]) is SSEFrame
    # the choice is the caller's to make either way
    plain_kept = StreamDecoder("openai-chat", compact_frames=False)
    plain_kept.feed(body)
    assert plain_kept.items == expected and all(type(f) is SSEFrame for f in plain_kept.items)
    compact_lean = StreamDecoder("openai-chat", keep_items=False, compact_frames=True)
    assert isinstance(compact_lean.sse.feed(b"data: {}\n\n")[0], CompactSSEFrame)


# -- hostile input stays bounded (issue 11, item 9) -------------------------------------------------------
def test_comments_past_the_limit_are_counted_not_kept_and_said_so(monkeypatch):
    import core.wire.pipeline as pl

    monkeypatch.setattr(pl, "COMMENTS_KEPT", 5)
    body = b": x\n" * 8 + b'data: {"choices": []}\n\n' + b":y\r\n" * 4 + b"data: [DONE]\n\n"
    d = StreamDecoder("openai-chat")
    for i in range(0, len(body), 3):
        d.feed(body[i:i + 3])
    d.end()
    assert d.comments == 12 and d.comments_not_kept == 7
    assert sum(1 for i in d.items if type(i).__name__ == "SSEComment") == 5 and d.frames == 2
    notes = [x for x in d.reply.diagnostics if x.code == "comments-not-kept"]
    assert len(notes) == 1 and "counted" in notes[0].message
    # the comments not kept are still accounted for: nothing of this body lies outside the event stream
    assert d.bytes_outside_items(body) == b""
    assert d.bytes_outside_items(body + b'{"error": "x"}') == b'{"error": "x"}'


def test_diagnostics_past_the_limit_per_code_are_counted_and_the_count_said(monkeypatch):
    import core.wire.pipeline as pl

    monkeypatch.setattr(pl, "DIAGNOSTICS_PER_CODE", 3)
    body = b"data: not json\r\r" * 10 + b"data: [DONE]\r\r"
    d = StreamDecoder("openai-chat")
    events = d.feed(body) + d.end()
    codes = [x.code for x in d.reply.diagnostics]
    assert codes.count("data-not-json") == 3
    listed = [x for x in d.reply.diagnostics if x.code == "diagnostics-not-listed"]
    assert len(listed) == 2 and "7 more `data-not-json` findings (of 10)" in listed[1].message
    assert [e for e in events if type(e).__name__ == "Diagnostic"] == d.reply.diagnostics   # events = reply
    assert d.frames == 11 and d.reply.terminated


@pytest.mark.parametrize("step", [1, 3, 1000])
def test_frames_carrying_only_counted_findings_are_counted_past_the_limit(monkeypatch, step):
    import core.wire.pipeline as pl

    monkeypatch.setattr(pl, "DIAGNOSTICS_PER_CODE", 3)
    monkeypatch.setattr(pl, "FRAMES_OF_COUNTED_FINDINGS_KEPT", 2)
    text = b'data: {"choices": [{"index": 0, "delta": {"content": "after"}}]}\r\r'
    body = b"data: not json\r\r" * 10 + text + b"data: [DONE]\r\r"
    d = StreamDecoder("openai-chat")
    for i in range(0, len(body), step):
        d.feed(body[i:i + step])
    d.end()
    # 3 broken frames listed their finding, 1 said the rest are counted, 2 more kept, the other 4 counted;
    # the frames after are all kept
    assert d.frames == 12 and d.frames_not_kept == 4
    kept = [i.n for i in d.items]
    assert kept == [0, 1, 2, 3, 4, 5, 10, 11]   # (frame 3 said that the rest would be counted)
    assert d.reply.ordered_blocks()[0].text == "after" and d.reply.terminated
    notes = [x for x in d.reply.diagnostics if x.code == "frames-not-kept"]
    assert len(notes) == 1 and notes[0].frame == 6 and "bytes are in the capture" in notes[0].message
    # every byte is still accounted for (the frames not kept are byte ranges, as comments not kept are)
    assert d.bytes_outside_items(body) == b""
    assert d.bytes_outside_items(body + b"stray") == b"stray"


_BOUNDED_RUN = """
import resource, sys
from core.wire.pipeline import StreamDecoder
unit, total = eval(sys.argv[1]), int(sys.argv[2])
chunk = unit * (65536 // len(unit))
d = StreamDecoder("openai-chat")
d.feed(chunk)                      # (imports and first allocations are not the stream's)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(total // len(chunk)):
    d.feed(chunk)
d.end()
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024
print(grown / (total // len(chunk) * len(chunk)), len(d.items), len(d.reply.diagnostics), d.frames)
"""


@pytest.mark.slow
@pytest.mark.parametrize("unit,total,bound", [(b":x\n", 20_000_000, 2), (b"data: x\r\r", 20_000_000, 3)])
def test_many_megabytes_of_comments_or_broken_frames_stay_bounded(unit, total, bound):
    # peak memory per byte received (bench/memory_bench.py prints these figures): comments are counted past a
    # limit (a few bytes each); 9-byte broken frames, whose `data-not-json` finding is counted past a limit, are
    # counted too past a limit (they were one frame object each: 35-50 bytes of memory per byte)
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-c", _BOUNDED_RUN, repr(unit), str(total)], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).resolve().parents[3]).stdout.split()
    per_byte, items, diagnostics, frames = float(out[0]), int(out[1]), int(out[2]), int(out[3])
    assert per_byte < bound, per_byte
    assert diagnostics <= 100 + 5   # (DIAGNOSTICS_PER_CODE listed, the notices, missing-terminator)
    assert items == (10_000 if unit == b":x\n" else 10_000 + 101) and frames >= (0 if unit == b":x\n" else 2_000_000)
