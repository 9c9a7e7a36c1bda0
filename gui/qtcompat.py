"""Work-arounds for bugs in the Qt binding, applied once when `gui` is imported.

PySide6 6.12.0 on CPython < 3.12 returns the `None`, `True` and `False` singletons to Python without taking a
reference to them: every call of a void Qt method (`setText`, `show`, `click`, ...) drops one reference to
`None`, and every Python-side `Signal.emit()` one to `True`. A GUI makes thousands of such calls a minute, so
CPython soon aborts with "Fatal Python error: none_dealloc" (or `bool_dealloc`). CPython 3.12 made these
singletons immortal, which is why the bug does not show there.

We detect the leak with two probes and, only when it is present, give the three singletons the same
effectively-immortal reference count that 3.12 gives them. They are static objects that are never freed, so
the extra count costs nothing; if a fixed binding is installed, the probes see no leak and nothing is done.
The better fix is a binding without the bug (see the project's dependency pins).
"""
from __future__ import annotations

import ctypes
import sys

_IMMORTAL_BUMP = 1 << 40
_PROBES = 32


def leaks() -> dict[str, bool]:
    """Which singletons the binding leaks: {"None": ..., "True": ...}."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        sig = Signal()

    p = _Probe()
    before = sys.getrefcount(None)
    for _ in range(_PROBES):
        p.setObjectName("probe")          # a void method
    none_leak = sys.getrefcount(None) <= before - _PROBES
    before = sys.getrefcount(True)
    for _ in range(_PROBES):
        p.sig.emit()                      # returns True
    true_leak = sys.getrefcount(True) <= before - _PROBES
    return {"None": none_leak, "True": true_leak}


def _bump(obj) -> None:
    ctypes.c_ssize_t.from_address(id(obj)).value += _IMMORTAL_BUMP


def apply() -> bool:
    """Apply the work-around when the probes find the leak; True when it is in force."""
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if getattr(sys, "_streamscope_singletons_pinned", False):
        return True
    found = leaks()
    if not any(found.values()):
        return False
    for obj in (None, True, False):
        if sys.getrefcount(obj) < _IMMORTAL_BUMP // 2:
            _bump(obj)
    sys._streamscope_singletons_pinned = True
    return True


APPLIED = apply()


class MainThreadGC:
    """Python's cyclic garbage collector, run from the Qt main thread only.

    With the emulator (uvicorn), the decode worker or any other Python thread in the process, automatic
    collection can start in that thread and destroy Qt objects there while the main thread is delivering their
    events: a segfault in `QCoreApplication::notify`. So automatic collection is switched off and a timer on
    the main thread collects each generation when its count passes the usual threshold (full collections at
    most every `full_every_s` seconds, as CPython also spaces them out).

    While streams run (`MainThreadGC.streaming(True)`, the window's sends), what survives a young collection
    is nearly all what the runs keep for as long as they are shown (a frame and an event object per SSE frame,
    100,000s of them under a firehose): scanning them again in each older-generation collection held the
    window 15-45 ms at a time. So the young generation is collected every `busy_interval_ms` (small, cheap
    passes) and its survivors are frozen at once (`gc.freeze`: never scanned again while streaming). Once the
    streams have ended and `settle_after_s` passed, the frozen objects go back to the collector and one full
    collection finds whatever cycles became garbage meanwhile (then what is left is frozen again, as after
    start-up): the one pass that costs, done when nothing streams.
    """

    current: "MainThreadGC | None" = None

    def __init__(self, interval_ms: int = 250, full_every_s: float = 10.0, busy_interval_ms: int = 50,
                 settle_after_s: float = 1.0) -> None:
        import gc
        import time

        from PySide6.QtCore import QTimer

        self._gc = gc
        self._time = time
        self.threshold = gc.get_threshold()
        self.full_every_s = full_every_s
        self.interval_ms = interval_ms
        self.busy_interval_ms = busy_interval_ms
        self.settle_after_s = settle_after_s
        self._last_full = time.monotonic()
        self._busy = False
        self._owners: set = set()               # who streams now (`streaming`)
        self._settle_at: float | None = None    # when the objects frozen while streaming are looked at again
        gc.disable()
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.check)
        self.timer.start()
        MainThreadGC.current = self

    @classmethod
    def streaming(cls, busy: bool, owner: object = "window") -> None:
        """`owner`'s streams started (True) or all ended (False): see the class docstring. The collector counts
        as streaming while any owner is (the main window's sends, a tap window's exchanges). Without a
        collector, nothing."""
        if cls.current is not None:
            owners = cls.current._owners
            if busy:
                owners.add(owner)
            else:
                owners.discard(owner)
            cls.current._set_busy(bool(owners))

    def _set_busy(self, busy: bool) -> None:
        if busy == self._busy:
            return
        self._busy = busy
        self.timer.setInterval(self.busy_interval_ms if busy else self.interval_ms)
        if not busy and self._settle_at is not None:
            self._settle_at = self._time.monotonic() + self.settle_after_s

    def check(self) -> None:
        gc = self._gc
        c0, c1, c2 = gc.get_count()
        t0, t1, t2 = self.threshold
        if self._busy:
            if c0 > t0:
                gc.collect(0)
                gc.freeze()
                self._settle_at = float("inf")     # (settled once the streams end)
            return
        if self._settle_at is not None and self._time.monotonic() >= self._settle_at:
            self._settle_at = None
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._last_full = self._time.monotonic()
            return
        if c0 <= t0:
            return
        if c2 > t2 and self._time.monotonic() - self._last_full >= self.full_every_s:
            gc.collect(2)
            self._last_full = self._time.monotonic()
        elif c1 > t1:
            gc.collect(1)
        else:
            gc.collect(0)

    def stop(self) -> None:
        self.timer.stop()
        if MainThreadGC.current is self:
            MainThreadGC.current = None
        self._gc.collect()
        self._gc.enable()
