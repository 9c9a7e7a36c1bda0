"""Conversations in the window, on the built-in emulator's tool scenarios: follow-ups make turns in every pane, a
tool-call reply gets result editors prefilled from the mocks, sending them (one pane, every pane, or automatically
for N rounds) continues the conversation, the error flag reaches the request, one pane's reply can become every
pane's history (what cannot cross is noted; what an API would reject is not sent, and the pane says why), and the
export and the replay hold every turn."""
from __future__ import annotations

import json

import pytest

from core.live.conversation import GEMINI_SKIP_SIGNATURE, assistant_turn
from core.live.tool_loop import exchange_index, pending_calls
from core.live.tool_mocks import TOOL_PRESETS, forecast, mock_results
from gui.panetabs import REQUEST
from tests.gui.conftest import demo_window, running_emulator, run_until

FORMAT_ORDER = ["openai-chat", "openai-responses", "anthropic", "gemini"]


@pytest.fixture(scope="module")
def emulator():
    yield from running_emulator(speed=0)


@pytest.fixture
def window(qtbot, loop, emulator, settings):
    yield from demo_window(qtbot, loop, emulator, settings, read_timeout=10.0)


def wait(window, loop):
    run_until(loop, lambda: window.finished and not window.followups.auto_running, timeout=30,
              why=lambda: [(c.name, c.status) for c in window.controllers])
    window.scheduler.flush()


def send(window, loop, text, scenario, tools=None, thinking=False):
    window.prompt.prompt.setPlainText(text)
    window.prompt.tools.setPlainText(json.dumps(tools) if tools else "")
    window.prompt.thinking.setChecked(thinking)
    window.prompt.max_tokens.setValue(2048)
    window.scenario.setCurrentText(scenario)
    assert window.send()
    wait(window, loop)


def conv_of(window, fmt):
    return next(c for c in window.conversations if c.provider.format == fmt)


def text_of(run) -> str:
    return assistant_turn(run.reply, run.format).text


def rows(conv) -> list[str]:
    return [conv.turn_list.item(i).text() for i in range(conv.turn_list.count())]


def test_a_follow_up_makes_two_turns_in_every_pane(window, loop):
    send(window, loop, "What is the capital of France?", "text")
    assert [c.provider.format for c in window.conversations] == FORMAT_ORDER
    assert all(len(c.turns) == 1 and rows(c)[0].startswith("1 · What is the capital of France?")
               for c in window.conversations)
    window.prompt.prompt.setPlainText("What is the capital of Italy?")
    assert window.followups.follow_up()
    wait(window, loop)
    for conv in window.conversations:
        first, second = conv.runs()
        assert second.ok, second.error
        assert "Paris" in text_of(first) and "Rome" in text_of(second)
        assert "Paris" in json.dumps(second.request.body)          # the first exchange went back as history
        assert exchange_index(second.spec) == 1
        assert len(rows(conv)) == 2 and rows(conv)[1].startswith("2 · What is the capital of Italy?")
        assert conv.shown is conv.latest and conv.stack.currentWidget() is conv.latest
        assert conv.latest.text_view.answer_text() == text_of(second)
        conv.latest.tabs.setCurrentIndex(REQUEST)
        conv.turn_list.setCurrentRow(0)                            # clicking a turn shows its exchange
        assert conv.shown is conv.turns[0] and conv.stack.currentWidget() is conv.turns[0]
        assert conv.shown.tabs.currentIndex() == REQUEST           # on the tab the other turn showed
        assert "capital of Italy" not in conv.shown.request_tab.text.toPlainText()
        assert conv.shown.text_view.answer_text() == text_of(first)
    assert window.panes == [c.latest for c in window.conversations]   # the window streams the newest turns
    # "Continue conversation": Send itself follows up
    window.followups.controls.continue_check.setChecked(True)
    window.prompt.prompt.setPlainText("What is the capital of Spain?")
    assert window.send()
    wait(window, loop)
    assert all(len(c.turns) == 3 and "Madrid" in text_of(c.runs()[2]) for c in window.conversations)
    assert all(c.shown is c.latest for c in window.conversations)


def test_a_tool_call_reply_shows_editors_prefilled_from_the_mocks(window, loop):
    send(window, loop, "What is the weather in Paris?", "tool-call", TOOL_PRESETS["weather"])
    for conv in window.conversations:
        calls = pending_calls(conv.latest.controller.run)
        assert len(calls) == 1 and calls[0].name == "get_weather"
        panel = conv.results
        assert panel.send_button.isVisibleTo(conv) and panel.calls == calls
        (editor,) = panel.editors
        assert editor.edit.toPlainText() == mock_results(calls)[0].text
        assert forecast(json.loads(calls[0].arguments)["city"])["forecast"] in editor.edit.toPlainText()
        assert editor.kind.text() == "JSON" and not editor.error_check.isChecked()
        assert "get_weather" in rows(conv)[0]                      # the row says which tool it calls
        editor.edit.setPlainText("not json at all")
        assert editor.kind.text() == "text"


def test_send_results_continues_that_pane_with_the_edited_result(window, loop):
    send(window, loop, "What is the weather in Paris?", "tool-call", TOOL_PRESETS["weather"])
    anth = conv_of(window, "anthropic")
    call = anth.results.calls[0]
    anth.results.editors[0].edit.setPlainText(json.dumps({"city": "Paris", "forecast": "hail the size of plums"}))
    anth.results.send_button.click()
    wait(window, loop)
    assert len(anth.turns) == 2 and all(len(c.turns) == 1 for c in window.conversations if c is not anth)
    second = anth.latest.controller.run
    assert second.ok and "hail the size of plums" in text_of(second)     # the reply quotes what it was given
    block = second.request.body["messages"][-1]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == call.id and "is_error" not in block
    assert not anth.results.editors and not anth.results.send_button.isVisibleTo(anth)   # answered
    assert rows(anth)[1].startswith("2 · results: get_weather")
    # the others, all at once, with their prefilled mocks
    others = [c for c in window.conversations if c is not anth]
    assert window.followups.send_results()
    wait(window, loop)
    for conv in others:
        first, second = conv.runs()
        city = json.loads(pending_calls(first)[0].arguments)["city"]
        assert second.ok and forecast(city)["forecast"] in text_of(second)
    assert len(anth.turns) == 2                                     # nothing was waiting there any more


def test_the_error_result_flag_reaches_each_request(window, loop):
    send(window, loop, "What is the weather in Paris?", "tool-call", TOOL_PRESETS["weather"])
    for conv in window.conversations:
        conv.results.editors[0].edit.setPlainText("weather service unreachable")
        conv.results.editors[0].error_check.setChecked(True)
    conv_of(window, "gemini").results.send_all_button.click()
    wait(window, loop)
    body = {c.provider.format: c.latest.controller.run.request.body for c in window.conversations}
    assert body["anthropic"]["messages"][-1]["content"][0]["is_error"] is True
    assert body["openai-chat"]["messages"][-1] == {"role": "tool", "tool_call_id": body["openai-chat"]["messages"][
        -2]["tool_calls"][0]["id"], "content": "Error: weather service unreachable"}
    assert body["openai-responses"]["input"][-1]["output"] == "Error: weather service unreachable"
    response = body["gemini"]["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert response == {"error": "weather service unreachable"}
    assert "(error)" in rows(conv_of(window, "anthropic"))[1]
    assert all(c.latest.controller.run.ok for c in window.conversations)


def test_auto_mode_runs_n_rounds_with_the_mocks_and_stops(window, loop):
    finished = []
    window.followups.autoFinished.connect(finished.append)
    window.prompt.prompt.setPlainText("Plan my day in Paris.")
    window.prompt.tools.setPlainText(json.dumps(TOOL_PRESETS["weather + calculator + time"]))
    window.scenario.setCurrentText("tool-rounds")
    window.followups.controls.rounds.setValue(2)
    assert window.followups.auto()            # one press: the prompt, then up to two tool rounds
    wait(window, loop)
    assert finished == [2]
    for conv in window.conversations:
        runs = conv.runs()
        assert len(runs) == 3 and all(r.ok for r in runs), [(r.status, r.error) for r in runs]
        assert [pending_calls(r)[0].name for r in runs] == ["get_weather", "calculator", "get_time"]
        assert conv.results.calls == pending_calls(runs[-1])      # the limit held: the third call waits
        assert [exchange_index(r.spec) for r in runs] == [0, 1, 2]
    window.followups.controls.rounds.setValue(5)
    assert window.followups.auto()            # the rest: one round, then the answer ends the loop
    wait(window, loop)
    assert finished == [2, 1]
    for conv in window.conversations:
        runs = conv.runs()
        assert len(runs) == 4 and not pending_calls(runs[-1])
        final = text_of(runs[-1])
        assert "get_weather" in final and "calculator" in final and "get_time" in final
        assert not conv.results.editors and not conv.results.send_button.isVisibleTo(conv)


def test_continue_everyone_makes_one_reply_every_panes_history(window, loop):
    send(window, loop, "What is the weather in Paris?", "thinking-tools", TOOL_PRESETS["weather"], thinking=True)
    anth = conv_of(window, "anthropic")
    source = anth.latest.controller.run
    call = pending_calls(source)[0]
    anth.continue_button.click()
    for conv in window.conversations:
        assert conv.results.calls == (call,)                        # every pane answers the Anthropic call
        assert conv.results.editors[0].edit.toPlainText() == mock_results([call])[0].text
    notice = {c.provider.format: c.notice.text() for c in window.conversations}
    assert notice["anthropic"] == ""                                # its own reply: nothing is handed over
    assert "continues from demo-anthropic's turn 1 (anthropic → gemini)" in notice["gemini"]
    assert "thinking block(s) from another API dropped" in notice["gemini"]
    assert "placeholder thoughtSignature" in notice["gemini"]
    assert "Gemini 3 rejects a first functionCall part without one" in conv_of(window, "gemini").notice.toolTip()
    assert "thinking/reasoning part(s) not sent back" in notice["openai-chat"]
    assert "Chat Completions has no field for earlier reasoning" in conv_of(window, "openai-chat").notice.toolTip()
    assert "thinking block(s) from another API dropped" in notice["openai-responses"]
    assert all(conv_of(window, f).notice.isVisibleTo(conv_of(window, f)) for f in FORMAT_ORDER if f != "anthropic")
    assert window.followups.send_results()
    wait(window, loop)
    for conv in window.conversations:
        nxt = conv.latest.controller.run
        assert nxt.ok, (conv.provider.name, nxt.error)
        assert "Paris" in text_of(nxt)
        assert not conv.notice.isVisibleTo(conv)                    # used by the turn it led to
        assert ("What is the weather in Paris?" in json.dumps(nxt.request.body))
    body = {c.provider.format: c.latest.controller.run.request.body for c in window.conversations}
    assert body["openai-chat"]["messages"][1]["tool_calls"][0]["id"] == call.id
    assert any(i.get("call_id") == call.id for i in body["openai-responses"]["input"])
    assert not any(i.get("type") == "reasoning" for i in body["openai-responses"]["input"])
    gem_call = next(p for c in body["gemini"]["contents"] for p in c["parts"] if "functionCall" in p)
    assert gem_call["thoughtSignature"] == GEMINI_SKIP_SIGNATURE
    assert body["anthropic"]["messages"][1]["content"][0]["signature"] == assistant_turn(
        source.reply, "anthropic").parts[0].signature
    gem = conv_of(window, "gemini")
    assert rows(gem)[1].startswith("↪ 2 · results: get_weather")
    gem.latest.tabs.setCurrentIndex(REQUEST)
    request = gem.latest.request_tab.text.toPlainText()
    assert "thinking block(s) from another API dropped" in request            # the request's own notes
    assert "History check: nothing the API would reject" in request
    assert "history handed over from demo-anthropic's turn 1" in gem.latest.controller.run.notes
    # the capture keeps whose reply the history was: the replayed turn is marked too (it was not)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        out = window.export_runs(Path(tmp) / "handed.jsonl")
        assert window.open_capture(out) == 8
        wait(window, loop)
    replayed = conv_of(window, "gemini")
    assert rows(replayed)[1].startswith("↪ 2 · results: get_weather"), rows(replayed)
    assert not rows(conv_of(window, "anthropic"))[1].startswith("↪")


def test_a_history_the_api_would_reject_is_not_sent_and_the_pane_says_why(window, loop):
    send(window, loop, "What is the weather in Paris?", "thinking-tools", TOOL_PRESETS["weather"], thinking=True)
    conv_of(window, "gemini").continue_button.click()
    assert window.followups.send_results()
    wait(window, loop)
    anth = conv_of(window, "anthropic")
    refused = anth.latest.controller.run
    assert refused.error["type"] == "history_rejected" and not refused.sent
    pane = anth.latest
    assert pane.error_label.isVisibleTo(pane)
    assert pane.error_label.text().startswith("Not sent: the API would reject this conversation")
    assert "Expected `thinking` or `redacted_thinking`" in pane.error_label.text()
    assert rows(anth)[1].endswith("error: history_rejected")
    assert "→ get_weather" in rows(anth)[0] and rows(anth)[0].endswith(" tok")
    pane.tabs.setCurrentIndex(REQUEST)
    request = pane.request_tab.text.toPlainText()
    assert "History check: 1 error" in request and "(so the request was not sent)" in request
    assert "error thinking-block-missing at messages[1]" in request
    # the others took Gemini's reply (the placeholder signature where it must be Gemini's own)
    assert all(c.latest.controller.run.ok for c in window.conversations if c is not anth)
    assert anth.ready() and not anth.pending()      # nothing waits: a follow-up may replace the refused turn


def test_export_holds_every_turn_and_replay_shows_them(window, loop, tmp_path):
    from core.live.capture import read_jsonl

    send(window, loop, "What is the weather in Paris?", "tool-call", TOOL_PRESETS["weather"])
    assert window.followups.send_results()
    wait(window, loop)
    assert window.current_runs() == [c.latest.controller.run for c in window.conversations]
    runs = window.runs()
    assert len(runs) == 8 and [exchange_index(r.spec) for r in runs] == [0] * 4 + [1] * 4
    assert runs[:4] == [c.turns[0].controller.run for c in window.conversations]
    out = window.export_runs(tmp_path / "convo.jsonl")
    assert "(8 exchanges)" in window.statusBar().currentMessage()
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["turn"] for x in lines if x.get("type") == "run"] == [0] * 4 + [1] * 4
    assert len(read_jsonl(out)) == 8
    texts = [[text_of(r) for r in c.runs()] for c in window.conversations]
    assert window.open_capture(out) == 8
    wait(window, loop)
    assert [len(c.turns) for c in window.conversations] == [2, 2, 2, 2]
    assert [[text_of(r) for r in c.runs()] for c in window.conversations] == texts
    for conv in window.conversations:
        assert conv.shown is conv.latest                             # followed to the last turn as it replayed
        assert len(rows(conv)) == 2 and rows(conv)[1].startswith("2 · results: get_weather")
        assert conv.latest.text_view.answer_text() == text_of(conv.runs()[1])
        assert all(r.status == "done" for r in conv.runs())


def test_the_diff_picks_two_turns_of_one_conversation(window, loop):
    send(window, loop, "What is the capital of France?", "text")
    window.prompt.prompt.setPlainText("What is the capital of Italy?")
    assert window.followups.follow_up()
    wait(window, loop)
    dock = window.compare_dock
    if dock.isHidden():
        window.act_compare.trigger()
    dock.tabs.setCurrentWidget(dock.diff)
    view = dock.diff
    name = window.conversations[0].provider.name
    labels = [view.side_a.itemText(i) for i in range(view.side_a.count())]
    assert f"{name}#1" in labels and f"{name}#2" in labels        # every turn, named as `diff --a NAME#K`
    view.select(f"{name}#1", f"{name}#2")
    first, second = window.conversations[0].runs()
    assert view.text_a.toPlainText() == text_of(first) and view.text_b.toPlainText() == text_of(second)
    assert "Paris" in view.text_a.toPlainText() and "Rome" in view.text_b.toPlainText()
