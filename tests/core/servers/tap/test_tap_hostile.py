"""The tap as a real server on loopback against hostile clients: header floods, framing that disagrees with
itself, a recording backlog past its budget."""
from __future__ import annotations

import asyncio
import socket
import threading

import httpx
import pytest

from core.live.forward import READ_BYTES
from core.servers.tap import app as tap_app
from core.servers.tap.app import Inspector, Tap
from core.servers.tap.server import TapServer
from core.servers.tap.upstreams import parse_upstreams
from tests.core.servers.tap.test_tap import ended, wait_for  # noqa: F401 - shared helpers


@pytest.fixture()
def faulty_tap(faulty):
    url, app = faulty
    server = TapServer(parse_upstreams([url]))
    base = server.start()
    yield base, server.tap, app
    server.stop()


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def raw_exchange(port: int, data: bytes, timeout: float = 10.0) -> tuple[bytes, bool]:
    """Send `data` on a new connection; (everything received until the server closed or went quiet, closed?)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    out, closed = b"", False
    try:
        s.sendall(data)
        while True:
            try:
                d = s.recv(65536)
            except TimeoutError:
                break
            if not d:
                closed = True
                break
            out += d
            if b"\r\n\r\n" in out and out.endswith(b"}") or out.endswith(b"0\r\n\r\n"):
                s.settimeout(1.0)      # the answer is complete: does the server close the connection?
    finally:
        s.close()
    return out, closed


def test_a_header_flood_is_the_taps_431_and_never_forwarded(faulty_tap):
    base, tap, app = faulty_tap
    before = len(app.requests)
    r = httpx.post(base + "/v1/chat/completions", json={},
                   headers=[(f"x-h{i}", "v") for i in range(tap_app.MAX_REQUEST_HEADERS + 50)])
    assert r.status_code == 431
    err = r.json()["error"]
    assert err["type"] == "tap_request_headers_too_large" and f"at most {tap_app.MAX_REQUEST_HEADERS}" in err["message"]
    big = "v" * 8000
    r = httpx.post(base + "/v1/chat/completions", json={},
                   headers=[(f"x-big{i}", big) for i in range(tap_app.MAX_REQUEST_HEADER_BYTES // 8000 + 1)])
    assert r.status_code == 431 and "64 KiB" in r.json()["error"]["message"]
    assert len(app.requests) == before and tap.seen == 0      # nothing forwarded, no exchange


def test_many_headers_under_the_limit_are_forwarded_in_order(faulty_tap):
    base, tap, app = faulty_tap
    headers = [(f"x-h{i}", f"v{i}") for i in range(tap_app.MAX_REQUEST_HEADERS - 20)]
    r = httpx.post(base + "/v1/chat/completions", json={}, headers=headers)
    assert r.status_code == 200
    got = app.requests[-1]["headers"]
    assert [(k, v) for k, v in got.items() if k.startswith("x-h")] == headers
    assert ended(tap, 1).run.status == "done"


def test_an_upstreams_cookie_reaches_its_client_and_no_other(faulty_tap):
    """The forwarder keeps no jar: a client's Cookie header goes to the upstream as sent, the next client's
    request carries none."""
    base, tap, app = faulty_tap
    httpx.post(base + "/v1/chat/completions", json={}, headers={"cookie": "who=alice"})
    httpx.post(base + "/v1/chat/completions", json={})
    assert app.requests[-2]["headers"].get("cookie") == "who=alice"
    assert "cookie" not in app.requests[-1]["headers"]
    assert list(tap.forwarder._client.cookies.jar) == []


# -- the recorder's backlog ------------------------------------------------------------------------------------
class HeldInspector(Inspector):
    """An inspector whose work waits until `release` is set (a recorder far behind its forwarding)."""

    def __init__(self, max_backlog: int) -> None:
        super().__init__(max_backlog=max_backlog)
        self.release = threading.Event()
        self.peak = 0

    def later_chunk(self, fn, t, chunk) -> None:
        super().later_chunk(fn, t, chunk)
        self.peak = max(self.peak, self.backlog)

    async def _run(self) -> None:
        while not self.release.is_set():
            await asyncio.sleep(0.01)
        await super()._run()


def test_past_the_backlog_budget_exchanges_are_forwarded_whole_and_their_captures_stop(faulty):
    from tests.core.servers.tap.faulty import big_body

    url, _ = faulty
    budget = 256 << 10
    inspector = HeldInspector(budget)
    server = TapServer(parse_upstreams([url]), tap=Tap(parse_upstreams([url]), inspector=inspector))
    base = server.start()
    try:
        body = big_body(1 << 20)
        bodies = []
        for _ in range(3):           # each one whole for its client, while the recorder does nothing
            r = httpx.post(base + "/v1/chat/completions", headers={"x-fault": "big", "x-size": str(1 << 20)},
                           json={})
            bodies.append(r.content)
        assert bodies == [body] * 3
        assert inspector.peak <= budget + READ_BYTES         # (one read's worth past it at most)
        inspector.release.set()
        tap = server.tap
        ended(tap, 3)
        first, second, third = tap.exchanges
        assert 0 < first.kept < len(body) and first.kept == first.run.metrics.bytes
        assert first.run.body == body[:first.kept]                  # what it kept is the stream's start
        assert second.kept == third.kept == 0                       # the backlog was still full
        for ex in tap.exchanges:
            assert ex.run.status == "done" and ex.run.error is None
            assert ex.kept + ex.not_kept == len(body)
            note = next(n for n in ex.run.notes if n.startswith("the capture stopped at"))
            assert "the tap's recording had fallen 256 KiB behind forwarding" in note
            assert f"the rest, {ex.not_kept:,} more bytes, was not recorded" in note
        assert inspector.backlog == 0 and inspector.captures_stopped == 3
        # the backlog recorded, a new exchange is recorded whole again
        r = httpx.post(base + "/v1/chat/completions", headers={"x-fault": "big", "x-size": str(100_000)}, json={})
        fourth = ended(tap, 4)
        assert fourth.run.body == r.content == big_body(100_000)
        assert not any(n.startswith("the capture stopped") for n in fourth.run.notes)
    finally:
        server.stop()


def test_the_backlog_budget_is_256_mib():
    assert tap_app.MAX_BACKLOG == 256 << 20 and Inspector().max_backlog == tap_app.MAX_BACKLOG


def test_the_backlog_counts_what_a_queued_chunk_costs_besides_its_bytes():
    """A flood of 1-byte chunks took some 200 bytes each of memory and counted 1 against the bound."""
    from core.servers.tap.app import QUEUED_ITEM_BYTES

    async def main():
        inspector = HeldInspector(1 << 20)
        for i in range(1000):
            inspector.later_chunk(lambda t, c: None, i, b"x")
        backlog = inspector.backlog
        inspector.release.set()
        return backlog, inspector.behind()

    backlog, behind = asyncio.run(main())
    assert backlog == 1000 * (1 + QUEUED_ITEM_BYTES) and not behind
