"""A tap whose forwarding runs in a process of its own (`core.servers.tap.child`), recorded in this one.

    server = ProcessTapServer(mounts, host, port, worker=shared_worker())
    base = server.start()            # blocks until the child listens; OSError when it cannot
    server.tap.on_started / on_ended / exchanges / in_flight / seen / mounts   # as TapServer's tap
    server.stop_exchange(ex)         # a pane's Stop, from any thread
    server.sync()                    # True once every exchange the tap has begun so far is in server.tap
    server.stop()                    # open exchanges end cancelled (clients answered), then the child exits

The window's tap (`gui.tap_window`): forwarding in the window's process took the GIL from the window's thread
at every one of its Python calls (see the child's docstring). Here a reader thread reads the child's feed
(`core.servers.tap.feed`) and hands each recorder call to `worker` (the decode worker, which takes turns with
the window's thread at its gate), or makes it itself holding `lock` when there is no worker. The listeners are
called as in `TapServer`: `on_started` on the reader thread as the exchange comes in, `on_ended` once its run is
final (on the worker's thread when there is one).

If the child dies, every exchange still open ends `connection_dropped` ("the tap's process ended"), with what
it had received, and `on_lost(message)` is called: nothing received is lost.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from core.live.errors import ErrorType, error_dict
from core.live.exchange import Exchange
from core.servers.tap.app import notify
from core.servers.tap.feed import (CHUNK, END, HEADERS, NEW, READY, START, SYNCED, FeedError, FeedReader,
                                   mounts_from_json, mounts_to_json, parse_new)
from core.servers.tap.server import listen_problem
from core.servers.tap.upstreams import Mounts

log = logging.getLogger("streamscope.tap")
READ_BYTES = 1 << 20
# at most this much of one exchange's chunks in one call to the worker: a call holds the decode lock, which the
# window's repaints wait for (64 KiB, as a read of the window's own streams, is about 2 ms of decoding)
BATCH_BYTES = 64 * 1024
_ROOT = Path(__file__).resolve().parents[3]      # the project's root, where `core` is importable from


class FeedTap:
    """What a window reads of the tap (the attributes of `core.servers.tap.app.Tap` it uses)."""

    def __init__(self, mounts: Mounts) -> None:
        self.mounts = mounts
        self.exchanges: list[Exchange] = []
        self.on_started: list[Callable[[Exchange], None]] = []
        self.on_ended: list[Callable[[Exchange], None]] = []
        self.on_lost: list[Callable[[str], None]] = []
        self.seen = 0
        self.in_flight: dict[int, Exchange] = {}      # the child's exchange number -> the exchange, while open


class ProcessTapServer:
    """The tap in a child process, recorded here (see the module docstring)."""

    def __init__(self, mounts: Mounts, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False,
                 emulator_speed: float = 1.0, worker=None, lock=None) -> None:
        why = listen_problem(host, allow_remote)
        if why:
            raise ValueError(why)
        self.tap = FeedTap(mounts)
        self.host, self.port = host, port
        self.allow_remote = allow_remote
        self.emulator_speed = emulator_speed
        self.worker = worker
        self.lock = lock if lock is not None else (worker.lock if worker is not None else threading.RLock())
        self.base_url: str | None = None
        self._proc: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None
        self._open: dict[int, Exchange] = {}          # (the reader's own: exchanges whose END it has not read)
        self._stdin_lock = threading.Lock()
        self._stopping = False
        self._syncs: dict[int, threading.Event] = {}
        self._sync_count = 0
        self._feed_ended = False

    # -- running ------------------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> str:
        """Start the child and wait until it listens: its base URL; OSError saying why when it cannot."""
        if self.base_url is not None:
            return self.base_url
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen([sys.executable, "-m", "core.servers.tap.child"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, cwd=_ROOT, env=env, start_new_session=True,
                                      bufsize=0)
        settings = {"mounts": mounts_to_json(self.tap.mounts), "host": self.host, "port": self.port,
                    "allow_remote": self.allow_remote, "emulator_speed": self.emulator_speed}
        self._command(json.dumps(settings))
        reader = FeedReader()
        fd = self._proc.stdout.fileno()
        first = self._first_messages(fd, reader, timeout)
        if first is None or first[0].kind != READY:
            why = first[0].payload.decode("utf-8", "replace") if first else "the tap's process ended at start"
            self._kill()
            self._proc.wait(5)
            for pipe in (self._proc.stdin, self._proc.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()
            self._proc = None
            raise OSError(0, why)
        ready, rest = first[0].json(), first[1:]
        self.tap.mounts = mounts_from_json(ready["mounts"])
        self.base_url = ready["base_url"]
        self._feed_ended = False
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout, reader, rest),
                                        name="streamscope-tap-feed", daemon=True)
        self._reader.start()
        return self.base_url

    def _first_messages(self, fd: int, reader: FeedReader, timeout: float):
        timer = threading.Timer(timeout, self._kill)        # a child that never answers is ended
        timer.start()
        try:
            while True:
                data = os.read(fd, READ_BYTES)
                if not data:
                    return None
                messages = reader.feed(data)
                if messages:
                    return messages
        except FeedError:
            return None
        finally:
            timer.cancel()

    def stop_exchange(self, ex) -> None:
        """End this one open exchange, as the tap's Stop does (from any thread)."""
        no = next((no for no, open_ex in list(self.tap.in_flight.items()) if open_ex is ex), None)
        if no is not None:
            self._command(f"stop {no}")

    def sync(self, timeout: float = 10.0) -> bool:
        """Wait until everything the tap has done so far has reached this process: each exchange it has begun is
        in `tap.exchanges` (its `on_started` called), and its calls are with the recorder. (A client that got a
        whole response may be ahead of the feed, which has a pipe and a reader thread to pass.) False when the
        child did not answer in time or is gone."""
        if self._proc is None or self._reader is None:
            return False
        with self._stdin_lock:
            self._sync_count += 1
            no = self._sync_count
            done = self._syncs[no] = threading.Event()
        self._command(f"sync {no}")
        ok = done.wait(timeout)
        self._syncs.pop(no, None)
        return ok and not self._feed_ended

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the tap: the child ends its open exchanges (clients answered), sends their ends, and exits;
        returns once every exchange here is final."""
        if self._proc is None:
            return
        self._stopping = True
        self._command("quit")
        with contextlib.suppress(OSError):
            self._proc.stdin.close()
        if self._reader is not None:
            self._reader.join(timeout)
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._kill()
        if self.worker is not None:
            done = threading.Event()
            self.worker.submit(done.set)
            done.wait(timeout)
        self._proc = None
        self._reader = None
        self.base_url = None

    def _command(self, line: str) -> None:
        with self._stdin_lock:
            try:
                self._proc.stdin.write(line.encode("utf-8") + b"\n")
            except (OSError, ValueError, AttributeError):   # the child is gone (its end is reported by the reader)
                pass

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the feed -----------------------------------------------------------------------------------------
    def _record(self, fn, *args) -> None:
        if self.worker is not None:
            self.worker.submit(fn, *args)
            return
        with self.lock:
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - one call's failure stops no other exchange
                log.exception("tap recorder failed")

    def _read(self, stdout, reader: FeedReader, first) -> None:
        lost = None
        fd = stdout.fileno()
        try:
            self._apply(first)
            while data := os.read(fd, READ_BYTES):
                self._apply(reader.feed(data))
            reader.end()
        except Exception as exc:  # noqa: BLE001 - a broken feed ends the open exchanges, it never hangs them
            log.exception("tap feed failed")
            lost = f"the tap's feed failed: {exc}"
        with contextlib.suppress(OSError):
            stdout.close()
        if self._open or lost or not self._stopping:
            why = lost or "the tap's process ended"
            for no, ex in list(self._open.items()):
                self._record(self._end, no, ex, None, error_dict(ErrorType.CONNECTION_DROPPED, why))
            self._open.clear()
            if not self._stopping:
                notify(self.tap.on_lost, why)
        self._feed_ended = True
        for done in list(self._syncs.values()):      # (nothing more will come: no one waits for it)
            done.set()

    def _apply(self, messages) -> None:
        tap = self.tap
        chunks: list = []                 # a run of chunks of one exchange goes to the recorder as one call
        chunks_of = None
        batched = 0
        for m in messages:
            if m.kind == CHUNK:
                ex = self._open.get(m.no)
                if ex is None:
                    continue
                if ex is not chunks_of or batched >= BATCH_BYTES:
                    if chunks:
                        self._record(_on_chunks, chunks_of, chunks)
                    chunks, chunks_of, batched = [], ex, 0
                chunks.append((m.t, m.payload))
                batched += len(m.payload)
                continue
            if chunks:
                self._record(_on_chunks, chunks_of, chunks)
                chunks, chunks_of = [], None
            if m.kind == SYNCED:
                done = self._syncs.get(m.no)
                if done is not None:
                    done.set()
                continue
            if m.kind == NEW:
                meta, body = parse_new(m.payload)
                ex = Exchange(meta["name"], meta["method"], meta["url"], meta["headers"], body, path=meta["path"],
                              fallback_format=meta["fallback_format"])
                tap.seen += 1
                tap.exchanges.append(ex)
                tap.in_flight[m.no] = ex
                self._open[m.no] = ex
                notify(tap.on_started, ex)
                continue
            ex = self._open.get(m.no)
            if ex is None:
                continue
            if m.kind == START:
                self._record(ex.begin, m.json()["started_at"], m.t)
            elif m.kind == HEADERS:
                h = m.json()
                self._record(ex.on_headers, m.t, h["status"], h["http_version"], h["reason"],
                             [tuple(p) for p in h["headers"]])
            elif m.kind == END:
                del self._open[m.no]
                self._record(self._end, m.no, ex, m.t, m.json())
        if chunks:
            self._record(_on_chunks, chunks_of, chunks)

    def _end(self, no: int, ex: Exchange, t: int | None, error: dict | None) -> None:
        """(On the worker, after every call before it: `tap.in_flight` loses the exchange once it is final.)"""
        if t is None:                     # (the child died: now, on the exchange's clock)
            t = ex.run.clock()
        ex.finish(t, error)
        self.tap.in_flight.pop(no, None)
        notify(self.tap.on_ended, ex)


def _on_chunks(ex: Exchange, chunks: list[tuple[int, bytes]]) -> None:
    for t, data in chunks:
        ex.on_chunk(t, data)
