"""GUI test fixtures: offscreen Qt, a qasync loop over the test QApplication, isolated QSettings, and runs
rebuilt from the shared corpus (through the core's own recorder)."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from tests.corpus import CORPUS

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")



@pytest.fixture(scope="session", autouse=True)
def _isolated_settings(tmp_path_factory):
    """QSettings of every test go to a temporary folder, never the user's."""
    from PySide6.QtCore import QCoreApplication, QSettings

    path = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.IniFormat)
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(path))
    QSettings.setPath(QSettings.IniFormat, QSettings.SystemScope, str(path))
    QCoreApplication.setOrganizationName("StreamScopeTests")
    QCoreApplication.setApplicationName("StreamScopeTests")
    yield


@pytest.fixture(autouse=True)
def _gc_on_the_main_thread():
    """As in the app (gui.qtcompat.MainThreadGC): the emulator's thread must never collect Qt objects, so
    automatic collection is off during a test and garbage is collected here, on the main thread.

    What is alive when a test starts is frozen first (`gc.freeze()`), so the collection afterwards looks only at
    the objects this test made: a full collection over the whole session's heap cost ~0.4 s per test. A frozen
    object is never collected by the cycle collector, on any thread, so freezing keeps the rule above."""
    import gc

    gc.disable()
    gc.freeze()
    yield
    gc.collect()
    gc.enable()


@pytest.fixture(autouse=True)
def _application(qapp):
    """Every GUI test has the QApplication, whether or not it asks for it: a widget made before one exists
    aborts the process (which test made it first depends on how xdist shared the tests out)."""
    return qapp


@pytest.fixture(autouse=True)
def _no_modal_message_boxes(monkeypatch):
    """A message box opened modally in a test would wait for a click forever: it fails the test instead."""
    from PySide6.QtWidgets import QMessageBox

    def refuse(box, *_a):
        raise AssertionError(f"a modal message box was opened: {box.windowTitle()!r}: {box.text()!r}")

    monkeypatch.setattr(QMessageBox, "exec", refuse)


@pytest.fixture
def settings(tmp_path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


def _test_loop_class():
    import qasync
    from PySide6.QtCore import QEventLoop as QtEventLoop

    class TestLoop(qasync.QEventLoop):
        """qasync's loop, except that `run_until_complete` keeps asyncio's running loop set during the final
        `processEvents()` it does after stopping: a test calls it many times while streams are live, and a
        stream callback landing in that last pass would otherwise run outside any running loop."""

        def run_until_complete(self, future):
            if self.is_running():
                raise RuntimeError("Event loop already running")
            future = asyncio.ensure_future(future, loop=self)

            def stop(*_args):
                self.stop()

            future.add_done_callback(stop)
            try:
                self.run_forever()
            finally:
                future.remove_done_callback(stop)
            asyncio.events._set_running_loop(self)
            try:
                self._app.eventDispatcher().processEvents(QtEventLoop.AllEvents)
            finally:
                asyncio.events._set_running_loop(None)
            if not future.done():
                raise RuntimeError("Event loop stopped before Future completed.")
            return future.result()

    return TestLoop


@pytest.fixture
def loop(qapp):
    """A qasync loop on the test QApplication; drive coroutines with loop.run_until_complete(...)."""
    lp = _test_loop_class()(qapp, already_running=False)
    lp._app = qapp
    asyncio.set_event_loop(lp)
    yield lp
    try:
        pending = [t for t in asyncio.all_tasks(lp) if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            lp.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    finally:
        lp.close()
        asyncio.set_event_loop(None)


def corpus_bytes(relpath: str) -> bytes:
    path = CORPUS / relpath
    if not path.is_file():
        pytest.skip(f"corpus file {relpath} not found (../shared/corpus)")
    return path.read_bytes()


def corpus_run(relpath: str, chunk: int = 64, step_ns: int = 2_000_000, name: str | None = None):
    """A finished `ProviderRun` rebuilt from a corpus recording fed in `chunk`-byte pieces."""
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run

    data = corpus_bytes(relpath)
    fmt = Path(relpath).parent.name
    provider = ProviderConfig(name or Path(relpath).stem, fmt, "http://127.0.0.1:9/v1", "recorded", "")
    chunks = [(1_000_000 + i // chunk * step_ns, data[i:i + chunk]) for i in range(0, len(data), chunk)]
    end = chunks[-1][0] + 1_000_000
    headers = (500_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    return rebuild_run(provider, headers=headers, chunks=chunks, end_ns=end, started_at=1_700_000_000.0)


def run_until(loop, predicate, timeout: float = 20.0, step: float = 0.01, why=None) -> None:
    """Run the qasync loop until `predicate()` is true (or fail after `timeout` seconds, saying `why()`)."""
    async def wait():
        deadline = loop.time() + timeout
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError("timed out waiting for the condition" + (f": {why()}" if why else ""))
            await asyncio.sleep(step)
    loop.run_until_complete(wait())


def in_loop(loop, fn, *args):
    """Call `fn` while the qasync loop is running (Qt input that may pump events while tasks stream)."""
    async def call():
        return fn(*args)
    return loop.run_until_complete(call())


def running_emulator(speed: float):
    """The built-in emulator at `speed` (0: no pacing) for a module's tests: yields its base URL (a generator
    for a fixture to `yield from`)."""
    from core.servers.emulator.server import EmulatorServer

    srv = EmulatorServer(speed=speed)
    base = srv.start()
    yield base
    srv.stop()


def demo_window(qtbot, loop, base: str, settings, read_timeout: float):
    """A shown 1400x900 window whose demo providers are the emulator at `base` (a generator for a fixture to
    `yield from`; the window is closed after the test)."""
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    w = MainWindow([], settings=settings, demo_providers=demo_providers(base), read_timeout=read_timeout)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    loop.run_until_complete(w.aclose())
