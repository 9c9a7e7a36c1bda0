"""`LoopTapServer`: the tap served on the caller's own asyncio loop (as the window serves it), with the
emulator it mounts started in its own thread; its listeners run on the caller's thread; an address in use is an
OSError from `start()` (never uvicorn's sys.exit inside the caller's loop); stopping ends open exchanges."""
from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from core.servers.tap.server import LoopTapServer
from core.servers.tap.upstreams import parse_upstreams

MSGS = [{"role": "user", "content": "What is the capital of France?"}]


def test_a_tap_on_the_callers_loop_forwards_and_calls_back_on_its_thread():
    async def main():
        server = LoopTapServer(parse_upstreams([]), "127.0.0.1", 0)
        threads = []
        server.tap.on_started.append(lambda ex: threads.append(threading.get_ident()))
        server.tap.on_ended.append(lambda ex: threads.append(threading.get_ident()))
        base = await server.start()
        assert server.serving and base == server.base_url and not base.endswith(":0")
        async with httpx.AsyncClient() as c:
            r = await c.post(base + "/v1/messages", json={"model": "text", "max_tokens": 64, "stream": True,
                                                          "messages": MSGS},
                             headers={"x-api-key": "sk-ant-loop-0001", "anthropic-version": "2023-06-01",
                                      "x-emulator-speed": "0"})
        while not server.tap.exchanges[0].finished:
            await asyncio.sleep(0.01)
        ex = server.tap.exchanges[0]
        assert r.status_code == 200 and ex.run.body == r.content and ex.run.status == "done"
        assert threads == [threading.get_ident()] * 2
        # the same address again: an OSError, and nothing left running
        port = int(base.rsplit(":", 1)[1])
        other = LoopTapServer(parse_upstreams([base]), "127.0.0.1", port)
        with pytest.raises(OSError):
            await other.start()
        assert not other.serving
        await server.stop()
        assert not server.serving and server.base_url is None
        async with httpx.AsyncClient() as c:
            with pytest.raises(httpx.ConnectError):
                await c.get(base + "/v1/models")

    asyncio.run(main())


def test_stopping_ends_an_open_exchange_cleanly_for_the_client():
    async def main():
        server = LoopTapServer(parse_upstreams([]), "127.0.0.1", 0)
        base = await server.start()

        async def client():
            async with httpx.AsyncClient(timeout=30) as c:
                async with c.stream("POST", base + "/v1/chat/completions",
                                    json={"model": "stall", "stream": True, "messages": MSGS},
                                    headers={"authorization": "Bearer sk-loop-0001"}) as r:
                    return r.status_code, b"".join([b async for b in r.aiter_raw()])

        task = asyncio.ensure_future(client())
        while not server.tap.exchanges or not server.tap.exchanges[0].run.metrics.bytes:
            await asyncio.sleep(0.01)
        await server.stop()
        status, body = await asyncio.wait_for(task, 10)
        ex = server.tap.exchanges[0]
        assert status == 200 and body == ex.run.body
        assert ex.run.status == "cancelled" and ex.run.error["type"] == "cancelled"

    asyncio.run(main())


def test_a_remote_address_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="refusing to listen on 0.0.0.0"):
        LoopTapServer(parse_upstreams([]), "0.0.0.0", 0)
