"""A tap in a process of its own, feeding its parent (`core.servers.tap.process.ProcessTapServer` starts it).

    python -m core.servers.tap.child        # stdin: one JSON line of settings, then commands; stdout: the feed

Why a process: forwarding is Python (h11, httpx, uvicorn) that runs for every chunk, and in the window's
process each of those calls takes the GIL from the window's thread, which then waits for it at every Python
call its painting makes (four firehoses through a tap held the tap window 40-180 ms at a time). Here the tap
forwards with the interpreter to itself and only sends each of the recorder's calls to the parent, where the
decode worker records them as it records the window's own streams (`core.servers.tap.feed` says what is sent).

Nothing is recorded here: each exchange is a `FeedExchange`, which turns the recorder's calls into messages,
and the tap's `ImmediateInspector` makes them as soon as forwarding has sent the chunk (forward first, still).
The messages of one loop turn go out together, written by a thread of their own, so a parent slow to read
never holds forwarding back (they wait in memory here instead, as they would in the recorder's queue).

The settings line: {"mounts", "host", "port", "allow_remote", "emulator_speed"}. The child ends when told
`quit` or when its input ends (its parent is gone): open exchanges end `cancelled` with their clients answered,
their END messages sent, then it exits. Ctrl+C in the parent's terminal is the parent's to handle: the child runs
in a session of its own.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import sys
import threading

from core.servers.tap.app import Tap
from core.servers.tap.collector import ForwardingCollector
from core.servers.tap.feed import (CHUNK, END, FAILED, HEADERS, NEW, READY, START, SYNCED, frame, json_frame,
                                   mounts_from_json, mounts_to_json, new_payload)
from core.servers.tap.server import TapServer

log = logging.getLogger("streamscope.tap")


class FeedWriter:
    """Messages to the parent: gathered per loop turn, written by a thread of their own."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open: dict[int, FeedExchange] = {}
        self.count = 0
        self._pending: list[bytes] = []
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write_all, name="streamscope-tap-feed", daemon=True)
        self._thread.start()

    def emit(self, data: bytes) -> None:
        """From the tap's loop: sent once this loop turn is over, with the turn's other messages."""
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(data)

    def send_now(self, data: bytes) -> None:
        """From any thread, outside the tap's loop."""
        self._queue.put(data)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        self._queue.put(b"".join(pending))

    def _write_all(self) -> None:
        fd = self.fd
        while (data := self._queue.get()) is not None:
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(fd, view):]
            except OSError:         # the parent is gone: nothing more to tell (its input ends too)
                return

    def close(self) -> None:
        """Write what is left (the tap's loop has stopped: what its last turn queued too), then stop."""
        if self._pending:
            self._flush()
        self._queue.put(None)
        self._thread.join(30)

    def exchange(self, name: str, method: str, url: str, headers, body: bytes, *, path: str | None = None,
                 fallback_format: str | None = None) -> "FeedExchange":
        self.count += 1
        ex = FeedExchange(self, self.count, method)
        self.open[ex.no] = ex
        self.emit(frame(NEW, ex.no, 0, new_payload(name, method, url, headers, body, path, fallback_format)))
        return ex


class FeedExchange:
    """The recorder's calls on one exchange (`core.live.exchange.Exchange`'s), sent to the parent."""

    def __init__(self, writer: FeedWriter, no: int, method: str) -> None:
        self.writer = writer
        self.no = no
        self.method = method

    def begin(self, started_at: float | None, origin_ns: int | None = None) -> None:
        self.writer.emit(json_frame(START, self.no, origin_ns or 0, {"started_at": started_at}))

    def on_headers(self, t: int, status: int, http_version: str | None, reason: str | None, headers) -> None:
        self.writer.emit(json_frame(HEADERS, self.no, t, {"status": status, "http_version": http_version,
                                                            "reason": reason, "headers": [list(h) for h in headers]}))

    def on_chunk(self, t: int, data: bytes) -> None:
        self.writer.emit(frame(CHUNK, self.no, t, data))

    def finish(self, t: int, transport_error: dict | None) -> None:
        self.writer.open.pop(self.no, None)
        self.writer.emit(json_frame(END, self.no, t, transport_error))


class ImmediateInspector:
    """The recorder's calls made at once (they only queue a message), in the order the tap makes them."""

    def later(self, fn, *args) -> None:
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - the feed's failure never disturbs forwarding
            log.exception("tap feed failed")

    def later_chunk(self, fn, t: int, chunk: bytes) -> None:
        self.later(fn, t, chunk)

    def behind(self) -> bool:
        """Never: nothing waits here (the parent's decode worker records what it is sent)."""
        return False

    def forwarded(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def main() -> int:
    settings = json.loads(sys.stdin.readline() or "null")
    if not isinstance(settings, dict):
        return 2
    feed_fd = os.dup(1)
    os.dup2(2, 1)               # whatever prints goes to stderr: stdout is the feed's alone
    writer = FeedWriter(feed_fd)
    mounts = mounts_from_json(settings["mounts"])
    tap = Tap(mounts, keep=False, exchange_type=writer.exchange, inspector=ImmediateInspector())
    try:
        server = TapServer(mounts, settings.get("host", "127.0.0.1"), int(settings.get("port", 0)),
                           allow_remote=bool(settings.get("allow_remote")),
                           emulator_speed=float(settings.get("emulator_speed", 1.0)), tap=tap)
        base = server.start()
    except (OSError, RuntimeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        writer.send_now(frame(FAILED, 0, 0, why.encode("utf-8")))
        writer.close()
        return 1
    server.warm_up()
    collector = ForwardingCollector()     # (this process is the tap's: see core.servers.tap.collector)
    server.on_loop(collector.install, tap)
    writer.send_now(json_frame(READY, 0, 0, {"base_url": base, "mounts": mounts_to_json(tap.mounts)}))
    try:
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["quit"]:
                break
            if len(words) != 2 or not words[1].isdigit():
                continue
            if words[0] == "stop":
                ex = writer.open.get(int(words[1]))
                if ex is not None:
                    server.stop_exchange(ex)
            elif words[0] == "sync":      # (on the tap's loop: after every message it has made so far)
                server.on_loop(writer.emit, frame(SYNCED, int(words[1]), 0, b""))
    finally:
        server.stop()           # open exchanges end cancelled; their END messages are queued by now
        writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
