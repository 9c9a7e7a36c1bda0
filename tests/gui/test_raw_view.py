"""The Raw view worth scanning (issue 12): what each frame carried, the kind filter in every format, the bytes and
network chunks of a frame, blocks that select all of their frames, one frame numbering, and the timeline's
selection and warning marks. Runs are the emulator's own scenarios, encoded and fed through the core's recorder
(no server, no network), and recordings of the shared corpus."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from core.wire.carries import KINDS, carries, events_by_frame, frame_kinds
from core.wire.formats import FORMATS
from tests.gui.conftest import corpus_run

HEADERS = (500_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])


def scenario_chunks(fmt: str, scenario: str, prompt: str = "What is the capital of France?", tools: bool = False,
                    piece: int | None = None) -> list[tuple[int, bytes]]:
    """The emulator's writes for a scenario as timed chunks (each write one chunk, or cut in `piece` bytes)."""
    from core.servers.emulator.responder import Conversation, weather_tool
    from core.servers.emulator.scenarios import build_plan, schedule

    conv = Conversation(prompt=prompt, tools=[weather_tool()] if tools else [], thinking=scenario == "thinking")
    data = [b for _delay, b in schedule(fmt, build_plan(fmt, scenario, conv), 0)]
    if piece:
        body = b"".join(data)
        data = [body[i:i + piece] for i in range(0, len(body), piece)]
    return [(1_000_000 * (i + 2), b) for i, b in enumerate(data)]


def scenario_run(fmt: str, scenario: str, **kw):
    """A finished run of an emulator scenario, rebuilt through the core's recorder."""
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run

    chunks = scenario_chunks(fmt, scenario, **kw)
    provider = ProviderConfig(f"demo-{fmt}", fmt, "http://127.0.0.1:9/v1", scenario, "")
    return rebuild_run(provider, headers=HEADERS, chunks=chunks, end_ns=chunks[-1][0] + 1_000_000)


def controller(run):
    from gui.controller import PaneController, RepaintScheduler

    c = PaneController(run, RepaintScheduler())
    c.refresh()
    return c


def pane_for(qtbot, run):
    from gui.pane import PaneWidget

    pane = PaneWidget(controller(run))
    qtbot.addWidget(pane)
    pane.resize(420, 700)
    return pane


def shown_rows(c) -> list[int]:
    proxy = c.frames_proxy
    return [proxy.mapToSource(proxy.index(r, 0)).row() for r in range(proxy.rowCount())]


def core_kinds(run) -> dict[int, frozenset]:
    """Each item's kinds as the core says them (comment lines are keepalives)."""
    by_frame = events_by_frame(e for _t, e in run.events)
    return {row: frame_kinds(by_frame.get(item.n, [])) if hasattr(item, "event") else frozenset({"keepalive"})
            for row, item in enumerate(run.decoder.items)}


# -- the carries column -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_carries_column_says_what_each_frame_contributed(fmt):
    run = scenario_run(fmt, "tool-call", tools=True)
    c = controller(run)
    m = c.frames
    assert m.COL_CARRIES == 0 and m.headerData(0, Qt.Horizontal) == "carries"
    column = [m.index(r, m.COL_CARRIES).data() for r in range(m.rowCount())]
    by_frame = events_by_frame(e for _t, e in run.events)
    # the column is the core's own wording of each frame's events, never a re-parse
    assert column == [carries(by_frame.get(i.n, [])) for i in run.decoder.items]
    joined = "\n".join(column)
    assert "finish tool_calls" in joined and "start tool_call get_weather" in joined
    assert "tool_call 0 args +" in joined or "tool_call 1 args +" in joined
    if fmt == "anthropic":
        assert 'text +"' in joined
        assert "(nothing)" in column          # the empty partial_json
        assert "keepalive" in column[2]       # the ping


@pytest.mark.parametrize("fmt", FORMATS)
def test_thinking_usage_keepalive_and_diagnostic_frames_say_so(fmt):
    think = controller(scenario_run(fmt, "thinking"))
    col = [think.frames.index(r, 0).data() for r in range(think.frames.rowCount())]
    assert any(t.startswith("thinking +") for t in col)
    if fmt != "openai-chat":                  # (Chat sends usage only when asked for)
        assert any("usage in 20 out" in t for t in col)
    bad = controller(scenario_run(fmt, "malformed-json"))
    assert any("diagnostic data-not-json" in bad.frames.index(r, 0).data() for r in range(bad.frames.rowCount()))
    pings = controller(scenario_run(fmt, "ping-heavy"))
    assert any(pings.frames.index(r, 0).data().startswith("keepalive") for r in range(pings.frames.rowCount()))


def test_the_carries_column_on_a_recording():
    c = controller(corpus_run("anthropic/thinking-then-tool-use-haiku-4.5.sse"))
    col = [c.frames.index(r, 0).data() for r in range(c.frames.rowCount())]
    assert any(t.startswith("thinking +") for t in col) and any(t.startswith("signature +") for t in col)
    assert any(" args +" in t for t in col) and any(t.startswith("finish tool_calls") or "finish tool_calls" in t
                                                     for t in col)


# -- the kind filter ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("scenario", ["thinking", "tool-call", "malformed-json", "ping-heavy", "mid-stream-error"])
def test_the_kind_filter_shows_exactly_the_frames_of_that_kind_in_every_format(fmt, scenario):
    run = scenario_run(fmt, scenario, tools=scenario == "tool-call")
    c = controller(run)
    truth = core_kinds(run)
    present = set()
    for kind in KINDS:
        c.frames_proxy.set_kind(kind)
        want = [r for r, ks in truth.items() if kind in ks]
        assert shown_rows(c) == want, kind
        if want:
            present.add(kind)
    c.frames_proxy.set_kind("")
    assert c.frames_proxy.rowCount() == c.frames.rowCount()
    expected = {"thinking": {"thinking", "text"}, "tool-call": {"tool_args"},
                "malformed-json": {"diagnostic"}, "ping-heavy": {"keepalive"}, "mid-stream-error": {"error"}}
    assert expected[scenario] <= present


def test_the_kind_filter_combines_with_the_event_and_text_filters():
    c = controller(scenario_run("anthropic", "tool-call", tools=True))
    c.frames_proxy.set_kind("nothing")
    c.frames_proxy.set_event("content_block_delta")
    rows = shown_rows(c)
    assert [c.frames.item(r).n for r in rows] == [7]          # the delta with an empty partial_json
    c.frames_proxy.set_text("no such text")
    assert c.frames_proxy.rowCount() == 0


def test_a_finding_at_the_end_revises_the_row_already_shown():
    """missing-terminator concerns the last frame, whose row was shown before the stream ended."""
    from core.live.config import ProviderConfig
    from core.live.recorder import ProviderRun

    run = ProviderRun(ProviderConfig("demo-anthropic", "anthropic", "http://127.0.0.1:9", "x", ""))
    run._begin(None)
    run._on_headers(*HEADERS)
    c = controller(run)
    chunks = scenario_chunks("anthropic", "no-terminator")
    for t, data in chunks:
        run._on_chunk(t, data)
        c.refresh()
    last = c.frames.rowCount() - 1
    before = c.frames.index(last, 0).data()
    c.frames_proxy.set_kind("diagnostic")
    assert shown_rows(c) == []
    run._finish(chunks[-1][0] + 1, None)
    c.refresh()
    assert "diagnostic missing-terminator" in c.frames.index(last, 0).data() != before
    assert shown_rows(c) == [last]


# -- the filter boxes never change a pane's width ---------------------------------------------------------------
def test_filters_and_tabs_never_change_the_pane_widths(qtbot):
    from PySide6.QtWidgets import QApplication, QSplitter

    from gui.pane import PaneWidget
    from gui.panetabs import BLOCKS, RAW, TEXT, USAGE

    split = QSplitter(Qt.Horizontal)
    qtbot.addWidget(split)
    panes = []
    for fmt in FORMATS:
        p = PaneWidget(controller(scenario_run(fmt, "tool-call", tools=True)), split)
        split.addWidget(p)
        panes.append(p)
    split.resize(1280, 800)
    split.show()
    QApplication.processEvents()
    widths = [p.width() for p in panes]
    assert min(widths) > 250
    for p in panes:
        p.tabs.setCurrentIndex(RAW)
        QApplication.processEvents()
        raw = p.raw_tab
        for box in (raw.kind_filter, raw.event_filter):
            for i in range(box.count()):     # every entry, `response.function_call_arguments.delta` included
                box.setCurrentIndex(i)
                QApplication.processEvents()
                assert [q.width() for q in panes] == widths, box.currentText()
            box.setCurrentIndex(0)
        raw.table.selectRow(1)
        for mode in raw.detail_mode.buttons.values():
            mode.click()
            QApplication.processEvents()
        for tab in (BLOCKS, USAGE, TEXT):
            p.tabs.setCurrentIndex(tab)
            QApplication.processEvents()
        assert [q.width() for q in panes] == widths
    responses = panes[FORMATS.index("openai-responses")].raw_tab.event_filter
    assert responses.count() > 5 and responses.sizeHint().width() < 200


# -- the bytes view and the network chunks --------------------------------------------------------------------
def test_the_bytes_view_shows_the_chunks_that_carried_a_split_frame(qtbot):
    from gui.framebytes import HEX, TEXT, bytes_text

    run = scenario_run("anthropic", "text", piece=50)       # 50-byte chunks: most frames span several
    pane = pane_for(qtbot, run)
    c = pane.controller
    view = c.view
    body = run.body
    split_rows = [r for r in range(c.frames.rowCount()) if len(view.chunks_of(r)) > 1]
    assert split_rows
    row = split_rows[0]
    item = c.frames.item(row)
    spans = view.chunks_of(row)
    # the parts the chunks carried are the frame's bytes, in order, from the chunks the run received
    parts = [run.chunks[s.chunk][1][s.start:s.end] for s in spans]
    assert b"".join(parts) == item.raw == body[item.offset:item.offset + len(item.raw)]
    assert [s.chunk for s in spans] == list(range(spans[0].chunk, spans[-1].chunk + 1))
    assert c.frames.index(row, c.frames.COL_CHUNK).data() == f"{spans[0].chunk}→{spans[-1].chunk}"
    one = next(r for r in range(c.frames.rowCount()) if len(view.chunks_of(r)) == 1) if any(
        len(view.chunks_of(r)) == 1 for r in range(c.frames.rowCount())) else None
    if one is not None:
        assert c.frames.index(one, c.frames.COL_CHUNK).data() == str(view.chunks_of(one)[0].chunk)
    hexed = bytes_text(view, row, HEX)
    assert f"split across {len(spans)} network chunks" in hexed
    for s in spans:
        assert f"── chunk {s.chunk} · " in hexed
    assert f"{item.raw[0]:02x} {item.raw[1]:02x}" in hexed
    texted = bytes_text(view, row, TEXT)
    assert "data: " in texted and "\\n" in texted
    # through the tab: select the frame, switch the detail to Hex and to Bytes
    pane.tabs.setCurrentIndex(2)
    raw = pane.raw_tab
    pane.select_frames([item.n])
    assert f"frame {item.n}" in raw.detail.toPlainText() and "produced" in raw.detail.toPlainText()
    raw.detail_mode.set_mode(HEX)
    assert raw.detail.toPlainText() == hexed
    raw.detail_mode.set_mode(TEXT)
    assert raw.detail.toPlainText() == texted


def test_a_character_split_across_chunks_shows_as_its_bytes():
    from gui.framebytes import TEXT, bytes_text

    run = scenario_run("openai-chat", "split-utf8")
    c = controller(run)
    texts = [bytes_text(c.view, r, TEXT) for r in range(c.frames.rowCount()) if len(c.view.chunks_of(r)) > 1]
    assert any("\\x" in t for t in texts)


def select_only(table, row: int) -> None:
    """Select exactly `row` (selectRow would follow the keyboard modifiers Qt believes held: a test that
    ended on a Ctrl shortcut leaves Ctrl 'down', and selectRow then adds to the selection)."""
    from PySide6.QtCore import QItemSelectionModel

    table.selectionModel().select(table.model().index(row, 0),
                                  QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)


# -- blocks ---------------------------------------------------------------------------------------------------
def test_selecting_a_block_selects_every_frame_of_it_the_empty_delta_included(qtbot):
    pane = pane_for(qtbot, scenario_run("anthropic", "tool-call", tools=True))
    c = pane.controller
    row = next(r for r in range(c.blocks.rowCount()) if c.blocks.block(r).kind == "tool_call")
    assert c.blocks.block(row).frames == [6, 8, 9, 10, 11, 12, 13]     # the events' own frames: 7 added nothing
    assert c.view.frames_of_block(c.blocks.block(row)) == list(range(6, 14))
    pane.tabs.setCurrentIndex(1)
    select_only(pane.blocks_tab.table, row)
    assert pane.raw_tab.selected_frames() == list(range(6, 14))
    # the text block: its frames, not the ping inside its span
    select_only(pane.blocks_tab.table, 0)
    assert pane.raw_tab.selected_frames() == [1, 3, 4, 5]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_block_never_takes_another_blocks_frames(fmt):
    run = scenario_run(fmt, "parallel-tools", prompt="Weather in Paris and Rome?", tools=True)
    c = controller(run)
    owner: dict[int, int] = {}
    for b in run.decoder.reply.ordered_blocks():
        for f in c.view.frames_of_block(b):
            assert f in b.frames or f not in owner, (b.index, f)
            owner.setdefault(f, b.index)
        assert set(b.frames) <= set(c.view.frames_of_block(b))


def test_the_blocks_content_column_shows_the_start():
    c = controller(scenario_run("anthropic", "long"))
    m = c.blocks
    b = m.block(0)
    shown = m.index(0, 8).data()
    assert len(b.text) > 300
    assert shown.rstrip("…").replace("⏎", "\n") == b.text[:len(shown.rstrip("…"))]
    assert shown.endswith("…")


def test_the_blocks_overview_keeps_the_signature_tag_whole():
    from gui.panetext import blocks_overview

    c = controller(corpus_run("anthropic/thinking-long-sonnet-4.sse"))
    blocks = c.run.decoder.reply.ordered_blocks()
    thinking = next(b for b in blocks if b.kind == "thinking" and b.signature)
    text = blocks_overview(blocks)
    assert f"[signature: {len(thinking.signature):,} chars]" in text
    assert "[si…" not in text and "chars: select the row for all of it)" in text


# -- one frame numbering ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_notice_the_end_note_and_the_raw_table_name_the_same_frame(fmt):
    import re

    from gui.panetext import end_note, notice_report

    run = scenario_run(fmt, "no-terminator")
    c = controller(run)
    notice = notice_report(run, run.decoder.reply)
    note = end_note(run, run.decoder.reply)
    at_notice = int(re.search(r"missing-terminator \(frame (\d+)\)", notice).group(1))
    at_note = int(re.search(r"after frame (\d+)", note).group(1))
    m = c.frames
    last_shown = int(m.index(m.rowCount() - 1, m.COL_N).data())
    diag = next(r for r in range(c.diagnostics.rowCount()) if c.diagnostics.index(r, 1).data() == "missing-terminator")
    assert at_notice == at_note == last_shown == int(c.diagnostics.index(diag, 0).data()) == run.decoder.frames - 1


# -- the timeline -----------------------------------------------------------------------------------------------
def test_the_timeline_highlights_the_selected_frame_and_marks_findings(qtbot):
    from gui.timeline import TimelineModel, TimelineView

    panes = [pane_for(qtbot, scenario_run("anthropic", "malformed-json")),
             pane_for(qtbot, scenario_run("openai-chat", "text"))]
    model = TimelineModel()
    model.set_controllers([p.controller for p in panes])
    view = TimelineView(model)
    qtbot.addWidget(view)
    view.resize(900, 200)
    view.show()
    view.grab()
    assert view.selected_xs(0) == [] and view.selected_xs(1) == []
    # a malformed frame: a warning mark where its tick is
    bad = panes[0].controller
    frame = next(d.frame for d in bad.run.decoder.reply.diagnostics if d.code == "data-not-json")
    x_bad = view.x_of(bad.view.ms(bad.view.item_ns[bad.view.frame_row[frame]]))
    assert any(abs(x - x_bad) < 1 for x in view.warning_xs(0)) and view.warning_xs(1) == []
    # selecting in Raw highlights that frame in its lane, and repaints
    with qtbot.waitSignal(model.dataChanged):
        panes[1].select_frames([3])
    c = panes[1].controller
    x3 = view.x_of(c.view.ms(c.view.item_ns[c.view.frame_row[3]]))
    assert [round(x, 3) for x in view.selected_xs(1)] == [round(x3, 3)] and view.selected_xs(0) == []
    # a click on a tick: the window shows that frame in its pane, whose selection the lane then highlights
    clicked = []
    view.frameClicked.connect(lambda name, n: (clicked.append((name, n)), panes[0].show_frame(n)))
    lane_h = view._lane_h()
    y = view._plot_rect().top() + 0.5 * lane_h
    qtbot.mouseClick(view, Qt.LeftButton, pos=QPoint(int(x_bad), int(y)))
    assert clicked and clicked[0][0] == bad.name
    assert panes[0].raw_tab.selected_frames() == [clicked[0][1]]
    assert len(view.selected_xs(0)) == 1
    panes[1].raw_tab.table.clearSelection()
    assert view.selected_xs(1) == []


def test_a_lane_repaints_when_its_status_changes(qtbot):
    from gui.timeline import TimelineModel, TimelineView

    c = controller(scenario_run("gemini", "text"))
    model = TimelineModel()
    model.set_controllers([c])
    view = TimelineView(model)
    qtbot.addWidget(view)
    with qtbot.waitSignal(model.dataChanged) as blocker:
        c.statusChanged.emit("streaming")
    top_left = blocker.args[0]
    assert top_left.row() == 0 and top_left.column() == 1
    assert model.index(0, 1).data() == c.status        # read from the run when asked (when painted)


# -- the models stay consistent -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_frames_models_pass_qtmodeltester_with_every_filter(request, fmt):
    from tests.gui.test_models import check_models

    c = controller(scenario_run(fmt, "ping-heavy"))
    c.frames_proxy.set_kind("keepalive")
    c.frames_proxy.set_text("a")
    check_models(request, c.frames, c.frames_proxy, c.blocks)
    c.frames.set_selected_frames([0, 1])
    assert c.frames.selected_frames == (0, 1)
