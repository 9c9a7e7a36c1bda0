"""What both servers (the tap and the emulator, served by `core.servers.serving`) do with hostile connections, as
real servers on loopback: a request framed both by Content-Length and by Transfer-Encoding gets its answer with
`Connection: close`, then the connection closes."""
from __future__ import annotations

import socket
import time

import pytest

from core.servers.emulator.server import EmulatorServer
from core.servers.tap.server import TapServer
from core.servers.tap.upstreams import parse_upstreams
from tests.core.servers.tap.faulty import start_faulty


@pytest.fixture(scope="module")
def servers():
    """{"tap": (port, faulty app), "emulator": (port, None)}."""
    patch = pytest.MonkeyPatch()
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

