"""The tap's forwarder against a raw HTTP/1.1 server on loopback that controls exactly how its bytes are written:
`UpstreamResponse.pump` hands over everything one read held in one batch, and never waits for more bytes."""
from __future__ import annotations

import asyncio

import pytest

from core.live.forward import Forwarder, UpstreamError

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
PIECES = [b"data: {\"n\": %d}\n\n" % i for i in range(8)]


def chunked(piece: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(piece), piece)


async def raw_server(respond):
    """A server whose every connection reads one request head, then runs `respond(writer)`."""
    async def handle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        try:
            await respond(writer)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def pump_all(url: str) -> list[list[bytes]]:
    forwarder = Forwarder()
    batches: list[list[bytes]] = []

    async def deliver(batch):
        assert all(isinstance(t, int) for t, _ in batch)
        batches.append([chunk for _, chunk in batch])

    try:
        resp = await forwarder.open("POST", url + "/v1/chat/completions", [], b"{}")
        try:
            await resp.pump(deliver)
        finally:
            await resp.aclose()
    finally:
        await forwarder.aclose()
    return batches


def test_chunks_that_arrive_together_are_delivered_together():
    async def burst(writer):
        writer.write(HEAD + b"".join(chunked(p) for p in PIECES) + b"0\r\n\r\n")   # one write
        await writer.drain()

    async def main():
        server, url = await raw_server(burst)
        async with server:
            return await pump_all(url)

    batches = asyncio.run(main())
    assert b"".join(c for b in batches for c in b) == b"".join(PIECES)
    assert [c for b in batches for c in b] == PIECES       # (still recorded chunk by chunk)
    assert len(batches) < len(PIECES)                       # fewer writes towards the client than chunks


def test_a_chunk_is_delivered_before_the_next_one_is_even_sent():
    """The upstream writes piece i+1 only once the pump delivered piece i: a pump that waited for more bytes
    before delivering would never finish (the test's timeout says so)."""
    delivered = asyncio.Event

    async def main():
        seen: list[list[bytes]] = []
        got = delivered()

        async def paced(writer):
            writer.write(HEAD)
            for p in PIECES:
                got.clear()
                writer.write(chunked(p))
                await writer.drain()
                await asyncio.wait_for(got.wait(), 5)
            writer.write(b"0\r\n\r\n")
            await writer.drain()

        server, url = await raw_server(paced)
        forwarder = Forwarder()

        async def deliver(batch):
            seen.append([chunk for _, chunk in batch])
            got.set()

        async with server:
            resp = await forwarder.open("POST", url + "/x", [], b"")
            await asyncio.wait_for(resp.pump(deliver), 10)
            await resp.aclose()
        await forwarder.aclose()
        return seen

    assert asyncio.run(main()) == [[p] for p in PIECES]


def test_what_was_read_before_a_cut_is_delivered_then_the_error_raised():
    async def cut(writer):
        writer.write(HEAD + chunked(PIECES[0]) + chunked(PIECES[1]))   # and the connection closes mid-body
        await writer.drain()

    async def main():
        server, url = await raw_server(cut)
        async with server:
            forwarder = Forwarder()
            batches = []

            async def deliver(batch):
                batches.append([chunk for _, chunk in batch])

            resp = await forwarder.open("POST", url + "/x", [], b"")
            with pytest.raises(UpstreamError) as info:
                await resp.pump(deliver)
            await resp.aclose()
            await forwarder.aclose()
            return batches, info.value

    batches, err = asyncio.run(main())
    assert [c for b in batches for c in b] == PIECES[:2]
    assert err.kind == "connection_dropped"
