"""A bare TCP relay, the tap benchmark's peer: bytes from each client to its upstream and back, nothing parsed,
nothing recorded (what one more loopback hop costs on this machine, with the least work a relay can do).

    python bench/bare_relay.py UPSTREAM_PORT     # prints `relaying on http://127.0.0.1:PORT`, then serves

Reads take up to 256 KiB, as the tap's forwarder's do; each is written on at once (asyncio's transport
buffers what the socket does not take, and reading pauses while the client is behind).
"""
from __future__ import annotations

import asyncio
import sys

READ_BYTES = 256 * 1024


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(READ_BYTES):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def main(upstream_port: int) -> None:
    async def handle(client_r, client_w):
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", upstream_port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"relaying on http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main(int(sys.argv[1])))
    except KeyboardInterrupt:
        pass
