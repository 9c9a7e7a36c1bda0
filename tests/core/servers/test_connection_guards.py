"""What both servers (the tap and the emulator, served by `core.servers.serving`) do with hostile connections, as
real servers on loopback: a request head trickled in for ever is cut off, and a request framed both by
Content-Length and by Transfer-Encoding gets its answer with `Connection: close`, then the connection closes."""
from __future__ import annotations

import socket
import time

import pytest

from core.servers import serving
from core.servers.emulator.server import EmulatorServer
from core.servers.tap.server import TapServer
from core.servers.tap.upstreams import parse_upstreams
from tests.core.servers.tap.faulty import start_faulty

SHORT = 0.6      # the header timeout the servers get here


@pytest.fixture(scope="module")
def servers():
    """{"tap": (port, faulty app), "emulator": (port, None)}, each served with a short header timeout."""
    patch = pytest.MonkeyPatch()
    patch.setattr(serving, "HEADER_TIMEOUT", SHORT, raising=False)
    faulty, app = start_faulty()
    tap = TapServer(parse_upstreams([faulty.base_url]))
    emulator = EmulatorServer(speed=0)
    try:
        out = {"tap": (int(tap.start().rsplit(":", 1)[1]), app),
               "emulator": (int(emulator.start().rsplit(":", 1)[1]), None)}
        yield out
    finally:
        tap.stop()
        emulator.stop()
        faulty.stop()
        patch.undo()


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    return s


def closed_within(s: socket.socket, seconds: float) -> bool:
    """Does the server close `s` within `seconds` (whatever it sends first is read and dropped)?"""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            if s.recv(65536) == b"":
                return True
        except TimeoutError:
            return False
        except ConnectionError:
            return True
    return False


def read_response(s: socket.socket) -> tuple[bytes, bytes]:
    """(head, body) of one response with a Content-Length or chunked body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    lower = head.lower()
    if b"content-length:" in lower:
        n = int(lower.split(b"content-length:")[1].split(b"\r\n")[0])
        while len(body) < n:
            body += s.recv(65536)
    else:
        while not body.endswith(b"0\r\n\r\n"):
            body += s.recv(65536)
    return head, body


REQUEST = {"tap": (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-guard-000001\r\n"),
           "emulator": (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-guard-000001\r\n"
                        b"x-emulator-speed: 0\r\n")}
BODY = b'{"model": "text", "messages": [{"role": "user", "content": "hi"}]}'


@pytest.mark.parametrize("name", ["tap", "emulator"])
def test_a_trickled_request_head_is_cut_off(servers, name):
    port, _ = servers[name]
    s = connect(port)
    try:
        s.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")
        cut = False
        for _ in range(int(6 * SHORT / 0.1)):       # a header line every 0.1 s, for 6 timeouts at most
            try:
                s.sendall(b"X-a: b\r\n")
            except OSError:
                cut = True
                break
            if closed_within(s, 0.1):
                cut = True
                break
        assert cut
    finally:
        s.close()


@pytest.mark.parametrize("name", ["tap", "emulator"])
def test_a_connection_that_sends_nothing_is_closed(servers, name):
    s = connect(servers[name][0])
    try:
        assert closed_within(s, 6 * SHORT)
    finally:
        s.close()


@pytest.mark.parametrize("name", ["tap", "emulator"])
def test_kept_alive_requests_and_a_long_response_are_not_cut(servers, name):
    """The deadline is on the head alone: a second request on the connection, sent after longer than the timeout
    (within the keep-alive one), is answered; so is a response that takes longer than it."""
    port, _ = servers[name]
    s = connect(port)
    try:
        req = REQUEST[name] + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY
        s.sendall(req)
        head, _ = read_response(s)
        assert head.startswith(b"HTTP/1.1 200") and b"connection: close" not in head.lower()
        time.sleep(SHORT * 2)                    # idle: the keep-alive timeout's to decide, not the head's
        s.sendall(req)
        head, _ = read_response(s)
        assert head.startswith(b"HTTP/1.1 200")
    finally:
        s.close()
    if name == "tap":                            # an upstream that stalls after its first piece, for 2 timeouts
        s = connect(port)
        try:
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-fault: stall\r\nContent-Length: 2\r\n"
                      b"\r\n{}")
            assert not closed_within(s, SHORT * 2)
        finally:
            s.close()


@pytest.mark.parametrize("name", ["tap", "emulator"])
def test_content_length_with_transfer_encoding_is_answered_then_the_connection_closed(servers, name):
    port, app = servers[name]
    s = connect(port)
    try:
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)
        s.sendall(REQUEST[name] + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked)
        head, _ = read_response(s)
        assert head.startswith(b"HTTP/1.1 200")
        assert b"\r\nconnection: close" in head.lower()
        assert closed_within(s, 5)
    finally:
        s.close()
    if app is not None:                          # the tap forwarded the body as Transfer-Encoding framed it
        assert app.requests[-1]["body"] == BODY

