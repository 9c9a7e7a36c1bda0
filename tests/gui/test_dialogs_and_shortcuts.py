"""The modal paths, driven by monkeypatching Qt's static dialogs (File > Export / Open capture, their error
boxes, Run > Timeouts…), and every keyboard shortcut: listed by Help > Keyboard shortcuts, and working."""
from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests.gui.conftest import run_until
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)


class Calls:
    """Records the calls of a patched static dialog and answers them from a queue."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.calls: list[tuple] = []

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        return self.answers.pop(0) if self.answers else ("", "")


@pytest.fixture
def warnings(monkeypatch):
    """A warning never opens a modal box in a test: its calls are recorded instead (the window warns through
    gui.plaintips.warn, a plain-text box)."""
    from gui import plaintips

    calls = Calls(QMessageBox.Ok)
    monkeypatch.setattr(QMessageBox, "warning", calls)
    monkeypatch.setattr(plaintips, "warn", calls)
    return calls


@pytest.mark.slow
def test_export_dialog_writes_each_format_and_adds_the_chosen_extension(window, loop, tmp_path, monkeypatch,
                                                                         warnings):
    from core.live.capture import read_jsonl

    send(window, loop, "What's the weather in Paris?", scenario="tool-call")
    tmp_path = tmp_path / "exports"
    tmp_path.mkdir()
    dialog = Calls((str(tmp_path / "capture"), "Native capture (*.jsonl)"),      # no extension typed
                   (str(tmp_path / "report"), "HAR 1.2 (*.har)"),
                   (str(tmp_path / "notes.md"), "Native capture (*.jsonl)"),      # a typed extension wins
                   ("", ""))                                                      # cancelled
    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    for _ in range(4):
        window.act_export.trigger()
    assert warnings.calls == []
    # the native capture: the same runs, read back through the core
    runs = read_jsonl(tmp_path / "capture.jsonl")
    assert [r.result() for r in runs] == [r.result() for r in window.runs()]
    # HAR: one entry per provider, the raw SSE body as the response content
    har = json.loads((tmp_path / "report.har").read_text(encoding="utf-8"))
    entries = har["log"]["entries"]
    assert len(entries) == 4
    assert all("get_weather" in e["response"]["content"]["text"] for e in entries)
    md = (tmp_path / "notes.md").read_text(encoding="utf-8")
    assert all(name in md for name in ("demo-openai-chat", "demo-anthropic", "demo-gemini"))
    assert not (tmp_path / "notes.md.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capture.jsonl", "notes.md", "report.har"]
    # the dialog opened in the home folder first, then where the last export went
    assert len(dialog.calls) == 4
    assert str(tmp_path) in dialog.calls[1][2] and str(tmp_path) in dialog.calls[3][2]
    # (a .md report opens nowhere: it is no recent file)
    assert window.recent_files()[:2] == [str(tmp_path / n) for n in ("report.har", "capture.jsonl")]
    assert str(tmp_path / "notes.md") not in window.recent_files()


def test_export_failure_is_reported_in_a_message_box(window, loop, tmp_path, monkeypatch, warnings):
    send(window, loop, "Hello", scenario="text")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    target = blocker / "x.jsonl"                 # its folder cannot be created
    monkeypatch.setattr(QFileDialog, "getSaveFileName", Calls((str(target), "Native capture (*.jsonl)")))
    window.export_dialog()
    assert not target.exists()
    assert len(warnings.calls) == 1
    parent, title, message = warnings.calls[0][:3]
    assert parent is window and title == "Export" and str(target) in message


def test_export_with_nothing_to_export_opens_no_dialog(window, monkeypatch, warnings):
    dialog = Calls()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    window.act_export.trigger()
    assert dialog.calls == [] and warnings.calls == []
    assert "Nothing to export" in window.statusBar().currentMessage()


def test_open_capture_dialog_replays_the_file_and_reports_bad_files(window, loop, tmp_path, monkeypatch, warnings):
    from core.live.capture import read_jsonl

    send(window, loop, "Think first", scenario="thinking")
    live = [r.result() for r in window.runs()]
    capture = window.export_runs(tmp_path / "live.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not a capture\n", encoding="utf-8")
    dialog = Calls((str(capture), "Native capture (*.jsonl)"), ("", ""), (str(bad), "All files (*)"))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog)

    window.act_open.trigger()                        # instant replay of the capture
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    assert [r.result() for r in window.runs()] == live == [r.result() for r in read_jsonl(capture)]
    assert all(p.text_view.answer_text() for p in window.panes)
    assert window.recent_files()[0] == str(capture)
    assert dialog.calls[0][2] == str(tmp_path)        # opens where the last capture was written

    window.act_open_rt.trigger()                     # cancelled: the panes stay
    assert [r.result() for r in window.runs()] == live and warnings.calls == []

    panes = list(window.panes)
    window.act_open.trigger()                        # not a capture: a message box, the panes stay
    run_until(loop, lambda: warnings.calls)          # (the file is read in the background)
    assert window.panes == panes
    assert len(warnings.calls) == 1
    assert warnings.calls[0][1] == "Open capture" and str(bad) in warnings.calls[0][2]


def test_file_open_reads_in_the_background_the_window_going_on(window, loop, tmp_path, monkeypatch, warnings):
    """A big capture takes a while to read and rebuild: that happens on another thread, the window's loop keeps
    turning and the status bar says it is opening; a second open meanwhile is refused, not queued."""
    import threading
    import time

    import gui.main_window as mw

    send(window, loop, "Hello", scenario="text")
    live = [r.result() for r in window.runs()]
    capture = window.export_runs(tmp_path / "live.jsonl")
    real = mw.read_capture
    threads = []

    def slow_read(path, **kw):
        threads.append(threading.current_thread())
        time.sleep(0.4)
        return real(path, **kw)

    monkeypatch.setattr(mw, "read_capture", slow_read)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(capture), ""))
    collector = []                                          # the collector is told the window is busy
    monkeypatch.setattr(mw.MainThreadGC, "streaming",
                        classmethod(lambda cls, busy, owner="window": collector.append((busy, owner))))
    window.act_open.trigger()
    assert window._opening == str(capture) and not window.finished
    assert window.statusBar().currentMessage() == f"Opening {capture}…"
    window.act_open.trigger()                               # one file at a time
    assert "Still opening" in window.statusBar().currentMessage()
    ticks = []

    async def count():
        while window._opening is not None:
            ticks.append(1)
            await asyncio.sleep(0.01)

    loop.run_until_complete(count())                        # the loop turned while the file was read
    assert len(ticks) >= 10 and threads and threads[0] is not threading.main_thread()
    assert collector[0] == (True, "capture reader")         # (from the read on: no full collection there)
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    assert [r.result() for r in window.runs()] == live and warnings.calls == []
    # the replay streams before the reader lets go, and its end settles it
    assert collector.index((True, "window")) < collector.index((False, "capture reader"))
    assert collector[-1] == (False, "window")


def test_recent_file_entry_replays_the_capture(window, loop, tmp_path):
    send(window, loop, "Hello", scenario="text")
    live = [r.result() for r in window.runs()]
    capture = window.export_runs(tmp_path / "recent.jsonl")
    window._add_recent(str(tmp_path / "recent.md"))
    actions = {a.text(): a for a in window.recent_menu.actions()}
    assert not actions[str(tmp_path / "recent.md")].isEnabled()
    actions[str(capture)].trigger()
    run_until(loop, lambda: window.finished)
    assert [r.result() for r in window.runs()] == live


def test_timeouts_dialog_sets_and_persists_the_timeouts(window, loop, qtbot, settings, emulator, monkeypatch):
    from PySide6.QtWidgets import QDialog

    from core.live.config import demo_providers
    from gui.main_window import MainWindow, TimeoutsDialog

    def accept_with(self):
        """The user sees the current values, changes both and presses OK."""
        assert (self.connect_spin.value(), self.read_spin.value()) == (window.connect_timeout,
                                                                       window.read_timeout)
        self.connect_spin.setValue(3.5)
        self.read_spin.setValue(7.5)
        return QDialog.Accepted

    monkeypatch.setattr(TimeoutsDialog, "exec", accept_with)
    window.act_timeouts.trigger()
    assert (window.connect_timeout, window.read_timeout) == (3.5, 7.5)
    assert float(settings.value("run/read_timeout")) == 7.5
    assert float(settings.value("run/connect_timeout")) == 3.5
    assert "read 7.5 s" in window.act_timeouts.text()
    send(window, loop, "Hello", scenario="text")
    assert {p.read_timeout for p in window.panes} == {7.5}
    # a cancelled dialog changes nothing
    monkeypatch.setattr(TimeoutsDialog, "exec", lambda self: QDialog.Rejected)
    window.act_timeouts.trigger()
    assert window.read_timeout == 7.5
    # the next window starts with the persisted values, unless it is given others
    w2 = MainWindow([], settings=settings, demo_providers=demo_providers(emulator))
    qtbot.addWidget(w2)
    assert (w2.connect_timeout, w2.read_timeout) == (3.5, 7.5)
    w3 = MainWindow([], settings=settings, demo_providers=demo_providers(emulator), read_timeout=2.0)
    qtbot.addWidget(w3)
    assert w3.read_timeout == 2.0


# -- keyboard shortcuts --------------------------------------------------------------------------------------------
EXPECTED_KEYS = ["Ctrl+Return", "Ctrl+Enter", "Esc", "Ctrl+O", "Ctrl+Shift+O", "Ctrl+S", "Ctrl+E", "Ctrl+Q",
                 "Ctrl++", "Ctrl+=", "Ctrl+-", "Ctrl+0", "Ctrl+Shift+P", "Ctrl+Shift+F", "F1"] + [
                 f"Ctrl+{i}" for i in range(1, 7)]


def test_help_lists_every_shortcut_of_every_action(window):
    from PySide6.QtGui import QAction, QKeySequence

    window.show_shortcuts()
    dlg = window.shortcuts_dialog
    assert dlg is not None and dlg.isVisible()
    from PySide6.QtWidgets import QTableWidget

    table = dlg.findChild(QTableWidget, "shortcuts")
    listed = [table.item(r, 0).text() for r in range(table.rowCount())]
    keys = {k for cell in listed for k in cell.split(" / ")}
    for k in EXPECTED_KEYS:
        assert k in keys, (k, listed)
    # and nothing has a shortcut the list does not mention
    for a in window.findChildren(QAction):
        for seq in a.shortcuts():
            assert seq.toString(QKeySequence.NativeText) in keys, (a.text(), seq.toString())
    descriptions = [table.item(r, 1).text() for r in range(table.rowCount())]
    assert all(descriptions)
    dlg.close()


@pytest.mark.slow
def test_every_shortcut_works(window, loop, qtbot, tmp_path, monkeypatch, warnings):
    from gui.panetabs import RAW, TEXT

    open_dialog = Calls()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", open_dialog)
    save_dialog = Calls()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    target = window.prompt.prompt
    target.setFocus()

    def press(key, mod=Qt.ControlModifier):
        qtbot.keyClick(target, key, mod)

    # with no panes: Ctrl+O / Ctrl+Shift+O open the file dialog; Ctrl+E / Ctrl+S say there is nothing to export
    press(Qt.Key_O)
    press(Qt.Key_O, Qt.ControlModifier | Qt.ShiftModifier)
    assert len(open_dialog.calls) == 2
    press(Qt.Key_E)
    press(Qt.Key_S)
    assert "Nothing to export" in window.statusBar().currentMessage() and save_dialog.calls == []

    # font size: Ctrl+= and Ctrl++ larger, Ctrl+- smaller, Ctrl+0 the default
    default = window.font_size
    try:
        press(Qt.Key_Equal)
        assert window.font_size == default + 1
        press(Qt.Key_Plus)
        assert window.font_size == default + 2
        press(Qt.Key_Minus)
        assert window.font_size == default + 1
        press(Qt.Key_0)
        assert window.font_size == default
    finally:
        window.set_font_size(0)

    # with panes: Ctrl+E / Ctrl+S open the export dialog; Ctrl+1..6 show that tab in every pane
    send(window, loop, "Hello", scenario="text")
    capture = window.export_runs(tmp_path / "c.jsonl")
    window.open_capture(capture)
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    target.setFocus()
    press(Qt.Key_E)
    press(Qt.Key_S)
    assert len(save_dialog.calls) == 2
    for i, key in enumerate((Qt.Key_1, Qt.Key_2, Qt.Key_3, Qt.Key_4, Qt.Key_5, Qt.Key_6)):
        press(key)
        assert [p.tabs.currentIndex() for p in window.panes] == [i] * 4
    press(Qt.Key_3)
    assert all(p.tabs.currentIndex() == RAW and p.raw_tab.table.model().rowCount() > 0 for p in window.panes)
    window.open_capture(capture)                    # new panes open on the tab last chosen
    run_until(loop, lambda: window.finished)
    assert [p.tabs.currentIndex() for p in window.panes] == [RAW] * 4
    window.show_pane_tab(TEXT)
    assert [p.tabs.currentIndex() for p in window.panes] == [TEXT] * 4

    # F1: the shortcuts list
    target.setFocus()
    press(Qt.Key_F1, Qt.NoModifier)
    assert window.shortcuts_dialog is not None and window.shortcuts_dialog.isVisible()
    window.shortcuts_dialog.close()

    # Ctrl+Enter / Esc are covered with live streams in test_window.py; Ctrl+Q last: it closes the window
    target.setFocus()
    press(Qt.Key_Q)
    assert not window.isVisible()
    assert warnings.calls == []


def test_a_reader_that_fails_on_odd_input_is_reported_and_the_window_is_not_left_opening(
        window, loop, tmp_path, monkeypatch, warnings):
    import gui.main_window as mw

    def broken(path, **kw):
        raise OverflowError("int too big to convert")

    odd = tmp_path / "odd.har"
    odd.write_text('{"log": {"entries": []}}', encoding="utf-8")
    monkeypatch.setattr(mw, "read_capture", broken)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(odd), ""))
    window.act_open.trigger()
    run_until(loop, lambda: warnings.calls)
    assert window._opening is None and "Opening" not in window.statusBar().currentMessage()
    assert str(odd) in warnings.calls[0][2] and "OverflowError: int too big to convert" in warnings.calls[0][2]
    monkeypatch.setattr(mw, "read_capture", lambda path, **kw: (_ for _ in ()).throw(MemoryError()))
    window.act_open.trigger()                       # (another open works: nothing was left half-open)
    run_until(loop, lambda: len(warnings.calls) == 2)
    assert window._opening is None


def test_a_recording_with_no_llm_exchange_is_said_so_not_replayed(window, loop, tmp_path, monkeypatch):
    send(window, loop, "Hello", scenario="text")
    panes = list(window.panes)
    empty = tmp_path / "empty.har"
    empty.write_text('{"log": {"version": "1.2", "entries": []}}', encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(empty), ""))
    window.act_open.trigger()
    run_until(loop, lambda: window.no_exchange_box is not None)
    assert window.panes == panes and window._opening is None
    assert window.no_exchange_box.text() == f"No LLM exchange in {empty} (0 entries skipped)"
    assert window.statusBar().currentMessage() == f"No LLM exchange in {empty} (0 entries skipped)"
    window.no_exchange_box.close()


def test_a_recent_file_that_opened_without_a_known_extension_stays_enabled(window, loop, tmp_path):
    send(window, loop, "Hello", scenario="text")
    capture = window.export_runs(tmp_path / "run.jsonl")
    renamed = tmp_path / "run.capture"            # opened through "All files"
    renamed.write_bytes(capture.read_bytes())
    report = tmp_path / "notes.txt"
    report.write_text("# a report\nnot a recording\n", encoding="utf-8")
    window._add_recent(str(renamed))
    window._add_recent(str(report))
    actions = {a.text(): a for a in window.recent_menu.actions()}
    assert actions[str(renamed)].isEnabled() and not actions[str(report)].isEnabled()
