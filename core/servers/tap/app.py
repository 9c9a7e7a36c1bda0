"""The tap's ASGI app: a reverse proxy that forwards each request and records it as an `Exchange`.

    tap = Tap(mounts)                              # mounts: core.servers.tap.upstreams.Mounts
    tap.on_started.append(fn)                      # fn(exchange) as a request comes in (a pane can open)
    tap.on_ended.append(fn)                        # fn(exchange) once it is over (exchange.run is final)
    app = create_app(tap)                          # Starlette, served by uvicorn like the emulator
    tap.exchanges                                  # every exchange seen, in order (unless keep=False)

Forward first, decode after: each chunk is sent to the client as soon as the upstream's bytes are read, and
only then handed to the recorder through the `Inspector`, which does that work (decoding, the end of an
exchange, the listeners) when forwarding leaves the loop idle: while chunks keep arriving it waits, so a
firehose is forwarded at full speed and decoded as soon as it pauses (a backlog older than half a second gets
a bounded share of the loop, so a pane still moves). A recorder failure is logged and never reaches a client.
The backlog is bounded (`MAX_BACKLOG`, 256 MiB of chunks forwarded but not yet recorded): past it, each exchange
that gets a chunk stops its capture there (forwarding goes on untouched, and nothing waits for the recorder); a
note on the exchange says where and why, and how many bytes it did not record. Exchanges that begin once the
backlog has shrunk are recorded again.

What each end sees when something goes wrong:
- the upstream is unreachable: the client gets a 502 with a JSON error naming the upstream; the exchange ends
  `connect_failed` (no response recorded: the 502 is the tap's, not the upstream's);
- the upstream drops mid-stream: the client's connection is cut at the same byte (its response is never
  completed); the exchange ends `connection_dropped` with everything received;
- the client disconnects: the upstream request is closed at once; the exchange ends `client_cancelled`;
- the upstream stalls: nothing happens until the client's own timeout hangs up (`client_cancelled`);
  meanwhile `exchange.run.quiet_ns()` says how long it has been quiet;
- HTTP errors are passed through untouched (status, headers, body);
- the tap is stopped (`Tap.close()`, called as the server shuts down): each open exchange's upstream request is
  closed and its client's response ended cleanly; the exchange ends `cancelled` ("the tap was stopped");
- one exchange is stopped (`Tap.stop_exchange(ex)`, a tap pane's Stop): the same, for that exchange alone
  ("stopped in StreamScope").
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.routing import Route

from core.live.errors import ErrorType, error_dict, size_text
from core.live.exchange import Exchange
from core.live.forward import Forwarder, UpstreamError
from core.live.summary import plural
from core.servers.tap.headers import for_client, for_upstream
from core.servers.tap.upstreams import Mounts, Upstream

log = logging.getLogger("streamscope.tap")
MAX_REQUEST_BODY = 64 << 20
# chunks forwarded but not yet recorded, in bytes, past which the exchanges stop their captures (see the docstring)
MAX_BACKLOG = 256 << 20
QUEUED_ITEM_BYTES = 256    # what a queued chunk costs besides its bytes (the entry's tuples, ints, the bytes header)
# a request with more header fields, or more bytes of them (names and values), is the tap's 431: far past what a
# real client sends (browsers and the SDKs send 10-30 fields; nginx takes 32 KiB, Apache 100 fields), and what
# forwarding several thousand would cost the loop (the client library's header bookkeeping) never comes up
MAX_REQUEST_HEADERS = 256
MAX_REQUEST_HEADER_BYTES = 64 << 10


def _json_error(status: int, typ: str, message: str, **extra) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The tap's own error answer: a shape the official SDKs read (`error.type`, `error.message`)."""
    body = json.dumps({"type": "error", "error": {"type": typ, "message": message, **extra}},
                      ensure_ascii=False).encode("utf-8")
    return status, [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())], body


def notify(listeners, arg) -> None:
    """Call each listener with `arg`; one that raises is logged and disturbs neither forwarding nor the others."""
    for fn in list(listeners):
        try:
            fn(arg)
        except Exception:  # noqa: BLE001 - a listener's failure never disturbs forwarding
            log.exception("tap listener failed")


class Inspector:
    """The recorder's work for every exchange, in order, done when forwarding leaves the loop idle."""

    SLICE_NS = 500_000          # work done in one go before forwarding gets the loop back
    QUIET_NS = 1_000_000        # forwarding counts as busy until this long after its last chunk
    MAX_LAG_NS = 500_000_000    # a backlog this old gets a slice even while forwarding stays busy
    BUSY_PAUSE = 0.002          # (then at most SLICE / (SLICE + BUSY_PAUSE) of the loop: 20 %)
    GATE_WAIT_NS = 20_000_000   # a closed gate holds the work back this long at most, then a slice runs

    def __init__(self, lock=None, gate=None, max_backlog: int | None = None) -> None:
        """`lock`: held while the work runs (a window reading the exchanges from another thread holds it too).
        `gate`: a `threading.Event` a window on another thread clears while its thread handles events (the
        decode worker's, `core.live.decode_worker`): the work, pure Python, then waits (on this loop, never
        blocking forwarding) rather than taking the GIL from each Python call the window's Qt makes; without
        it, a tap window's list and panes waited up to a second per repaint under four firehoses.
        `max_backlog`: the bytes of chunks waiting to be recorded past which captures stop (`MAX_BACKLOG`)."""
        self.queue: deque = deque()
        self.max_backlog = MAX_BACKLOG if max_backlog is None else max_backlog
        self.backlog = 0                # bytes of the chunks in the queue
        self.captures_stopped = 0       # exchanges whose capture the backlog stopped
        self.lock = lock if lock is not None else contextlib.nullcontext()
        self.gate = gate
        self.last_forward = 0
        self._gated_since: int | None = None
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    def forwarded(self) -> None:
        self.last_forward = time.monotonic_ns()

    def later(self, fn: Callable, *args) -> None:
        self._queue((time.monotonic_ns(), fn, args, 0))

    def later_chunk(self, fn: Callable, t: int, chunk: bytes) -> None:
        """`later(fn, t, chunk)`, the chunk counted in the backlog until it is recorded (with what its queue entry
        costs besides its bytes: a flood of tiny chunks takes that much memory too)."""
        size = len(chunk) + QUEUED_ITEM_BYTES
        self.backlog += size
        self._queue((time.monotonic_ns(), fn, (t, chunk), size))

    def behind(self) -> bool:
        """The backlog is past its bound: an exchange's capture stops at its next chunk."""
        return self.backlog > self.max_backlog

    def _queue(self, item) -> None:
        self.queue.append(item)
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.ensure_future(self._run())
        if not self._wake.is_set():
            self._wake.set()

    def _step(self, until_ns: int) -> None:
        queue = self.queue
        with self.lock:
            while queue and time.monotonic_ns() < until_ns:
                _, fn, args, size = queue.popleft()
                self.backlog -= size
                try:
                    fn(*args)
                except Exception:  # noqa: BLE001 - the recorder's failure never disturbs forwarding
                    log.exception("tap recorder failed")

    async def _run(self) -> None:
        while True:
            if not self.queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            now = time.monotonic_ns()
            busy = now - self.last_forward < self.QUIET_NS
            if busy and now - self.queue[0][0] < self.MAX_LAG_NS:
                await asyncio.sleep(self.BUSY_PAUSE / 2)
                continue
            if self.gate is not None and not self.gate.is_set():
                if self._gated_since is None:
                    self._gated_since = now
                if now - self._gated_since < self.GATE_WAIT_NS:
                    await asyncio.sleep(self.BUSY_PAUSE / 2)
                    continue
            self._gated_since = None
            self._step(now + self.SLICE_NS)
            await asyncio.sleep(self.BUSY_PAUSE if busy else 0)

    async def aclose(self) -> None:
        """Do what is left (the tap is closing), then stop."""
        self._step(1 << 62)
        if self._task is not None:
            self._task.cancel()
            self._task = None


class Tap:
    """The tap's state: its mounts, forwarder, exchanges and listeners (see the module docstring)."""

    def __init__(self, mounts: Mounts, *, keep: bool = True, connect_timeout: float = 10.0, lock=None,
                 gate=None, exchange_type: Callable[..., Exchange] = Exchange, inspector=None) -> None:
        """`lock`: held while the recorder's work runs, for a reader on another thread; `gate`: that reader's
        (see `Inspector`). `exchange_type` and `inspector`: what records each exchange and when (a tap in a
        process of its own sends each call to its parent at once: `core.servers.tap.child`)."""
        self.mounts = mounts
        self.keep = keep
        self.connect_timeout = connect_timeout
        self.exchanges: list[Exchange] = []
        self.on_started: list[Callable[[Exchange], None]] = []
        self.on_ended: list[Callable[[Exchange], None]] = []
        self.seen = 0
        self.in_flight: dict[asyncio.Task, Exchange] = {}
        self.stopping: set[asyncio.Task] = set()    # exchanges stopped one by one (stop_exchange)
        self.closing = False
        self.inspector = inspector if inspector is not None else Inspector(lock, gate)
        self.exchange_type = exchange_type
        self._forwarder: Forwarder | None = None

    @property
    def forwarder(self) -> Forwarder:
        if self._forwarder is None:      # made on the serving loop (its connections belong to that loop)
            self._forwarder = Forwarder(self.connect_timeout)
        return self._forwarder

    def close(self) -> None:
        """End every open exchange (the server is shutting down): upstream closed, client answered."""
        self.closing = True
        for task in list(self.in_flight):
            task.cancel()

    def stop_exchange(self, ex: Exchange) -> bool:
        """End this one exchange as the tap's stop would (call on the tap's loop); False when it is not open."""
        for task, open_ex in list(self.in_flight.items()):
            if open_ex is ex and not task.done():
                self.stopping.add(task)
                task.cancel()
                return True
        return False

    async def aclose(self) -> None:
        await self.inspector.aclose()
        if self._forwarder is not None:
            await self._forwarder.aclose()
            self._forwarder = None

    def _notify(self, listeners, ex: Exchange) -> None:
        notify(listeners, ex)

    def _begin(self, upstream: Upstream, method: str, target: str, headers, body: bytes, path: str) -> Exchange:
        self.seen += 1
        ex = self.exchange_type(f"{upstream.name}#{self.seen}", method, target, headers, body, path=path,
                                fallback_format=upstream.fallback_format)
        if self.keep:
            self.exchanges.append(ex)
        self._notify(self.on_started, ex)
        return ex

    def _end(self, ex: Exchange, t: int, error: dict | None) -> None:
        ex.finish(t, error)
        self._notify(self.on_ended, ex)


async def _read_body(receive) -> bytes | None:
    """The whole request body, or None when it is larger than MAX_REQUEST_BODY (or the client left)."""
    parts, size = [], 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return None
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BODY:
            return None
        parts.append(chunk)
        if not msg.get("more_body"):
            return b"".join(parts)


def _headers_problem(headers) -> str | None:
    """Why the tap does not forward a request with these header fields (too many, too large), or None."""
    if len(headers) > MAX_REQUEST_HEADERS:
        return (f"the request has {len(headers):,} header fields: the tap forwards at most "
                f"{MAX_REQUEST_HEADERS}")
    size = sum(len(k) + len(v) for k, v in headers)
    if size > MAX_REQUEST_HEADER_BYTES:
        return (f"the request's header fields hold {size:,} bytes: the tap forwards at most "
                f"{MAX_REQUEST_HEADER_BYTES >> 10} KiB of them")
    return None


async def _answer(send, answer) -> None:
    status, headers, body = answer
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class TapProxy:
    """The ASGI endpoint behind every path (see the module docstring)."""

    def __init__(self, tap: Tap) -> None:
        self.tap = tap

    async def __call__(self, scope, receive, send) -> None:
        tap = self.tap
        too_many = _headers_problem(scope["headers"])
        if too_many:
            await _answer(send, _json_error(431, "tap_request_headers_too_large", too_many))
            return
        raw_path = (scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        routed = tap.mounts.route(raw_path)
        if routed is None:
            mounted = ", ".join(f"/{n}" for n in tap.mounts.named) or "nothing"
            await _answer(send, _json_error(404, "tap_no_upstream", f"no upstream is mounted at {scope['path']} "
                                                                    f"(mounted: {mounted})"))
            return
        upstream, rest = routed
        if tap.closing:
            await _answer(send, _json_error(503, "tap_stopping", "the tap is stopping"))
            return
        body = await _read_body(receive)
        if body is None:
            await _answer(send, _json_error(413, "tap_request_too_large",
                                            f"the tap forwards request bodies up to {MAX_REQUEST_BODY >> 20} MiB"))
            return
        target = upstream.target(rest + (f"?{query}" if query else ""))
        headers = for_upstream((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
        path = raw_path + (f"?{query}" if query else "")
        ex = tap._begin(upstream, scope["method"], target, headers, body, path)
        await self._exchange(ex, upstream, target, headers, body, receive, send)

    async def _exchange(self, ex: Exchange, upstream: Upstream, target: str, headers, body: bytes, receive,
                        send) -> None:
        tap = self.tap
        inspector = tap.inspector
        later = inspector.later           # the recorder's work, after forwarding, in order
        later_chunk = inspector.later_chunk
        behind = inspector.behind
        recording = True                  # until the recorder's backlog stops this capture
        not_recorded = 0                  # bytes forwarded after it stopped
        forwarded = inspector.forwarded
        task = asyncio.current_task()
        t0 = time.monotonic_ns()
        ex.begin(time.time(), t0)
        hung_up = False

        async def watch() -> None:        # the client hanging up cancels the forwarding at once
            nonlocal hung_up
            while (await receive())["type"] != "http.disconnect":
                pass
            hung_up = True
            task.cancel()

        watcher = asyncio.ensure_future(watch())
        tap.in_flight[task] = ex
        resp = None
        started = False
        error: dict | None = None
        try:
            try:
                resp = await tap.forwarder.open(ex.method, target, headers, body)
            except UpstreamError as exc:
                error = error_dict(exc.kind, f"{upstream.label} ({upstream.url}): {exc.message}")
                await _answer(send, _json_error(502, "tap_upstream_unreachable",
                                                f"the tap could not reach its upstream {upstream.name!r} at "
                                                f"{upstream.url}: {exc.message}", upstream=upstream.name,
                                                url=upstream.url))
                return
            t = time.monotonic_ns() - t0
            await send({"type": "http.response.start", "status": resp.status, "headers": for_client(resp.headers)})
            started = True
            later(ex.on_headers, t, resp.status, resp.http_version, resp.reason, resp.headers)

            async def deliver(batch: list[tuple[int, bytes]]) -> None:
                # what one read held goes out in one write; the capture keeps the upstream's chunks and times
                nonlocal recording, not_recorded
                body = batch[0][1] if len(batch) == 1 else b"".join(chunk for _, chunk in batch)
                await send({"type": "http.response.body", "body": body, "more_body": True})
                forwarded()
                if recording and behind():
                    recording = False
                    inspector.captures_stopped += 1
                    if inspector.captures_stopped == 1 or inspector.captures_stopped % 100 == 0:
                        log.warning("tap: the recording is %s behind forwarding: %s stopped, forwarding goes "
                                    "on untouched", size_text(inspector.max_backlog),
                                    plural(inspector.captures_stopped, "exchange's capture", "exchanges' captures"))
                    later(ex.stop_capture, f"the tap's recording had fallen {size_text(inspector.max_backlog)} "
                                           f"behind forwarding")
                if not recording:
                    not_recorded += len(body)
                    return
                for arrived, chunk in batch:
                    later_chunk(ex.on_chunk, arrived - t0, chunk)

            try:
                await resp.pump(deliver)
            except UpstreamError as exc:
                # the same cut for the client: its response is never completed, so its connection is closed
                error = error_dict(exc.kind, f"{upstream.label}: {exc.message}")
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            stopped = task in tap.stopping
            if not (hung_up or tap.closing or stopped):
                raise
            task.uncancel()
            if hung_up:
                error = error_dict(ErrorType.CLIENT_CANCELLED,
                                   "the client disconnected; the upstream request was cancelled")
            else:
                error = error_dict(ErrorType.CANCELLED,
                                   "stopped in StreamScope" if stopped and not tap.closing else "the tap was stopped")
                await self._end_for_client(send, started)
        finally:
            watcher.cancel()
            tap.in_flight.pop(task, None)
            tap.stopping.discard(task)
            if resp is not None:
                await resp.aclose()       # early: the upstream sees its request cancelled
            if not_recorded:
                later(ex.count_not_kept, not_recorded)
            later(tap._end, ex, time.monotonic_ns() - t0, error)

    @staticmethod
    async def _end_for_client(send, started: bool) -> None:
        try:
            if started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                await _answer(send, _json_error(503, "tap_stopping", "the tap was stopped"))
        except Exception:  # noqa: BLE001 - the client may be gone already
            pass


def create_app(tap: Tap) -> Starlette:
    """The tap as an ASGI app: every method on every path goes to the proxy."""
    app = Starlette(routes=[Route("/{path:path}", TapProxy(tap))])
    app.state.tap = tap
    return app
