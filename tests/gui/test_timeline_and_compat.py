"""The timeline's binning, hover and zoom; the text view's tail following; the binding work-around."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QPointF, Qt

from tests.gui.conftest import corpus_run


def _controller(rel, chunk=64):
    from gui.controller import PaneController, RepaintScheduler

    c = PaneController(corpus_run(rel, chunk=chunk), RepaintScheduler())
    c.refresh()
    return c


def _brute_bins(c, start, span, width):
    from bisect import bisect_left

    ms = [(t - c.view.t0_ns) / 1e6 for t in c.view.item_ns]
    lo = bisect_left(ms, start)
    hi = min(bisect_left(ms, start + span, lo) + 1, len(ms))
    bins = {}
    for i in range(lo, hi):
        x = int((ms[i] - start) * width / span)
        if 0 <= x <= width and c.view.item_kinds[i] > bins.get(x, -1):
            bins[x] = c.view.item_kinds[i]
    return bins


@pytest.mark.parametrize("width", [40, 600])
@pytest.mark.slow
def test_timeline_bins_the_strongest_kind_per_pixel(qtbot, width):
    from gui.timeline import TimelineModel, TimelineView

    c = _controller("openai-chat/long-text-283-events-gpt-3.5-turbo.sse", chunk=7)
    model = TimelineModel()
    model.set_controllers([c])
    view = TimelineView(model)
    qtbot.addWidget(view)
    for start, span in ((0.0, 4000.0), (50.0, 300.0), (0.0, 1.0e6)):
        view._start_ms, view._span_ms = start, span
        view._bins = {}
        lb = view._lane_bins(0, c, float(width), 10)
        got = {x: int(k) for x, k in enumerate(lb.bins) if k >= 0}
        assert got and got == _brute_bins(c, start, span, float(width))


def test_timeline_hover_zoom_and_click(qtbot):
    from gui.timeline import TimelineModel, TimelineView

    c = _controller("anthropic/thinking-then-tool-use-haiku-4.5.sse")
    model = TimelineModel()
    model.set_controllers([c])
    view = TimelineView(model)
    qtbot.addWidget(view)
    view.resize(900, 120)
    view.show()
    view.grab()                      # paints (auto-fit, bins)
    r = view._plot_rect()
    row = c.frames.row_of_frame(5)
    x = view.x_of(c.view.ms(c.view.item_ns[row]))
    hit = view.item_at(x, r.top() + 5)
    assert hit is not None and hit[0] is c
    assert "frame" in view.describe(*hit)
    with qtbot.waitSignal(view.frameClicked) as sig:
        qtbot.mouseClick(view, Qt.LeftButton, pos=QPointF(x, r.top() + 5).toPoint())
    assert sig.args[0] == c.name and sig.args[1] >= 0
    span = view._span_ms
    view.zoom(0.5)
    assert view._span_ms == pytest.approx(span / 2)
    view.fit()
    assert view._span_ms == span


@pytest.mark.parametrize("point_size", [0, 16])
def test_short_lanes_never_overlap_their_labels_and_the_others_scroll(qtbot, point_size):
    """Eight lanes in a short timeline (1024x700, a large font) overlapped their labels: a lane is never shorter
    than its label's line, and the lanes that do not fit scroll (the last one's ticks are still found)."""
    from PySide6.QtGui import QFont

    from gui.timeline import TimelineModel, TimelineView

    rels = ["anthropic/thinking-then-tool-use-haiku-4.5.sse"] * 8
    cs = [_controller(rel) for rel in rels]
    model = TimelineModel()
    model.set_controllers(cs)
    view = TimelineView(model)
    qtbot.addWidget(view)
    if point_size:
        f = QFont(view.font())
        f.setPointSize(point_size)
        view.setFont(f)
    view.resize(900, view.minimumHeight())
    view.show()
    view.grab()
    line = view.fontMetrics().height()
    assert view._lane_h() >= line                                       # no two labels share a line
    assert view.minimumHeight() < view.AXIS_H + view.LEGEND_H + 8 * line   # (the minimum does not hold all 8)
    bar = view.lanes_bar
    assert bar.isVisible() and bar.maximum() > 0
    bar.setValue(bar.maximum())
    view.grab()
    r = view._plot_rect()
    last = cs[-1]
    row = last.frames.row_of_frame(5)
    x = view.x_of(last.view.ms(last.view.item_ns[row]))
    hit = view.item_at(x, r.bottom() - 3)
    assert hit is not None and hit[0] is last
    # tall enough for every lane: no scroll bar
    view.resize(900, view.AXIS_H + view.LEGEND_H + 8 + 8 * view.LANE_H)
    view.grab()
    assert bar.isHidden() and view.lanes_offset() == 0


def test_text_view_follows_the_tail_unless_scrolled_up(qtbot):
    from core.live.config import ProviderConfig
    from core.live.recorder import ProviderRun
    from gui.textview import ReplyTextView

    run = ProviderRun(ProviderConfig("x", "openai-chat", "http://h/v1", "m", ""))
    view = ReplyTextView()
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    t = 0

    def feed(text):
        nonlocal t
        t += 1_000_000
        import json
        chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        run._on_chunk(t, b"data: " + json.dumps(chunk).encode() + b"\n\n")
        view.update_from(run.decoder.reply)

    run._begin(0.0)
    run._on_headers(0, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    for i in range(200):
        feed(f"line {i}\n")
    sb = view.answer.verticalScrollBar()
    assert sb.value() == sb.maximum() > 0
    sb.setValue(0)                     # the user scrolls up: the view stays put
    for i in range(50):
        feed(f"more {i}\n")
    assert sb.value() == 0
    assert view.answer_text().endswith("more 49\n")


def test_singletons_survive_the_binding(qtbot):
    """gui.qtcompat keeps None / True / False alive under a binding that drops references to them."""
    from PySide6.QtWidgets import QLabel

    import gui.qtcompat as qc

    label = QLabel()
    qtbot.addWidget(label)
    for _ in range(5000):
        label.setText("x")          # a void call: PySide6 6.12.0 on CPython 3.11 drops a reference to None
    if sys.version_info < (3, 12) and any(qc.leaks().values()):
        assert qc.APPLIED
        assert sys.getrefcount(None) > 1 << 30
