"""The comparison window end to end, on the built-in emulator (in-process) and on captures."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import demo_window, running_emulator, in_loop, run_until


@pytest.fixture(scope="module")
def emulator():
    yield from running_emulator(speed=4.0)


@pytest.fixture
def window(qtbot, loop, emulator, settings):
    yield from demo_window(qtbot, loop, emulator, settings, read_timeout=5.0)


def send(window, loop, text="What is the capital of France?", scenario="text", wait=True):
    window.prompt.prompt.setPlainText(text)
    window.scenario.setCurrentText(scenario)
    assert window.send()
    if wait:
        run_until(loop, lambda: window.finished, timeout=30)
        window.scheduler.flush()


def reply_text(run) -> str:
    return "".join(b.text or "" for b in run.decoder.reply.ordered_blocks() if b.kind == "text")


def test_send_fills_every_pane_with_the_scripted_reply(window, loop):
    send(window, loop)
    assert [p.controller.name for p in window.panes] == ["demo-openai-chat", "demo-openai-responses",
                                                         "demo-anthropic", "demo-gemini"]
    texts = []
    for pane in window.panes:
        run = pane.controller.run
        assert run.status == "done", (run.provider.name, run.error)
        assert pane.badge.text() == "done"
        shown = pane.text_view.answer_text()
        assert shown and shown == reply_text(run)
        texts.append(shown)
        c = pane.controller
        assert c.frames.rowCount() == len(run.decoder.items)
        assert c.view.frames_seen == run.decoder.frames > 0
        assert c.blocks.rowCount() == len(run.decoder.reply.blocks)
        assert c.usage.value("output_tokens") is not None
        assert "TTFT" in pane.metrics_label.text() and "frames" in pane.metrics_label.text()
        assert not pane.error_label.isVisible()
        assert not pane.stop_button.isEnabled()
    assert len(set(texts)) == 1      # the emulator scripts the same answer in every format
    assert window.timeline_model.rowCount() == 4
    assert window.timeline_model.index(0, 2).data() == str(window.panes[0].controller.view.frames_seen)


def test_ctrl_enter_sends_and_esc_stops_all(window, loop, qtbot, monkeypatch):
    # QTest key clicks pump Qt events, which would step the streaming tasks outside the running asyncio loop,
    # so the keys are pressed while nothing streams, and the actions are then checked on live streams.
    sent, stopped = [], []
    window.act_send.triggered.connect(lambda: sent.append(1))
    window.act_stop.triggered.connect(lambda: stopped.append(1))
    window.provider_model.set_checked([])          # the send is refused: nothing starts streaming
    window.prompt.prompt.setPlainText("Tell me a long story")
    window.prompt.prompt.setFocus()
    qtbot.keyClick(window.prompt.prompt, Qt.Key_Return, Qt.ControlModifier)
    qtbot.keyClick(window.prompt.prompt, Qt.Key_Escape)
    assert sent == [1] and stopped == [1]
    assert "check at least one provider" in window.statusBar().currentMessage()
    assert window.prompt.prompt.toPlainText() == "Tell me a long story"   # no newline typed
    window.provider_model.set_checked([p.name for p in window.provider_model.providers()])
    window.scenario.setCurrentText("long")
    window.act_send.trigger()     # (tasks must be created outside a finishing run_until_complete)
    assert len(window.panes) == 4
    run_until(loop, lambda: all(c.view.frames_seen > 3 for c in window.controllers),
              why=lambda: [(c.status, c.view.frames_seen, c.run.error) for c in window.controllers])
    in_loop(loop, window.act_stop.trigger)
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    assert {c.status for c in window.controllers} == {"cancelled"}, [(c.status, c.run.error) for c in window.controllers]
    for pane in window.panes:
        assert pane.text_view.answer_text() == reply_text(pane.controller.run) != ""
        assert pane.badge.text() == "cancelled"


def test_stop_cancels_one_pane_and_leaves_the_others_streaming(window, loop):
    send(window, loop, "Tell me a long story", scenario="long", wait=False)
    run_until(loop, lambda: all(c.view.frames_seen > 3 for c in window.controllers))
    stopped = window.panes[1]
    in_loop(loop, stopped.stop_button.click)
    run_until(loop, lambda: stopped.controller.is_final)
    window.scheduler.flush()
    assert stopped.controller.status == "cancelled"
    assert stopped.badge.text() == "cancelled"
    kept = stopped.text_view.answer_text()
    assert kept and kept == reply_text(stopped.controller.run)
    others = [c for c in window.controllers if c is not stopped.controller]
    before = [c.view.frames_seen for c in others]
    assert all(c.status == "streaming" for c in others)
    run_until(loop, lambda: all(c.view.frames_seen > b for c, b in zip(others, before)))
    assert all(c.status == "streaming" for c in others)
    assert stopped.text_view.answer_text() == kept
    window.stop_all()
    run_until(loop, lambda: window.finished)


FAULTS = {
    # scenario: (final status, HTTP status, partial content expected, diagnostic code expected)
    "mid-stream-error": ("error", 200, True, "in-band-error"),
    "http-429": ("error", 429, False, None),
    "http-500": ("error", 500, False, None),
    "drop": ("error", 200, True, "missing-terminator"),
    "stall": ("stalled", 200, True, None),
    "malformed-json": ("done", 200, True, "data-not-json"),
    "no-terminator": ("done", 200, True, "missing-terminator"),
    "split-utf8": ("done", 200, True, None),
    "ping-heavy": ("done", 200, True, None),
}


@pytest.mark.parametrize("scenario", list(FAULTS))
@pytest.mark.slow
def test_fault_scenario_ends_each_pane_in_the_right_state(window, loop, scenario):
    status, http, partial, code = FAULTS[scenario]
    if scenario == "stall":
        window.read_timeout = 1.0
    send(window, loop, "Hello there", scenario=scenario)
    for pane in window.panes:
        c = pane.controller
        run = c.run
        name = run.provider.name
        assert run.status == status, (name, run.status, run.error)
        assert pane.badge.text() == status
        assert run.http_status == http
        shown = pane.text_view.answer_text()
        assert shown == reply_text(run), name
        if partial:
            assert shown, name
        if status in ("error", "stalled"):
            assert pane.error_label.isVisible(), name
            banner = pane.error_label.text()
            assert "What to do" in banner
            if http != 200:
                assert f"HTTP {http}" in banner
        else:
            assert not pane.error_label.isVisible(), (name, pane.error_label.text())
        if code:
            codes = {c.diagnostics.index(r, 1).data() for r in range(c.diagnostics.rowCount())}
            assert code in codes, (name, codes)
        assert c.frames.rowCount() == len(run.decoder.items)
    if scenario == "split-utf8":
        texts = {p.text_view.answer_text() for p in window.panes}
        assert len(texts) == 1 and "\ufffd" not in texts.pop()
    if scenario == "ping-heavy":
        assert any(p.controller.view.comments or p.controller.run.decoder.reply.keepalives for p in window.panes)


def test_picking_the_thinking_scenario_turns_thinking_on(window):
    """The emulator's thinking scenario thinks only when the request asks, as each API does."""
    window.prompt.thinking.setChecked(False)
    window.scenario.textActivated.emit("text")
    assert not window.prompt.thinking.isChecked()
    window.scenario.setCurrentText("thinking")
    window.scenario.textActivated.emit("thinking")
    assert window.prompt.thinking.isChecked() and window.prompt.spec().thinking


def test_a_reasoning_item_with_no_text_shows_no_thinking_box(window, loop):
    """Thinking off, the Responses API still sends its reasoning item (`summary: []`): "Thinking (0 chars)"
    over an empty box was all the pane showed of it."""
    window.prompt.thinking.setChecked(False)
    send(window, loop, "Think about it", scenario="thinking")
    pane = next(p for p in window.panes if p.controller.run.format == "openai-responses")
    blocks = pane.controller.run.decoder.reply.ordered_blocks()
    assert [b.kind for b in blocks if b.kind == "thinking"] == ["thinking"] and not blocks[0].text
    assert not pane.text_view.thinking_toggle.isVisibleTo(pane) and pane.text_view.answer_text()


def test_thinking_is_shown_apart_from_the_answer(window, loop):
    window.prompt.thinking.setChecked(True)
    send(window, loop, "Think about it", scenario="thinking")
    for pane in window.panes:
        run = pane.controller.run
        thinking = "".join(b.text or "" for b in run.decoder.reply.ordered_blocks() if b.kind == "thinking")
        assert thinking, run.provider.name
        assert pane.text_view.thinking_text() == thinking
        assert thinking not in pane.text_view.answer_text()
        assert pane.text_view.thinking.isVisible()
        pane.text_view.thinking_toggle.click()
        assert not pane.text_view.thinking.isVisible()


def test_blocks_and_frames_are_linked(window, loop):
    send(window, loop, "What's the weather in Paris?", scenario="tool-call")
    pane = window.panes[2]    # anthropic: the tool call spans many frames
    c = pane.controller
    row = next(r for r in range(c.blocks.rowCount()) if c.blocks.block(r).kind == "tool_call")
    block = c.blocks.block(row)
    pane.tabs.setCurrentIndex(1)
    pane.blocks_tab.table.selectRow(row)
    selected = sorted(c.frames_proxy.mapToSource(i).row()
                      for i in pane.raw_tab.table.selectionModel().selectedRows())
    # every frame of the block: those its events address, and the delta whose partial_json was empty
    assert [c.frames.item(r).n for r in selected] == c.view.frames_of_block(block) == \
        list(range(block.frames[0], block.frames[-1] + 1))
    assert set(block.frames) < set(c.view.frames_of_block(block))
    detail = pane.blocks_tab.detail.toPlainText()
    assert block.name in detail and "valid JSON" in detail
    # selecting a frame shows what it produced
    pane.select_frames([block.frames[-1]])
    text = pane.raw_tab.detail.toPlainText()
    assert f"frame {block.frames[-1]}" in text and "produced:" in text


def test_request_tab_masks_the_key_and_copies_curl(window, loop, monkeypatch, emulator):
    from core.live.config import ProviderConfig

    key = "sk-planted-secret-0123456789"
    monkeypatch.setenv("STREAMSCOPE_GUI_TEST_KEY", key)
    p = ProviderConfig("planted", "openai-chat", emulator + "/v1", "text", "STREAMSCOPE_GUI_TEST_KEY")
    window.set_providers([p])
    window.provider_model.set_checked(["planted"])
    send(window, loop)
    pane = window.panes[0]
    from gui.panetext import curl_text, request_text

    text = request_text(pane.controller.run)
    assert "POST " in text and "HTTP/1.1 200 OK" in text and key not in text
    curl = curl_text(pane.controller.run)
    assert key not in curl and "STREAMSCOPE_GUI_TEST_KEY" in curl
    pane.request_tab.copy_curl()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == curl
    assert key not in pane.request_tab.text.toPlainText()


def test_missing_key_is_shown_and_not_sent(window, loop, emulator, monkeypatch):
    from core.live.config import ProviderConfig

    monkeypatch.delenv("STREAMSCOPE_NO_SUCH_KEY", raising=False)
    p = ProviderConfig("keyless", "anthropic", emulator, "text", "STREAMSCOPE_NO_SUCH_KEY")
    window.set_providers([p])
    window.provider_model.set_checked(["keyless", "demo-gemini"])
    assert "no key" in window.provider_model.index(0).data()
    send(window, loop)
    by_name = {pn.controller.name: pn for pn in window.panes}
    assert by_name["keyless"].controller.status == "error"
    assert "no API key" in by_name["keyless"].error_label.text()
    assert "What to do" in by_name["keyless"].error_label.text()
    assert by_name["demo-gemini"].controller.status == "done"


def test_settings_persist_prompt_selection_and_geometry(qtbot, loop, emulator, settings):
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    demo = demo_providers(emulator)
    w = MainWindow([], settings=settings, demo_providers=demo)
    qtbot.addWidget(w)
    w.prompt.prompt.setPlainText("remember me")
    w.prompt.system.setPlainText("be brief")
    w.prompt.max_tokens.setValue(321)
    w.prompt.choices.setValue(3)
    w.provider_model.set_checked(["demo-anthropic", "demo-gemini"])
    w.scenario.setCurrentText("thinking")
    w.resize(780, 600)
    w.save_settings()
    w2 = MainWindow([], settings=settings, demo_providers=demo)
    qtbot.addWidget(w2)
    assert w2.prompt.prompt.toPlainText() == "remember me"
    assert w2.prompt.system.toPlainText() == "be brief"
    assert w2.prompt.max_tokens.value() == 321
    assert w2.prompt.choices.value() == 3
    assert w2.provider_model.checked_names() == ["demo-anthropic", "demo-gemini"]
    assert w2.scenario.currentText() == "thinking"
    assert (w2.width(), w2.height()) == (780, 600)


def test_choices_show_every_reply_of_openai_chat_by_choice(window, loop):
    window.prompt.choices.setValue(2)
    try:
        send(window, loop, "Hello")
    finally:
        window.prompt.choices.setValue(1)
    for pane in window.panes:
        run = pane.controller.run
        assert run.status == "done", (run.provider.name, run.error)
        choices = sorted({b.choice for b in run.decoder.reply.blocks.values()})
        if run.format == "openai-chat":
            assert run.request.body["n"] == 2 and choices == [0, 1]
            text = pane.text_view.answer_text()
            assert "── choice 0 ──" in text and "── choice 1 ──" in text
            assert "finish stop" in pane.format_label.text()
        else:
            assert choices == [0] and any("only OpenAI Chat Completions takes `n`" in n for n in run.request.notes)


def test_view_menu_theme_font_and_recent_files(window, settings, tmp_path):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    window.set_theme("dark")
    assert window.act_dark.isChecked()
    assert QApplication.palette().color(QPalette.Window).lightness() < 100
    window.set_theme("light")
    assert QApplication.palette().color(QPalette.Window).lightness() > 150
    default = window.font_size
    window.set_font_size(default + 3)
    assert window.font_size == default + 3 and int(settings.value("view/font_size")) == default + 3
    window.set_font_size(0)
    assert window.font_size == default
    window._add_recent(str(tmp_path / "a.jsonl"))
    window._add_recent(str(tmp_path / "b.md"))
    actions = window.recent_menu.actions()
    assert [a.text() for a in actions] == [str(tmp_path / "b.md"), str(tmp_path / "a.jsonl")]
    assert actions[1].isEnabled() and not actions[0].isEnabled()


def test_the_demo_scenario_list_is_the_emulators_catalog(window):
    from core.servers.emulator.scenarios import SCENARIOS

    assert [window.scenario.itemText(i) for i in range(window.scenario.count())] == list(SCENARIOS)


@pytest.mark.parametrize("fmt", ["openai-responses", "anthropic"])
def test_several_thinking_blocks_with_no_text_show_no_thinking_box(qtbot, fmt):
    """Two empty reasoning items read "Thinking (2 chars)": the separator between them was counted."""
    from core.wire.encoders import encode_bytes
    from core.wire.pipeline import decode_bytes
    from core.wire.script import ScriptBlock, ScriptedReply, ScriptUsage
    from gui.textview import ReplyTextView

    reply = ScriptedReply(blocks=[ScriptBlock("thinking", []), ScriptBlock("thinking", []),
                                  ScriptBlock("text", ["Hi there"])], usage=ScriptUsage(1, 2), finish="stop")
    view = ReplyTextView()
    qtbot.addWidget(view)
    view.show()
    view.update_from(decode_bytes(fmt, encode_bytes(fmt, reply)).reply)
    assert view.answer_text() == "Hi there"
    assert not view.thinking_toggle.isVisibleTo(view)
    thinking = ScriptedReply(blocks=[ScriptBlock("thinking", []), ScriptBlock("thinking", ["Let me see."]),
                                     ScriptBlock("text", ["Hi"])], usage=ScriptUsage(1, 2), finish="stop")
    view.update_from(decode_bytes(fmt, encode_bytes(fmt, thinking)).reply)
    assert view.thinking_toggle.isVisibleTo(view) and "Let me see." in view.thinking_text()
