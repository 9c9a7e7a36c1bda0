"""The window at real sizes: 1 to 8 panes never widen it past the screen, pane widths hold when tabs change, one
pane can be shown alone, the header elides (full text in tooltips) and marks adapted requests, the prompt area
collapses (persisted), a replay is labelled as one, and scripted runs start from the defaults."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from argparse import Namespace

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QFont, QFontMetrics

from tests.corpus import ROOT
from tests.gui.conftest import run_until
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)

KEY_ENV = "STREAMSCOPE_LAYOUT_TEST_KEY"
# four configured providers on the emulator beside the four demo ones: eight panes; the first name is long
EXTRA = (("openrouter-llama-3.1-70b-instruct-long-name", "openai-chat", "/v1", "tool-call"),
         ("azure-o4-mini", "openai-responses", "/v1", "thinking"),
         ("claude-tools", "anthropic", "", "tool-call"),
         ("gemini-malformed", "gemini", "", "malformed-json"))


def extra_providers(base: str) -> list:
    from core.live.config import ProviderConfig

    return [ProviderConfig(name, fmt, base.rstrip("/") + path, model, KEY_ENV) for name, fmt, path, model in EXTRA]


@pytest.fixture
def eight(qtbot, loop, emulator, settings, monkeypatch):  # noqa: F811
    """A window with eight providers checked (four demo, four configured), at 1280x800."""
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    monkeypatch.setenv(KEY_ENV, "test-key")
    w = MainWindow(extra_providers(emulator), settings=settings, demo_providers=demo_providers(emulator),
                   read_timeout=5.0)
    qtbot.addWidget(w)
    w.provider_model.set_checked([p.name for p in w.provider_model.providers()])
    w.resize(1280, 800)
    w.show()
    yield w
    loop.run_until_complete(w.aclose())


def settle(qapp, win) -> None:
    for _ in range(3):
        qapp.processEvents()
    win.scheduler.flush()
    qapp.processEvents()


# -- the window never grows past the screen --------------------------------------------------------------------
@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_eight_panes_keep_the_window_its_size_and_scroll_sideways(eight, loop, qapp, size):
    from gui.pane import MIN_WIDTH

    eight.resize(*size)
    send(eight, loop, "Hello", scenario="text")
    settle(qapp, eight)
    assert len(eight.panes) == 8
    assert (eight.width(), eight.height()) == size
    assert eight.minimumSizeHint().width() <= 1024 and eight.minimumWidth() <= 1024
    area = eight.panes_area
    columns = area.columns()
    assert columns == (4 if size[0] == 1280 else 3)
    widths = area.sizes()
    assert min(widths) >= MIN_WIDTH and max(widths) - min(widths) <= 1      # equal, and readable
    # exactly `columns` panes fill the view; the others are a scroll away
    handle = area.splitter.handleWidth()
    assert abs(columns * widths[0] + (columns - 1) * handle - area.viewport().width()) <= columns
    bar = area.horizontalScrollBar()
    assert bar.isVisible() and bar.maximum() > 0
    # clicking a frame of the last provider (the timeline does this) scrolls its pane into view
    last = eight.panes[-1]
    eight.show_frame(last.controller.name, 0)
    qapp.processEvents()
    left = last.mapTo(area.viewport(), QPoint(0, 0)).x()
    assert 0 <= left and left + last.width() <= area.viewport().width() + 1


def test_a_new_window_fits_the_screen(qtbot, loop, emulator, settings):  # noqa: F811
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    w = MainWindow([], settings=settings, demo_providers=demo_providers(emulator))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: not w.keep_on_screen)
    qtbot.wait(50)
    avail = w.screen().availableGeometry()
    frame = w.frameGeometry()
    assert avail.contains(frame), (frame, avail)
    loop.run_until_complete(w.aclose())


@pytest.mark.slow
@pytest.mark.parametrize("screen", [(1024, 700), (1280, 800)])
def test_on_a_real_screen_size_eight_panes_fit_and_the_run_is_quiet(tmp_path, emulator, screen):  # noqa: F811
    """`main.py --send --screenshot` with eight providers, on an offscreen screen of that size: the window (the
    PNG is the window) is within the screen, and Qt's propagateSizeHints warning is not printed."""
    from PySide6.QtGui import QImage

    cfg = tmp_path / "screen.json"
    cfg.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1],
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    providers = tmp_path / "providers.toml"
    providers.write_text("".join(
        f'[[provider]]\nname = "{name}-{copy}"\nformat = "{fmt}"\nbase_url = "{emulator.rstrip("/")}{path}"\n'
        f'model = "{model}"\napi_key_env = "{KEY_ENV}"\n\n' for copy in "ab" for name, fmt, path, model in EXTRA))
    shot = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={cfg}", XDG_CONFIG_HOME=str(tmp_path / "c"),
               HOME=str(tmp_path), **{KEY_ENV: "k"})
    proc = subprocess.run([sys.executable, "main.py", "--config", str(providers), "--send", "Hello",
                           "--screenshot", str(shot)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "propagateSizeHints" not in proc.stderr
    img = QImage(str(shot))
    assert 0 < img.width() <= screen[0] and 0 < img.height() <= screen[1], (img.width(), img.height())


# -- pane widths hold --------------------------------------------------------------------------------------------
def test_pane_widths_do_not_change_when_tabs_change(window, loop, qapp):  # noqa: F811
    from gui.panetabs import RAW, TAB_TITLES

    window.resize(1280, 800)
    send(window, loop, "Hello", scenario="thinking")
    settle(qapp, window)
    before = window.panes_area.sizes()
    assert max(before) - min(before) <= 1
    # the Raw tab of the Responses pane alone (its event names are the longest), then every tab everywhere
    window.panes[1].tabs.setCurrentIndex(RAW)
    settle(qapp, window)
    assert window.panes_area.sizes() == before
    for i in range(len(TAB_TITLES)):
        window.show_pane_tab(i)
        settle(qapp, window)
        assert window.panes_area.sizes() == before, TAB_TITLES[i][0]
    # and the next send starts at equal widths again, whatever the user dragged
    window.panes_area.splitter.setSizes([500, 200, 200, 200])
    send(window, loop, "Hello", scenario="text")
    settle(qapp, window)
    after = window.panes_area.sizes()
    assert max(after) - min(after) <= 1


def test_every_panes_tabs_start_at_the_same_height(eight, loop, qapp):
    """A notice (the malformed-json pane), a long finish line and a long name must not push one pane's tabs
    lower than its neighbours'."""
    send(eight, loop, "What's the weather in Paris?", scenario="tool-call")
    settle(qapp, eight)
    assert any(p.notice_label.isVisibleTo(p) for p in eight.panes)
    tops = {p.tabs.mapTo(p, QPoint(0, 0)).y() for p in eight.panes}
    assert len(tops) == 1, tops


# -- one pane alone --------------------------------------------------------------------------------------------
def test_focus_shows_one_pane_alone_and_again_shows_all(window, loop, qapp, qtbot):  # noqa: F811
    send(window, loop, "Hello", scenario="text")
    settle(qapp, window)
    area = window.panes_area
    second = window.panes[1]
    second.header.focus_button.click()
    qapp.processEvents()
    convs = window.conversations      # (the panes area holds each pane's conversation: its turns)
    assert area.focused is convs[1] and area.pane_of(second) is convs[1]
    assert [c.isVisibleTo(area) for c in convs] == [False, True, False, False]
    assert second.width() >= area.viewport().width() - 2
    assert second.header.focus_button.isChecked()
    # again (a double-click on its header): every pane, equal widths
    qtbot.mouseDClick(second.header, Qt.LeftButton, pos=QPoint(5, second.header.height() - 3))
    qapp.processEvents()
    assert area.focused is None and all(c.isVisibleTo(area) for c in convs)
    widths = area.sizes()
    assert max(widths) - min(widths) <= 1 and not second.header.focus_button.isChecked()
    # the shortcut's action: the pane holding the keyboard focus
    window.panes[2].text_view.answer.setFocus()
    qapp.processEvents()
    window.act_focus.trigger()
    assert area.focused is convs[2]
    # a frame clicked in another provider's timeline lane shows that pane alone instead
    window.show_frame(window.panes[3].controller.name, 0)
    assert area.focused is convs[3] and window.panes[3].isVisibleTo(area)
    window.act_focus.trigger()
    assert area.focused is None


# -- the header ---------------------------------------------------------------------------------------------------
def test_the_header_elides_into_tooltips_and_the_badge_fits_every_status(eight, loop, qapp):
    from gui.pane_header import BADGE_PADDING_PX, STATUS_COLORS
    from gui.replay_view import BADGE_WORDS

    eight.resize(1024, 700)
    send(eight, loop, "What's the weather in Paris?", scenario="tool-call")
    settle(qapp, eight)
    long_pane = next(p for p in eight.panes if p.controller.name.endswith("long-name"))
    name = long_pane.name_label
    assert name.is_elided() and name.shown_lines()[0].endswith("…")
    assert name.toolTip().startswith(long_pane.controller.name)
    fmt = long_pane.format_label
    assert "finish tool_calls" in fmt.text() and fmt.toolTip().startswith(fmt.text())
    for p in eight.panes:
        for label in (p.name_label, p.format_label, p.metrics_label):
            # never taller than its lines, whatever the text
            assert label.height() == label.minimumSizeHint().height()
        assert p.metrics_label.toolTip().startswith(p.metrics_text())
    bold = QFont(long_pane.badge.font())
    bold.setBold(True)
    fm = QFontMetrics(bold)
    for word in set(STATUS_COLORS) | set(BADGE_WORDS.values()):
        assert long_pane.badge.width() >= fm.horizontalAdvance(word) + 2 * BADGE_PADDING_PX, word
    assert len({p.badge.width() for p in eight.panes}) == 1


def test_elided_label_breaks_at_separators_and_keeps_the_full_text(qapp):
    from gui.widgets import ElidedLabel

    label = ElidedLabel("TTFT 52 ms · 0.12 s · 78 frames · in 32 / out 101 tok · 1,763 tok/s", lines=2,
                        description="what these are")
    fm = label.fontMetrics()
    width = fm.horizontalAdvance("TTFT 52 ms · 0.12 s · 78 frames") + 2
    lines = label.shown_lines(width)
    assert lines == ["TTFT 52 ms · 0.12 s · 78 frames", fm.elidedText("in 32 / out 101 tok · 1,763 tok/s",
                                                                        Qt.ElideRight, width)]
    assert label.toolTip() == label.text() + "\n\nwhat these are"
    wide = fm.horizontalAdvance(label.text()) + 10
    assert label.shown_lines(wide) == [label.text()]
    assert label.minimumSizeHint().width() < 30   # it never asks for the width of its text


def test_an_adapted_request_is_marked_in_the_header(window, loop, qapp):  # noqa: F811
    send(window, loop, "Hello", scenario="text")
    settle(qapp, window)
    assert not any(p.adapted_badge.isVisibleTo(p) for p in window.panes)   # nothing adapted by default
    window.prompt.choices.setValue(2)
    try:
        send(window, loop, "Hello", scenario="text")
    finally:
        window.prompt.choices.setValue(1)
    settle(qapp, window)
    for p in window.panes:
        notes = p.controller.run.request.notes
        assert p.adapted_badge.isVisibleTo(p) == bool(notes), p.controller.name
        if p.controller.run.format != "openai-chat":
            assert "only OpenAI Chat Completions takes `n`" in p.adapted_badge.toolTip()
    # the mark takes none of the name's room (beside it a 300 px pane showed "demo…"), nor moves the tabs
    marked = [p for p in window.panes if p.adapted_badge.isVisibleTo(p)]
    plain = [p for p in window.panes if not p.adapted_badge.isVisibleTo(p)]
    assert marked and plain
    assert {p.name_label.width() for p in window.panes} == {plain[0].name_label.width()}
    assert {p.tabs.mapTo(p, p.tabs.rect().topLeft()).y() for p in window.panes} == {
        plain[0].tabs.mapTo(plain[0], plain[0].tabs.rect().topLeft()).y()}
    window.prompt.thinking.setChecked(True)
    window.prompt.thinking_budget.setValue(2048)
    try:
        send(window, loop, "Hello", scenario="thinking")
    finally:
        window.prompt.thinking.setChecked(False)
    anthropic = next(p for p in window.panes if p.controller.run.format == "anthropic")
    assert anthropic.adapted_badge.isVisibleTo(anthropic)
    assert "max_tokens raised to" in anthropic.adapted_badge.toolTip()


# -- the prompt area ----------------------------------------------------------------------------------------------
def test_a_sideways_scrolling_prompt_area_shows_its_whole_options_row(qtbot, loop, emulator, settings, qapp):  # noqa: F811
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    w = MainWindow([], settings=settings, demo_providers=demo_providers(emulator))
    qtbot.addWidget(w)
    w.resize(1024, 700)
    w.show()
    qapp.processEvents()
    body = w.prompt_area.body
    assert body.horizontalScrollBar().isVisible()          # at 1024 px the row is wider than the window
    assert body.viewport().height() >= body.widget().minimumSizeHint().height()   # the bar covers none of it
    loop.run_until_complete(w.aclose())


def test_the_prompt_area_collapses_gives_the_panes_the_height_and_persists(qtbot, loop, emulator, settings, qapp):  # noqa: F811
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    demo = demo_providers(emulator)
    w = MainWindow([], settings=settings, demo_providers=demo)
    qtbot.addWidget(w)
    w.resize(1024, 700)
    w.show()
    qapp.processEvents()
    panes_before = w.panes_area.height()
    w.prompt.prompt.setPlainText("first line of the prompt\nsecond line")
    w.act_prompt_area.trigger()                                  # View > Prompt area (Ctrl+Shift+P)
    qapp.processEvents()
    assert w.prompt_area.collapsed and not w.prompt_area.body.isVisibleTo(w)
    assert w.send_button.isVisibleTo(w) and w.stop_button.isVisibleTo(w)   # still in reach
    assert w.prompt_area.summary.text() == "first line of the prompt"
    assert w.panes_area.height() > panes_before + 60
    w.save_settings()
    w2 = MainWindow([], settings=settings, demo_providers=demo)
    qtbot.addWidget(w2)
    w2.resize(1024, 700)
    w2.show()
    qapp.processEvents()
    assert w2.prompt_area.collapsed and not w2.act_prompt_area.isChecked()
    w2.prompt_area.toggle.click()                                 # the arrow left of "Prompt"
    qapp.processEvents()
    assert not w2.prompt_area.collapsed and w2.prompt_area.body.isVisibleTo(w2)
    assert w2.prompt_area.height() >= w2.prompt_area.body.minimumSizeHint().height()
    assert settings.value("window/prompt_collapsed") == "false"
    for x in (w, w2):
        loop.run_until_complete(x.aclose())


# -- replay -------------------------------------------------------------------------------------------------------
def test_a_replay_is_labelled_and_shows_the_captured_prompt_read_only(window, loop, qapp, tmp_path):  # noqa: F811
    send(window, loop, "What is the capital of France?", scenario="text")
    capture = window.export_runs(tmp_path / "capital.jsonl")
    assert window.windowTitle() == "StreamScope"
    window.prompt.prompt.setPlainText("my draft, not sent yet")
    window.open_capture(capture, speed=None)
    run_until(loop, lambda: window.finished)
    settle(qapp, window)
    assert window.windowTitle() == "StreamScope — replay of capital.jsonl"
    assert [p.badge.text() for p in window.panes] == ["replayed"] * 4
    assert [p.controller.status for p in window.panes] == ["done"] * 4     # the statuses stay
    assert window.statusBar().currentMessage() == "Replayed: 4 done"
    area = window.prompt_area
    assert area.showing_captured
    assert area.captured.text.isReadOnly()
    assert area.captured.text.toPlainText() == "What is the capital of France?"
    assert "capital.jsonl" in area.captured.title.text()
    assert window.prompt.prompt.toPlainText() == "my draft, not sent yet"     # kept, untouched
    # "Edit my draft" shows it again, the replay stays
    area.captured.draft_button.click()
    assert not area.showing_captured and window.windowTitle().startswith("StreamScope — replay")
    # a live send goes back to "StreamScope" and live words
    window.open_capture(capture, speed=None)
    run_until(loop, lambda: window.finished)
    send(window, loop, "Hello", scenario="text")
    settle(qapp, window)
    assert not area.showing_captured and window.windowTitle() == "StreamScope"
    assert [p.badge.text() for p in window.panes] == ["done"] * 4
    assert window.statusBar().currentMessage() == "Finished: 4 done"
    # "Use this prompt" copies the captured prompt into the draft
    window.open_capture(capture, speed=None)
    run_until(loop, lambda: window.finished)
    area.captured.reuse_button.click()
    assert not area.showing_captured and window.prompt.prompt.toPlainText() == "What is the capital of France?"


def test_a_replay_badge_says_replaying_while_it_plays(window, loop, qapp, tmp_path):  # noqa: F811
    send(window, loop, "Hello", scenario="text")
    capture = window.export_runs(tmp_path / "c.jsonl")
    window.open_capture(capture, speed=0.5)
    seen: set[str] = set()

    def badges_seen() -> bool:       # every badge and timeline lane, sampled while the replay plays
        seen.update(p.badge.text() for p in window.panes)
        model = window.timeline_model
        seen.update(model.index(r, 1).data() for r in range(model.rowCount()))
        return window.finished

    run_until(loop, badges_seen)
    settle(qapp, window)
    seen.update(p.badge.text() for p in window.panes)
    seen.update(window.timeline_model.index(r, 1).data() for r in range(window.timeline_model.rowCount()))
    assert "replaying" in seen and "replayed" in seen, seen
    assert not seen & {"streaming", "done", "connecting"}, seen


def test_a_window_without_the_demo_providers_keeps_their_saved_checks(qtbot, loop, settings):
    """`main.py replay FILE` opens a window with no demo providers: closing it must not save `selected=[]`."""
    from gui.main_window import MainWindow
    from gui.persisted import PersistedSettings

    PersistedSettings(settings).selected_providers = ["demo-anthropic", "demo-gemini"]
    w = MainWindow([], settings=settings)
    qtbot.addWidget(w)
    w.save_settings()
    assert PersistedSettings(settings).selected_providers == ["demo-anthropic", "demo-gemini"]
    loop.run_until_complete(w.aclose())


REPLAY_PROBE = """
import json, sys
from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtWidgets import QApplication
QSettings.setDefaultFormat(QSettings.IniFormat)
QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, sys.argv[2])
app = QApplication([])
app.setOrganizationName("StreamScope"); app.setApplicationName("StreamScope")
QSettings().setValue("providers/selected", json.dumps(["demo-anthropic"]))
QSettings().sync()
from gui import app as gui_app

def close_when_replayed():
    from gui.main_window import MainWindow
    for w in QApplication.topLevelWidgets():
        if isinstance(w, MainWindow) and w.finished and w.controllers:
            w.close()
            return
    QTimer.singleShot(50, close_when_replayed)

QTimer.singleShot(50, close_when_replayed)
code = gui_app.run_gui_replay(sys.argv[1], speed=None, args=None)
print(json.dumps({"code": code, "selected": QSettings().value("providers/selected")}))
"""


@pytest.mark.slow
def test_the_replay_command_keeps_the_saved_provider_selection(window, loop, tmp_path):  # noqa: F811
    send(window, loop, "Hello", scenario="text")
    capture = window.export_runs(tmp_path / "c.jsonl")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", REPLAY_PROBE, str(capture), str(tmp_path / "qs")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0 and json.loads(out["selected"]) == ["demo-anthropic"]


# -- scripted runs -------------------------------------------------------------------------------------------------
def test_a_screenshot_run_starts_from_the_defaults_not_the_saved_state(qtbot, loop, emulator, qapp):  # noqa: F811
    from core.live.config import demo_providers
    from core.servers.emulator.scenarios import DEFAULT_SCENARIO
    from gui.app import ScriptedStart
    from gui.main_window import MainWindow
    from gui.persisted import PersistedSettings
    from gui.theme import theme_name

    saved = PersistedSettings(QSettings())       # the user's settings (the test session's isolated ones)
    saved.scenario, saved.selected_providers, saved.theme = "tool-call", ["demo-gemini"], "dark"
    saved.prompt_state = {"user": "an old prompt"}
    demo = demo_providers(emulator)
    start = ScriptedStart(Namespace(screenshot="out.png", scenario=None, size=None, theme=None))
    try:
        w = MainWindow([], settings=start.settings(), demo_providers=demo)
        qtbot.addWidget(w)
        start.apply(w)
        assert w.scenario.currentText() == DEFAULT_SCENARIO
        assert w.provider_model.checked_names() == [p.name for p in demo]
        assert theme_name() == "light" and w.prompt.prompt.toPlainText() == ""
        w.save_settings()                         # a scripted run writes nothing back to the user's settings
        assert PersistedSettings(QSettings()).scenario == "tool-call"
        loop.run_until_complete(w.aclose())
    finally:
        start.close()
    # told otherwise: --scenario, --theme, --size
    start = ScriptedStart(Namespace(screenshot="out.png", scenario="thinking", size=(1024, 700), theme="dark"))
    try:
        assert start.check() is None
        w = MainWindow([], settings=start.settings(), demo_providers=demo)
        qtbot.addWidget(w)
        start.apply(w)
        assert w.scenario.currentText() == "thinking" and theme_name() == "dark"
        assert (w.width(), w.height()) == (1024, 700)
        w.set_theme("light")
        loop.run_until_complete(w.aclose())
    finally:
        start.close()
    assert "not one of" in ScriptedStart(Namespace(screenshot=None, scenario="nope", size=None, theme=None)).check()
    # without --screenshot the window is the user's
    assert ScriptedStart(Namespace(screenshot=None, scenario=None, size=None, theme=None)).settings() is None
    QSettings().clear()


def test_the_command_line_takes_size_scenario_and_theme():
    import main

    args = main.build_parser().parse_args(["--size", "1280x800", "--scenario", "thinking", "--theme", "dark"])
    assert (args.size, args.scenario, args.theme) == ((1280, 800), "thinking", "dark")
    for bad in ("1280", "0x0", "axb"):
        with pytest.raises(SystemExit):
            main.build_parser().parse_args(["--size", bad])


def test_the_propagate_size_hints_warning_is_filtered_and_others_are_kept(capsys):
    from PySide6.QtCore import QMessageLogContext, QtMsgType

    from gui.app import QUIET_QT_MESSAGES, _message_handler

    handler = _message_handler(starting=False)
    context = QMessageLogContext()
    handler(QtMsgType.QtWarningMsg, context, QUIET_QT_MESSAGES[0])
    handler(QtMsgType.QtWarningMsg, context, "something worth saying")
    err = capsys.readouterr().err
    assert QUIET_QT_MESSAGES[0] not in err and "something worth saying" in err


# -- dark theme, dialogs ----------------------------------------------------------------------------------------------
def test_dark_theme_draws_unchecked_boxes(window, qapp):  # noqa: F811
    """An unchecked provider in the dark theme: its box differs from the list's background."""
    window.set_theme("dark")
    try:
        window.provider_model.set_checked(["demo-openai-chat"])
        qapp.processEvents()
        view = window.provider_list
        img = view.viewport().grab().toImage()
        rect = view.visualRect(view.model().index(1, 0))
        bg = img.pixelColor(img.width() - 3, rect.center().y())
        # the check box is left of the name (which starts about 23 px in)
        box = [img.pixelColor(x, y) for x in range(rect.left(), rect.left() + 18)
               for y in range(rect.top(), rect.bottom())]
        assert any(abs(c.lightness() - bg.lightness()) > 60 for c in box)
    finally:
        window.set_theme("light")


def test_shortcut_rows_are_even_and_export_says_ctrl_s(window):  # noqa: F811
    from PySide6.QtGui import QKeySequence

    window.show_shortcuts()
    table = window.shortcuts_dialog.table
    heights = {table.rowHeight(r) for r in range(table.rowCount())}
    assert len(heights) == 1
    assert window.act_export.shortcut().toString(QKeySequence.NativeText) == "Ctrl+S"
    assert "Ctrl+E" in [s.toString(QKeySequence.NativeText) for s in window.act_export.shortcuts()]
    window.shortcuts_dialog.close()


def test_diagnostics_are_one_line_each(window, loop, qapp):  # noqa: F811
    from gui.panetabs import DIAGNOSTICS

    send(window, loop, "Hello", scenario="malformed-json")
    pane = next(p for p in window.panes if p.controller.diagnostics.rowCount())
    window.show_pane_tab(DIAGNOSTICS)
    settle(qapp, window)
    t = pane.diagnostics_tab.table
    assert not t.wordWrap() and t.textElideMode() == Qt.ElideRight
    heights = {t.rowHeight(r) for r in range(t.model().rowCount())}
    assert len(heights) == 1 and heights.pop() < 2 * t.fontMetrics().lineSpacing()   # one line each


# -- a short pane: what is under the tabs scrolls, nothing is out of reach ---------------------------------------
def _reachable(area, widget) -> bool:
    """Whether the scroll area `area` can scroll every line of `widget` into view: its top, and its bottom."""
    inner = area.widget()
    for y in (0, widget.height() - 1):
        at = widget.mapTo(inner, QPoint(0, y))
        area.ensureVisible(at.x(), at.y(), 0, 1)
        if not 0 <= widget.mapTo(area.viewport(), QPoint(0, y)).y() < area.viewport().height():
            return False
    return True


@pytest.mark.parametrize("size", [(1024, 700), (1280, 800)])
def test_a_short_pane_scrolls_its_banners_and_buttons_into_reach(window, loop, qapp, size):  # noqa: F811
    """At 1024x700 the error banners lost their "What to do" advice and the tool-result buttons were cut off
    with no way to reach them: what is under the tabs scrolls now, the Text tab keeps its minimum, and nothing
    of the pane is under the panes area's bottom edge."""
    from gui.pane import TEXT_MIN_LINES

    window.resize(*size)
    send(window, loop, "What is the weather in Paris?", scenario="mid-stream-error")
    settle(qapp, window)
    view = window.panes_area.viewport()
    for pane in window.panes[:window.panes_area.columns()]:
        banner = pane.error_label
        assert banner.isVisibleTo(pane) and "What to do" in banner.text()
        # the banner is laid out whole (at its wrapped height), inside a `below` area that scrolls to all of it
        assert banner.height() >= banner.heightForWidth(banner.width())
        assert _reachable(pane.below, banner)
        # the pane ends within the panes area (whose own scrolling covers a pane taller than it)
        bottom = pane.mapTo(view, QPoint(0, pane.height())).y()
        assert bottom <= view.height() or window.panes_area.verticalScrollBar().maximum() > 0
        answer = pane.text_view.answer
        assert answer.height() >= answer.fontMetrics().lineSpacing() * TEXT_MIN_LINES
    send(window, loop, "What is the weather in Paris?", scenario="tool-call")
    settle(qapp, window)
    for conv in window.conversations[:window.panes_area.columns()]:
        pane = conv.shown
        for button in (conv.results.send_button, conv.results.send_all_button, conv.continue_button):
            assert button.isVisibleTo(pane)
            assert _reachable(pane.below, button), button.text()
            window.panes_area.ensureWidgetVisible(button, 0, 0)
            assert not button.visibleRegion().isEmpty(), button.text()


def test_the_compare_dock_with_eight_rows_at_1024x700_leaves_the_panes_readable(eight, loop, qapp):
    """Eight rows fitted whole took 240 px of 700 and left the panes 141 px of their readable 182: the dock shows
    at least three rows there, and its table scrolls."""
    from gui.compare_view import MIN_FIT_ROWS

    eight.resize(1024, 700)
    send(eight, loop, "Hello", scenario="text")
    settle(qapp, eight)
    eight.act_compare.trigger()
    settle(qapp, eight)
    dock = eight.compare_dock
    dock.sample()
    settle(qapp, eight)
    table = dock.compare.table
    assert table.model().rowCount() == 8
    assert eight.panes_area.height() >= eight.panes_area.readable_height() - 2
    shown = sum(1 for r in range(8) if table.rowViewportPosition(r) + table.rowHeight(r) <= table.viewport().height())
    assert shown >= MIN_FIT_ROWS
