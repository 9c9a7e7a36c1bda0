"""Fixtures for every test.

Once a GUI test has made the QApplication, the process holds Qt objects for the rest of the session, and the
tests that follow (the tap's, the emulator's) start server threads. Python's automatic cycle collection can then
run in such a thread and destroy a leftover Qt object there while the main thread delivers its events: a
segfault in `QCoreApplication::notify` (seen running the GUI tests and then tests/core/servers/tap in one
process). The app avoids it with `gui.qtcompat.MainThreadGC`; here, as tests/gui/conftest.py does for the GUI
tests, automatic collection is off during each test once Qt is loaded and garbage is collected on the main thread
after it.
"""
from __future__ import annotations

import gc
import sys

import pytest


@pytest.fixture(autouse=True)
def _gc_on_the_main_thread_once_qt_is_loaded():
    widgets = sys.modules.get("PySide6.QtWidgets")
    if widgets is None or widgets.QApplication.instance() is None:
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    gc.collect()
    if was_enabled:
        gc.enable()
