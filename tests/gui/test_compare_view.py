"""The Compare view (figures side by side), the Diff tab and Run > Repeat… on the built-in emulator."""
from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import in_loop, run_until
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)


def compare_of(window):
    dock = window.compare_dock
    if dock.isHidden():
        window.act_compare.trigger()
    dock.sample()
    return dock.compare.model


def core_table(window):
    """The same runs through the core alone (fresh figures, not the view's trackers)."""
    from core.live.compare_table import compare_table
    from core.live.metrics import run_metrics

    return compare_table([run_metrics(r) for r in window.runs()])


def check_model(request, model):
    from pytestqt.modeltest import ModelTester

    ModelTester(request.config).check(model, force_py=True)


# -- Compare -------------------------------------------------------------------------------------------------
def test_compare_has_a_row_per_pane_with_the_core_tables_figures(window, loop, request):
    send(window, loop)
    model = compare_of(window)
    check_model(request, model)
    expected = core_table(window)
    assert model.rowCount() == len(window.panes) == 4
    assert model.columnCount() == 1 + len(expected.columns)
    assert [model.index(r, 0).data() for r in range(4)] == [p.controller.name for p in window.panes]
    from gui.compare_view import BestRole, EstimateRole

    for r in range(4):
        for c, col in enumerate(expected.columns, start=1):
            assert model.index(r, c).data() == expected.text(r, col), (r, col.key)
            assert model.index(r, c).data(BestRole) == expected.is_best(r, col), (r, col.key)
            assert model.index(r, c).data(EstimateRole) == expected.is_estimate(r, col)
    assert [model.headerData(c, Qt.Horizontal) for c in range(model.columnCount())] == \
        ["Provider"] + [c.title for c in expected.columns]


def test_best_values_are_bold_and_coloured_with_a_tooltip(window, loop):
    send(window, loop)
    model = compare_of(window)
    from gui.compare_view import BestRole

    marked = 0
    for r in range(model.rowCount()):
        for c in range(1, model.columnCount()):
            i = model.index(r, c)
            if i.data(BestRole):
                marked += 1
                assert i.data(Qt.FontRole).bold()
                assert i.data(Qt.ForegroundRole) is not None
                assert "the best" in i.data(Qt.ToolTipRole)
            else:
                assert i.data(Qt.FontRole) is None or not i.data(Qt.FontRole).bold()
                assert "the best" not in i.data(Qt.ToolTipRole)
    assert marked >= 1   # four completed runs: TTFT has a best


def test_sorting_by_a_header_follows_the_core_order_and_keeps_unknown_values_last(window, loop, emulator,
                                                                                   monkeypatch):
    from core.live.config import ProviderConfig

    monkeypatch.delenv("STREAMSCOPE_NO_SUCH_KEY", raising=False)
    keyless = ProviderConfig("keyless", "anthropic", emulator, "text", "STREAMSCOPE_NO_SUCH_KEY")
    window.set_providers([keyless])
    window.provider_model.set_checked(["keyless", "demo-openai-chat", "demo-anthropic", "demo-gemini"])
    send(window, loop)
    model = compare_of(window)
    view = window.compare_dock.compare.table
    ttft = 1 + [c.key for c in core_table(window).columns].index("ttft")
    for order, descending in ((Qt.AscendingOrder, False), (Qt.DescendingOrder, True)):
        view.sortByColumn(ttft, order)
        shown = [model.index(r, 0).data() for r in range(model.rowCount())]
        assert shown == [m.provider for m in core_table(window).sorted_by("ttft", descending).rows]
        assert shown[-1] == "keyless"      # never sent: no TTFT, last either way
    view.sortByColumn(0, Qt.AscendingOrder)
    assert [model.index(r, 0).data() for r in range(4)] == sorted(p.controller.name for p in window.panes)
    window.compare_dock.sample()           # a new snapshot keeps the chosen order
    assert [model.index(r, 0).data() for r in range(4)] == sorted(p.controller.name for p in window.panes)


def test_copy_as_tsv_puts_the_shown_table_on_the_clipboard(window, loop):
    from PySide6.QtGui import QGuiApplication

    send(window, loop)
    model = compare_of(window)
    window.compare_dock.compare.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert text == model.table.tsv()
    lines = text.splitlines()
    assert lines[0].split("\t") == ["Provider"] + [c.title for c in model.table.columns]
    assert [ln.split("\t")[0] for ln in lines[1:]] == [p.controller.name for p in window.panes]
    assert lines[1].split("\t")[2] == model.index(0, 2).data()     # TTFT as shown


def test_estimates_are_marked_while_streaming_and_exact_at_the_end(window, loop):
    from gui.compare_view import ESTIMATE_TIP, EstimateRole

    compare_of(window)
    send(window, loop, "Tell me a long story", scenario="long", wait=False)
    model = window.compare_dock.compare.model
    rate = 1 + [c.key for c in model.table.columns].index("tokens_per_s")

    def estimating():
        return any(model.index(r, rate).data(EstimateRole) for r in range(model.rowCount()))

    run_until(loop, lambda: model.rowCount() == 4 and estimating(), why=lambda: model.table.tsv())
    row = next(r for r in range(4) if model.index(r, rate).data(EstimateRole))
    cell = model.index(row, rate)
    assert cell.data().endswith("est.") and cell.data(Qt.FontRole).italic()
    assert ESTIMATE_TIP in cell.data(Qt.ToolTipRole)
    in_loop(loop, window.stop_all)
    run_until(loop, lambda: window.finished)
    window.compare_dock.sample()
    assert not window.compare_dock._timer.isActive()


def test_ctrl_k_toggles_the_dock_and_is_listed(window):
    rows = dict((text, keys) for keys, text in window.shortcut_rows())
    assert any("Compare view" in t and "K" in k for t, k in rows.items())
    assert window.act_compare.shortcut().toString() == "Ctrl+K"
    dock = window.compare_dock
    assert dock.isHidden()
    window.act_compare.trigger()
    assert dock.isVisible() and window.act_compare.isChecked()
    window.act_compare.trigger()
    assert dock.isHidden() and not window.act_compare.isChecked()


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_the_dock_opens_small_and_the_panes_stay_readable(window, loop, qapp, size):
    """Ctrl+K squeezed the panes down to their headers at 1280x800 (the dock took what its table asked for):
    it opens at `DOCK_SHARE` of the window now (or what shows every row of its table), and the panes area keeps
    a readable minimum (a pane's header and a few lines of its reply, the rest a scroll away)."""
    from gui.compare_view import DOCK_SHARE

    window.resize(*size)
    send(window, loop, "Hello", scenario="mid-stream-error")
    window.act_compare.trigger()
    for _ in range(3):
        qapp.processEvents()
    dock, area = window.compare_dock, window.panes_area
    line = area.fontMetrics().lineSpacing()
    rows = dock.minimumSizeHint().height() + dock.compare.rows_height(4) - dock.compare.table.minimumSizeHint().height()
    assert dock.height() <= max(dock.minimumSizeHint().height(), round(size[1] * DOCK_SHARE), rows) + 2
    table = dock.compare.table              # every row of the table shows (at 1024x700 it showed one of four) ...
    assert all(0 <= table.rowViewportPosition(r) and table.rowViewportPosition(r) + table.rowHeight(r)
               <= table.viewport().height() for r in range(table.model().rowCount()))
    if size[1] >= 800:                       # ... before the panes' readable height, where both do not fit
        assert area.height() >= area.readable_height() - 2
    for pane in window.panes[:area.columns()]:
        shown = pane.text_view.answer.visibleRegion().boundingRect().height()
        assert shown >= 3 * line, (pane.controller.name, shown)
    assert window.height() == size[1]


def test_a_hidden_dock_takes_no_snapshots(window, loop):
    counts = []
    window.compare_dock.sampled.connect(lambda: counts.append(1))
    send(window, loop, "Tell me a long story", scenario="long", wait=False)
    before = len(counts)
    run_until(loop, lambda: all(c.view.frames_seen > 20 for c in window.controllers))
    assert len(counts) == before           # nothing sampled while hidden (only at runsStarted)
    in_loop(loop, window.stop_all)
    run_until(loop, lambda: window.finished)


def test_the_md_export_holds_the_compare_table(window, loop, tmp_path):
    send(window, loop)
    out = window.export_runs(tmp_path / "run.md").read_text(encoding="utf-8")
    assert "## Compare" in out
    table = core_table(window)
    assert "| Provider | " + " | ".join(c.title for c in table.columns) + " |" in out
    for p in window.panes:
        assert f"| {p.controller.name} |" in out


# -- Diff ----------------------------------------------------------------------------------------------------
@pytest.fixture
def two_scenarios(window, emulator, monkeypatch):
    """Two providers on the emulator that answer the same prompt differently (their model is the scenario)."""
    from core.live.config import ProviderConfig

    def use(a_model: str, b_model: str, b_format: str = "anthropic"):
        monkeypatch.setenv("STREAMSCOPE_GUI_TEST_KEY", "k")
        a = ProviderConfig("side-a", "openai-chat", emulator + "/v1", a_model, "STREAMSCOPE_GUI_TEST_KEY")
        b = ProviderConfig("side-b", b_format, emulator, b_model, "STREAMSCOPE_GUI_TEST_KEY")
        window.set_providers([a, b])
        window.provider_model.set_checked(["side-a", "side-b"])
    return use


def diff_of(window):
    dock = window.compare_dock
    if dock.isHidden():
        window.act_compare.trigger()
    dock.tabs.setCurrentWidget(dock.diff)
    dock.diff.refresh()
    return dock.diff


def test_diff_marks_the_words_only_in_a_when_b_stopped_short(window, loop, two_scenarios):
    from core.cli.diff import detail_lines
    from core.wire.answer_diff import answer_text, diff_replies

    two_scenarios("text", "mid-stream-error")
    send(window, loop, "What is the capital of France?")
    view = diff_of(window)
    a, b = window.runs()
    assert (a.status, b.status) == ("done", "error")
    full, cut = answer_text(a.reply), answer_text(b.reply)
    assert cut and full.startswith(cut) and len(full) > len(cut)
    assert view.text_a.toPlainText() == full and view.text_b.toPlainText() == cut
    # A's tail is marked: what B never got (from the word B was cut in: "the" is not the word "the ")
    [(op, tail)] = view.marked_pieces("a")
    assert op in ("delete", "replace") and full.endswith(tail) and tail.endswith(full[len(cut):])
    assert cut.startswith(full[:len(full) - len(tail)])
    assert [text for _op, text in view.marked_pieces("b")] == ([] if op == "delete" else [cut[len(full) - len(tail):]])
    assert "differs in 1 place" in view.summary.text()
    assert view.details.toPlainText() == "\n".join(detail_lines(diff_replies(a.reply, b.reply)))
    assert "Finish: differs" in view.details.toPlainText()


def test_diff_lists_tool_calls_and_thinking_from_the_core(window, loop, two_scenarios):
    from core.wire.answer_diff import diff_replies

    two_scenarios("tool-call", "parallel-tools")
    send(window, loop, "What's the weather in Paris?")
    view = diff_of(window)
    a, b = window.runs()
    d = diff_replies(a.reply, b.reply)
    assert len(d.tool_calls) == 2 and d.tool_calls[0].same_tool
    details = view.details.toPlainText()
    assert "Tool calls: 1 in A, 2 in B" in details
    assert f"#2 only in B: {d.tool_calls[1].b_name}" in details
    # swapping the sides swaps what is only on one side
    view.select("side-b", "side-a")
    assert "Tool calls: 2 in A, 1 in B" in view.details.toPlainText()
    assert "#2 only in A" in view.details.toPlainText()


def test_diff_of_word_changes_matches_the_core_ops(window, loop, two_scenarios):
    from core.wire.answer_diff import diff_replies

    two_scenarios("text", "thinking")
    window.prompt.thinking.setChecked(True)     # (the scenario thinks only when asked)
    send(window, loop, "Think about the capital of France")
    view = diff_of(window)
    a, b = window.runs()
    d = diff_replies(a.reply, b.reply)
    assert view.marked_pieces("a") == [(o.op, o.a) for o in d.text.ops if o.op != "equal" and o.a]
    assert view.marked_pieces("b") == [(o.op, o.b) for o in d.text.ops if o.op != "equal" and o.b]
    assert f"Thinking: A 0 chars in 0 block(s), B {d.thinking_chars.b} chars" in view.details.toPlainText()
    assert d.thinking_chars.b > 0


def test_diff_needs_two_runs(window, loop):
    window.provider_model.set_checked(["demo-gemini"])
    send(window, loop)
    view = diff_of(window)
    assert view.diff is None and "two or more" in view.summary.text()


# -- Repeat --------------------------------------------------------------------------------------------------
def repeat_dialog(window, providers, k, scenario="text", concurrency=1):
    window.prompt.prompt.setPlainText("What is the capital of France?")
    window.scenario.setCurrentText(scenario)
    window.provider_model.set_checked(providers)
    window.open_repeat()
    dlg = window.repeat_dialog
    dlg.repeat.setValue(k)
    dlg.concurrency.setValue(concurrency)
    return dlg


def test_repeat_runs_k_times_with_progress_statistics_and_plots(window, loop, request):
    dlg = repeat_dialog(window, ["demo-openai-chat"], 3)
    seen = []
    dlg.progressed.connect(lambda done, total: seen.append((done, total)))
    assert in_loop(loop, dlg.start)
    run_until(loop, lambda: not dlg.running)
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert dlg.progress.value() == 3 and dlg.progress.text() == "run 3/3"
    assert [r.metrics.status for r in dlg.results] == ["done"] * 3
    check_model(request, dlg.stats)
    assert dlg.stats.rowCount() == 1
    assert dlg.stats.cell(0, "Provider") == "demo-openai-chat"
    assert (dlg.stats.cell(0, "Runs"), dlg.stats.cell(0, "OK"), dlg.stats.cell(0, "Errors")) == ("3", "3", "none")
    from core.live.stats import provider_stats, stats_table

    assert dlg.stats.rows == stats_table(provider_stats(dlg.results))[1]
    assert list(dlg.plots.ttft.items) == ["demo-openai-chat"]
    assert dlg.plots.ttft.points("demo-openai-chat") == 3
    assert dlg.plots.curves.lines_of("demo-openai-chat") == 3
    assert "Finished: 3 runs" in dlg.status.text() and dlg.export_button.isEnabled()


def test_repeat_plots_have_one_item_per_provider_and_export_every_run(window, loop, tmp_path, monkeypatch):
    from core.live import recorder
    from core.live.capture import read_jsonl
    from core.live.runs_csv import CSV_COLUMNS

    monkeypatch.setattr(recorder, "MIN_RATE_SPAN_NS", 0)    # (the fast emulator's replies are bursts: no rate)

    names = ["demo-openai-chat", "demo-anthropic"]
    dlg = repeat_dialog(window, names, 2, concurrency=2)
    assert in_loop(loop, dlg.start)
    run_until(loop, lambda: not dlg.running)
    assert dlg.progress.text() == "run 4/4"
    for plot in (dlg.plots.ttft, dlg.plots.rate):
        assert list(plot.items) == names
        assert [plot.points(n) for n in names] == [2, 2]
    assert [dlg.plots.curves.lines_of(n) for n in names] == [2, 2]
    # a line per run: the curve of estimated tokens rises to the run's characters / 4
    curve = dlg.curves[1]
    assert curve.t_ms[0] == 0 and list(curve.tokens) == sorted(curve.tokens) and curve.tokens[-1] > 0
    assert [dlg.stats.cell(r, "Provider") for r in range(2)] == names    # the loop's order, not finishing order
    runs = read_jsonl(dlg.export_runs(tmp_path / "all.jsonl"))
    assert sorted(r.name for r in runs) == sorted(names * 2)
    with open(dlg.export_runs(tmp_path / "all.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 5
    assert [int(r[0]) for r in rows[1:]] == [1, 2, 3, 4]


def test_repeat_plots_say_so_when_every_run_failed(window, loop):
    """They were three blank plots."""
    dlg = repeat_dialog(window, ["demo-openai-chat"], 2, scenario="http-500")
    assert not dlg.plots.note.isVisibleTo(dlg)
    assert in_loop(loop, dlg.start)
    run_until(loop, lambda: not dlg.running)
    assert [r.metrics.ok for r in dlg.results] == [False, False]
    assert dlg.plots.note.isVisibleTo(dlg) and "No run has completed (2 failed)" in dlg.plots.note.text()
    ok = repeat_dialog(window, ["demo-openai-chat"], 1)
    assert in_loop(loop, ok.start)
    run_until(loop, lambda: not ok.running)
    assert not ok.plots.note.isVisibleTo(ok)


def test_repeat_cancel_halfway_keeps_the_finished_runs(window, loop):
    dlg = repeat_dialog(window, ["demo-gemini"], 6)
    dlg.progressed.connect(lambda done, _total: done == 2 and dlg.cancel())
    assert in_loop(loop, dlg.start)
    run_until(loop, lambda: not dlg.running)
    assert [r.number for r in dlg.results] == [1, 2]      # one at a time: nothing was in flight
    assert all(r.metrics.status == "done" for r in dlg.results)
    assert dlg.progress.text() == "run 2/6" and "Cancelled after 2 of 6 runs" in dlg.status.text()
    assert dlg.plots.ttft.points("demo-gemini") == 2
    assert dlg.start_button.isEnabled() and not dlg.cancel_button.isEnabled()


def test_repeat_refuses_an_empty_prompt(window):
    dlg = repeat_dialog(window, ["demo-gemini"], 2)
    window.prompt.prompt.setPlainText("  ")
    assert not dlg.start()
    assert "type a prompt" in dlg.status.text() and dlg.results == []


def test_diff_of_two_runs_without_a_finish_reason_says_none_reported(window, loop):
    """Two dropped streams (no finish reason either side): the Diff tab printed "Finish: the same: None (raw
    null)"."""
    from core.cli.diff import NO_FINISH

    send(window, loop, "Hello", scenario="drop")
    assert all(r.decoder.reply.finish is None for r in window.runs())
    details = diff_of(window).details.toPlainText()
    assert NO_FINISH in details.splitlines()
    assert "None" not in details and "null" not in details


def test_the_log_axis_labels_a_range_without_1_2_or_5_in_it(qapp):
    """Rates of 210-250 tok/s had no number on the tokens/s axis (only 1, 2 and 5 times a power of ten were
    labelled); a range with one of those keeps only those."""
    import math

    from gui.stats_plots import LogValueAxis

    axis = LogValueAxis("bottom")
    ticks = [math.log10(v) for v in (210, 220, 230, 240, 250)]
    labels = axis.logTickStrings(ticks, 1, 0.01)
    assert labels[0] == "210" and 1 <= sum(1 for s in labels if s) <= LogValueAxis.MAX_LABELS
    wide = axis.logTickStrings([math.log10(v) for v in (100, 150, 200, 300, 500)], 1, 0.1)
    assert wide == ["100", "", "200", "", "500"]
    many = axis.logTickStrings([math.log10(210 + i) for i in range(40)], 1, 0.001)
    assert sum(1 for s in many if s) <= LogValueAxis.MAX_LABELS
    # and the ticks themselves: a range inside one decade gets several, at plain steps of the value
    for lo, hi in ((206, 250), (199.8, 255.2)):
        levels = axis.logTickValues(math.log10(lo), math.log10(hi), 300, [])
        inside = [10 ** v for _s, vs in levels for v in vs if math.log10(lo) <= v <= math.log10(hi)]
        assert len(inside) >= 2 and all(abs(x - round(x)) < 1e-6 for x in inside), (lo, hi, inside)
