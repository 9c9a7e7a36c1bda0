"""Issue 12's settings in the window: the prompt row's sampling options, the scenario picker's descriptions,
extra headers read from the environment never shown, Anthropic's running output estimated, and the export
dialog saying when it added an extension."""
from __future__ import annotations

import pytest

from core.live.config import EnvRef, ProviderConfig
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)

SECRET = "gui-header-secret-4242"


def test_the_sampling_row_makes_the_spec_and_persists(qtbot):
    from gui.prompt import PromptPanel

    p = PromptPanel()
    qtbot.addWidget(p)
    assert (p.spec().stop, p.spec().top_p, p.spec().seed) == ((), None, None)   # defaults send nothing
    assert p.sampling_toggle.text() == "Sampling" and not p.sampling_box.isVisibleTo(p)
    p.sampling_toggle.setChecked(True)
    assert p.sampling_box.isVisibleTo(p)
    p.stop.setText(r"END|\n\n")
    p.top_p.setValue(0.9)
    p.seed.setValue(7)
    spec = p.spec()
    assert (spec.stop, spec.top_p, spec.seed) == (("END", "\n\n"), 0.9, 7)
    assert p.sampling_toggle.text() == "Sampling (3)"
    assert "Set: 2 stop sequences, top_p 0.9, seed 7" in p.sampling_toggle.toolTip()
    again = PromptPanel()
    qtbot.addWidget(again)
    again.restore(p.state())
    assert again.spec() == spec and again.sampling_toggle.isChecked()
    again.restore({"user": "an old state, before the sampling row"})
    assert (again.spec().stop, again.spec().top_p, again.spec().seed) == ((), None, None)
    p.stop.setText("a|b|c|d|e")
    with pytest.raises(ValueError, match="Sampling: at most 4 stop sequences"):
        p.spec()


def test_the_scenario_list_shows_each_description(window):  # noqa: F811
    from PySide6.QtCore import QModelIndex, Qt
    from PySide6.QtWidgets import QStyleOptionViewItem

    from core.servers.emulator.scenarios import SCENARIOS
    from gui.scenario_picker import ScenarioDelegate, wrapped

    combo = window.scenario
    delegate = combo.view().itemDelegate()
    assert isinstance(delegate, ScenarioDelegate)
    opt = QStyleOptionViewItem()
    opt.fontMetrics = combo.view().fontMetrics()
    one_line = combo.view().fontMetrics().height()
    for i, (name, description) in enumerate(SCENARIOS.items()):
        index = combo.model().index(i, 0)
        assert index.data(Qt.ToolTipRole) == description and index.data() == name   # the box stays short
        assert delegate.sizeHint(opt, index).height() >= 2 * one_line   # the name, then the description
    assert delegate.sizeHint(opt, QModelIndex()).height() < 2 * one_line
    combo.setCurrentText("stall")
    assert SCENARIOS["stall"] in combo.toolTip()
    lines = wrapped(SCENARIOS["thinking-tools"], opt.fontMetrics, 300)
    assert len(lines) == 2 and lines[1].endswith("…")


def test_env_headers_never_reach_the_request_tab_or_curl(qtbot, loop, emulator, settings, monkeypatch):  # noqa: F811
    from gui.main_window import MainWindow
    from gui.panetext import curl_text, request_text

    monkeypatch.setenv("SS_GUI_HEADER", SECRET)
    provider = ProviderConfig("own", "openai-chat", emulator + "/v1", "text",
                              headers={"api-key": EnvRef("SS_GUI_HEADER"), "X-Trace": "visible-value"},
                              query={"tenant": EnvRef("SS_GUI_HEADER")}, extra_body={"seed": 3})
    w = MainWindow([provider], settings=settings, read_timeout=5.0)
    qtbot.addWidget(w)
    w.show()
    try:
        w.provider_model.set_checked(["own"])
        send(w, loop)
        (pane,) = w.panes
        run = pane.controller.run
        assert run.status == "done", run.error
        shown = request_text(run) + curl_text(run) + pane.metrics_label.text()
        assert SECRET not in shown
        assert "api-key: [REDACTED]" in shown and "X-Trace: visible-value" in shown and '"seed": 3' in shown
        assert '-H "api-key: ${SS_GUI_HEADER}"' in curl_text(run) and "tenant=${SS_GUI_HEADER}" in curl_text(run)
        from PySide6.QtWidgets import QPlainTextEdit

        for box in pane.findChildren(QPlainTextEdit):
            assert SECRET not in box.toPlainText()
    finally:
        loop.run_until_complete(w.aclose())


def test_an_anthropic_pane_estimates_until_the_real_count(qtbot):
    from core.live.recorder import ProviderRun
    from gui.panetext import METRICS_TIP, metrics_text
    from gui.runview import RunView
    from tests.core.live.test_metrics import ANTHROPIC, BLOCK, DONE, MS, SSE, START, _delta

    run = ProviderRun(ANTHROPIC)
    run._begin(0.0)
    run._on_headers(50 * MS, 200, "HTTP/1.1", "OK", SSE)
    run._on_chunk(60 * MS, START + BLOCK)
    view = RunView(run)
    view.sync()
    assert "out — tok" in metrics_text(run, view)   # not "out 2 tok", message_start's up-front figure
    run._on_chunk(100 * MS, _delta("x" * 400))
    run._on_chunk(400 * MS, _delta("y" * 400))
    view.sync()
    text = metrics_text(run, view)
    assert "in 25 / out ~200 tok" in text and text.endswith("~667 tok/s")   # 200 tokens in 0.3 s, estimated
    run._on_chunk(410 * MS, DONE)
    run._finish(420 * MS, None)
    view.sync()
    assert "in 25 / out 31 tok" in metrics_text(run, view)
    assert "~" in METRICS_TIP and "message_start" in METRICS_TIP


def test_the_export_dialog_says_when_it_added_an_extension(window, loop, tmp_path, monkeypatch):  # noqa: F811
    import gui.main_window as mw

    send(window, loop)
    typed = str(tmp_path / "x.txt")
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (typed, mw.EXPORT_FILTERS[0][0]))
    window.export_dialog()
    assert (tmp_path / "x.txt.jsonl").exists()
    msg = window.statusBar().currentMessage()
    assert "x.txt.jsonl" in msg and ".txt is not an export type" in msg and ".jsonl was added" in msg
