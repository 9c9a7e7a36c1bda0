"""A bare TCP relay, the tap benchmark's peer: bytes from each client to its upstream and back, nothing parsed,
nothing recorded while it relays (what one more loopback hop costs on this machine, with the least work a relay
can do).

    python bench/bare_relay.py UPSTREAM_PORT [--log PATH]  # prints `relaying on http://127.0.0.1:PORT`, serves

Reads take up to 256 KiB, as the tap's forwarder's do; each is written on at once (asyncio's transport
buffers what the socket does not take, and reading pauses while the client is behind). Each client socket
has the tap's send buffer (`core.servers.tap.server.SEND_BUFFER`, 256 KiB), so that neither holds more bytes
back from a slower client than the other: with the default (megabytes) the relay reads far ahead of its client
and each read's bytes wait in that buffer (4 ms at the median, on the firehose).

`--log PATH`: each read from the upstream is kept (its wall-clock time and the bytes, by reference), and at
Ctrl+C the relay writes PATH: one JSON line per HTTP response it relayed, in order, `{"started_at": 0,
"chunks": [[t_ns, body_bytes], ...]}` (the response body's bytes each read completed, chunked framing undone,
t in epoch ns), the shape of a tap capture's chunks, so the benchmark measures the relay's added latency per
chunk exactly as the tap's. The parsing happens then, not while relaying.
"""
from __future__ import annotations

import asyncio
import json
import socket
import sys
import time

READ_BYTES = 256 * 1024
SEND_BUFFER = 256 * 1024       # (core.servers.tap.server.SEND_BUFFER: not imported, the relay stays bare)
_reads: list[list[tuple[int, bytes]]] = []      # per connection: (epoch ns, bytes) of each upstream read


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, log: list | None = None) -> None:
    try:
        while data := await reader.read(READ_BYTES):
            if log is not None:          # (the read's time, before the write hands the bytes on)
                log.append((time.time_ns(), data))
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


def responses(reads: list[tuple[int, bytes]]) -> list[dict]:
    """Per HTTP/1.1 response in one connection's upstream bytes: which body bytes each read completed."""
    wire = b"".join(data for _, data in reads)
    ends, total = [], 0
    for t, data in reads:
        total += len(data)
        ends.append((total, t))
    spans = []                    # per response: [(wire start, size) of each body piece]
    pos = 0
    while pos < len(wire):
        head_end = wire.find(b"\r\n\r\n", pos)
        if head_end < 0:
            break
        head = wire[pos:head_end].lower()
        pos = head_end + 4
        pieces = []
        if b"transfer-encoding: chunked" in head:
            while True:
                line_end = wire.find(b"\r\n", pos)
                size = int(wire[pos:line_end].split(b";")[0], 16)
                pos = line_end + 2
                if size == 0:
                    pos = wire.find(b"\r\n", pos) + 2        # (no trailers)
                    break
                pieces.append((pos, size))
                pos += size + 2
        else:
            length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
            pieces.append((pos, length))
            pos += length
        spans.append(pieces)
    out = []
    for pieces in spans:
        chunks, done = [], 0
        first, last = pieces[0][0], pieces[-1][0] + pieces[-1][1]
        for end, t in ends:
            if end <= first:
                continue
            body = sum(max(0, min(end - start, size)) for start, size in pieces)
            if body > done:
                chunks.append([t, body - done])
                done = body
            if end >= last:
                break
        out.append({"started_at": 0, "chunks": chunks})
    return out


async def main(upstream_port: int, log: bool) -> None:
    async def handle(client_r, client_w):
        client_w.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", upstream_port)
        except OSError:
            client_w.close()
            return
        reads = None
        if log:
            reads = []
            _reads.append(reads)
        await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w, reads))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"relaying on http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    args = sys.argv[1:]
    log_path = args[args.index("--log") + 1] if "--log" in args else None
    try:
        asyncio.run(main(int(args[0]), log_path is not None))
    except KeyboardInterrupt:
        pass
    if log_path:
        with open(log_path, "w") as f:
            for reads in _reads:
                for r in responses(reads):
                    f.write(json.dumps(r) + "\n")
