"""What keeps the window responsive under fast streams: decoding on the worker's thread (gated by the window's
idle time), panes built one per loop turn, refresh rounds with a time budget, and the cycle collector's
streaming mode. Each is checked for what it must keep: every frame shown, every pane whole, nothing lost."""
from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time

import pytest
from PySide6.QtCore import QTimer

from core.live.recorder import ProviderRun

from tests.gui.conftest import demo_window, run_until, running_emulator


@pytest.fixture(scope="module")
def emulator():
    yield from running_emulator(speed=0.0)


@pytest.fixture
def window(qtbot, loop, emulator, settings):
    yield from demo_window(qtbot, loop, emulator, settings, read_timeout=10.0)


def _send(window, loop, scenario: str, max_tokens: int = 1024) -> None:
    window.prompt.prompt.setPlainText("What is the capital of France?")
    window.scenario.setCurrentText(scenario)
    window.prompt.max_tokens.setValue(max_tokens)
    assert window.send()
    run_until(loop, lambda: window.finished, timeout=60)
    window.scheduler.flush()


def test_the_windows_streams_are_decoded_on_the_worker_thread_and_every_frame_is_shown(window, loop,
                                                                                     monkeypatch):
    threads = set()
    original = ProviderRun._on_chunk

    def on_chunk(self, t, data):
        threads.add(threading.current_thread().name)
        original(self, t, data)

    monkeypatch.setattr(ProviderRun, "_on_chunk", on_chunk)
    _send(window, loop, "firehose", max_tokens=3000)
    assert threads == {window.decode_worker.name}
    for pane in window.panes:
        run = pane.controller.run
        assert run.status == "done", run.error
        shown = pane.raw_tab.table.model().rowCount() - pane.controller.view.comments
        assert shown == run.decoder.frames > 1000
        assert pane.text_view.answer.toPlainText()      # the reply reached the Text tab


def test_the_gate_is_closed_while_the_window_handles_events_and_open_while_it_waits(window, loop):
    gate = window.decode_worker.gate
    inside = []
    seen_open = []
    stop = threading.Event()

    def watch():                     # from another thread, as the worker sees it
        while not stop.is_set():
            seen_open.append(gate.is_set())
            time.sleep(0.001)

    watcher = threading.Thread(target=watch)
    watcher.start()

    async def go():
        for _ in range(5):
            QTimer.singleShot(0, lambda: inside.append(gate.is_set()))
            await asyncio.sleep(0.03)

    try:
        loop.run_until_complete(go())
    finally:
        stop.set()
        watcher.join()
    assert inside and not any(inside)            # handling an event: closed
    assert any(seen_open)                        # waiting for events: open


def test_a_closed_gate_holds_the_worker_back_only_for_its_timeout():
    from core.live.decode_worker import DecodeWorker

    worker = DecodeWorker("test-gate")
    worker.gate.clear()
    worker.gate_timeout = 0.05
    ran = threading.Event()
    t0 = time.perf_counter()
    worker.submit(ran.set)
    assert ran.wait(2)
    waited = time.perf_counter() - t0
    worker.stop()
    assert 0.04 <= waited < 1.0


def test_panes_are_built_in_later_loop_turns_and_at_once_when_asked_for(window, loop):
    window.prompt.prompt.setPlainText("What is the capital of France?")
    window.scenario.setCurrentText("text")
    assert window.send()
    panes = list(window.panes)
    assert len(panes) == 4 and not any(p.built for p in panes)     # send() itself builds none of them
    header = panes[2].header                                       # asked for: built now
    assert panes[2].built and header.name_label.text()
    run_until(loop, lambda: all(p.built for p in panes), timeout=5)
    run_until(loop, lambda: window.finished, timeout=30)
    window.scheduler.flush()
    assert all("Paris" in p.text_view.answer.toPlainText() for p in panes)


def test_a_refresh_round_stops_at_its_budget_and_the_rest_follow(window, loop):
    _send(window, loop, "text")
    sched = window.scheduler
    refreshed = []
    for c in window.controllers:
        original = c.refresh

        def slow(c=c, original=original):
            time.sleep(0.004)
            refreshed.append(c)
            original()

        c.refresh = slow
    sched.budget_s = 0.001
    rounds = sched.flushes
    for c in window.controllers:
        sched.mark_dirty(c)
    run_until(loop, lambda: len(refreshed) == 4, timeout=5)
    assert sched.flushes - rounds == 4              # one controller per round: each took the whole budget
    assert refreshed == window.controllers          # oldest first


class _Node:
    def __init__(self) -> None:
        self.me = self          # a cycle: only the cycle collector frees it


@contextlib.contextmanager
def main_thread_gc(**kw):
    """A `MainThreadGC` for one test; the interpreter's collector as it was afterwards."""
    from gui.qtcompat import MainThreadGC

    was_enabled = gc.isenabled()
    collector = MainThreadGC(**kw)
    try:
        yield collector
    finally:
        collector.stop()
        if was_enabled:
            gc.enable()
        else:
            gc.disable()


def test_the_collector_streams_while_any_owner_does(qapp):
    """The main window's sends and a tap window's exchanges each say when they stream: one ending does not
    settle the collector while the other still streams."""
    from gui.qtcompat import MainThreadGC

    with main_thread_gc() as collector:
        MainThreadGC.streaming(True)                   # the main window
        MainThreadGC.streaming(True, owner="tap")      # a tap window
        MainThreadGC.streaming(False)
        assert collector._busy
        MainThreadGC.streaming(False, owner="tap")
        assert not collector._busy
        MainThreadGC.streaming(False, owner="tap")     # (again: nothing)
        assert not collector._busy


def test_the_collector_freezes_what_streams_keep_and_settles_after(qapp):
    import weakref

    from gui.qtcompat import MainThreadGC

    with main_thread_gc(busy_interval_ms=10, settle_after_s=0.0) as collector:
        before = gc.get_freeze_count()
        MainThreadGC.streaming(True)
        kept = [[i] for i in range(5000)]          # what a stream keeps (tracked objects)
        node = _Node()
        gone = weakref.ref(node)
        collector.check()
        assert gc.get_freeze_count() >= before + 5000   # survivors of the young pass: out of the collector's sight
        del node                                    # garbage now, but frozen: no young or old pass frees it
        gc.collect()
        assert gone() is not None
        MainThreadGC.streaming(False)
        collector.check()                           # settle: unfreeze, full collection, freeze what is left
        assert gone() is None
        assert gc.get_freeze_count() >= 5000 and len(kept) == 5000
