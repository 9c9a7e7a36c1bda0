"""Pane controllers: each owns one provider run, its asyncio task and its Qt models; repaints are batched.

`PaneController` adapts one core run (`core.live.recorder.ProviderRun`, live or replayed) for a pane: it builds the
pane's models over a `RunView`, starts the coroutine that streams (or replays) the run as an asyncio task on
the Qt loop (qasync), and can cancel it. The core calls `run.on_update` after every processed chunk; that only
marks the controller dirty. `RepaintScheduler` flushes dirty controllers at most ~60 times a second, so a
firehose of frames costs one model refresh per tick, never one widget call per event.

A live run is decoded on the decode worker's thread (`core.live.decode_worker`; the window's streams hand their
chunks to it): `run.on_update` then comes from that thread, and only wakes the controller on the Qt thread
(a queued signal, once until it is handled); a refresh reads the run holding the worker's lock.
"""
from __future__ import annotations

import asyncio
import threading
import time

from PySide6.QtCore import QObject, QTimer, Signal

from core.live.decode_worker import shared_worker
from core.live.errors import ErrorType, error_dict
from core.live.recorder import FINAL_STATUSES

from gui import plaintips
from gui.models import BlocksModel, DiagnosticsModel, FrameFilterProxy, FramesModel, UsageHistoryModel, UsageModel
from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.runview import RunView

FRAME_INTERVAL_MS = 16  # at most ~60 refreshes a second
DECODE_LOCK = shared_worker().lock   # held while a refresh reads runs the worker may be writing
_gated = False


def gate_decoding_on_this_thread(worker=None) -> None:
    """Let the decode worker run while the Qt thread waits for events, and hold it back (for at most its
    `gate_timeout`) while the thread handles them: see `core.live.decode_worker`. Once per application.

    The gate closes whenever this thread handles an event: the application's event filter (every event, timer
    and socket notification passes it; the plain-text tooltips' filter, `gui.plaintips`, which calls
    `on_every_event`: one Python filter, not two, as each costs a wait for the GIL per event), and opens when
    the thread is about to wait for more (the event dispatcher's aboutToBlock). Not the dispatcher's `awake`
    alone: the glib dispatcher (Linux) handles timers after aboutToBlock without saying awake first."""
    global _gated
    from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication

    worker = worker or shared_worker()
    app = QCoreApplication.instance()
    dispatcher = QAbstractEventDispatcher.instance()
    if app is None or dispatcher is None or _gated:
        return
    _gated = True
    plaintips.install(app).on_every_event = worker.gate.clear
    dispatcher.aboutToBlock.connect(worker.gate.set)
    dispatcher.awake.connect(worker.gate.clear)


class RepaintScheduler(QObject):
    """Collects dirty controllers and refreshes them, at most once per `interval_ms` each.

    A refresh round does at most `budget_ms` of refreshing, then gives the loop back and goes on in the next
    turn (oldest first): eight panes under a firehose took 10-40 ms per round, and the window's painting and
    input waited for all of it. `flush()` refreshes every dirty controller at once (tests, the end of a run)."""

    def __init__(self, interval_ms: int = FRAME_INTERVAL_MS, parent=None, budget_ms: float = 6.0) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self.budget_s = budget_ms / 1000
        self._dirty: dict[PaneController, None] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.timeout.connect(self._round)
        self._last = 0.0
        self.flushes = 0

    def mark_dirty(self, controller: "PaneController") -> None:
        self._dirty[controller] = None
        if not self._timer.isActive():
            since = (time.perf_counter() - self._last) * 1000
            self._timer.start(max(0, int(self.interval_ms - since)))

    def _round(self) -> None:
        """Refresh the dirty controllers, oldest first, for at most `budget_s`; the rest in the next turn."""
        start = time.perf_counter()
        self._last = start
        dirty = self._dirty
        with DECODE_LOCK:
            while dirty:
                c = next(iter(dirty))
                del dirty[c]
                if not c._retired:
                    c.refresh()
                if time.perf_counter() - start >= self.budget_s:
                    break
        self.flushes += 1
        if dirty and not self._timer.isActive():
            self._timer.start(0)

    def flush(self) -> None:
        """Refresh every dirty controller now."""
        self._timer.stop()
        self._last = time.perf_counter()
        dirty, self._dirty = self._dirty, {}
        with DECODE_LOCK:
            for c in dirty:
                if not c._retired:
                    c.refresh()
        self.flushes += 1


class PaneController(QObject):
    """One provider's run, its task and the models its pane shows.

    The models (`frames`, `frames_proxy`, `blocks`, `usage`, `usage_history`, `diagnostics`) read the run
    through `view`; `refresh()` (called by the scheduler) brings them up to date and emits `refreshed`.
    """

    refreshed = Signal()
    """The models were brought up to date (the pane updates its text views and header)."""
    statusChanged = Signal(str)
    """The run's status changed: pending, connecting, streaming, done, error, cancelled, stalled."""
    finished = Signal()
    """The run reached a final status (done, error, cancelled, stalled) and its task ended."""
    _woke = Signal()
    """(internal) the run changed on the decode worker's thread: queued to this object's thread."""

    def __init__(self, run, scheduler: RepaintScheduler, parent=None) -> None:
        super().__init__(parent)
        self.run = run
        self.scheduler = scheduler
        self.view = RunView(run)
        self.frames = FramesModel(self.view, self)
        self._frames_proxy: FrameFilterProxy | None = None
        self.blocks = BlocksModel(self.view, self)
        self.usage = UsageModel(self.view, self)
        self.usage_history = UsageHistoryModel(self.view, self)
        self.diagnostics = DiagnosticsModel(self.view, self)
        self.task: asyncio.Task | None = None
        self._status = run.status
        self._finished_emitted = False
        self._retired = False
        self.changed_blocks: list[int] = []
        self._qt_thread = threading.get_ident()
        self._wake_pending = False
        self._woke.connect(self._on_woken, Qt.QueuedConnection)
        run.on_update = self._on_update

    @property
    def frames_proxy(self) -> FrameFilterProxy:
        """The Raw table's filtered view of `frames`, made when first asked for (the Raw tab): until then no
        proxy asks every new row whether it passes (under a firehose, 20,000 Python calls a second per pane)."""
        if self._frames_proxy is None:
            self._frames_proxy = FrameFilterProxy(self)
            self._frames_proxy.setSourceModel(self.frames)
        return self._frames_proxy

    # -- name etc ----------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.run.provider.name

    @property
    def status(self) -> str:
        return self.run.status

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES and (self.task is None or self.task.done())

    # -- the task ----------------------------------------------------------------------------------------
    def start(self, coro) -> asyncio.Task:
        """Run `coro` (streaming or replaying this run) as this pane's task on the running loop."""
        self.task = asyncio.ensure_future(coro)
        self.task.add_done_callback(self._task_done)
        self.mark_dirty()
        return self.task

    stopper = None
    """For a run with no task of its own (a tapped exchange): what stops it (called by `cancel`)."""

    @property
    def can_stop(self) -> bool:
        """Whether Stop would stop something: this pane's task runs, or its run has a stopper and goes on."""
        if self.task is not None:
            return not self.task.done()
        return self.stopper is not None and not self.run.finished

    def cancel(self) -> None:
        """Stop this pane's stream; what arrived stays shown (the core marks the run cancelled)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        elif self.task is None and self.stopper is not None and not self.run.finished:
            self.stopper()

    def _task_done(self, task: asyncio.Task) -> None:
        run = self.run
        exc = None if task.cancelled() else task.exception()
        if not run.finished:   # the task ended before the core recorded why: cancelled before it began, or a bug
            run.status = "cancelled" if exc is None else "error"
            run.error = run.error or (
                error_dict(ErrorType.CANCELLED, "cancelled before sending") if exc is None
                else error_dict(ErrorType.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
        if not self._retired:
            self.refresh()

    def retire(self) -> None:
        """The pane is gone: stop notifying, and delete this controller once its task has ended."""
        self.run.on_update = None
        self._retired = True
        if self.task is None or self.task.done():
            self.deleteLater()
        else:
            self.task.add_done_callback(lambda _t: self.deleteLater())

    # -- batching ----------------------------------------------------------------------------------------
    def _on_update(self, *_args) -> None:
        if self._retired:
            return
        if threading.get_ident() == self._qt_thread:
            self.scheduler.mark_dirty(self)
        elif not self._wake_pending:    # the decode worker's thread: wake the Qt thread, once until it is awake
            self._wake_pending = True
            self._woke.emit()

    def _on_woken(self) -> None:
        self._wake_pending = False      # (before reading: an update from now on wakes it again)
        if not self._retired:
            self.scheduler.mark_dirty(self)

    def mark_dirty(self) -> None:
        self.scheduler.mark_dirty(self)

    def refresh(self) -> None:
        """Bring the models up to date with the run (once per repaint tick)."""
        with DECODE_LOCK:
            self._refresh()

    def _refresh(self) -> None:
        self.view.sync()
        self.frames.refresh()
        self.changed_blocks = self.blocks.refresh()
        self.usage.refresh()
        self.usage_history.refresh()
        self.diagnostics.refresh()
        status = self.status
        if status != self._status:
            self._status = status
            self.statusChanged.emit(status)
        self.refreshed.emit()
        if not self._finished_emitted and self.is_final:
            self._finished_emitted = True
            self.finished.emit()
