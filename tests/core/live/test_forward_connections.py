"""The forwarder's connections against raw HTTP/1.1 servers on loopback: no cookie jar shared across the tap's
clients, and a request that a reused keep-alive connection dropped before any response is sent again, once."""
from __future__ import annotations

import asyncio

import pytest

from core.live.forward import KEEPALIVE_EXPIRY, Forwarder, UpstreamError


def ok(body: bytes = b"ok", extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def read_request(reader) -> bytes | None:
    """One request (head and Content-Length body), or None when the connection ended first."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + (await reader.readexactly(length) if length else b"")


async def serve(handle):
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def fetch(forwarder: Forwarder, url: str, headers=(), body: bytes = b"{}") -> bytes:
    resp = await forwarder.open("POST", url, list(headers), body)
    try:
        return b"".join([c async for c in resp.chunks()])
    finally:
        await resp.aclose()


def test_no_cookie_jar_across_clients():
    """A Set-Cookie from the upstream reaches its client only: the next request (another client's) carries no
    Cookie the first one was given, and the forwarder keeps none; a client's own Cookie header passes as is."""
    seen: list[bytes] = []

    async def handle(reader, writer):
        while (req := await read_request(reader)) is not None:
            seen.append(req)
            writer.write(ok(extra=b"set-cookie: session=alice-secret; Path=/\r\n"))
            await writer.drain()
        writer.close()

    async def main():
        server, url = await serve(handle)
        async with server:
            forwarder = Forwarder()
            try:
                await fetch(forwarder, url + "/a")
                await fetch(forwarder, url + "/b")
                await fetch(forwarder, url + "/c", [("cookie", "mine=1")])
                return list(forwarder._client.cookies.jar)
            finally:
                await forwarder.aclose()

    jar = asyncio.run(main())
    assert jar == []
    assert len(seen) == 3
    assert b"alice-secret" not in seen[1] and b"cookie" not in seen[1].lower()
    assert b"\r\ncookie: mine=1\r\n" in seen[2]


def test_many_request_headers_pass_through():
    """Thousands of headers are forwarded, every one of them, in order (no jar to copy them into)."""
    got: list[bytes] = []

    async def handle(reader, writer):
        req = await read_request(reader)
        got.append(req)
        writer.write(ok())
        await writer.drain()
        writer.close()

    async def main():
        server, url = await serve(handle)
        async with server:
            forwarder = Forwarder()
            try:
                return await fetch(forwarder, url, [(f"x-h{i}", "v") for i in range(3000)])
            finally:
                await forwarder.aclose()

    assert asyncio.run(main()) == b"ok"
    lines = [ln for ln in got[0].split(b"\r\n") if ln.startswith(b"x-h")]
    assert lines == [b"x-h%d: v" % i for i in range(3000)]


def test_request_dropped_on_a_reused_connection_is_sent_again_once():
    """The upstream closes its idle keep-alive connection just as the next request arrives on it (no response
    byte): the forwarder sends that request again on a new connection, with the same body."""
    requests: list[bytes] = []
    connections = 0

    async def handle(reader, writer):
        nonlocal connections
        connections += 1
        first = connections == 1
        req = await read_request(reader)
        requests.append(req)
        writer.write(ok(b"one" if first else b"two"))
        await writer.drain()
        if first:                 # the keep-alive connection: the next request on it is dropped unanswered
            req = await read_request(reader)
            if req is not None:
                requests.append(req)
        else:
            await read_request(reader)
        writer.close()

    async def main():
        server, url = await serve(handle)
        async with server:
            forwarder = Forwarder()
            try:
                a = await fetch(forwarder, url + "/x", body=b'{"n": 1}')
                b = await fetch(forwarder, url + "/x", body=b'{"n": 2}')
                return a, b, forwarder.retried
            finally:
                await forwarder.aclose()

    a, b, retried = asyncio.run(main())
    assert (a, b, retried) == (b"one", b"two", 1)
    assert connections == 2
    assert [r.endswith(b'{"n": 1}') for r in requests] == [True, False, False]
    assert requests[1].endswith(b'{"n": 2}') and requests[2].endswith(b'{"n": 2}')


def test_a_reused_connection_dropped_after_the_upstream_worked_on_it_is_not_sent_again(monkeypatch):
    """An upstream that read the request, worked on it, then dropped the connection may have done the work: a
    second send would be a second billed call. Only a drop at once (the keep-alive race) is sent again."""
    from core.live import forward

    monkeypatch.setattr(forward, "RETRY_WITHIN_S", 0.05)
    connections = 0

    async def handle(reader, writer):
        nonlocal connections
        connections += 1
        await read_request(reader)
        writer.write(ok(b"one"))
        await writer.drain()
        if await read_request(reader) is not None:
            await asyncio.sleep(0.3)          # "working on it"
        writer.close()

    async def main():
        server, url = await serve(handle)
        async with server:
            forwarder = Forwarder()
            try:
                assert await fetch(forwarder, url + "/x") == b"one"
                with pytest.raises(UpstreamError) as info:
                    await fetch(forwarder, url + "/x")
                return info.value, forwarder.retried
            finally:
                await forwarder.aclose()

    err, retried = asyncio.run(main())
    assert err.kind == "connection_dropped" and (connections, retried) == (1, 0)


def test_a_new_connection_dropped_before_the_response_is_not_sent_again():
    """On a connection opened for it, a drop before the response is the upstream's answer: a 502 at once."""
    count = 0

    async def handle(reader, writer):
        nonlocal count
        count += 1
        await read_request(reader)
        writer.close()

    async def main():
        server, url = await serve(handle)
        async with server:
            forwarder = Forwarder()
            try:
                with pytest.raises(UpstreamError) as info:
                    await fetch(forwarder, url)
                return info.value, forwarder.retried
            finally:
                await forwarder.aclose()

    err, retried = asyncio.run(main())
    assert err.kind == "connection_dropped" and "before the response headers" in err.message
    assert (count, retried) == (1, 0)


def test_idle_connections_expire_before_uvicorns_keep_alive():
    forwarder = Forwarder()
    pool = forwarder._client._transport._pool
    assert pool._keepalive_expiry == KEEPALIVE_EXPIRY < 5.0
    asyncio.run(forwarder.aclose())
