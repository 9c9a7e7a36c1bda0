"""What a visual QA pass found, as behaviour: a prompt section opened makes the prompt area taller (and gives the
height back when closed), the Text tab follows a long reply to its very end, dialogs fit a small screen, the Tap
list shows each exchange's status, the Compare table shows its rows before its note, footnotes and timeline labels
are readable, the status bar counts what still streams, the timeline legend fits, and File > Open says it could
not read a file without a nested event loop in its task."""
from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from tests.gui.conftest import run_until
from tests.gui.test_tap_window import dialog, tap  # noqa: F401  (fixtures)
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


# -- 2: the Text tab follows a long reply to its end -----------------------------------------------------------
class _Reply:
    """A reply snapshot as the view reads it: one text block whose fragments grow."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.block = SimpleNamespace(kind="text", index=0, parts=[], size=0, choice=0, redacted=False, name=None,
                                     id=None, provider_type=None)

    def add(self, text: str) -> None:
        self.block.parts.append(text)
        self.block.size += len(text)

    def ordered_blocks(self):
        return [self.block]


def _wheel(widget, dy: int) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent

    pos = QPointF(widget.width() / 2, widget.height() / 2)
    e = QWheelEvent(pos, widget.mapToGlobal(pos), QPoint(0, 0), QPoint(0, dy), Qt.NoButton, Qt.NoModifier,
                    Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, e)


def test_the_text_tab_follows_a_long_reply_to_its_last_line_unless_scrolled_up(qtbot, qapp):
    from gui.textview import ReplyTextView

    view = ReplyTextView()
    qtbot.addWidget(view)
    view.resize(320, 240)
    view.show()
    qapp.processEvents()
    reply, sb = _Reply(), view.answer.verticalScrollBar()
    for i in range(300):     # a firehose: a fragment per update, the last ones long (wrapped over lines)
        reply.add(f"word{i} " + ("and a much longer fragment that wraps " * 3 if i > 250 else "")
                  + ("\n" if i % 7 == 0 else ""))
        view.update_from(reply)
        if i % 25 == 0:
            qapp.processEvents()
    qapp.processEvents()
    assert sb.maximum() > 0
    assert sb.value() == sb.maximum()                 # at the very end, not a line or two short of it
    view.set_end_note("⊥ The reply stops here after frame 299")   # a note under the text shrinks the viewport
    qapp.processEvents()
    assert sb.value() == sb.maximum()
    for _ in range(3):                                # the user scrolls up: the view stays where they left it
        _wheel(view.answer.viewport(), 120)
        qapp.processEvents()
    left = sb.value()
    for i in range(40):
        reply.add(f"more{i} and a longer fragment that wraps over the line " * 2)
        view.update_from(reply)
    qapp.processEvents()
    assert sb.value() == left < sb.maximum() - 4
    for _ in range(200):                              # back at the end: following again
        _wheel(view.answer.viewport(), -120)
    qapp.processEvents()
    reply.add("the end " * 60)
    view.update_from(reply)
    qapp.processEvents()
    assert sb.value() == sb.maximum()


# -- 3: Run > Repeat… and the Tap window open within the screen ---------------------------------------------------
def _within_screen(w) -> bool:
    avail = w.screen().availableGeometry()
    return w.width() <= avail.width() and w.height() <= avail.height()


def test_the_repeat_dialog_opens_within_the_screen(window, qapp):  # noqa: F811
    avail = window.screen().availableGeometry()
    assert avail.width() < 1200 or avail.height() < 780     # (the offscreen screen: smaller than the old size)
    window.open_repeat()
    qapp.processEvents()
    assert _within_screen(window.repeat_dialog), (window.repeat_dialog.size(), avail)
    window.repeat_dialog.close()


def test_the_tap_window_opens_within_the_screen(qtbot, loop, dialog):  # noqa: F811
    from gui.tap_window import TapWindow

    dialog.listen_edit.setText("127.0.0.1:0")
    dialog.upstreams_edit.setText("emulator")
    dialog.accept()
    w = TapWindow(dialog.mounts, dialog.host, dialog.port, settings=dialog.settings)
    qtbot.addWidget(w)
    w.show()
    avail = w.screen().availableGeometry()
    assert avail.width() < 1280 or avail.height() < 800
    assert _within_screen(w), (w.size(), avail)
    loop.run_until_complete(w.aclose())


# -- 4: the Tap list shows each exchange's status at every size ----------------------------------------------------
def test_the_tap_list_shows_the_status_at_every_size_and_every_column_on_a_wide_window(tap, loop):  # noqa: F811
    from gui.exchange_list import PATH, STATUS, TOKENS
    from tests.gui.test_tap_window import chat, settle

    for scenario in ("text", "http-429"):
        loop.run_until_complete(chat(tap.base_url, scenario))
    settle(tap, loop)
    view, m = tap.list_view, tap.list_model
    metrics = view.fontMetrics()

    def in_view(col) -> bool:
        x = view.columnViewportPosition(col)
        return x >= 0 and x + view.columnWidth(col) <= view.viewport().width()

    for size in ((1024, 700), (1280, 800), (1920, 1080)):
        tap.resize(*size)
        loop.run_until_complete(asyncio.sleep(0.1))
        assert in_view(STATUS), size
        statuses = [m.index(r, STATUS).data() for r in range(m.rowCount())]
        assert "error · 429" in statuses
        assert view.columnWidth(STATUS) >= max(metrics.horizontalAdvance(t) for t in statuses), size
    assert all(in_view(c) for c in range(m.columnCount())), [view.columnWidth(c) for c in range(m.columnCount())]
    assert in_view(TOKENS)
    assert view.columnWidth(PATH) >= metrics.horizontalAdvance("x" * 12)   # (elided at its start, still readable)


# -- 7: the status bar counts the panes still streaming ------------------------------------------------------------
def test_the_status_bar_counts_only_the_panes_still_streaming(window, loop):  # noqa: F811
    send(window, loop, "Tell me a long story", scenario="long", wait=False)
    run_until(loop, lambda: all(c.view.frames_seen > 3 for c in window.controllers))
    assert window.statusBar().currentMessage() == "Streaming 4 providers…"
    window.stop("demo-openai-chat")
    window.stop("demo-anthropic")
    run_until(loop, lambda: sum(c.is_final for c in window.controllers) == 2)
    assert window.statusBar().currentMessage() == "Streaming 2 providers… (2 ended)"
    window.stop_all()
    run_until(loop, lambda: window.finished)
    assert window.statusBar().currentMessage().startswith("Finished:")


# -- 9: File > Open says it could not read a file out of its task ------------------------------------------------
def test_a_file_that_cannot_be_opened_is_said_so_outside_the_reading_task(window, loop, tmp_path, monkeypatch):  # noqa: F811
    from gui import plaintips

    calls = []

    def warn(parent, title, text):    # (a modal box's nested loop must not run inside the reading task)
        calls.append((title, text, asyncio.current_task(), window._open_task.done()))

    monkeypatch.setattr(plaintips, "warn", warn)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not a capture\n", encoding="utf-8")
    window._open_with_errors(str(bad), None)
    run_until(loop, lambda: calls)
    (title, text, task, done), = calls
    assert title == "Open capture" and str(bad) in text
    assert task is None and done                   # after the task, not inside it
    assert window._opening is None


# -- 5: the Compare table shows its rows before its note, at 1024x700 ------------------------------------------------
def test_the_compare_dock_at_1024x700_shows_every_row_and_the_panes_stay_readable(window, loop, qapp):  # noqa: F811
    window.resize(1024, 700)
    send(window, loop, "Hello", scenario="mid-stream-error")
    window.act_compare.trigger()
    for _ in range(3):
        qapp.processEvents()
    dock = window.compare_dock
    dock.sample()
    qapp.processEvents()
    table = dock.compare.table
    assert table.model().rowCount() == 4
    for r in range(4):
        top = table.rowViewportPosition(r)
        assert 0 <= top and top + table.rowHeight(r) <= table.viewport().height(), r
    note = dock.compare.methods                      # the note: one line, whole in its tooltip
    assert note.height() <= note.fontMetrics().lineSpacing() + 4 and note.isVisible()
    assert "TTFT: request sent" in note.toolTip()
    assert window.panes_area.height() >= window.panes_area.readable_height() - 2
    assert window.height() == 700


# -- 6: footnotes and the timeline's status words are readable -------------------------------------------------
def _luminance(c) -> float:
    def ch(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_footnotes_are_readable_in_both_themes(qtbot, qapp, theme):
    from PySide6.QtGui import QPalette

    from gui.compare_view import CompareView
    from gui.theme import apply_theme

    apply_theme(qapp, theme)
    try:
        view = CompareView()
        qtbot.addWidget(view)
        view.show()
        qapp.processEvents()
        note = view.methods
        assert note.isEnabled()                    # (drawn disabled: #bebebe on #efefef, 1.6:1)
        pal = note.palette()
        fg = pal.color(QPalette.Active, note.foregroundRole())
        bg = pal.color(QPalette.Active, QPalette.Window)
        assert _contrast(fg, bg) >= 4.5, (fg.name(), bg.name())
        assert fg != pal.color(QPalette.Active, QPalette.Window)
    finally:
        apply_theme(qapp, "light")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_notes_of_empty_views_are_readable_in_both_themes(qtbot, qapp, theme):
    """The empty provider list's note was drawn disabled (1.9:1 in the light theme)."""
    from PySide6.QtCore import QStringListModel
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QListView

    from gui.panetabs import note_label
    from gui.replay_view import EmptyListNote
    from gui.theme import apply_theme

    apply_theme(qapp, theme)
    try:
        view = QListView()
        view.setModel(QStringListModel([]))
        qtbot.addWidget(view)
        notes = [EmptyListNote(view, "No providers: this window replays a file."), note_label(view)]
        view.show()
        qapp.processEvents()
        for note in notes:
            assert note.isEnabled()
            pal = note.palette()
            fg = pal.color(QPalette.Active, note.foregroundRole())
            assert _contrast(fg, pal.color(QPalette.Active, QPalette.Window)) >= 4.5, (fg.name(), theme)
    finally:
        apply_theme(qapp, "light")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_timeline_status_words_are_readable_in_both_themes(window, loop, qapp, theme):  # noqa: F811
    from PySide6.QtGui import QPalette

    window.set_theme(theme)
    send(window, loop, "Hello")
    t = window.timeline
    t.resize(1000, 160)
    qapp.processEvents()
    img = t.grab().toImage()
    base = t.palette().color(QPalette.Base)
    lane_h = t._lane_h()
    y0 = t._plot_rect().top()
    best = 1.0
    for x in range(t.LABEL_W - 60, t.LABEL_W - 4):      # the status word of the first lane ("done"), right-aligned
        for y in range(int(y0 + 2), int(y0 + lane_h - 2)):
            best = max(best, _contrast(img.pixelColor(x, y), base))
    assert best >= 4.5, best
    window.set_theme("light")


# -- 8: the timeline's legend fits at 1024 px ------------------------------------------------------------------------
def test_the_timeline_legend_is_whole_at_1024_px_and_wraps_when_narrower(qtbot, qapp):
    from PySide6.QtGui import QPalette

    from gui.runview import (KIND_ERROR, KIND_KEEPALIVE, KIND_NAMES, KIND_OTHER, KIND_TEXT, KIND_THINKING, KIND_TOOL,
                             KIND_USAGE)
    from gui.timeline import MARKERS, TimelineModel, TimelineView

    t = TimelineView(TimelineModel())
    qtbot.addWidget(t)
    fm = t.fontMetrics()
    labels = [KIND_NAMES[k] for k in (KIND_TEXT, KIND_THINKING, KIND_TOOL, KIND_USAGE, KIND_KEEPALIVE, KIND_ERROR,
                                      KIND_OTHER)]
    # the legend's width as it is drawn: a swatch and a gap per entry (the markers' a little narrower)
    natural = (sum(24 + fm.horizontalAdvance(x) for x in labels + ["finding"]) + 32 + fm.horizontalAdvance("selected")
               + sum(22 + fm.horizontalAdvance(label) for label, _c in MARKERS))

    def ink(width):
        t.resize(width, 160)
        t.show()
        qapp.processEvents()
        img = t.grab().toImage()
        base = t.palette().color(QPalette.Base)
        rows = {}
        for y in range(t.height() - t.LEGEND_H, t.height()):
            xs = [x for x in range(width) if img.pixelColor(x, y) != base]
            if xs:
                rows[y] = (min(xs), max(xs))
        return rows

    rows = ink(1024)
    left, right = min(a for a, _b in rows.values()), max(b for _a, b in rows.values())
    assert right < 1024 and right - left >= natural - 40, (left, right, natural)   # "end" included
    rows = ink(600)                                   # narrower than the legend: two lines, none cut
    assert max(b for _a, b in rows.values()) < 600
    ys = sorted(rows)
    assert ys[-1] - ys[0] > fm.height() + 2          # ink on more than one line
