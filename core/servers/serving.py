"""Serving an ASGI app with uvicorn on loopback: in a background thread, or in the foreground until Ctrl+C.

The emulator and the tap are both served this way.

    server = BackgroundServer(app, host="127.0.0.1", port=0, on_shutdown=None)
    base = server.start()      # "http://127.0.0.1:PORT" once it accepts connections
    server.stop()              # open streams are ended (on_shutdown runs first)
    serve_foreground(app, host, port, on_started=print_first_line, on_shutdown=None) -> exit status
    server = LoopServer(app, host, port); base = await server.start(); ...; await server.stop()
                               # on the running loop (a window's qasync loop): the app runs on that thread

`on_shutdown()` is called on the server's own loop as it begins to shut down, so an app can end its open
streams (a stalled stream would otherwise hold the shutdown until uvicorn's grace period ends).

Both servers guard their connections the same way (uvicorn's h11 protocol, `_GuardedH11`):
- a request head (request line and headers) must arrive within `HEADER_TIMEOUT` (30 s) of the connection opening
  or of its first byte on a kept-alive connection, else the connection is closed (slowloris: a client trickling
  header lines held a connection open for ever; uvicorn's own keep-alive timeout covers only the idle time after
  a response);
- a request with both `Content-Length` and `Transfer-Encoding` is read by its `Transfer-Encoding` (as h11 does)
  and its response says `Connection: close`, after which the connection is closed (RFC 9112 section 6.1).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Awaitable, Callable

#: seconds a client has to send a request's whole head (`_GuardedH11`)
HEADER_TIMEOUT = 30.0


class _QuietDrops(logging.Filter):
    """An app may end a response early on purpose (the emulator's `drop`, a tap passing an upstream's cut on),
    a client may hang up mid-stream (asyncio then warns of the writes that follow, until uvicorn hears of it),
    and stopping the server cancels the responses still being sent (an emulator firehose mid-encode): none is
    the server's error, and uvicorn would log each as one, the cancellation with a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, asyncio.CancelledError):
            return False
        msg = record.getMessage()
        return "returned without completing response" not in msg and "socket.send() raised exception" not in msg


def _install_log_filter() -> None:
    for name in ("uvicorn.error", "asyncio"):
        lg = logging.getLogger(name)
        if not any(isinstance(f, _QuietDrops) for f in lg.filters):
            lg.addFilter(_QuietDrops())


class _RedactedAccess(logging.Filter):
    """An access line names the request's path with its query, which may carry a key (Gemini's `?key=AIza...`):
    key-like query values are redacted as everywhere else (`core.live.config.redact_url`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from core.live.config import redact_url

        record.msg = redact_url(record.getMessage())
        record.args = ()
        return True


def _enable_access_log() -> None:
    """uvicorn logs each request on `uvicorn.access` at INFO, which its Config has just set to the server's log
    level (warning by default): with `access_log`, that logger is at INFO whatever the level, and redacted."""
    lg = logging.getLogger("uvicorn.access")
    lg.setLevel(logging.INFO)
    if not any(isinstance(f, _RedactedAccess) for f in lg.filters):
        lg.addFilter(_RedactedAccess())


def _close_on_conflicting_framing(app):
    """`app`, whose responses to a request with both Content-Length and Transfer-Encoding say
    `Connection: close` (RFC 9112 section 6.1: the connection is closed after responding; h11 then closes it)."""

    async def guarded(scope, receive, send):
        if scope.get("type") != "http":
            return await app(scope, receive, send)
        names = {k for k, _ in scope["headers"]}
        if b"content-length" not in names or b"transfer-encoding" not in names:
            return await app(scope, receive, send)

        async def closing_send(message):
            if message.get("type") == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": headers + [(b"connection", b"close")]}
            await send(message)

        return await app(scope, receive, closing_send)

    return guarded


def _guarded_protocol(header_timeout: float | None):
    """uvicorn's h11 protocol with a deadline on each request head (see the module docstring)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _GuardedH11(H11Protocol):
        def connection_made(self, transport) -> None:
            self._head_timer = None
            super().connection_made(transport)
            self._arm_head_timer()

        def _arm_head_timer(self) -> None:
            if header_timeout is not None and self._head_timer is None:
                self._head_timer = self.loop.call_later(header_timeout, self._head_timed_out)

        def _disarm_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            waiting = self.cycle is None or self.cycle.response_complete     # (still no new request head)
            if waiting and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self.cycle is None or self.cycle.response_complete:     # these bytes begin (or go on with) a head
                self._arm_head_timer()
            super().data_received(data)

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:                                # a whole head arrived
                self._disarm_head_timer()

        def connection_lost(self, exc) -> None:
            self._disarm_head_timer()
            super().connection_lost(exc)

    return _GuardedH11


def url_for(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(app, host: str, port: int, on_started: Callable[[str, int], None],
                on_shutdown: Callable[[], None] | None = None, log_level: str = "warning",
                access_log: bool = False, on_closed: Callable[[], Awaitable[None]] | None = None,
                send_buffer: int | None = None, header_timeout: float | None = -1, **config):
    """A uvicorn.Server for `app` that calls `on_started(host, port)` once it listens (port 0: a free one),
    `on_shutdown()` as it begins to shut down and awaits `on_closed()` once it has (on its own loop).
    `access_log`: one line per request on `uvicorn.access` (at INFO whatever `log_level`; keys in queries redacted).
    `send_buffer`: the kernel send buffer (bytes) of every connection it accepts (set on the listening
    socket, which the accepted ones inherit); None leaves the system's, which grows to megabytes.
    `header_timeout`: seconds a client has to send a request head before its connection is closed (-1:
    `HEADER_TIMEOUT`; None: no limit)."""
    import uvicorn

    _install_log_filter()

    class _Server(uvicorn.Server):
        def capture_signals(self):   # the caller owns signal handling (a thread cannot install handlers anyway)
            return contextlib.nullcontext()

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.started and send_buffer:
                for server in self.servers:
                    for sock in server.sockets:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
            if self.started:
                addr = self.servers[0].sockets[0].getsockname()
                on_started(addr[0], addr[1])

        async def shutdown(self, sockets=None) -> None:
            if on_shutdown is not None:
                on_shutdown()
            await super().shutdown(sockets=sockets)
            if on_closed is not None:
                await on_closed()

    options = dict(log_config=None, log_level=log_level, access_log=access_log, timeout_graceful_shutdown=2,
                   http=_guarded_protocol(HEADER_TIMEOUT if header_timeout == -1 else header_timeout), lifespan="off", timeout_keep_alive=5, backlog=512, ws="none", server_header=False)
    options.update(config)
    # (the Config sets the loggers' levels)
    server = _Server(uvicorn.Config(_close_on_conflicting_framing(app), host=host, port=port, **options))
    if access_log:
        _enable_access_log()
    return server


def bind_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` (port 0: a free one), for `uvicorn.Server.serve(sockets=...)`; OSError
    when it cannot be bound (the address is in use, the host is not this machine's)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    if not infos:
        raise OSError(f"{host!r} resolves to no address")
    family, kind, proto, _name, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


class _Served:
    """What both servers are given: the app, where to listen, uvicorn's log level and extra config, and the
    callbacks at shutdown (`on_shutdown`, synchronous, when uvicorn begins to stop) and once closed (`on_closed`,
    awaited on the server's loop)."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning",
                 on_shutdown: Callable[[], None] | None = None,
                 on_closed: Callable[[], Awaitable[None]] | None = None, **config) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.log_level = log_level
        self.on_shutdown = on_shutdown
        self.on_closed = on_closed
        self.config = config


class LoopServer(_Served):
    """uvicorn serving an app on the running asyncio loop (a window's qasync loop), so the app and its callbacks
    run on that loop's thread. The socket is bound before uvicorn starts: an address in use is an OSError from
    `start()`, never uvicorn's `sys.exit` inside a task of the caller's loop."""

    def __init__(self, app, *args, **kw) -> None:
        super().__init__(app, *args, **kw)
        self.base_url: str | None = None
        self._server = None
        self._task: asyncio.Task | None = None

    @property
    def serving(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self, timeout: float = 15.0) -> str:
        """Bind, start serving as a task of the running loop, and return "http://HOST:PORT" once it accepts
        connections; OSError when the address cannot be bound, RuntimeError when uvicorn did not start."""
        if self.serving and self.base_url:
            return self.base_url
        sock = bind_socket(self.host, self.port)
        started = asyncio.get_running_loop().create_future()

        def on_started(host: str, port: int) -> None:
            self.port = port
            self.base_url = url_for(host, port)
            if not started.done():
                started.set_result(None)

        self._server = make_server(self.app, self.host, self.port, on_started, self.on_shutdown, self.log_level,
                                   on_closed=self.on_closed, **self.config)
        self._task = asyncio.ensure_future(self._serve(sock))
        done, _ = await asyncio.wait([started, self._task], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if started not in done:
            started.cancel()
            await self.stop()
            raise RuntimeError(f"the server did not start on {self.host}:{self.port}")
        return self.base_url

    async def _serve(self, sock: socket.socket) -> None:
        try:
            await self._server.serve(sockets=[sock])
        except SystemExit:      # uvicorn exits when it cannot start; start() reports that it did not
            pass
        finally:
            sock.close()

    async def stop(self) -> None:
        """Stop serving (`on_shutdown` ends the open streams first) and wait until the server has closed."""
        server, task = self._server, self._task
        if server is None:
            return
        server.should_exit = True
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 10.0)
            except asyncio.TimeoutError:
                server.force_exit = True
                await asyncio.gather(task, return_exceptions=True)
        self._server = None
        self._task = None
        self.base_url = None


class BackgroundServer(_Served):
    """uvicorn serving an app in a background thread (its own event loop). A context manager too."""

    thread_name = "streamscope-server"

    def __init__(self, app, *args, **kw) -> None:
        super().__init__(app, *args, **kw)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self.base_url: str | None = None

    @property
    def url(self) -> str | None:
        return self.base_url

    def _on_started(self, host: str, port: int) -> None:
        self.port = port
        self.base_url = url_for(host, port)
        self.loop = asyncio.get_running_loop()
        self._started.set()

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve())
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            self._error = exc
        finally:
            self._started.set()

    def start(self, timeout: float = 15.0) -> str:
        if self.base_url and self._thread and self._thread.is_alive():
            return self.base_url
        self._started.clear()
        self._server = make_server(self.app, self.host, self.port, self._on_started, self.on_shutdown,
                                   self.log_level, on_closed=self.on_closed, **self.config)
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()
        if not self._started.wait(timeout) or self.base_url is None:
            self.stop()
            raise RuntimeError(f"the server did not start on {self.host}:{self.port}"
                               + (f": {self._error!r}" if self._error else ""))
        return self.base_url

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is None:
            return
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(2.0)
        self._thread = None
        self._server = None
        self.base_url = None
        self.loop = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_foreground(app, host: str, port: int, on_started: Callable[[str, int], None],
                     on_shutdown: Callable[[], None] | None = None, log_level: str = "warning",
                     access_log: bool = False, on_closed: Callable[[], Awaitable[None]] | None = None,
                     sockets: list[socket.socket] | None = None, **config) -> int:
    """Serve until Ctrl+C / SIGTERM (a second one forces the exit); 1 when the server never started.
    `sockets`: already bound ones (`bind_socket`, which says why it cannot bind as an OSError) to serve on,
    instead of binding `host:port` here (uvicorn then logs why it cannot and this returns 1)."""
    import signal

    server = make_server(app, host, port, on_started, on_shutdown, log_level, access_log, on_closed, **config)

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def on_signal() -> None:
            if server.should_exit:
                server.force_exit = True
            server.should_exit = True

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, on_signal)
            except (NotImplementedError, RuntimeError):  # Windows: fall back to KeyboardInterrupt
                pass
        await server.serve(sockets=sockets)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    except SystemExit:      # uvicorn exits when it cannot bind; it has logged why
        if server.started:
            raise
    return 0 if server.started else 1
