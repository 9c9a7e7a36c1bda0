"""The SSE decoder against the WHATWG event-stream rules, and chunking invariance (h11 / openai-python style)."""
from __future__ import annotations

import time

import pytest
from hypothesis import given, settings, strategies as st

from core.wire.errors import LocalProtocolError
from core.wire.sse import CompactSSEFrame, SSEComment, SSEDecoder, SSEDiagnostic, SSEFrame


def decode(data: bytes, pieces: list[int] | None = None):
    d = SSEDecoder()
    out = []
    if pieces is None:
        out += d.feed(data)
    else:
        pos = 0
        for p in pieces:
            out += d.feed(data[pos:p])
            pos = p
        out += d.feed(data[pos:])
    out += d.end()
    return out


def frames(items):
    return [i for i in items if isinstance(i, SSEFrame)]


def codes(items):
    return [i.code for i in items if isinstance(i, SSEDiagnostic)]


def summary(items):
    """What each item says, its raw bytes included (frames and comments): the same under any split."""
    return [(type(i).__name__, i.to_json() if hasattr(i, "to_json") else (i.code, i.offset), getattr(i, "raw", None))
            for i in items]


# -- WHATWG spec examples (html.spec.whatwg.org, "server-sent events", section 9.2.x) ------------------------
def test_spec_example_stock_ticker_multiline_data():
    items = decode(b"data: YHOO\ndata: +2\ndata: 10\n\n")
    assert [f.data for f in frames(items)] == ["YHOO\n+2\n10"]
    assert frames(items)[0].event == "message"


def test_spec_example_comment_and_ids():
    body = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    items = decode(body)
    fs = frames(items)
    assert [f.data for f in fs] == ["first event", "second event", " third event"]
    # `id` with no value resets the last event id to empty
    assert [f.id for f in fs] == ["1", "", ""]
    comments = [i for i in items if isinstance(i, SSEComment)]
    assert comments[0].text == "test stream" and comments[0].offset == 0


def test_spec_example_empty_data_lines():
    items = decode(b"data\n\ndata\ndata\n\ndata:\n")
    fs = frames(items)
    # "data" alone is a field with an empty value; the third block is unterminated at end of input
    assert [f.data for f in fs] == ["", "\n", ""]
    assert codes(items) == ["unterminated-final-event"]


def test_spec_example_space_after_colon_is_optional():
    items = decode(b"data:test\n\ndata: test\n\n")
    assert [f.data for f in frames(items)] == ["test", "test"]


def test_event_type_and_default():
    fs = frames(decode(b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: 113411\n\n"))
    assert [(f.event, f.data) for f in fs] == [("add", "73857293"), ("remove", "2153"), ("message", "113411")]


def test_line_endings_cr_crlf_lf_and_split_crlf():
    body = b"data: a\r\rdata: b\r\n\r\ndata: c\n\n"
    assert [f.data for f in frames(decode(body))] == ["a", "b", "c"]
    # CR at the end of one chunk, LF at the start of the next: one line end, not a blank line
    items = decode(b"data: x\r\ndata: y\r\n\r\n", pieces=[8])
    assert [f.data for f in frames(items)] == ["x\ny"]


def test_bom_is_stripped_once_even_split():
    body = b"\xef\xbb\xbfdata: a\n\n"
    for cut in range(1, 4):
        assert [f.data for f in frames(decode(body, [cut]))] == ["a"]
    # a second BOM is content
    fs = frames(decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n"))
    assert [f.data for f in fs] == ["b"]


def test_id_with_nul_is_ignored_and_retry_digits_only():
    fs = frames(decode(b"id: 7\ndata: a\n\nid: 8\x00x\nretry: 12x\ndata: b\n\nretry: 3000\ndata: c\n\n"))
    assert [(f.id, f.retry) for f in fs] == [("7", None), ("7", None), ("7", 3000)]


# a `retry:` value longer than Python converts (4300 digits) raised ValueError out of the decoder
HUGE_RETRY = b"retry: " + b"9" * 5000 + b"\ndata: a\n\nretry: " + b"0" * 5000 + b"7\ndata: b\n\n" \
    + b"retry: 18446744073709551615\nretry: 18446744073709551616\ndata: c\n\nretry: 5\nretry: 1" + b"0" * 4400 \
    + b"\ndata: d\n\n"
HUGE_RETRY_EXPECTED = [("a", None), ("b", 7), ("c", 2 ** 64 - 1), ("d", 5)]


def test_a_retry_too_large_is_ignored_without_an_exception():
    """WHATWG: retry is set when its value is all ASCII digits; one past 64 bits is ignored (as browsers do), the
    earlier value kept; leading zeros do not count."""
    fs = frames(decode(HUGE_RETRY))
    assert [(f.data, f.retry) for f in fs] == HUGE_RETRY_EXPECTED
    assert codes(decode(HUGE_RETRY)) == []


def test_a_retry_too_large_byte_by_byte_and_split_at_every_offset():
    items = decode(HUGE_RETRY)
    assert summary(decode(HUGE_RETRY, list(range(1, len(HUGE_RETRY))))) == summary(items)   # byte by byte
    body = b"retry: " + b"9" * 4400 + b"\ndata: a\n\nretry: 3\ndata: b\n\n"   # (just past the limit)
    whole = summary(decode(body))
    assert [(f.data, f.retry) for f in frames(decode(body))] == [("a", None), ("b", 3)]
    for cut in range(1, len(body)):
        assert summary(decode(body, [cut])) == whole, cut


def test_decode_frames_prints_a_huge_retry(tmp_path):
    import json
    import subprocess
    import sys

    from tests.corpus import ROOT
    f = tmp_path / "r.sse"
    f.write_bytes(HUGE_RETRY)
    for size in (None, "1", "4096"):
        p = subprocess.run([sys.executable, str(ROOT / "main.py"), "decode", "--frames", str(f)]
                           + (["--chunk-size", size] if size else []), capture_output=True, cwd=ROOT, timeout=60)
        assert p.returncode == 0, p.stderr.decode()[-300:]
        assert [(o["data"], o["retry"]) for o in map(json.loads, p.stdout.splitlines())] == HUGE_RETRY_EXPECTED


def test_field_without_colon_and_unknown_fields():
    fs = frames(decode(b"foo: bar\ndata\nevent\n\n"))
    assert len(fs) == 1 and fs[0].data == "" and fs[0].event == "message"


def test_event_without_data_is_not_dispatched_but_reported():
    items = decode(b"event: ping\n\ndata: x\n\n")
    assert [f.data for f in frames(items)] == ["x"]
    assert codes(items) == ["event-without-data"]


def test_utf8_split_across_chunks_is_whole():
    body = "data: héllo 😀 wörld\n\n".encode()
    for cut in range(1, len(body)):
        assert frames(decode(body, [cut]))[0].data == "héllo 😀 wörld"


def test_invalid_utf8_becomes_replacement_with_diagnostic():
    items = decode(b"data: a\xffb\n\n")
    assert frames(items)[0].data == "a\ufffdb"
    assert codes(items) == ["invalid-utf8"]


def test_offsets_and_raw_bytes():
    body = b"event: a\ndata: 1\n\n: c\ndata: 2\r\n\r\n"
    items = decode(body)
    fs = frames(items)
    assert [f.offset for f in fs] == [0, 22]
    assert fs[0].raw == b"event: a\ndata: 1\n\n"
    assert fs[1].raw == b"data: 2\r\n\r\n"
    assert body[fs[1].offset:].startswith(b"data: 2")
    c = [i for i in items if isinstance(i, SSEComment)][0]
    assert (c.offset, c.n, c.text) == (18, 1, "c")


def test_unterminated_final_event_is_dispatched_with_diagnostic():
    items = decode(b"data: a\n\ndata: [DONE]")
    assert [f.data for f in frames(items)] == ["a", "[DONE]"]
    assert codes(items) == ["unterminated-final-event"]


def test_feed_after_end_is_a_protocol_error():
    d = SSEDecoder()
    d.end()
    with pytest.raises(LocalProtocolError):
        d.feed(b"data: x\n\n")


def _feed(events: int, size: int) -> tuple[float, list]:
    """(best of 3 times, items) for `events` events of `size` bytes each, fed in 4 KiB pieces (small pieces
    make per-piece work on the pending buffer show: the quadratic copies grow as the bytes over the piece size)."""
    body = (b"data: " + b"x" * size + b"\n\n") * events
    pieces = [body[i:i + 4096] for i in range(0, len(body), 4096)]
    best, out = float("inf"), []
    for _ in range(3):
        d = SSEDecoder()
        t = time.perf_counter()
        out = []
        for piece in pieces:
            out += d.feed(piece)
        out += d.end()
        best = min(best, time.perf_counter() - t)
    return best, out


def test_single_10mb_event_is_linear():
    """One 10 MB event takes about as long as ten 1 MB events (the same bytes, in the same pieces), not ten
    times as long, as it would if the pending buffer were re-joined or re-scanned on every piece.

    The two runs carry the same bytes because the time of plain copies is not linear in their size here: 1 MB
    fits the 4 MiB L2 cache and 10 MB does not, so one 10 MB event takes 11-36x one 1 MB event even when the
    decoder is linear. Measured on this 2-core machine: 1.2-2.8x; with the buffer re-joined per piece: 16x."""
    t_ten, out = _feed(10, 1 << 20)
    assert [len(f.data) for f in frames(out)] == [1 << 20] * 10
    t_one, out = _feed(1, 10 << 20)
    assert [len(f.data) for f in frames(out)] == [10 << 20]
    assert t_one < 6 * t_ten, f"ten 1 MB events: {t_ten * 1e3:.1f} ms, one 10 MB event: {t_one * 1e3:.1f} ms"


SAMPLES = [
    b"data: a\n\n",
    b"event: x\r\ndata: 1\r\ndata: 2\r\n\r\n: keep\r\n\r\ndata: 3\r\r",
    "\ufeffid: 5\ndata: é😀\n\nretry: 10\ndata:\n\n".encode(),
    b"data: a\xff\xfe\n\ndata: b",
    b": only a comment\n",
]


@pytest.mark.parametrize("body", SAMPLES)
def test_every_split_point_and_one_byte_at_a_time(body):
    whole = summary(decode(body))
    for cut in range(1, len(body)):
        assert summary(decode(body, [cut])) == whole, cut
    assert summary(decode(body, list(range(1, len(body))))) == whole


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"data: ", b"event: e", b"id: 1", b"retry: 5", b":c", b"\n", b"\r", b"\r\n",
                                 "é".encode(), "😀".encode(), b"x", b"\xff", b"\xef\xbb\xbf", b"\x00"]),
                max_size=40),
       st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_random_streams_random_splits(parts, cuts):
    body = b"".join(parts)
    whole = summary(decode(body))
    assert summary(decode(body, sorted(c for c in cuts if c <= len(body)))) == whole


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(body):
    items = decode(body)
    assert all(isinstance(i, (SSEFrame, SSEComment, SSEDiagnostic)) for i in items)


# -- the fast paths (regular streams decoded event by event, lines held back, iter_items) --------------------
def _regular_body(events, crlf: bool) -> bytes:
    nl = b"\r\n" if crlf else b"\n"
    out = []
    for kind, name, data in events:
        if kind == "comment":
            out.append(b": " + data + nl)
        elif kind == "named":
            out.append(b"event: " + name + nl + b"data: " + data + nl + nl)
        elif kind == "id":
            out.append(b"id: 7" + nl + b"data:" + data + nl + nl)
        else:
            out.append(b"data: " + data + nl + nl)
    return b"".join(out)


_EVENT = st.tuples(st.sampled_from(["data", "data", "named", "named", "comment", "id"]),
                   st.sampled_from([b"content_block_delta", b"", b"x"]),
                   st.sampled_from([b'{"a": 1}', b"", "é😀".encode(), b"[DONE]", b"a\xffb", b"x: y"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(_EVENT, max_size=12), st.booleans(), st.lists(st.integers(min_value=0, max_value=600), max_size=10))
def test_regular_streams_any_split_same_items_and_raw(events, crlf, cuts):
    body = _regular_body(events, crlf)
    whole = decode(body)
    split = decode(body, sorted(c for c in cuts if c <= len(body)))
    assert summary(split) == summary(whole)   # raw bytes too, a CRLF cut between its CR and LF included
    for f in frames(whole):
        assert body[f.offset:].startswith(f.raw)


def test_items_come_with_the_feed_that_completes_their_line():
    d = SSEDecoder()
    assert d.feed(b"event: a\n") == []            # held back: it produces nothing yet
    assert [i.text for i in d.feed(b": note\n")] == ["note"]   # a comment is never held back
    fs = d.feed(b"data: x\n\n")
    assert [(f.event, f.data, f.offset, f.raw) for f in fs] == [("a", "x", 0, b"event: a\ndata: x\n\n")]
    bad = d.feed(b"event: \xff\n")               # a line that yields a diagnostic is decoded at once
    assert codes(bad) == ["invalid-utf8"]
    assert frames(d.feed(b"data: y\n\n"))[0].event == "\ufffd"


def test_a_cr_line_end_followed_by_more_bytes_does_not_swallow_the_next_lf():
    d = SSEDecoder()
    items = d.feed(b"data: a\rdata: b") + d.feed(b"\n\n") + d.end()
    assert [f.data for f in frames(items)] == ["a\nb"]
    assert codes(items) == []


def test_iter_items_equals_feed_per_chunk_then_end():
    body = _regular_body([("named", b"e", b"1"), ("comment", b"", b"c"), ("data", b"", b"2")], True) + b"data: 3"
    for size in (1, 2, 7, 1024):
        pieces = [body[i:i + size] for i in range(0, len(body), size)]
        d = SSEDecoder()
        expected = [i for p in pieces for i in d.feed(p)] + d.end()
        got = list(SSEDecoder().iter_items(iter(pieces)))
        assert got == expected
        d2 = SSEDecoder()
        assert list(d2.iter_items(pieces, end=False)) == expected[:-2]  # the unterminated event is still open
        assert d2.end() == expected[-2:]


def _cut_cycling(body: bytes, sizes: list[int]) -> list[bytes]:
    """`body` cut into pieces of the given sizes, taken in turn (and again from the first)."""
    pieces, pos, k = [], 0, 0
    while pos < len(body):
        size = sizes[k % len(sizes)]
        pieces.append(body[pos:pos + size])
        pos += size
        k += 1
    return pieces


def _yield_points(decoder: SSEDecoder, pieces: list[bytes]) -> list[tuple[int, object]]:
    """(how many pieces iter_items had taken when it yielded the item, item), for every item."""
    taken = [0]

    def source():
        for p in pieces:
            taken[0] += 1
            yield p

    return [(taken[0], item) for item in decoder.iter_items(source())]


_LINE = st.sampled_from([b"data: x", b"data:", b"event: e", b"id: 3", b"retry: 9", b": ping", b":", b"",
                         "data: é😀".encode(), b"data: a\xffb", b"field", b"\xef\xbb\xbfdata: bom",
                         b"data: " + b"x" * 300])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_LINE, st.sampled_from([b"\n", b"\r\n", b"\r"])), max_size=14),
       st.lists(st.one_of(st.integers(min_value=1, max_value=9), st.integers(min_value=200, max_value=400)),
                min_size=1, max_size=40))
@pytest.mark.slow
def test_iter_items_yields_what_feed_does_and_no_later(lines, sizes):
    body = b"".join(line + end for line, end in lines) + b"data: open"
    pieces = _cut_cycling(body, sizes)
    d = SSEDecoder()
    expected = []
    for i, p in enumerate(pieces, 1):
        expected += [(i, item) for item in d.feed(p)]
    expected += [(len(pieces), item) for item in d.end()]
    got = _yield_points(SSEDecoder(), pieces)
    assert [item for _, item in got] == [item for _, item in expected]
    for (at, item), (due, _) in zip(got, expected):
        if isinstance(item, SSEDiagnostic) and item.code == "invalid-utf8":
            assert at >= due   # may come with its event, never before its line ended
        else:
            assert at == due, item


def test_iter_items_stopped_early_still_feeds_what_it_took():
    pieces = [b"event: a\n", b"data: 1\n\nevent: b", b"\ndata: 2\n\n"]
    d = SSEDecoder()
    it = d.iter_items(iter(pieces))
    first = next(it)
    assert (first.event, first.data) == ("a", "1")
    it.close()
    # it had taken two pieces and kept back the unfinished `event: b` line: closing handed that to the decoder
    rest = d.feed(pieces[2]) + d.end()
    assert [(f.event, f.data) for f in frames(rest)] == [("b", "2")]


def test_long_multiline_event_in_small_pieces_stays_linear():
    body = b"event: x\n" + b"data: abc\n" * 20000 + b"\n"
    d = SSEDecoder()
    out = []
    for i in range(0, len(body), 7):
        out += d.feed(body[i:i + 7])
    out += d.end()
    assert len(frames(out)) == 1 and frames(out)[0].data.count("\n") == 19999


def test_frames_from_the_fast_path_are_ordinary_frozen_frames():
    import dataclasses

    f = frames(decode(b"event: e\ndata: x\n\n"))[0]
    assert type(f) is SSEFrame and dataclasses.is_dataclass(f)
    assert f == SSEFrame(0, 0, "e", "x", "", None, b"event: e\ndata: x\n\n")
    assert hash(f) == hash(SSEFrame(0, 0, "e", "x", "", None, b"event: e\ndata: x\n\n"))
    assert dataclasses.replace(f, data="y").data == "y"
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.data = "z"  # type: ignore[misc]
    c = [i for i in decode(b": hi\n") if isinstance(i, SSEComment)][0]
    assert type(c) is SSEComment and c == SSEComment(0, 0, "hi", b": hi\n")


# -- compact frames (kept for long by a pane: no decoded copy of their data) ----------------------------------
def _decode_with(decoder: SSEDecoder, body: bytes, size: int | None) -> list:
    cuts = [body] if size is None else [body[i:i + size] for i in range(0, len(body), size)]
    return [i for c in cuts for i in decoder.feed(c)] + decoder.end()


@pytest.mark.parametrize("body,size", [
    (b"event: e\ndata: {\"a\": \"\xc3\xa9\"}\n\ndata: x\n\n", None),
    (b"data: one\r\n\r\nevent: two\r\ndata:2\r\n\r\n", 5),
    (b"data: a\ndata: b\n\nid: 3\ndata: c\n\n: note\ndata: d\nid: 4\n\n", 3),
    (b"data: a\xffb\n\ndata: open", None),
    (b"data: cr\r\rdata: mixed\r\n\n", 4),
    (b"event: e\ndata: 1\n\ndata: 2\n\n" * 3, 1),
])
def test_compact_frames_equal_and_read_back_as_plain_ones(body, size):
    import dataclasses
    import pickle

    plain = _decode_with(SSEDecoder(), body, size)
    lean = _decode_with(SSEDecoder(compact=True), body, size)
    assert lean == plain and [hash(i) for i in frames(lean)] == [hash(i) for i in frames(plain)]
    for c, f in zip(frames(lean), frames(plain)):
        assert (c.data, c.raw, c.event, c.offset, c.n, c.id) == (f.data, f.raw, f.event, f.offset, f.n, f.id)
        assert repr(c) == type(c).__name__ + repr(f).removeprefix("SSEFrame")   # (the class says which it is)
        assert isinstance(c, SSEFrame) and c.to_json() == f.to_json()
        assert dataclasses.replace(c, data="z").data == "z"
        assert pickle.loads(pickle.dumps(c)) == f
        with pytest.raises(dataclasses.FrozenInstanceError):
            c.data = "y"  # type: ignore[misc]
    assert all(type(f) is SSEFrame for f in frames(plain))
    # the regular ones keep no text (only where their data begins); the others (several data lines, ...) do
    regular = [isinstance(c, CompactSSEFrame) for c in frames(lean)]
    assert any(regular) == (b"id:" not in body and b"\r\r" not in body and b"\xff" not in body)


def test_iter_items_makes_compact_frames_too():
    body = b"event: e\ndata: 1\n\ndata: 2\n\n" * 3
    d = SSEDecoder(compact=True)
    got = list(d.iter_items([body[i:i + 3] for i in range(0, len(body), 3)]))
    assert got == _decode_with(SSEDecoder(), body, None)
    assert all(isinstance(f, CompactSSEFrame) for f in frames(got))


# -- an independent reference: the WHATWG algorithm written plainly, line by line ---------------------------
def _reference(body: bytes) -> list[tuple]:
    """(kind, ...) for every frame and comment, from the spec's steps on the whole body at once."""
    import re

    text = body.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    complete, last = lines[:-1], lines[-1]
    out, data, event, last_id, started = [], [], "", "", False
    for line in complete + ([last] if last else []):
        if line == "":
            if data:
                out.append(("frame", event or "message", "\n".join(data), last_id))
            data, event, started = [], "", False
            continue
        if line.startswith(":"):
            out.append(("comment", line[2:] if line[1:2] == " " else line[1:]))
            continue
        started = True
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
        elif field == "id" and "\0" not in value:
            last_id = value
    if started and data:   # the unterminated last event is dispatched too (a debugging tool shows it)
        out.append(("frame", event or "message", "\n".join(data), last_id))
    return out


def _observed(items) -> list[tuple]:
    return [("frame", i.event, i.data, i.id) if isinstance(i, SSEFrame) else ("comment", i.text)
            for i in items if isinstance(i, (SSEFrame, SSEComment))]


_PART = st.sampled_from([b"data: ", b"data:", b"event: e", b"event:", b"id: 1", b"retry: 5", b": c", b":",
                         b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b"{\"a\": 1}", "é".encode(), "😀".encode(),
                         b"x", b"\xff", b"\xef\xbb\xbf", b"\x00", b"dat", b"a: ", b"data: " + b"y" * 40])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PART, max_size=40), st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=6),
       st.booleans())
def test_every_path_agrees_with_the_plain_reference(parts, sizes, compact):
    body = b"".join(parts)
    expected = _reference(body)
    pieces = _cut_cycling(body, sizes)
    whole = SSEDecoder(compact=compact)
    assert _observed(whole.feed(body) + whole.end()) == expected
    fed = SSEDecoder(compact=compact)
    assert _observed([i for p in pieces for i in fed.feed(p)] + fed.end()) == expected
    assert _observed(SSEDecoder(compact=compact).iter_items(iter(pieces))) == expected


# The steady state of an unnamed-event stream (`SSEDecoder._steady_frames`): once a chunk was all `data:` / blank
# pairs, the next ones are decoded on a short path that must hand over to the general one at any irregular line.
_STEADY_REGULAR = [b"data: {\"a\": 1}", "data: {\"b\": \"é😀\"}".encode(), b"data:x", b"data: [DONE]",
                   b"data: " + b"z" * 300]
_STEADY_IRREGULAR = [b": keepalive", b"event: e\ndata: 1", b"id: 9\ndata: 2", b"data: a\xffb", b"data: 1\ndata: 2",
                     b"retry: 5", b"data: a\rb", b"\xef\xbb\xbf"]
_STEADY_EVENT = st.sampled_from(_STEADY_REGULAR * 8 + _STEADY_IRREGULAR)   # mostly regular: long steady runs


@settings(max_examples=300, deadline=None)
@given(st.lists(_STEADY_EVENT, max_size=80), st.sampled_from([b"\n", b"\r\n", b"\r"]),
       st.lists(st.integers(min_value=1, max_value=900), min_size=1, max_size=5), st.booleans())
def test_the_steady_path_hands_over_at_any_irregular_line(events, nl, sizes, compact):
    body = b"".join(e.replace(b"\n", nl) + nl + nl for e in events)
    expected = _reference(body)
    pieces = _cut_cycling(body, sizes)
    fed = SSEDecoder(compact=compact)
    items = [i for p in pieces for i in fed.feed(p)] + fed.end()
    assert _observed(items) == expected
    for f in frames(items):
        assert body[f.offset:].startswith(f.raw) and f.raw.startswith(body[f.offset:f.offset + 5])
    assert _observed(SSEDecoder(compact=compact).iter_items(iter(pieces))) == expected


def test_a_steady_stream_then_an_irregular_line():
    # chunks of whole `data:` / blank pairs and an unfinished line (what the steady path takes), then a chunk with
    # a comment in it (what it hands over): every item, raw bytes and offsets included, is what the whole body gives
    d = SSEDecoder()
    events = [b"data: %04d\r\n\r\n" % i for i in range(200)]   # 14 bytes an event
    body = b"".join(events[:143]) + b": note\r\n" + b"".join(events[143:])
    whole = decode(body)
    fs = frames(d.feed(body[:705]))
    assert fs[-1].data == "0049" and len(fs) == 50
    fs = d.feed(body[705:1405])
    assert [f.data for f in fs] == ["%04d" % i for i in range(50, 100)]
    assert fs[0].raw == body[700:714] and fs[1].raw == body[714:728] and fs[0].offset == 700
    mixed = d.feed(body[1405:])
    assert [i.text for i in mixed if isinstance(i, SSEComment)] == ["note"]
    assert [f.data for f in frames(mixed)] == ["%04d" % i for i in range(100, 200)]
    assert frames(mixed)[-1].offset == 199 * 14 + len(b": note\r\n")
    assert summary(frames(d.feed(b"")) + d.end()) == [] and summary(
        [i for i in whole if isinstance(i, (SSEFrame, SSEComment))][100:]) == summary(mixed)


def test_iter_items_when_a_pieces_last_byte_is_the_cr_of_a_blank_line():
    # CRLF events cut right after their blank line's CR: the frame comes with that piece, and the LF that starts
    # the next piece is skipped by the decoder (the fast path of iter_items, then its hand-back to feed()).
    events = [b"data: %d\r\n\r\n" % i for i in range(6)] + [b"event: e\r\ndata: n\r\n\r\n", b"data: last\r\n\r\n"]
    body = b"".join(events)
    cuts, pos = [], 0
    for e in events:
        pos += len(e)
        cuts.append(pos - 1)                      # just before the final LF
    pieces = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    expected = _yield_points_of_feed(pieces)
    got = _yield_points(SSEDecoder(), pieces)
    assert got == expected
    fs = [item for _, item in got if isinstance(item, SSEFrame)]
    assert [f.data for f in fs] == [str(i) for i in range(6)] + ["n", "last"]
    assert [f.offset for f in fs] == [sum(map(len, events[:i])) for i in range(len(events))]
    assert all(body[f.offset:].startswith(f.raw) for f in fs)


def _yield_points_of_feed(pieces: list[bytes]) -> list[tuple[int, object]]:
    d = SSEDecoder()
    out = [(i, item) for i, p in enumerate(pieces, 1) for item in d.feed(p)]
    return out + [(len(pieces), item) for item in d.end()]


# -- raw bytes never depend on the split (a CR ending one chunk, its LF starting the next) -------------------
_CR_EDGES = [
    b"data: a\r\n\r\ndata: b\r\n\r\n",                       # a frame's blank line is a CRLF
    b": c\r\ndata: a\r\n\r\n",                               # a comment's line end is a CRLF
    b"data: a\r\n: c\r\ndata: b\r\n\r\n",                    # a comment inside an event: its LF is its own
    b"event: e\r\ndata: a\r\n\r\n: x\r\n: y\r\n",
    b"data: a\r\rdata: b\r\n\r\n: c\r\n\n",                  # CR, CRLF and LF mixed
    b"data: " + b"z" * 300 + b"\r\n\r\n" * 3,
    b"data: a\r\r\r\n: c\r\r\n",                         # a blank line that ends nothing takes the LF
    b"data: a\n\n\r\ndata: b\r: c\r\r\n",
]


def _kept(items) -> list[tuple]:
    return [(type(i).__name__ == "SSEComment", i.offset, i.raw) for i in items if isinstance(i, (SSEFrame, SSEComment))]


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("body", _CR_EDGES)
def test_raw_bytes_are_the_same_under_every_split(body, compact):
    d = SSEDecoder(compact=compact)
    whole = _kept(d.feed(body) + d.end())
    for is_comment, offset, raw in whole:   # (a frame's raw leaves out the comments inside it)
        assert body[offset:offset + len(raw)] == raw if is_comment else body[offset:].startswith(raw[:4])
    for cut in range(1, len(body)):
        a, b = body[:cut], body[cut:]
        fed = SSEDecoder(compact=compact)
        assert _kept(fed.feed(a) + fed.feed(b) + fed.end()) == whole, cut
        # (items are taken first: an item's LF comes with the next chunk, after the item was yielded)
        assert _kept(list(SSEDecoder(compact=compact).iter_items(iter([a, b])))) == whole, cut
    one = SSEDecoder(compact=compact)
    assert _kept([i for k in range(len(body)) for i in one.feed(body[k:k + 1])] + one.end()) == whole
    assert _kept(list(SSEDecoder(compact=compact).iter_items(body[k:k + 1] for k in range(len(body))))) == whole


def test_the_lf_after_a_chunk_ending_cr_goes_to_the_item_that_cr_ended():
    d = SSEDecoder()
    first = d.feed(b"data: a\r\n: c\r")
    comment = [i for i in first if isinstance(i, SSEComment)][0]
    assert comment.raw == b": c\r"                   # all that has come of it yet
    rest = d.feed(b"\ndata: b\r\n\r") + d.feed(b"\n") + d.end()
    assert comment.raw == b": c\r\n"                 # its LF, not the event's
    (frame,) = frames(rest)
    assert frame.raw == b"data: a\r\ndata: b\r\n\r\n" and frame.data == "a\nb"
    kept = {comment, frame}                          # hashes leave raw out: stable across the LF
    assert comment in kept and frame in kept


@pytest.mark.slow
def test_every_line_end_split_of_every_corpus_file_gives_the_same_items_and_raw_bytes():
    # every cut next to a line-end byte (where a CR, an LF or a CRLF can be parted: the cuts that can move raw
    # bytes), and every 61st cut elsewhere; all 935k cuts take about 10 minutes and found nothing more
    from tests.corpus import CORPUS

    files = sorted(CORPUS.glob("*/*.sse"))
    if not files:
        pytest.skip("../shared/corpus is absent")
    for path in files:
        body = path.read_bytes()
        d = SSEDecoder()
        whole = summary(d.feed(body) + d.end())
        cuts = [c for c in range(1, len(body)) if body[c - 1] in b"\r\n" or body[c] in b"\r\n" or c % 61 == 0]
        for cut in cuts:
            fed = SSEDecoder()
            assert summary(fed.feed(body[:cut]) + fed.feed(body[cut:]) + fed.end()) == whole, (path.name, cut)
