"""The timeline under the panes: one lane per provider on a shared time axis from send.

`TimelineModel` is a table over the panes' controllers (one row per provider: name, status, frames and the
times of the milestones: request sent, response headers, first content, end). `TimelineView` paints it: each
SSE item is a tick coloured by what its frame produced (text, thinking, tool arguments, keepalive, usage,
error); a frame a finding concerns (a diagnostic that is not routine: not JSON, no end marker, ...) gets a
warning mark above its tick; the frames selected in a pane's Raw tab (or by a click here) are highlighted in their
lane. Hovering shows the frame, clicking selects it in its pane; the wheel zooms around the cursor, dragging
pans, a double click fits everything. A lane's status is read when it is painted, and a status change repaints.

Painting is binned by pixel: per lane the view keeps, for the current scale, the strongest kind seen in each
pixel column and bins only the items that arrived since the last paint, so a 30,000-frame lane costs a few
hundred line draws, not 30,000. While streaming, the auto-fitted axis grows in doublings so re-binning is rare.
"""
from __future__ import annotations

from array import array
from bisect import bisect_left

from PySide6.QtCore import QEvent, QModelIndex, QPointF, QRectF, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QScrollBar, QToolTip, QWidget

from core.live.recorder import FINAL_STATUSES, TIMING_NONE, TIMING_NOT_RECORDED, TIMING_RECORDED

from gui.models import TableModel, _preview
from gui.plaintips import plain_tooltip
from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.replay_view import badge_word
from gui.runview import (KIND_ERROR, KIND_KEEPALIVE, KIND_NAMES, KIND_OTHER, KIND_TEXT, KIND_THINKING, KIND_TOOL,
                         KIND_USAGE)
from gui.theme import dim_text_color

KIND_COLORS = {
    KIND_OTHER: QColor("#9ca3af"),
    KIND_KEEPALIVE: QColor("#d1d5db"),
    KIND_USAGE: QColor("#9333ea"),
    KIND_TEXT: QColor("#2563eb"),
    KIND_THINKING: QColor("#d97706"),
    KIND_TOOL: QColor("#16a34a"),
    KIND_ERROR: QColor("#dc2626"),
}
WARNING_COLOR = QColor("#f59e0b")      # the mark under a frame a finding concerns
SELECTED_COLOR = QColor("#ec4899")     # the frames selected in the pane's Raw tab
MAX_HIGHLIGHTS = 2000                  # selected frames highlighted per lane (one mark per pixel column anyway)
MAX_LEGEND_LINES = 2   # the legend wraps onto a second line when the timeline is narrower than it
MARKERS = (("sent", QColor("#111827")), ("headers", QColor("#0891b2")), ("first content", QColor("#16a34a")),
           ("end", QColor("#6b7280")))
_INVALID = QModelIndex()


def milestones(controller) -> dict[str, float | None]:
    """Milliseconds from send of: sent (0), headers, first content, end (None when not reached, or not in the
    recording the run was opened from: `ProviderRun.timing`)."""
    run = controller.run
    view, m = controller.view, run.metrics
    started = run.status != "pending"
    if run.timing == TIMING_NONE:
        return {"sent": None, "headers": None, "first content": None, "end": None}
    return {"sent": 0.0 if started else None, "headers": view.ms(m.t_headers_ns),
            "first content": view.ms(m.t_first_content_ns) if run.timing == TIMING_RECORDED else None,
            "end": view.ms(m.t_total_ns) if controller.status in FINAL_STATUSES else None}


def timing_note(run) -> str | None:
    """What a lane says over its frames when the run's recording did not hold their times (else None)."""
    if run.timing == TIMING_NONE:
        return TIMING_NOT_RECORDED
    if run.timing != TIMING_RECORDED:
        return "per-chunk timing not recorded: frames shown at the end"
    return None


class TimelineModel(TableModel):
    """One row per provider lane: name, status, frames and its milestones (ms from send)."""

    HEADERS = ("provider", "status", "frames", "sent", "headers", "first content", "end")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._lanes: list = []
        self.replay = False     # the lanes are a replayed capture's: statuses say "replaying" / "replayed"

    def status_word(self, c) -> str:
        """A lane's status as its pane's badge says it (gui.replay_view.badge_word)."""
        return badge_word(c.status, self.replay)

    def set_controllers(self, controllers: list, replay: bool | None = None) -> None:
        """`replay`: the lanes replay a capture (None: as before)."""
        self.beginResetModel()
        if replay is not None:
            self.replay = replay
        self._lanes = list(controllers)
        self.endResetModel()
        for c in self._lanes:   # a lane's status and selection repaint at once, not at the next 10 Hz tick
            c.statusChanged.connect(lambda _s, c=c: self._lane_changed(c, 1))
            c.frames.selectedFramesChanged.connect(lambda c=c: self._lane_changed(c, 0))

    def _lane_changed(self, controller, col: int) -> None:
        try:
            row = self._lanes.index(controller)
        except ValueError:
            return   # a lane of an earlier send
        self.dataChanged.emit(self.index(row, col), self.index(row, col))

    def controllers(self) -> list:
        return list(self._lanes)

    def controller(self, row: int):
        return self._lanes[row]

    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self._lanes)

    def refresh(self) -> None:
        if self._lanes:
            self.dataChanged.emit(self.index(0, 1), self.index(len(self._lanes) - 1, len(self.HEADERS) - 1))

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= len(self._lanes):
            return None
        c = self._lanes[index.row()]
        col = index.column()
        if role == Qt.DisplayRole:
            if col == 0:
                return c.name
            if col == 1:
                return self.status_word(c)
            if col == 2:
                return str(c.view.frames_seen)
            ms = milestones(c)[self.HEADERS[col]]
            return "" if ms is None else f"{ms:.1f}"
        return None


class _LaneBins:
    """For one lane at one scale: the strongest kind per pixel column, binned incrementally, and an image of
    the ticks to which only the columns that changed are painted."""

    __slots__ = ("key", "upto", "bins", "ms", "image", "changed")

    def __init__(self) -> None:
        self.key = None
        self.upto = 0
        self.bins = None            # numpy int8 per pixel column: the strongest kind (-1: none)
        self.ms = array("d")        # arrival ms of each item (sorted), for hover look-ups
        self.image: QImage | None = None
        self.changed: list[int] = []  # columns whose kind changed since the image was painted


class TimelineView(QWidget):
    """Paints a `TimelineModel`.

    Signals:
        frameClicked(str, int): a tick was clicked (provider name, frame number; -1 for a comment line).
    """

    frameClicked = Signal(str, int)
    LABEL_W = 210

    AXIS_H = 20      # the minimum heights; they grow with the font (View > font size): see _fit_font
    LANE_H = 26
    LEGEND_H = 18         # (the legend's lines: see _fit_legend)
    LEGEND_LINE_H = 18
    MIN_LANES_SHOWN = 2   # the minimum height shows this many lanes; the others scroll

    def _fit_font(self) -> None:
        h = self.fontMetrics().height()
        self.AXIS_H = max(TimelineView.AXIS_H, h + 6)
        self.LANE_H = max(TimelineView.LANE_H, h + 10)
        self.LEGEND_H = self.LEGEND_LINE_H = max(TimelineView.LEGEND_H, h + 4)
        self._fit_lanes()
        self._fit_legend()

    def min_lane_h(self) -> int:
        """A lane is never shorter than its label's line (labels of shorter lanes overlapped)."""
        return self.fontMetrics().height() + 2

    def _fit_lanes(self) -> None:
        """The minimum height holds `MIN_LANES_SHOWN` lanes at `min_lane_h`; more lanes than fit scroll (the
        scroll bar at the right, or the wheel over the labels). Lanes had no lower bound: eight lanes in the
        minimum height overlapped their labels."""
        n = max(1, self.model.rowCount()) if hasattr(self, "model") else 1
        self.setMinimumHeight(self.AXIS_H + self.LEGEND_LINE_H + 8
                              + min(n, self.MIN_LANES_SHOWN) * self.min_lane_h())
        self.updateGeometry()
        self._update_lanes_bar()

    def _update_lanes_bar(self) -> None:
        bar = self.__dict__.get("lanes_bar")
        if bar is None:
            return
        n = self.model.rowCount()
        room = self.height() - self.AXIS_H - self.LEGEND_H
        need = n * self.min_lane_h()
        over = need > max(10, room)
        if over:
            bar.setRange(0, need - max(10, room))
            bar.setPageStep(max(1, room))
            bar.setSingleStep(self.min_lane_h())
            bar.setGeometry(self.width() - bar.sizeHint().width(), self.AXIS_H,
                            bar.sizeHint().width(), max(10, room))
        else:
            bar.setValue(0)
        if over != bar.isVisible():
            bar.setVisible(over)
            self._bins = {}

    def lanes_offset(self) -> int:
        """How far the lanes are scrolled (0 when they all fit)."""
        bar = self.__dict__.get("lanes_bar")
        return bar.value() if bar is not None and not bar.isHidden() else 0

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._fit_legend()
        self._update_lanes_bar()

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == QEvent.FontChange:
            self._fit_font()
            self._bins = {}
            self.update()

    def __init__(self, model: TimelineModel, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        self.setMouseTracking(True)
        self._bins: dict[int, _LaneBins] = {}
        self.lanes_bar = QScrollBar(Qt.Vertical, self)   # lanes that do not fit at their minimum height
        self.lanes_bar.hide()
        self.lanes_bar.valueChanged.connect(lambda _v: self.update())
        self._fit_font()
        self._span_ms = 1000.0       # the visible span
        self._start_ms = 0.0         # the visible start
        self._user_zoom = False
        self._drag_x: float | None = None
        self._drag_start = 0.0
        model.modelReset.connect(self._reset)   # repaints: the owner calls update() (at most ~10 Hz), and a
        model.dataChanged.connect(lambda *_a: self.update())   # lane's status or selection change

    def sizeHint(self):
        from PySide6.QtCore import QSize
        return QSize(800, self.AXIS_H + self.LEGEND_H + 8 + self.LANE_H * max(1, self.model.rowCount()))

    def _reset(self) -> None:
        self._bins = {}
        self._user_zoom = False
        self._start_ms = 0.0
        self._span_ms = 1000.0
        self._fit_lanes()
        self.update()

    # -- geometry ----------------------------------------------------------------------------------------
    def _plot_rect(self) -> QRectF:
        bar = self.__dict__.get("lanes_bar")
        right = 8 + (bar.width() if bar is not None and not bar.isHidden() else 0)
        return QRectF(self.LABEL_W, self.AXIS_H, max(10, self.width() - self.LABEL_W - right),
                      max(10, self.height() - self.AXIS_H - self.LEGEND_H))

    def _lane_h(self) -> float:
        n = max(1, self.model.rowCount())
        return max(self.min_lane_h(), min(self.LANE_H * 1.6, self._plot_rect().height() / n))

    def x_of(self, ms: float) -> float:
        r = self._plot_rect()
        return r.left() + (ms - self._start_ms) / self._span_ms * r.width()

    def ms_of(self, x: float) -> float:
        r = self._plot_rect()
        return self._start_ms + (x - r.left()) / r.width() * self._span_ms

    def _max_ms(self) -> float:
        m = 0.0
        for c in self.model.controllers():
            v = c.view
            last = v.item_ns[-1] if v.item_ns else None
            for t in (last, v.last_chunk_ns()):
                ms = v.ms(t)
                if ms is not None and ms > m:
                    m = ms
            if c.status not in FINAL_STATUSES or c.run.metrics.t_total_ns is not None:
                ms = v.ms(v.now_ns())
                if ms is not None and ms > m:
                    m = ms
        return m

    def _autofit(self) -> None:
        if self._user_zoom:
            return
        need = self._max_ms() * 1.05
        span = 250.0
        while span < need:
            span *= 2
        self._start_ms = 0.0
        self._span_ms = span

    def fit(self) -> None:
        self._user_zoom = False
        self._autofit()
        self.update()

    # -- painting ----------------------------------------------------------------------------------------
    def _lane_bins(self, row: int, controller, width: float, height: int) -> _LaneBins:
        # (vectorised: under a firehose each lane gains 20,000 items a second, and binning them one by one in
        # Python was a quarter of the window's work with eight lanes)
        import numpy as np

        lb = self._bins.get(row)
        if lb is None:
            lb = self._bins[row] = _LaneBins()
        view = controller.view
        key = (self._start_ms, self._span_ms, width, height)
        # arrival ms list (independent of the scale); slices are copied out of the view's arrays, which keep
        # growing (an array with a live buffer export cannot)
        n = view.items_seen
        have = len(lb.ms)
        if have < n:
            ns = np.array(memoryview(view.item_ns)[have:n], dtype=np.float64)
            lb.ms.frombytes(((ns - view.t0_ns) / 1e6).tobytes())
        if lb.key != key:
            lb.key = key
            lb.upto = 0
            lb.bins = np.full(int(width) + 1, -1, dtype=np.int8)
            lb.changed = []
            lb.image = QImage(int(width) + 1, max(1, height), QImage.Format_ARGB32_Premultiplied)
            lb.image.fill(0)
        n = min(n, len(view.item_kinds))
        if lb.upto < n:
            scale = width / self._span_ms
            ms = np.array(memoryview(lb.ms)[lb.upto:n])
            kinds = np.array(memoryview(view.item_kinds)[lb.upto:n], dtype=np.int8)
            x = ((ms - self._start_ms) * scale).astype(np.int64)    # (truncated, as int() does)
            inside = (x >= 0) & (x <= width)
            if inside.any():
                bins = lb.bins.copy()
                np.maximum.at(bins, x[inside], kinds[inside])
                lb.changed.extend(np.nonzero(bins != lb.bins)[0].tolist())
                lb.bins = bins
            lb.upto = n
        if lb.changed:
            painter = QPainter(lb.image)
            h = lb.image.height()
            for x in set(lb.changed):
                painter.fillRect(x, 0, 1, h, KIND_COLORS[int(lb.bins[x])])
            painter.end()
            lb.changed = []
        return lb

    @staticmethod
    def _legend_items() -> list[tuple[str, str, QColor | None]]:
        """(what its swatch is, label, colour) of each legend entry, in order."""
        items = [("kind", KIND_NAMES[k], KIND_COLORS[k]) for k in
                 (KIND_TEXT, KIND_THINKING, KIND_TOOL, KIND_USAGE, KIND_KEEPALIVE, KIND_ERROR, KIND_OTHER)]
        items += [("finding", "finding", WARNING_COLOR), ("selected", "selected", SELECTED_COLOR)]
        return items + [("marker", label, color) for label, color in MARKERS]

    def legend_widths(self) -> list[int]:
        """Each legend entry's width, its swatch and the gap after it included."""
        fm = self.fontMetrics()
        out = []
        for kind, label, _c in self._legend_items():
            w = fm.horizontalAdvance(label) + (22 if kind in ("marker", "selected") else 24)
            out.append(w + (10 if kind == "selected" else 0))   # (a wider gap before the markers)
        return out

    def _legend_layout(self, width: int) -> list[tuple[float, int]]:
        """(x, line) of each legend entry at this width: one line right of the lane labels when it fits there,
        else one line from the left edge, else wrapped over as many lines as it takes."""
        widths = self.legend_widths()
        right = width - 4
        start = self.LABEL_W if self.LABEL_W + sum(widths) <= right else 4
        out, x, line = [], float(start), 0
        for w in widths:
            if x + w - 8 > right and x > start:      # (the last gap need not fit)
                x, line = float(start), line + 1
            out.append((x, line))
            x += w
        return out

    def legend_lines(self, width: int | None = None) -> int:
        layout = self._legend_layout(self.width() if width is None else width)
        return min(MAX_LEGEND_LINES, 1 + max(line for _x, line in layout))

    def _fit_legend(self) -> None:
        """The legend's height: as many lines as it takes at the current width (at most `MAX_LEGEND_LINES`),
        taken from the lanes' room; the minimum height stays the one-line legend's (a narrow first layout, before
        the window's, must not make the timeline taller for good)."""
        h = max(TimelineView.LEGEND_H, self.fontMetrics().height() + 4)
        self.LEGEND_LINE_H = h
        legend = h * self.legend_lines()
        if legend != self.LEGEND_H:
            self.LEGEND_H = legend
            self._bins = {}
            self._update_lanes_bar()
            self.update()

    def paintEvent(self, _e) -> None:
        self._autofit()
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.base())
        r = self._plot_rect()
        fg = pal.text().color()
        dim = QColor(fg)
        dim.setAlpha(90)          # the grid and lane lines
        faint = dim_text_color(pal)   # the status words and notes: dimmed but readable (alpha 90 was 2.5:1)
        # axis: grid lines, then their labels
        step = self._tick_step()
        t = (self._start_ms // step) * step
        fm = p.fontMetrics()
        # the grid as 1 px rectangles: QPainter.drawLines with a translucent pen took 2-3 ms a paint
        grid, labels = [], []
        while t <= self._start_ms + self._span_ms:
            x = self.x_of(t)
            if x >= r.left():
                grid.append(QRectF(x, r.top() - 4, 1, r.bottom() - r.top() + 4))
                label = f"{t / 1000:g} s" if step >= 100 else f"{t:g} ms"
                if x + 2 + fm.horizontalAdvance(label) <= self.width():
                    labels.append((x, label))
            t += step
        lane_h = self._lane_h()
        n = self.model.rowCount()
        top = r.top() - self.lanes_offset()       # (lanes that do not fit scroll: `lanes_bar`)
        for line in grid:
            p.fillRect(line, dim)
        p.setPen(fg)
        for x, label in labels:
            p.drawText(QPointF(x + 2, r.top() - 6), label)
        p.save()
        p.setClipRect(QRectF(0, r.top(), self.width(), r.height()))
        for i in range(n):
            p.fillRect(QRectF(r.left(), top + (i + 1) * lane_h, r.width(), 1), dim)
        for row, c in enumerate(self.model.controllers()):
            y = top + row * lane_h
            if y + lane_h < r.top() or y > r.bottom():
                continue
            mid = y + lane_h / 2
            p.setPen(fg)
            status = self.model.status_word(c)
            status_w = fm.horizontalAdvance(status) + 6
            name = fm.elidedText(c.name, Qt.ElideMiddle, self.LABEL_W - 8 - status_w)
            p.drawText(QRectF(4, y, self.LABEL_W - 8, lane_h), Qt.AlignVCenter | Qt.AlignLeft, name)
            p.setPen(faint)
            p.drawText(QRectF(4, y, self.LABEL_W - 8, lane_h), Qt.AlignVCenter | Qt.AlignRight, status)
            note = timing_note(c.run)
            if c.run.timing != TIMING_NONE:    # (frames with no time: not drawn at a time they did not come)
                lb = self._lane_bins(row, c, r.width(), max(1, int(lane_h) - 8))
                p.drawImage(QPointF(r.left(), y + 4), lb.image)
            if note is not None:
                p.setPen(faint)
                p.drawText(QRectF(r.left() + 6, y, r.width() - 12, lane_h), Qt.AlignVCenter | Qt.AlignLeft,
                           fm.elidedText(note, Qt.ElideRight, int(r.width() - 12)))
            self._paint_selected(p, c, r, y, lane_h)
            self._paint_warnings(p, c, r, y, lane_h)
            for label, ms in milestones(c).items():
                if ms is None:
                    continue
                x = self.x_of(ms)
                if x < r.left() or x > r.right():
                    continue
                color = fg if label == "sent" else dict(MARKERS)[label]
                if label == "end" and c.status in ("error", "stalled"):
                    color = KIND_COLORS[KIND_ERROR]
                p.setPen(Qt.NoPen)
                p.setBrush(color)
                p.drawPolygon(QPolygonF([QPointF(x - 4, y + 1), QPointF(x + 4, y + 1), QPointF(x, y + 6)]))
                p.fillRect(QRectF(x - 0.5, y + 1, 1, mid - y - 1), color)
        p.restore()
        # legend: on one line right of the labels where it fits, else from the left edge, else on two lines
        # (`_legend_layout`; at 1024 px it was cut after "first con…")
        fm_h = self.LEGEND_LINE_H
        for (kind, label, color), (x, line) in zip(self._legend_items(), self._legend_layout(self.width())):
            ly = self.height() - self.LEGEND_H + 2 + line * fm_h
            mid = ly + (fm_h - 2) / 2              # the legend's swatches and text share this centre line
            base = mid + (fm.ascent() - fm.descent()) / 2
            if kind == "kind":
                p.fillRect(QRectF(x, mid - 5, 10, 10), color)
            elif kind == "finding":
                p.setPen(QPen(QColor("#78350f"), 1))
                p.setBrush(WARNING_COLOR)
                p.drawPolygon(QPolygonF([QPointF(x, mid + 4), QPointF(x + 10, mid + 4), QPointF(x + 5, mid - 5)]))
            elif kind == "selected":
                p.fillRect(QRectF(x + 3, mid - 5, 3, 10), SELECTED_COLOR)
            else:
                p.setPen(Qt.NoPen)
                p.setBrush(fg if label == "sent" else color)
                p.drawPolygon(QPolygonF([QPointF(x, mid - 4), QPointF(x + 8, mid - 4), QPointF(x + 4, mid + 3)]))
            p.setPen(fg)
            p.drawText(QPointF(x + (12 if kind in ("marker", "selected") else 14), base), label)
        p.end()

    def _frame_xs(self, c, frames, r: QRectF) -> list[float]:
        """The x of each of these frames' ticks within the plot (one per pixel column), in order."""
        view = c.view
        rows, item_ns, t0 = view.frame_row, view.item_ns, view.t0_ns
        xs: dict[int, float] = {}
        for f in frames:
            if 0 <= f < len(rows) and rows[f] < len(item_ns):
                x = self.x_of((item_ns[rows[f]] - t0) / 1e6)
                if r.left() <= x <= r.right():
                    xs.setdefault(int(x), x)
        return list(xs.values())

    def selected_xs(self, row: int) -> list[float]:
        """Where lane `row`'s selected frames are highlighted (x in the widget; empty when none is in view)."""
        c = self.model.controller(row)
        return self._frame_xs(c, c.frames.selected_frames[:MAX_HIGHLIGHTS], self._plot_rect())

    def warning_xs(self, row: int) -> list[float]:
        """Where lane `row`'s warning marks are drawn (frames a finding concerns)."""
        c = self.model.controller(row)
        return self._frame_xs(c, c.view.warning_frames, self._plot_rect())

    def _paint_selected(self, p: QPainter, c, r: QRectF, y: float, lane_h: float) -> None:
        xs = self._frame_xs(c, c.frames.selected_frames[:MAX_HIGHLIGHTS], r)
        if not xs:
            return
        band = QColor(SELECTED_COLOR)
        band.setAlpha(60)
        for x in xs:   # a soft band behind, a solid bar through the tick, so one frame stands out among many
            p.fillRect(QRectF(x - 3, y + 1, 7, lane_h - 2), band)
            p.fillRect(QRectF(x - 1, y + 2, 3, lane_h - 4), SELECTED_COLOR)

    def _paint_warnings(self, p: QPainter, c, r: QRectF, y: float, lane_h: float) -> None:
        xs = self._frame_xs(c, c.view.warning_frames, r)
        if not xs:
            return
        p.setPen(QPen(QColor("#78350f"), 1))
        p.setBrush(WARNING_COLOR)
        bottom = y + lane_h - 2
        for x in xs:   # a warning triangle at the lane's foot, clear of the milestone marks at its top
            p.drawPolygon(QPolygonF([QPointF(x - 5, bottom), QPointF(x + 5, bottom), QPointF(x, bottom - 8)]))

    def _tick_step(self) -> float:
        target = self._span_ms / 8
        for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000,
                  300000, 600000):
            if s >= target:
                return float(s)
        return 600000.0

    # -- interaction -------------------------------------------------------------------------------------
    def item_at(self, x: float, y: float):
        """(controller, item row) of the tick nearest the point, within 4 px; None when none."""
        r = self._plot_rect()
        if x < r.left() or y < r.top():
            return None
        if y > r.bottom():
            return None
        row = int((y - r.top() + self.lanes_offset()) // self._lane_h())
        if row >= self.model.rowCount():
            return None
        c = self.model.controller(row)
        lb = self._bins.get(row)
        if lb is None or not lb.ms:
            return None
        ms = self.ms_of(x)
        tol = 4 * self._span_ms / r.width()
        i = bisect_left(lb.ms, ms - tol)
        best = None
        while i < len(lb.ms) and lb.ms[i] <= ms + tol:
            d = abs(lb.ms[i] - ms)
            if best is None or d < best[0] or (d == best[0] and c.view.item_kind(i) > c.view.item_kind(best[1])):
                best = (d, i)
            i += 1
        return None if best is None else (c, best[1])

    def describe(self, c, row: int) -> str:
        item = c.run.decoder.items[row]
        ms = c.view.ms(c.view.item_ns[row])
        kind = KIND_NAMES[c.view.item_kind(row)]
        when = f"{ms:.1f} ms" if c.run.timing == TIMING_RECORDED else "time not recorded"
        if hasattr(item, "event"):
            head = f"{c.name} · frame {item.n} · {item.event} · {when} · {kind}"
            if item.n in c.view.warning_frames:
                codes = sorted({d.code for d in c.run.decoder.reply.diagnostics if d.frame == item.n})
                head += " · ⚠ " + ", ".join(codes)
            return head + "\n" + _preview(item.data, 200)
        return f"{c.name} · comment line · {when}\n: {_preview(item.text, 200)}"

    def mouseMoveEvent(self, e) -> None:
        pos = e.position()
        if self._drag_x is not None:
            r = self._plot_rect()
            dx = pos.x() - self._drag_x
            self._start_ms = self._drag_start - dx / r.width() * self._span_ms
            self._user_zoom = True
            self.update()
            return
        hit = self.item_at(pos.x(), pos.y())
        if hit is None:
            QToolTip.hideText()
            return
        QToolTip.showText(e.globalPosition().toPoint(), plain_tooltip(self.describe(*hit)), self)

    def mousePressEvent(self, e) -> None:
        if e.button() == Qt.LeftButton:
            pos = e.position()
            hit = self.item_at(pos.x(), pos.y())
            if hit is not None:
                c, row = hit
                item = c.run.decoder.items[row]
                self.frameClicked.emit(c.name, item.n if hasattr(item, "event") else -1)
                return
            self._drag_x = pos.x()
            self._drag_start = self._start_ms

    def mouseReleaseEvent(self, _e) -> None:
        self._drag_x = None

    def mouseDoubleClickEvent(self, _e) -> None:
        self.fit()

    def wheelEvent(self, e) -> None:
        delta = e.angleDelta().y()
        if not delta:
            return
        if e.position().x() < self.LABEL_W and not self.lanes_bar.isHidden():   # over the labels: scroll lanes
            self.lanes_bar.setValue(self.lanes_bar.value() - delta // 120 * self.lanes_bar.singleStep())
            return
        anchor = self.ms_of(e.position().x())
        factor = 0.8 if delta > 0 else 1.25
        self.zoom(factor, anchor)

    def zoom(self, factor: float, anchor_ms: float | None = None) -> None:
        """Zoom by `factor` (< 1 zooms in) around `anchor_ms` (default: the middle)."""
        if anchor_ms is None:
            anchor_ms = self._start_ms + self._span_ms / 2
        new_span = min(max(self._span_ms * factor, 0.5), 3_600_000.0)
        self._start_ms = anchor_ms - (anchor_ms - self._start_ms) * new_span / self._span_ms
        self._span_ms = new_span
        self._user_zoom = True
        self.update()

    def keyPressEvent(self, e) -> None:
        if e.key() in (Qt.Key_Plus, Qt.Key_Equal):
            self.zoom(0.8)
        elif e.key() == Qt.Key_Minus:
            self.zoom(1.25)
        elif e.key() == Qt.Key_0:
            self.fit()
        else:
            super().keyPressEvent(e)
