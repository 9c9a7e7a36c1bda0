"""Running a tap: in a background thread (tests, benches, a window) or in the foreground (`main.py tap`).

    with TapServer(parse_upstreams([])) as base:     # the built-in emulator behind it, started in-process
        ...                                          # base == "http://127.0.0.1:PORT"; server.tap.exchanges
    server = TapServer(mounts, host, port, allow_remote=False); base = server.start(); server.stop()
    run_foreground(mounts, host, port, on_listening=print_first_line, tap=Tap(...))

    server = LoopTapServer(mounts, host, port); base = await server.start(); ...; await server.stop()

The tap binds loopback only unless `allow_remote` (`listen_problem` says why not). The listeners of
`server.tap` (`on_started`, `on_ended`) are called on the server's own loop: in a background thread, that
thread. `LoopTapServer` serves on the running loop instead (a window's qasync loop), so its listeners run on
the window's thread and can touch its widgets; the emulator, when mounted, still runs in its own thread.
"""
from __future__ import annotations

from collections.abc import Callable

from core.live.request import is_loopback_host
from core.servers.serving import BackgroundServer, LoopServer, bind_socket, serve_foreground, url_for
from core.servers.tap.app import Tap, create_app
from core.servers.tap.collector import ForwardingCollector
from core.servers.tap.upstreams import Mounts

# what the tap sends nothing of its own: no Date, no Server header (the upstream's are passed on). And a bounded
# send buffer towards each client: a client slower than its upstream (a firehose) then holds the bytes back in
# the upstream's connection, as it would without the tap, instead of a few megabytes queued in the tap's (each
# chunk then waited there for the client: 8-18 ms at the 99th percentile, all of it the buffer's). It holds one
# read's worth of forwarded chunks (`core.live.forward.READ_BYTES`, written at once by `UpstreamResponse.pump`):
# 64 KiB cost a third of the firehose's throughput in partial writes, 32 KiB stalled each write 40 ms.
SEND_BUFFER = 256 * 1024
_SERVING = {"date_header": False, "server_header": False, "timeout_keep_alive": 30, "send_buffer": SEND_BUFFER}


def listen_problem(host: str, allow_remote: bool) -> str | None:
    """Why the tap will not listen on `host`, or None."""
    if allow_remote or is_loopback_host(host):
        return None
    return (f"refusing to listen on {host}, which other machines can reach (every key that passes would be "
            f"theirs to see): listen on 127.0.0.1, or give --allow-remote if you mean it")


def _start_emulator(mounts: Mounts, speed: float):
    if not mounts.needs_emulator:
        return None, mounts
    from core.servers.emulator.server import EmulatorServer

    emulator = EmulatorServer(speed=speed)
    return emulator, mounts.with_emulator(emulator.start())


class TapServer:
    """A tap served by uvicorn in a background thread, with the emulator started in-process when mounted."""

    def __init__(self, mounts: Mounts, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False,
                 keep: bool = True, emulator_speed: float = 1.0, tap: Tap | None = None) -> None:
        why = listen_problem(host, allow_remote)
        if why:
            raise ValueError(why)
        self.tap = tap or Tap(mounts, keep=keep)
        self.tap.mounts = mounts
        self.host, self.port = host, port
        self.emulator_speed = emulator_speed
        self._emulator = None
        self._server: BackgroundServer | None = None

    @property
    def base_url(self) -> str | None:
        return None if self._server is None else self._server.base_url

    def start(self) -> str:
        if self._server is not None and self._server.base_url:
            return self._server.base_url
        self._emulator, self.tap.mounts = _start_emulator(self.tap.mounts, self.emulator_speed)
        self._server = BackgroundServer(create_app(self.tap), self.host, self.port, on_shutdown=self.tap.close,
                                        on_closed=self.tap.aclose, **_SERVING)
        self._server.thread_name = "streamscope-tap"
        try:
            return self._server.start()
        except BaseException:
            self.stop()
            raise

    def on_loop(self, fn, *args) -> bool:
        """Call `fn(*args)` on the tap's own loop, from any thread (after what it is doing now); False when the
        tap is not serving."""
        loop = self._server.loop if self._server is not None else None
        if loop is None:
            return False
        loop.call_soon_threadsafe(fn, *args)
        return True

    def warm_up(self) -> None:
        """Make the forwarder (its httpx client, whose TLS context takes 50-100 ms) now, on the tap's loop, rather
        than in the first exchange's time to first byte."""
        self.on_loop(getattr, self.tap, "forwarder")

    def stop_exchange(self, ex) -> None:
        """End this one open exchange (`Tap.stop_exchange`), from any thread: done on the tap's own loop."""
        self.on_loop(self.tap.stop_exchange, ex)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._emulator is not None:
            self._emulator.stop()
            self._emulator = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class LoopTapServer:
    """A tap served on the running asyncio loop (see the module docstring); `start()` raises OSError when the
    address cannot be bound, ValueError when it is not loopback and `allow_remote` is not given."""

    def __init__(self, mounts: Mounts, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False,
                 emulator_speed: float = 1.0, tap: Tap | None = None) -> None:
        why = listen_problem(host, allow_remote)
        if why:
            raise ValueError(why)
        self.tap = tap or Tap(mounts)
        self.tap.mounts = mounts
        self.host, self.port = host, port
        self.emulator_speed = emulator_speed
        self._emulator = None
        self._server: LoopServer | None = None

    @property
    def base_url(self) -> str | None:
        return None if self._server is None else self._server.base_url

    @property
    def serving(self) -> bool:
        return self._server is not None and self._server.serving

    async def start(self) -> str:
        if self.serving and self.base_url:
            return self.base_url
        self._emulator, self.tap.mounts = _start_emulator(self.tap.mounts, self.emulator_speed)
        self._server = LoopServer(create_app(self.tap), self.host, self.port, on_shutdown=self.tap.close,
                                  on_closed=self.tap.aclose, **_SERVING)
        try:
            return await self._server.start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop the tap: open exchanges end `cancelled` with their clients answered, then the server closes."""
        server, self._server = self._server, None
        try:
            if server is not None:
                await server.stop()
        finally:
            if self._emulator is not None:
                self._emulator.stop()
                self._emulator = None


def run_foreground(tap: Tap, host: str, port: int, on_listening: Callable[[str, Mounts], None], *,
                   emulator_speed: float = 1.0, log_level: str = "warning") -> int:
    """Serve `tap` until Ctrl+C / SIGTERM; `on_listening(url, mounts)` once it accepts connections. Exit status
    0; OSError when `host:port` cannot be bound (bound here, before uvicorn, which would only log why)."""
    sock = bind_socket(host, port)
    collector = ForwardingCollector()
    try:
        emulator, tap.mounts = _start_emulator(tap.mounts, emulator_speed)
    except BaseException:
        sock.close()
        raise
    try:
        def listening(h: str, p: int) -> None:   # on the serving loop, as it starts to accept
            _ = tap.forwarder    # made now (as `warm_up` does), not in the first exchange's time to first byte
            collector.install(tap)    # (this process is the tap's: its collector is the tap's to tune)
            on_listening(url_for(h, p), tap.mounts)

        return serve_foreground(create_app(tap), host, port, listening, tap.close, log_level, on_closed=tap.aclose,
                                sockets=[sock], **_SERVING)
    finally:
        collector.uninstall()
        sock.close()
        if emulator is not None:
            emulator.stop()
