"""The recorder's work (decoding, the end of a run) on a thread of its own, for a program whose reading thread also
paints: the window reads each provider's bytes on its Qt loop and hands them here.

    worker = shared_worker()               # one per process, its thread started on first use
    worker.submit(run._on_chunk, t, data)  # from the reading thread: in order, returns at once
    await worker.drained()                 # (on an asyncio loop) everything submitted before is done
    await settled(worker)                  # the same, also for a cancelled task (None: nothing to wait for)
    with worker.lock: ...                  # read what the worker writes (a pane's repaint), consistently
    record = recorder_calls(worker, failures)   # record(fn, *args): on the worker, what raises kept in failures

Why a thread, though one interpreter runs one thread's Python at a time: a firehose decoded on the window's
thread arrives as slabs of several milliseconds (a 64 KiB read is 2,000 frames through framing, JSON, adapter
and reducer) during which nothing is painted and no click is answered, and eight of them leave the window no
time at all. Here the decoding runs while the window's thread waits for events or paints in Qt's C++ (which
releases the GIL), and the interpreter hands the GIL to the window's thread within its switch interval when it
wants it: the window's latency becomes its own work's, whatever the streams do.

What stays on the reading thread: the bytes' arrival times (taken as they are read and handed over with them),
so the capture's clock is the same as when decoding happened inline.

The gate: one Python thread runs at a time, and each Qt call that lets go of the GIL (a paint's drawing calls)
cost the window's thread up to a switch interval to get it back from a busy worker: painting eight panes took
twice as long. So the worker waits at `gate` before each item, for at most `gate_timeout` seconds: a window
closes the gate while its thread handles events and opens it when the thread waits for more (an application-
wide event filter, the Qt event dispatcher's aboutToBlock: `gui.controller.gate_decoding_on_this_thread`), and
the decoding takes the window's idle time first. Left open (the
default, and without a window), the worker never waits.

The lock: the worker holds it while it runs one item; a reader holds it while it reads what the items write
(a run's lists only grow, but the reducer's snapshot and the metrics change together). Items run in submission
order; one that raises is logged and stops nothing else (the recorder records its own failures).
"""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger("streamscope.decode")

_STOP = object()


def _resolve(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


class DecodeWorker:
    """A thread that runs the recorder's calls in order (see the module docstring)."""

    def __init__(self, name: str = "streamscope-decode") -> None:
        self.name = name
        self.lock = threading.RLock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.items_done = 0
        self.gate = threading.Event()       # open: run the next item now (see the module docstring)
        self.gate.set()
        self.gate_timeout = 0.02

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            with self._start_lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                    self._thread.start()

    def submit(self, fn: Callable, *args) -> None:
        """Run `fn(*args)` on the worker's thread, after everything submitted before."""
        self._ensure_thread()
        self._queue.put((fn, args))

    def drained(self) -> asyncio.Future:
        """A future of the running loop, done once everything submitted before this call has run."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._ensure_thread()
        self._queue.put((None, (loop, fut)))
        return fut

    def stop(self, timeout: float = 5.0) -> None:
        """Finish what is queued, then end the thread (a new submit starts another)."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self._queue.put((_STOP, ()))
        thread.join(timeout)

    def _run(self) -> None:
        get = self._queue.get
        lock = self.lock
        gate = self.gate
        while True:
            fn, args = get()
            if not gate.is_set():
                gate.wait(self.gate_timeout)
            if fn is _STOP:
                return
            if fn is None:                          # a drained() marker: wake its waiter
                loop, fut = args
                try:
                    loop.call_soon_threadsafe(_resolve, fut)
                except RuntimeError:                # its loop is closed: nobody waits any more
                    pass
                continue
            with lock:
                try:
                    fn(*args)
                except Exception:  # noqa: BLE001 - one item's failure never stops the others
                    log.exception("decode worker: %s failed", getattr(fn, "__qualname__", fn))
            self.items_done += 1


async def settled(worker: DecodeWorker | None) -> None:
    """Everything handed to `worker` so far has run (also when the awaiting task is cancelled meanwhile: it
    still waits for that, then the cancellation goes on). None: nothing to wait for."""
    if worker is not None:
        fut = worker.drained()
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            if not fut.done():
                raise


def recorder_calls(worker: DecodeWorker | None, failures: list | None = None) -> Callable:
    """`record(fn, *args)`: the recorder's calls, on `worker`'s thread in order when there is one, else now.

    Inline, a call that raises stops the caller, which reports it; on the worker it cannot, so with `failures`
    given each exception is added to it (and logged) for the caller's last call, the run's end, to report."""
    if worker is None:
        return lambda fn, *args: fn(*args)
    if failures is None:
        return worker.submit

    def guarded(fn, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:
            failures.append(exc)
            raise

    return lambda fn, *args: worker.submit(guarded, fn, *args)


_shared: DecodeWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> DecodeWorker:
    """The process's decode worker (made on first use; its thread starts with the first item)."""
    global _shared
    if _shared is None:
        with _shared_lock:
            if _shared is None:
                _shared = DecodeWorker()
    return _shared
