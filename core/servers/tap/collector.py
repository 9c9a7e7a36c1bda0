"""The garbage collector of a process that is a tap (the command line's, and the window's tap child).

Forwarding makes few objects that live, but the recorder makes many that live as long as their exchange (a frame
and an event per SSE frame), and everything start-up made (modules, uvicorn, httpx) lives for good. CPython's
automatic collector scans all of them again in every older-generation pass, and a pass holds every chunk being
forwarded: in one run of `bench/tap_bench.py` the command line's tap made 7 full collections of up to 40 ms
(155 ms in all) and 60 middle ones of up to 6 ms, the tail of its added latency.

So, as the window does for its own streams (`gui.qtcompat.MainThreadGC`, which a tap cannot import):
- what start-up made is frozen (`gc.freeze`: never scanned again);
- while any exchange is open, only the young generation is collected (its automatic threshold is kept; the
  older generations' are raised out of reach), so what survives piles up unscanned;
- once no exchange has been open for `settle_s`, the thresholds go back, and one full collection finds the
  cycles that became garbage meanwhile; what is left is frozen again. A tap never idle that long gets the same
  full collection at an exchange's start once `full_every_s` has passed since the last (with exchanges begun
  since), so what piles up stays bounded.

`ForwardingCollector().install(tap)` once the tap serves, on its loop; `uninstall()` gives the collector back its
defaults. Only for a process the tap owns: the thresholds are the process's (the window has its own collector).
"""
from __future__ import annotations

import asyncio
import gc
import time

#: an older generation's threshold while exchanges are open: never reached
OUT_OF_REACH = 1 << 30


class ForwardingCollector:
    def __init__(self, settle_s: float = 1.0, full_every_s: float = 60.0) -> None:
        self.settle_s = settle_s
        self.full_every_s = full_every_s
        self.defaults = gc.get_threshold()
        self.open = 0
        self.full_collections = 0
        self._last_full = 0.0
        self._dirty = False          # an exchange began since the last full collection
        self._settle: asyncio.TimerHandle | None = None
        self._tap = None

    def install(self, tap) -> None:
        """Follow `tap`'s exchanges (call on its loop, as it starts to serve): start-up is collected and frozen."""
        self._tap = tap
        tap.on_started.append(self.started)
        tap.on_ended.append(self.ended)
        self._full()

    def uninstall(self) -> None:
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None
        if self._tap is not None:
            for listeners, fn in ((self._tap.on_started, self.started), (self._tap.on_ended, self.ended)):
                if fn in listeners:
                    listeners.remove(fn)
            self._tap = None
        gc.set_threshold(*self.defaults)
        gc.unfreeze()

    def started(self, _ex=None) -> None:
        self.open += 1
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None
        if self._dirty and time.monotonic() - self._last_full > self.full_every_s:
            self._full()          # (busy for long: the one pause, before this exchange forwards anything)
        self._dirty = True
        if self.open == 1:
            gc.set_threshold(self.defaults[0], OUT_OF_REACH, OUT_OF_REACH)

    def ended(self, _ex=None) -> None:
        self.open = max(0, self.open - 1)
        if self.open == 0 and self._settle is None:
            self._settle = asyncio.get_running_loop().call_later(self.settle_s, self._settled)

    def _settled(self) -> None:
        self._settle = None
        if self.open:
            return
        gc.set_threshold(*self.defaults)
        self._full()

    def _full(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.full_collections += 1
        self._last_full = time.monotonic()
        self._dirty = False
