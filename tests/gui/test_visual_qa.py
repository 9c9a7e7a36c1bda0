"""What a visual QA pass found, as behaviour: a prompt section opened makes the prompt area taller (and gives the
height back when closed), the Text tab follows a long reply to its very end, dialogs fit a small screen, the Tap
list shows each exchange's status, the Compare table shows its rows before its note, footnotes and timeline labels
are readable, the status bar counts what still streams, the timeline legend fits, and File > Open says it could
not read a file without a nested event loop in its task."""
from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint

from tests.gui.conftest import run_until
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)


def _demo_window(qtbot, qapp, base, settings, size):
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    w = MainWindow([], settings=settings, demo_providers=demo_providers(base), read_timeout=5.0)
    qtbot.addWidget(w)
    w.keep_on_screen = False
    w.resize(*size)
    w.show()
    qapp.processEvents()
    return w


def _shown_whole(widget, within) -> bool:
    """`widget` is visible and its whole rectangle lies inside `within`'s (both mapped to the window)."""
    if not widget.isVisible():
        return False
    top_left = widget.mapTo(within.window(), QPoint(0, 0))
    outer = within.mapTo(within.window(), QPoint(0, 0))
    return (top_left.y() >= outer.y() and top_left.y() + widget.height() <= outer.y() + within.height()
            and widget.height() >= widget.minimumSizeHint().height())


# -- 1: opening a prompt section grows the prompt area -------------------------------------------------------
@pytest.mark.parametrize("size", [(1024, 700), (1280, 800)])
def test_opening_a_prompt_section_grows_the_prompt_area_and_closing_gives_it_back(qtbot, loop, emulator, settings,  # noqa: F811
                                                                                  qapp, size):
    w = _demo_window(qtbot, qapp, emulator, settings, size)
    p, area = w.prompt, w.prompt_area
    before = w.main_split.sizes()
    p.tools_toggle.setChecked(True)
    p.tools.setPlainText("[{not json")
    qapp.processEvents()
    qapp.processEvents()
    grown = w.main_split.sizes()
    assert grown[0] >= before[0] + p.tools_box.minimumSizeHint().height()   # grown by the editor's height
    assert sum(grown) == sum(before)                                   # within the window
    assert p.tools.height() >= p.tools.minimumHeight()                 # the editor whole, not one clipped line
    assert p.tools_status.text().startswith("✗ not JSON")
    assert _shown_whole(p.tools_status, area.body)                     # its verdict in view
    assert _shown_whole(w.followups.controls, area.body)               # Continue / Auto tools still in reach
    p.system_toggle.setChecked(True)
    p.sampling_toggle.setChecked(True)
    qapp.processEvents()
    qapp.processEvents()
    for section in (p.system, p.sampling_box, p.tools_status):
        assert _shown_whole(section, area.body), section.objectName()
    assert p.system.height() >= p.system.minimumSizeHint().height()   # not a sliver
    assert w.panes_area.height() >= 100
    for toggle in (p.tools_toggle, p.system_toggle, p.sampling_toggle):
        toggle.setChecked(False)
        qapp.processEvents()
    qapp.processEvents()
    assert w.main_split.sizes() == before                              # every section's height given back
    loop.run_until_complete(w.aclose())
