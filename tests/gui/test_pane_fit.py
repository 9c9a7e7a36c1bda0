"""What a pane shows in a small window, and what its empty views say: at 1024x700 a reply-less error shows its
banner whole and two tool-result editors leave "Send results" in view; the thinking takes the Text tab's room;
the banners follow the dark theme; the Raw, Usage and Diag tabs say why they are empty; the Raw text filter and
the Blocks content column keep a useful width; a stall's turn row says "stalled" once; the settings dialog with no
provider says to add one; a replay window's empty provider list says why it is empty."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from PySide6.QtCore import QPoint

from tests.gui.conftest import demo_window, run_until, running_emulator


@pytest.fixture(scope="module")
def emulator():
    yield from running_emulator(speed=0)


@pytest.fixture
def window(qtbot, loop, emulator, settings):
    yield from demo_window(qtbot, loop, emulator, settings, read_timeout=10.0)


def settle(qapp, win) -> None:
    """Let the layouts settle: a minimum that changes deep in a pane reaches the pane's layout one posted
    layout request per level (each `processEvents` handles the requests posted before it)."""
    win.scheduler.flush()
    for _ in range(12):
        qapp.processEvents()


def send(window, loop, qapp, scenario, size=(1280, 800), text="What is the capital of France?"):
    window.keep_on_screen = False
    window.resize(*size)
    window.prompt.prompt.setPlainText(text)
    window.scenario.setCurrentText(scenario)
    assert window.send()
    run_until(loop, lambda: window.finished, timeout=30, why=lambda: [(c.name, c.status) for c in window.controllers])
    settle(qapp, window)


def shown_panes(window):
    return window.panes[:window.panes_area.columns()]


def wholly_in_view(widget, area) -> bool:
    """Whether `widget` is inside the viewport of scroll area `area` as it is scrolled now."""
    top = widget.mapTo(area.viewport(), QPoint(0, 0)).y()
    return top >= 0 and top + widget.height() <= area.viewport().height()


# -- 1. a short pane: what is under the tabs fits -----------------------------------------------------------------
def test_at_1024x700_an_error_with_no_reply_shows_its_banner_whole(window, loop, qapp):
    send(window, loop, qapp, "http-429", (1024, 700))
    for pane in shown_panes(window):
        banner = pane.error_label
        assert banner.isVisibleTo(pane) and "What to do" in banner.text()
        assert pane.text_view.answer_text() == ""
        # laid out whole, and nothing to scroll to reach its end
        assert banner.height() >= banner.heightForWidth(banner.width()), pane.controller.name
        assert pane.below.verticalScrollBar().maximum() == 0, pane.controller.name
        assert wholly_in_view(banner, pane.below)


def test_at_1024x700_two_tool_calls_leave_send_results_in_view(window, loop, qapp):
    send(window, loop, qapp, "parallel-tools", (1024, 700))
    for conv in window.conversations[:window.panes_area.columns()]:
        pane = conv.shown
        assert len(conv.results.editors) == 2
        assert pane.below.verticalScrollBar().value() == 0
        for button in (conv.results.send_button, conv.results.send_all_button):
            assert button.isVisibleTo(pane)
            assert wholly_in_view(button, pane.below), (pane.controller.name, button.text())
        for editor in conv.results.editors:       # each editor still shows a line of its result
            edit = editor.edit
            assert edit.viewport().height() >= edit.fontMetrics().lineSpacing()
            assert wholly_in_view(editor, pane.below)
        # the Text tab keeps a couple of lines of the reply
        answer = pane.text_view.answer
        assert answer.height() >= 2 * answer.fontMetrics().lineSpacing()


def test_the_thinking_takes_the_room_the_answer_leaves(window, loop, qapp):
    window.prompt.thinking.setChecked(True)      # (the scenario thinks only when asked)
    send(window, loop, qapp, "thinking", (1280, 800))
    thought = [p for p in shown_panes(window) if p.text_view.thinking_text()]
    assert len(thought) == 4
    for pane in thought:
        view = pane.text_view
        run_until(loop, lambda v=view: v.thinking.verticalScrollBar().maximum() == 0, timeout=2,
                  why=lambda v=view: v.split.sizes())
        # ... and the answer is whole too (its text is two lines)
        assert pane.text_view.answer.verticalScrollBar().maximum() == 0



def test_resizes_share_the_text_tab_once_per_loop_turn(window, loop, qapp, monkeypatch):
    """Each resize of the split laid out up to 20k characters of thinking and answer again: a window resize
    sends several, times eight panes."""
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QResizeEvent

    from gui.pane import PaneWidget

    window.prompt.thinking.setChecked(True)
    send(window, loop, qapp, "thinking", (1280, 800))
    settle(qapp, window)
    pane = next(p for p in shown_panes(window) if p.text_view.thinking_text())
    calls = []
    monkeypatch.setattr(PaneWidget, "_share_text", lambda self: calls.append(self))
    split = pane.text_view.split
    for h in range(5):
        qapp.sendEvent(split, QResizeEvent(QSize(split.width(), split.height() - h), split.size()))
    settle(qapp, window)
    assert calls == [pane]


# -- 5. the banners in the dark theme -----------------------------------------------------------------------------
def _background(label):
    image = label.grab().toImage()
    return image.pixelColor(label.width() - 3, label.height() // 2)


def test_the_banners_follow_the_theme(window, loop, qapp):
    send(window, loop, qapp, "http-429", (1280, 800))
    pane = window.panes[0]
    assert _background(pane.error_label).lightness() > 200          # light theme: a pale red
    try:
        window.set_theme("dark")
        settle(qapp, window)
        bg = _background(pane.error_label)
        assert bg.lightness() < 90 and bg.red() > bg.blue(), bg.name()  # a dark red
        send(window, loop, qapp, "malformed-json", (1280, 800))
        notices = [p.notice_label for p in window.panes if p.notice_label.isVisibleTo(p)]
        assert notices and all(_background(n).lightness() < 90 for n in notices)
    finally:
        window.set_theme("light")
    settle(qapp, window)
    assert all(_background(n).lightness() > 180 for n in notices)


def test_the_handover_notice_follows_the_theme(qtbot, qapp):
    from gui.conversation import ConversationPane
    from gui.theme import apply_theme

    conv = ConversationPane(None)
    qtbot.addWidget(conv)
    conv.notice.setText("The next turn's history comes from another pane.")
    conv.notice.show()
    conv.resize(400, 200)
    assert _background(conv.notice).lightness() > 200
    try:
        apply_theme(qapp, "dark")
        qapp.processEvents()
        assert _background(conv.notice).lightness() < 90
    finally:
        apply_theme(qapp, "light")
        qapp.processEvents()
    assert _background(conv.notice).lightness() > 200


# -- 2. empty views say why ---------------------------------------------------------------------------------------
def test_the_tabs_of_an_http_error_say_there_was_no_stream(window, loop, qapp):
    from gui.panetabs import DIAGNOSTICS, RAW, USAGE

    send(window, loop, qapp, "http-429", (1280, 800))
    pane = window.panes[0]
    for tab in (RAW, USAGE, DIAGNOSTICS):
        pane.tabs.setCurrentIndex(tab)
    settle(qapp, window)
    raw = pane.raw_tab
    assert raw.empty_note.isVisibleTo(raw) and not raw.table.isVisibleTo(raw)
    assert "No frames" in raw.empty_note.text() and "HTTP 429" in raw.empty_note.text()
    usage = pane.usage_tab
    assert not usage.history_table.isVisibleTo(usage)
    assert usage.none_note.isVisibleTo(usage) and "No usage reported" in usage.none_note.text()
    diag = pane.diagnostics_tab
    assert diag.none_note.isVisibleTo(diag) and "No diagnostics" in diag.none_note.text()


def test_diag_says_when_there_is_nothing_and_shows_findings_whole(window, loop, qapp):
    from gui.panetabs import DIAGNOSTICS, NO_DIAGNOSTICS

    send(window, loop, qapp, "text", (1280, 800))
    window.show_pane_tab(DIAGNOSTICS)
    settle(qapp, window)
    clean = [p for p in window.panes if not p.controller.diagnostics.rowCount()]
    found = [p for p in window.panes if p.controller.diagnostics.rowCount()]
    assert clean and found
    for pane in clean:
        tab = pane.diagnostics_tab
        assert tab.none_note.isVisibleTo(tab) and tab.none_note.text() == NO_DIAGNOSTICS
        assert not tab.table.isVisibleTo(tab)
    for pane in found:
        tab = pane.diagnostics_tab
        assert not tab.none_note.isVisibleTo(tab)
        for d in pane.controller.run.decoder.reply.diagnostics:   # every message whole, not "usage arrived…"
            assert d.message in tab.detail.toPlainText()
        tab.table.selectRow(0)
        first = pane.controller.run.decoder.reply.diagnostics[0]
        assert first.message in tab.detail.toPlainText()
        assert tab.detail.height() > 3 * tab.detail.fontMetrics().lineSpacing()


def test_usage_lists_its_snapshots_when_there_are(window, loop, qapp):
    from gui.panetabs import USAGE

    send(window, loop, qapp, "text", (1280, 800))
    window.show_pane_tab(USAGE)
    settle(qapp, window)
    for pane in shown_panes(window):
        tab = pane.usage_tab
        assert pane.controller.view.usage_events
        assert tab.history_table.isVisibleTo(tab) and not tab.none_note.isVisibleTo(tab)


# -- 3. narrow panes: the Raw text filter and the Blocks content keep their width -------------------------------
def test_a_narrow_pane_keeps_a_readable_text_filter_and_block_content(window, loop, qapp):
    from gui.panetabs import BLOCKS, RAW, TEXT_FILTER_CHARS

    send(window, loop, qapp, "tool-call", (1024, 700))
    window.show_pane_tab(RAW)
    settle(qapp, window)
    for pane in shown_panes(window):
        f = pane.raw_tab.text_filter
        assert f.width() >= f.fontMetrics().horizontalAdvance("x" * TEXT_FILTER_CHARS), f.width()
    window.show_pane_tab(BLOCKS)
    settle(qapp, window)
    for pane in shown_panes(window):
        t = pane.blocks_tab.table
        hh = t.horizontalHeader()
        content = pane.blocks_tab.CONTENT
        left = hh.sectionViewportPosition(content)
        assert left >= 0 and left + hh.sectionSize(content) <= t.viewport().width() + 1, pane.controller.name
        assert hh.sectionSize(content) >= 80


# -- 4. a turn row says a stall or a cancel once -------------------------------------------------------------------
@pytest.mark.parametrize("status", ["stalled", "cancelled"])
def test_a_turn_row_says_stalled_or_cancelled_once(status):
    from gui.turns import outcome_text, turn_row_text

    run = SimpleNamespace(status=status, error={"type": status, "message": "x"}, spec=None,
                          reply=SimpleNamespace(usage=None, finish=None))
    assert outcome_text(run) == status
    assert f"{status}: {status}" not in turn_row_text(1, run)
    err = SimpleNamespace(status="error", error={"type": "http_error"}, spec=None,
                          reply=SimpleNamespace(usage=None, finish=None))
    assert outcome_text(err) == "error: http_error"


# -- 2. the settings dialog with no provider; a replay window's provider list ------------------------------------
def test_settings_with_no_provider_says_to_add_one(qtbot, tmp_path):
    from core.live.config import ProviderConfig
    from gui.settings_dialog import SettingsDialog

    dlg = SettingsDialog([], config_path=tmp_path / "p.toml")
    qtbot.addWidget(dlg)
    dlg.show()
    assert not dlg.form.isEnabled()
    assert not dlg.dup_button.isEnabled() and not dlg.remove_button.isEnabled()
    assert dlg.base_url.text() == "" and dlg.base_url.placeholderText() == ""
    assert dlg.empty_note.isVisibleTo(dlg) and "Add a provider" in dlg.empty_note.text()
    dlg.add_provider()
    assert dlg.dup_button.isEnabled() and dlg.remove_button.isEnabled()
    assert not dlg.empty_note.isVisibleTo(dlg) and dlg.base_url.text()
    dlg.remove_provider()
    assert not dlg.dup_button.isEnabled() and dlg.empty_note.isVisibleTo(dlg)
    dlg2 = SettingsDialog([ProviderConfig("x", "gemini", "https://g", "m", "K")], config_path=tmp_path / "q.toml")
    qtbot.addWidget(dlg2)
    assert dlg2.dup_button.isEnabled() and not dlg2.empty_note.isVisibleTo(dlg2)


def test_a_replay_window_says_why_its_provider_list_is_empty(window, loop, qapp, qtbot, tmp_path, settings):
    from gui.main_window import MainWindow
    from gui.replay_view import EmptyListNote

    send(window, loop, qapp, "text", (1280, 800))
    capture = window.export_runs(tmp_path / "live.jsonl")
    replay = MainWindow([], settings=settings)
    qtbot.addWidget(replay)
    replay.keep_on_screen = False
    replay.resize(1280, 800)
    replay.show()
    try:
        assert replay.provider_model.rowCount() == 0
        replay.open_capture(capture, speed=None)
        run_until(loop, lambda: replay.finished)
        settle(qapp, replay)
        note = replay.provider_list.viewport().findChild(EmptyListNote)
        assert note is not None and note.isVisibleTo(replay.provider_list)
        assert "live.jsonl" in note.text() and "Settings" in note.text()
        assert note.height() >= note.heightForWidth(note.width())
    finally:
        loop.run_until_complete(replay.aclose())
