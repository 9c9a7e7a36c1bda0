"""The tap in a process of its own (the tap window's): its feed, split anywhere; and the child as a real server
on loopback in front of the emulator and the faulty upstream, recorded in this process, on a decode worker
too: the same bytes, times and ends as the in-process tap, a pane's Stop, stopping, a port in use, and the
child dying mid-stream."""
from __future__ import annotations

import os
import signal
import threading

import httpx
import pytest

from core.live.decode_worker import DecodeWorker
from core.servers.tap.feed import (CHUNK, END, NEW, FeedError, FeedReader, Message, frame, json_frame,
                                   mounts_from_json, mounts_to_json, new_payload, parse_new)
from core.servers.tap.process import ProcessTapServer
from core.servers.tap.upstreams import parse_upstreams
from tests.core.servers.tap.faulty import PIECES
from tests.core.servers.tap.test_tap import REQUESTS, SPEED0, wait_for

KEY = "sk-process-tap-secret-0123456789"


# -- the feed --------------------------------------------------------------------------------------------------
def feed_bytes() -> tuple[bytes, list[Message]]:
    body = b'{"model": "m"}\n\x00\xff'
    messages = [Message(NEW, 1, 0, new_payload("emulator#1", "POST", "http://h/v1/x", [("a", "b")], body,
                                               "/v1/x", None)),
                Message(CHUNK, 1, 12_345, b"data: {}\n\n"), Message(CHUNK, 1, 99, b""),
                Message(END, 1, 1 << 40, b"null")]
    return b"".join(frame(m.kind, m.no, m.t, m.payload) for m in messages), messages


def test_the_feed_reads_the_same_messages_whole_byte_by_byte_and_split_at_every_offset():
    data, expected = feed_bytes()
    whole = FeedReader()
    assert whole.feed(data) == expected
    whole.end()
    one = FeedReader()
    assert [m for i in range(len(data)) for m in one.feed(data[i:i + 1])] == expected
    for cut in range(len(data) + 1):
        r = FeedReader()
        assert r.feed(data[:cut]) + r.feed(data[cut:]) == expected
    meta, body = parse_new(expected[0].payload)
    assert body == b'{"model": "m"}\n\x00\xff' and meta["headers"] == [("a", "b")] and meta["path"] == "/v1/x"
    assert json_frame(END, 2, 5, {"type": "x"}) == frame(END, 2, 5, b'{"type":"x"}')


def test_bytes_that_are_no_feed_are_an_error_and_a_cut_message_is_said_at_the_end():
    with pytest.raises(FeedError, match="not a feed message"):
        FeedReader().feed(b"\x63" + b"\x00" * 20)
    data, expected = feed_bytes()
    r = FeedReader()
    assert r.feed(data + b"\x63" + b"\x00" * 20) == expected    # the messages before the bad bytes come first
    with pytest.raises(FeedError, match="not a feed message"):
        r.end()
    r = FeedReader()
    assert r.feed(feed_bytes()[0][:30]) == []
    with pytest.raises(FeedError, match="inside a message"):
        r.end()


def test_a_feed_that_breaks_ends_its_open_exchanges_with_what_they_received():
    """Bytes that are no feed (a broken child) end the reader: the open exchange keeps its chunk and ends
    `connection_dropped`, and the loss is said."""
    server = ProcessTapServer(parse_upstreams(["http://127.0.0.1:9"]))
    lost, ended = [], []
    server.tap.on_lost.append(lost.append)
    server.tap.on_ended.append(ended.append)
    chunk = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    r, w = os.pipe()
    os.write(w, frame(NEW, 1, 0, new_payload("x#1", "POST", "http://127.0.0.1:9/v1/chat/completions",
                                             [("authorization", f"Bearer {KEY}")], b"{}", None, None))
             + frame(CHUNK, 1, 5, chunk) + b"\x63 not a feed message at all")
    os.close(w)
    server._read(os.fdopen(r, "rb", buffering=0), FeedReader(), [])
    ex = server.tap.exchanges[0]
    assert ended == [ex] and not server.tap.in_flight
    assert (ex.run.status, ex.run.error["type"]) == ("error", "connection_dropped") and ex.run.body == chunk
    assert len(lost) == 1 and lost[0].startswith("the tap's feed failed: not a feed message")
    assert KEY not in repr(ex.run.request.headers)
    assert not server.sync()                               # (never started: nothing to wait for)


def test_mounts_go_to_the_child_and_back_unchanged():
    mounts = parse_upstreams(["emulator", "local=http://127.0.0.1:11434"])
    assert mounts_from_json(mounts_to_json(mounts)) == mounts


# -- the child, for real -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def worker():
    w = DecodeWorker("test-process-tap")
    yield w
    w.stop()


@pytest.fixture(scope="module")
def process_tap(worker):
    """The child in front of the emulator it starts itself, recorded on a decode worker (as the window does)."""
    server = ProcessTapServer(parse_upstreams([]), emulator_speed=0, worker=worker)
    base = server.start()
    yield base, server
    server.stop()


@pytest.mark.parametrize("fmt", list(REQUESTS))
def test_each_format_is_recorded_here_with_exactly_the_bytes_the_client_got(process_tap, fmt):
    base, server = process_tap
    tap = server.tap
    ended = []
    tap.on_ended.append(ended.append)
    try:
        path, headers, body = REQUESTS[fmt]
        before = len(tap.exchanges)
        r = httpx.post(base + path, json=body, headers={**headers, **SPEED0}, timeout=30)
        assert r.status_code == 200
        assert wait_for(lambda: len(ended) == 1)
    finally:
        tap.on_ended.remove(ended.append)
    ex = tap.exchanges[before]
    assert ended == [ex] and ex not in tap.in_flight.values()
    assert ex.format == fmt and ex.run.status == "done" and ex.run.body == r.content
    assert ex.run.chunks and all(t > 0 for t, _ in ex.run.chunks)      # the tap's own arrival times
    assert ex.run.metrics.t_first_byte_ns <= ex.run.metrics.t_total_ns
    assert ex.path == path.split("?")[0] or ex.path.startswith(path.split("?")[0])
    secret = next(v for k, v in headers.items() if k in ("authorization", "x-api-key", "x-goog-api-key"))
    assert secret not in repr(ex.run.request.headers)
    assert tap.mounts.root.url.startswith("http://127.0.0.1:")        # the emulator the child started


def test_a_panes_stop_ends_that_exchange_alone(process_tap):
    base, server = process_tap
    tap = server.tap
    box = {}

    def client():
        with httpx.stream("POST", base + "/v1/chat/completions", timeout=30,
                          json={"model": "long", "stream": True, "max_tokens": 100_000,
                                "messages": [{"role": "user", "content": "Go."}]},
                          headers={"authorization": f"Bearer {KEY}", "x-emulator-speed": "1"}) as r:
            box["body"] = b"".join(r.iter_raw())

    before = len(tap.exchanges)
    t = threading.Thread(target=client)
    t.start()
    assert wait_for(lambda: len(tap.exchanges) > before and tap.exchanges[before].run.metrics.bytes > 0)
    ex = tap.exchanges[before]
    server.stop_exchange(ex)
    t.join(10)
    assert not t.is_alive()
    assert wait_for(lambda: ex.finished)
    assert (ex.run.status, ex.run.error["message"]) == ("cancelled", "stopped in StreamScope")
    assert ex.run.body == box["body"]                   # the client's response ended cleanly, with what was sent


def test_stopping_ends_open_exchanges_on_both_sides_and_every_exchange_here_is_final(faulty, worker):
    url, app = faulty
    server = ProcessTapServer(parse_upstreams([url]), worker=worker)
    ended = []
    server.tap.on_ended.append(ended.append)
    base = server.start()
    app.hung_up_event.clear()
    box = {}

    def client():
        with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "stall"}, json={},
                          timeout=20) as r:
            box["got"] = b"".join(r.iter_raw())

    t = threading.Thread(target=client)
    t.start()
    assert wait_for(lambda: server.tap.exchanges and server.tap.exchanges[0].run.metrics.bytes > 0)
    server.stop()
    t.join(10)
    assert box == {"got": PIECES[0]}
    assert app.hung_up_event.wait(5)
    ex = server.tap.exchanges[0]
    assert ex.finished and (ex.run.status, ex.run.error["message"]) == ("cancelled", "the tap was stopped")
    assert not server.tap.in_flight and ended == [ex]          # ended once, as the child said


def test_sync_returns_once_every_exchange_begun_so_far_is_here(process_tap):
    base, server = process_tap
    path, headers, body = REQUESTS["openai-chat"]
    for _ in range(3):
        before = server.tap.seen
        httpx.post(base + path, json=body, headers={**headers, **SPEED0}, timeout=30)
        assert server.sync()
        assert server.tap.seen == before + 1          # (without sync the feed may still be behind the client)


def test_a_port_in_use_is_an_oserror_saying_so(process_tap):
    base, _ = process_tap
    port = int(base.rsplit(":", 1)[1])
    other = ProcessTapServer(parse_upstreams(["http://127.0.0.1:9"]), port=port)
    with pytest.raises(OSError, match="did not start|in use"):
        other.start()


def test_a_child_that_dies_ends_its_open_exchanges_keeping_what_they_received(faulty):
    url, app = faulty
    server = ProcessTapServer(parse_upstreams([url]))       # no worker: recorded on the reader's thread
    lost = []
    server.tap.on_lost.append(lost.append)
    base = server.start()
    box = {}

    def client():
        try:
            with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "stall"}, json={},
                              timeout=20) as r:
                box["got"] = b"".join(r.iter_raw())
        except httpx.HTTPError as exc:
            box["error"] = exc

    t = threading.Thread(target=client)
    t.start()
    try:
        assert wait_for(lambda: server.tap.exchanges and server.tap.exchanges[0].run.metrics.bytes > 0)
        os.kill(server._proc.pid, signal.SIGKILL)
        ex = server.tap.exchanges[0]
        assert wait_for(lambda: ex.finished)
        t.join(10)
    finally:
        server.stop()
    assert (ex.run.status, ex.run.error["type"]) == ("error", "connection_dropped")
    assert ex.run.body == PIECES[0] and lost == ["the tap's process ended"] and not server.tap.in_flight
    assert "error" in box                                # the client saw its connection cut
    assert not server.sync()                             # nothing to wait for: the feed is gone


def test_the_capture_is_bounded_here_while_the_child_forwards_every_byte(faulty, worker, monkeypatch):
    """The bound on what an exchange keeps holds for the window's tap too: recorded here, forwarded there."""
    from core.live import exchange
    from tests.core.servers.tap.faulty import big_body

    bound = 64 << 10
    monkeypatch.setattr(exchange, "MAX_STREAM_BODY", bound, raising=False)
    url, _ = faulty
    server = ProcessTapServer(parse_upstreams([url]), worker=worker)
    base = server.start()
    try:
        body = big_body(1 << 20)
        r = httpx.post(base + "/v1/chat/completions", headers={"x-fault": "big", "x-size": str(1 << 20)}, json={},
                       timeout=30)
        assert r.content == body
        assert server.sync()
        ex = server.tap.exchanges[0]
        assert wait_for(lambda: ex.finished)
    finally:
        server.stop()
    assert ex.run.status == "done" and ex.run.body == body[:bound]
    assert any(n.startswith(f"the capture stopped at 64 KiB: the rest, {len(body) - bound:,} more bytes")
               for n in ex.run.notes), ex.run.notes
