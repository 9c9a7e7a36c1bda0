"""Plots of repeated runs (pyqtgraph): TTFT and output tokens/s per provider, and the shape of every stream.

    plots = StatsPlots(parent)
    plots.reset(["demo-openai-chat", ...])        # the providers of a repeat, in the loop's order
    plots.update_plots(results, curves)           # `core.live.repeat.RepeatResult`s; {run number: TokenCurve}

- **TTFT** and **output tokens/s**: strip plots, a row per provider (one dot per completed run, spread across
  the row so equal values stay visible, a bar at the median); tokens/s on a log scale (a reply that arrives in
  one burst has a rate a hundred times the others'); a hollow dot is an estimated rate (no final usage). One
  dots item per provider (`ttft.items[name]`, `rate.items[name]`).
- **Tokens over time**: a line per run (`core.live.token_curve`: estimated tokens received against ms from
  sending), in its provider's colour, dashed for a run that did not complete: steady streams are straight, bursty
  ones stepped, a stall a flat stretch.

Why pyqtgraph (see the README): a small pure-Python package on top of the Qt binding the app already has,
fast `setData` on arrays, pan and zoom for free. Provider names are never given to pyqtgraph's labels or
legend (they render HTML): names are axis ticks (painted as plain text) and the legend is plain Qt labels.
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QVBoxLayout, QWidget

from core.live.metrics import percentile

from gui.widgets import plain_label

PROVIDER_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f")
SPREAD = 0.5       # how wide a provider's strip is (1 is the distance between providers)


def provider_color(i: int) -> QColor:
    return QColor(PROVIDER_COLORS[i % len(PROVIDER_COLORS)])


def jitter(k: int) -> float:
    """Where the k-th run's dot sits across its strip: deterministic, evenly spread (golden-ratio steps)."""
    return ((k * 0.6180339887) % 1.0 - 0.5) * SPREAD


def _themed(plot: pg.PlotWidget) -> None:
    pal = plot.palette()
    bg, fg = pal.color(QPalette.Base), pal.color(QPalette.Text)
    plot.setBackground(bg)
    for name in ("left", "bottom"):
        ax = plot.getAxis(name)
        ax.setPen(pg.mkPen(fg))
        ax.setTextPen(pg.mkPen(fg))


class LogValueAxis(pg.AxisItem):
    """A log axis labelled in plain numbers (50, 100, 200, 500, 1000), only at 1, 2 and 5 times a power of ten,
    so the labels of a short range do not run into each other; a range that holds fewer than two of those
    (200-260 tok/s) has every few of its ticks labelled instead (it had one number, or none)."""

    MAX_LABELS = 5

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        # a range inside one decade that holds fewer than two 1-9 x 10^n (206-250: none) got one tick or none:
        # then ticks at plain 1, 2 or 5 x 10^k steps of the value itself
        levels = super().logTickValues(minVal, maxVal, size, stdTicks)
        inside = {v for _spacing, values in levels for v in values if minVal <= v <= maxVal}
        if len(inside) >= 2 or not maxVal > minVal:
            return levels
        lo, hi = 10 ** minVal, 10 ** maxVal
        raw = (hi - lo) / 4
        base = 10 ** math.floor(math.log10(raw))
        step = next(m * base for m in (1, 2, 5, 10) if m * base >= raw)
        first = math.ceil(lo / step) * step
        values = [math.log10(first + i * step) for i in range(int((hi - first) // step) + 1)]
        return [(None, values)]

    def logTickStrings(self, values, scale, spacing):
        xs = [10 ** float(v) * scale for v in values]
        out = []
        for x in xs:
            mantissa = x / 10 ** int(f"{x:e}".split("e")[1])
            out.append(f"{x:g}" if round(mantissa, 6) in (1.0, 2.0, 5.0) else "")
        if xs and sum(1 for s in out if s) < 2:
            step = max(1, -(-len(xs) // self.MAX_LABELS))      # (ceiling: at most MAX_LABELS of them)
            out = [f"{x:.3g}" if i % step == 0 else "" for i, x in enumerate(xs)]
        return out


class StripPlot(pg.PlotWidget):
    """A row of dots per provider (y: the provider, its name a plain-text axis tick; x: the figure), a bar at
    each median. `log`: a logarithmic value axis (a reply that arrives in one burst has a huge rate)."""

    def __init__(self, title: str, unit: str, parent=None, log: bool = False) -> None:
        super().__init__(parent, axisItems={"bottom": LogValueAxis("bottom")} if log else None)
        self._title, self._unit, self._log = title, unit, log
        self.items: dict[str, pg.PlotDataItem] = {}      # provider -> its dots
        self.medians: dict[str, pg.PlotDataItem] = {}
        self.setMenuEnabled(False)
        self.showGrid(x=True, y=False, alpha=0.25)
        self.getPlotItem().setMouseEnabled(x=True, y=False)
        self.getPlotItem().invertY(True)                 # the first provider on top, as in the table
        self.setLogMode(x=log, y=False)
        self.setMinimumHeight(120)
        self.retheme()

    def retheme(self) -> None:
        _themed(self)
        fg = self.palette().color(QPalette.Text)
        self.setTitle(self._title, color=fg.name())       # our own fixed words only (pyqtgraph renders HTML)
        self.setLabel("bottom", self._unit, color=fg.name())

    def reset(self, providers: list[str]) -> None:
        for item in list(self.items.values()) + list(self.medians.values()):
            self.removeItem(item)
        self.items, self.medians = {}, {}
        for i, name in enumerate(providers):
            c = provider_color(i)
            dots = pg.PlotDataItem(pen=None, symbol="o", symbolSize=8, symbolPen=pg.mkPen(c, width=1.5),
                                   symbolBrush=pg.mkBrush(c))
            median = pg.PlotDataItem(pen=pg.mkPen(c, width=3))
            self.addItem(dots)
            self.addItem(median)
            self.items[name], self.medians[name] = dots, median
        self.getAxis("left").setTicks([[(i, name) for i, name in enumerate(providers)]])   # painted as plain text
        self.setYRange(-0.6, max(len(providers), 1) - 0.4, padding=0)

    def points(self, provider: str) -> int:
        x, _y = self.items[provider].getData()
        return 0 if x is None else len(x)

    def set_points(self, providers: list[str], points: dict[str, list[tuple[int, float, bool]]]) -> None:
        """points: per provider, (repeat, value, exact) of each completed run."""
        for i, name in enumerate(providers):
            dots = self.items.get(name)
            if dots is None:
                continue
            pts = [p for p in points.get(name, []) if p[1] > 0 or not self._log]   # log 0 is nowhere
            c = provider_color(i)
            if not pts:
                dots.setData([], [])
                self.medians[name].setData([], [])
                continue
            dots.setData(x=[v for _k, v, _e in pts], y=[i + jitter(k) for k, _v, _e in pts],
                         symbolBrush=[pg.mkBrush(c) if exact else pg.mkBrush(0, 0, 0, 0) for _k, _v, exact in pts])
            mid = percentile(sorted(v for _k, v, _e in pts), 0.5)
            self.medians[name].setData([mid, mid], [i - SPREAD * 0.7, i + SPREAD * 0.7])


class CurvePlot(pg.PlotWidget):
    """Estimated tokens received over time, a line per run."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.lines: dict[int, pg.PlotDataItem] = {}      # run number -> its line
        self.line_provider: dict[int, str] = {}
        self.setMenuEnabled(False)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setMinimumHeight(180)
        self.retheme()

    def retheme(self) -> None:
        _themed(self)
        fg = self.palette().color(QPalette.Text).name()
        self.setTitle("Tokens over time (a line per run)", color=fg)
        self.setLabel("left", "output tokens (est.: characters / 4)", color=fg)
        self.setLabel("bottom", "ms from sending", color=fg)

    def reset(self) -> None:
        for line in self.lines.values():
            self.removeItem(line)
        self.lines, self.line_provider = {}, {}

    def add(self, number: int, provider_index: int, provider: str, curve, completed: bool) -> None:
        c = provider_color(provider_index)
        c.setAlpha(170)
        pen = pg.mkPen(c, width=1.5, style=Qt.SolidLine if completed else Qt.DashLine)
        line = pg.PlotDataItem(list(curve.t_ms), list(curve.tokens), pen=pen)
        self.addItem(line)
        self.lines[number] = line
        self.line_provider[number] = provider

    def lines_of(self, provider: str) -> int:
        return sum(1 for p in self.line_provider.values() if p == provider)


class Legend(QWidget):
    """Provider colours as plain Qt labels (never pyqtgraph's HTML legend)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)

    def set_providers(self, providers: list[str]) -> None:
        while self._row.count():
            w = self._row.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for i, name in enumerate(providers):
            swatch = QFrame(self)
            swatch.setFixedSize(12, 12)
            swatch.setStyleSheet(f"background-color: {provider_color(i).name()}; border-radius: 2px;")
            self._row.addWidget(swatch)
            self._row.addWidget(plain_label(name, self))
            self._row.addSpacing(10)
        self._row.addStretch(1)


class StatsPlots(QWidget):
    """The three plots and their legend; see the module docstring."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True)
        self.providers: list[str] = []
        self.legend = Legend(self)
        self.ttft = StripPlot("TTFT per run", "ms", self)
        self.rate = StripPlot("Output tokens/s per run", "tokens/s (log scale; hollow: estimated)", self, log=True)
        self.curves = CurvePlot(self)
        strips = QVBoxLayout()
        strips.addWidget(self.ttft, 1)
        strips.addWidget(self.rate, 1)
        row = QHBoxLayout()
        row.addLayout(strips, 1)
        row.addWidget(self.curves, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.legend)
        self.note = plain_label("", self)     # what the plots lack, when they lack it (every run failed)
        self.note.setObjectName("plotsNote")
        self.note.setWordWrap(True)
        self.note.hide()
        lay.addWidget(self.note)
        lay.addLayout(row, 1)

    def retheme(self) -> None:
        for p in (self.ttft, self.rate, self.curves):
            p.setPalette(self.palette())
            p.retheme()

    def reset(self, providers: list[str]) -> None:
        self.providers = list(providers)
        self.legend.set_providers(self.providers)
        self.ttft.reset(self.providers)
        self.rate.reset(self.providers)
        self.curves.reset()

    def update_plots(self, results, curves: dict) -> None:
        """Dots for every completed run; a line for each run not drawn yet."""
        ttft: dict[str, list] = {}
        rate: dict[str, list] = {}
        index = {name: i for i, name in enumerate(self.providers)}
        for r in results:
            m = r.metrics
            if r.number not in self.curves.lines and r.number in curves and r.provider in index:
                self.curves.add(r.number, index[r.provider], r.provider, curves[r.number], m.ok)
            if not m.ok:
                continue
            if m.ttft_ns is not None:
                ttft.setdefault(r.provider, []).append((r.repeat, m.ttft_ns / 1e6, True))
            if m.tokens_per_s is not None:
                rate.setdefault(r.provider, []).append((r.repeat, m.tokens_per_s, m.tokens_per_s_exact))
        self.ttft.set_points(self.providers, ttft)
        self.rate.set_points(self.providers, rate)
        failed = sum(1 for r in results if not r.metrics.ok)
        note = ""
        if failed and failed == len(results):
            note = (f"No run has completed ({failed} failed): no time to first token or rate to plot. The table "
                    "and an export say why each one failed.")
        elif results and not ttft and not rate:
            note = "No completed run reported a time to first token or a rate to plot."
        if note != self.note.text():
            self.note.setText(note)
            self.note.setVisible(bool(note))
