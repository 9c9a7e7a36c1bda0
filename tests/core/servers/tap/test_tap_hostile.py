"""The tap as a real server on loopback against hostile clients: header floods, framing that disagrees with
itself, a recording backlog past its budget."""
from __future__ import annotations

import socket

import httpx
import pytest

from core.servers.tap.app import MAX_REQUEST_HEADER_BYTES, MAX_REQUEST_HEADERS
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
                   headers=[(f"x-h{i}", "v") for i in range(MAX_REQUEST_HEADERS + 50)])
    assert r.status_code == 431
    err = r.json()["error"]
    assert err["type"] == "tap_request_headers_too_large" and f"at most {MAX_REQUEST_HEADERS}" in err["message"]
    big = "v" * 8000
    r = httpx.post(base + "/v1/chat/completions", json={},
                   headers=[(f"x-big{i}", big) for i in range(MAX_REQUEST_HEADER_BYTES // 8000 + 1)])
    assert r.status_code == 431 and "64 KiB" in r.json()["error"]["message"]
    assert len(app.requests) == before and tap.seen == 0      # nothing forwarded, no exchange


def test_many_headers_under_the_limit_are_forwarded_in_order(faulty_tap):
    base, tap, app = faulty_tap
    headers = [(f"x-h{i}", f"v{i}") for i in range(MAX_REQUEST_HEADERS - 20)]
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
