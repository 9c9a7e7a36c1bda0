"""The Compare view: the current run's figures side by side, a row per pane, and what differs between two answers.

A dock at the bottom of the window (View > Compare view, Ctrl+K) with two tabs:
- **Compare**: `CompareModel`, a thin Qt model over `core.live.compare_table` (the same table the `.md` export
  and `bench` print): sortable by its headers, the best value of each judged column in bold and green (with a
  tooltip saying why), estimates in italics (tokens/s while streaming), Copy as TSV, and the methods under it.
- **Diff**: `gui.diff_view.DiffView`, two answers word by word.

Sampling: the dock keeps one `core.live.metrics.MetricsTracker` per pane's run and takes a snapshot of them all
on a 100 ms timer (at most about 10 times a second, never per frame), only while a run streams and the dock is
shown; a tracker reads only the events that arrived since its last snapshot. The dock follows the window's
`runsStarted` (new panes: new trackers) and `allFinished` (a last snapshot, the timer stops).
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QPushButton, QTabWidget, QVBoxLayout, QWidget

from core.live.cost import warm_up
from core.live.compare_table import CompareTable, compare_table
from core.live.metrics import METHODS, MetricsTracker, RunMetrics
from core.live.recorder import FINAL_STATUSES

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.theme import set_footnote, theme_name
from gui.widgets import ElidedLabel, plain_label, table

SAMPLE_MS = 100                     # snapshots at most 10 times a second
BestRole = Qt.UserRole + 20         # bool: the best value of its column (among the runs that completed)
EstimateRole = Qt.UserRole + 21     # bool: an estimate (tokens/s while streaming or without final usage)
SortRole = Qt.UserRole + 22         # the cell's sort key (None: unknown)
BEST_COLORS = {"light": QColor("#15803d"), "dark": QColor("#4ade80")}
ESTIMATE_TIP = ("estimated while streaming: the characters received / 4, until the reply's final usage gives the "
                "exact output tokens (a reply that never reports its usage keeps the estimate)")
METHODS_NOTE = ("TTFT: request sent (connection set-up included) to the first content byte. Output tok/s: the "
                "final usage's output tokens over the time from the first to the last content chunk (– when it all "
                "came within 0.1 s); est. = an estimate (characters / 4) while streaming. Best in bold green, among "
                "completed runs. Hover a header for its method, click it to sort.")
METHODS_TEXT = "\n".join(METHODS) + ("\nBest values in bold green, among the runs that completed (a column is "
                                     "judged when at least two runs have the figure); est. marks an estimate.")
EMPTY_HINT = "Send a prompt: each pane's figures line up here, updated while they stream."
_TEXT_COLUMNS = ("status", "finish", "finish_raw", "cost")   # left-aligned; the figures are right-aligned
_INVALID = QModelIndex()


class CompareModel(QAbstractTableModel):
    """One row per run, the provider then every `core.live.compare_table.COLUMNS` column.

    `set_metrics(rows)` replaces the figures (a snapshot of each pane); the order is the panes' until a header
    is clicked (`sort`), then that column's (the core's `sorted_by`: unknown values last). Display text, sort
    keys, best and estimate marks are the core table's own."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._metrics: list[RunMetrics] = []     # in the panes' order
        self._order: list[int] = []              # shown row -> index into _metrics
        self._table: CompareTable = compare_table([])
        self._best: list[frozenset[int]] = []    # per core column: the shown rows holding its best value
        self._sort: tuple[int, bool] = (-1, False)   # (model column, descending); -1: the panes' order
        self._best_color = BEST_COLORS["light"]

    # -- the data ---------------------------------------------------------------------------------------------
    @property
    def table(self) -> CompareTable:
        """The core table as shown (rows in the shown order): what Copy as TSV copies."""
        return self._table

    def metrics(self, row: int) -> RunMetrics:
        return self._table.rows[row]

    def set_metrics(self, metrics: Sequence[RunMetrics]) -> None:
        metrics = list(metrics)
        self._best_color = BEST_COLORS.get(theme_name(), BEST_COLORS["light"])
        if len(metrics) != len(self._metrics):
            self.beginResetModel()
            self._metrics = metrics
            self._order = self._sorted_order()
            self._rebuild()
            self.endResetModel()
            return
        self._metrics = metrics
        order = self._sorted_order()
        if order != self._order:
            self._move_rows(order)
        else:
            self._rebuild()
        if self._metrics:
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))

    def _rebuild(self) -> None:
        self._table = CompareTable(tuple(self._metrics[i] for i in self._order))
        self._best = [self._table.best_rows(c) for c in self._table.columns]

    def _sorted_order(self) -> list[int]:
        column, descending = self._sort
        rows = self._metrics
        if column < 0 or not rows:
            return list(range(len(rows)))
        if column == 0:   # the provider's name (not a core column)
            return sorted(range(len(rows)), key=lambda i: rows[i].provider.casefold(), reverse=descending)
        key = compare_table([]).columns[column - 1].key
        by_id = {id(m): i for i, m in enumerate(rows)}
        return [by_id[id(m)] for m in compare_table(rows).sorted_by(key, descending).rows]

    def _move_rows(self, order: list[int]) -> None:
        """Rows reordered (a sort, or live values that changed the order): persistent indexes follow their run."""
        self.layoutAboutToBeChanged.emit()
        old = self._order
        where = {orig: row for row, orig in enumerate(order)}
        persistent = self.persistentIndexList()
        moved = [self.index(where[old[i.row()]], i.column()) for i in persistent]
        self._order = order
        self._rebuild()
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    # -- Qt model ---------------------------------------------------------------------------------------------
    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else 1 + len(self._table.columns)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation != Qt.Horizontal or not 0 <= section < self.columnCount():
            return None
        if section == 0:
            return {Qt.DisplayRole: "Provider", Qt.ToolTipRole: "the provider of the pane"}.get(role)
        c = self._table.columns[section - 1]
        if role == Qt.DisplayRole:
            return c.title
        if role == Qt.ToolTipRole:
            judged = {"low": " Lower is better.", "high": " Higher is better."}.get(c.better or "", "")
            return (c.help + judged).strip() or c.title
        return None

    def sort(self, column: int, order=Qt.AscendingOrder) -> None:
        self._sort = (column, order == Qt.DescendingOrder)
        new = self._sorted_order()
        if new != self._order:
            self._move_rows(new)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < len(self._order)):
            return None
        t = self._table
        m = t.rows[row]
        if col == 0:
            if role in (Qt.DisplayRole, SortRole):
                return m.provider
            if role == Qt.ToolTipRole:
                return m.provider + ("" if m.error_message is None else f"\n{m.error_type}: {m.error_message}")
            if role in (BestRole, EstimateRole):
                return False
            return None
        c = t.columns[col - 1]
        if role == Qt.DisplayRole:
            return t.text(row, c)
        if role == SortRole:
            return t.value(row, c)
        if role == BestRole:
            return row in self._best[col - 1]
        if role == EstimateRole:
            return t.is_estimate(row, c)
        if role == Qt.FontRole:
            best, est = row in self._best[col - 1], t.is_estimate(row, c)
            if best or est:
                f = QFont()
                f.setBold(best)
                f.setItalic(est)
                return f
            return None
        if role == Qt.ForegroundRole:
            return self._best_color if row in self._best[col - 1] else None
        if role == Qt.TextAlignmentRole:
            return int((Qt.AlignLeft if c.key in _TEXT_COLUMNS else Qt.AlignRight) | Qt.AlignVCenter)
        if role == Qt.ToolTipRole:
            tips = [f"{c.title}: {t.text(row, c)}"]
            if row in self._best[col - 1]:
                tips.append(f"the best {c.title} of the runs that completed "
                            f"({'lowest' if c.better == 'low' else 'highest'})")
            if t.is_estimate(row, c):
                tips.append(ESTIMATE_TIP)
            if c.key == "cost" and m.cost is not None and m.cost.note:
                tips.append(m.cost.note)
            elif c.key == "status" and m.error_message:
                tips.append(f"{m.error_type}: {m.error_message}")
            elif c.help:
                tips.append(c.help)
            return "\n".join(tips)
        return None


class CompareView(QWidget):
    """The Compare tab: the table, Copy as TSV, and the methods."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = CompareModel(self)
        self._streaming = 0
        self.table = table(self.model, self)
        self.table.setObjectName("compareTable")
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSortIndicator(-1, Qt.AscendingOrder)   # the panes' order until a header is clicked
        header.setSortIndicatorClearable(True)
        self.table.setSortingEnabled(True)
        self.copy_button = QPushButton("Copy as TSV", self)
        self.copy_button.setToolTip("copy the table (a header line, then a line per provider, tab-separated) to "
                                    "the clipboard, for a spreadsheet")
        self.copy_button.clicked.connect(self.copy_tsv)
        self.info = plain_label(EMPTY_HINT, self)
        # one line under the table, the whole note and the methods in its tooltip: wrapped, it took three lines
        # of a short window's dock and left the table one row
        self.methods = ElidedLabel(METHODS_NOTE, self, description=METHODS_TEXT)
        self.methods.setObjectName("compareMethods")
        set_footnote(self.methods)       # dimmed, readable (drawn disabled it was 1.6:1)
        self.methods.setMinimumWidth(self.methods.fontMetrics().horizontalAdvance("x" * 40))

        # how many providers, the note (one line) and Copy sit beside the dock's tabs (`bar`, its corner widget),
        # so the height is the table's: at 1024x700 a bar above it and the note wrapped under it left one row
        # of four
        self.bar = QWidget(self)
        bar = QHBoxLayout(self.bar)
        bar.setContentsMargins(8, 0, 2, 0)
        bar.addWidget(self.info)
        bar.addWidget(self.methods, 1)
        bar.addWidget(self.copy_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.table, 1)

    def set_metrics(self, metrics: Sequence[RunMetrics]) -> None:
        streaming = sum(1 for m in metrics if m.status not in FINAL_STATUSES)
        fit = (self.model.rowCount() != len(metrics)) or (self._streaming and not streaming)
        self._streaming = streaming
        self.model.set_metrics(metrics)
        if fit and metrics:   # new panes, or the final figures (wider than "–"): columns fit their text once
            self.table.resizeColumnsToContents()
        n = len(metrics)
        if not n:
            self.info.setText(EMPTY_HINT)
            return
        self.info.setText(f"{n} provider{'s' if n != 1 else ''}" + (f", {streaming} streaming (updated 10 times a "
                                                                    "second)" if streaming else ""))

    def rows_height(self, rows: int) -> int:
        """The table's height showing its header, `rows` rows and the scroll bar under them."""
        t = self.table
        row = t.rowHeight(0) if self.model.rowCount() else t.verticalHeader().defaultSectionSize()
        return (t.horizontalHeader().sizeHint().height() + rows * row
                + t.horizontalScrollBar().sizeHint().height() + 2 * t.frameWidth())

    def copy_tsv(self) -> str:
        text = self.model.table.tsv()
        QGuiApplication.clipboard().setText(text)
        return text


DOCK_SHARE = 0.3        # the Compare dock's first height, of the window's (the panes and the timeline keep the rest)
MAX_FIT_ROWS = 8        # the dock's first height shows this many of the table's rows at the most
MIN_FIT_ROWS = 3        # ... and at least this many, even where the panes then fall short of their readable height


class CompareDock(QDockWidget):
    """View > Compare view: the Compare and Diff tabs over the window's current runs.

    Reads `window.current_runs()` (the newest turn of each pane); listens to the window's `runsStarted` and
    `allFinished`.

    Signals:
        sampled(): a snapshot of every run was taken and shown (at most ~10 a second).
    """

    sampled = Signal()

    def __init__(self, window) -> None:
        super().__init__("Compare", window)
        from gui.diff_view import DiffView

        self.window_ = window
        self.sized = False                    # given its first height (`fit_default`; or restored by the window)
        self.setObjectName("compareDock")     # saveState / restoreState
        self.setAllowedAreas(Qt.BottomDockWidgetArea | Qt.TopDockWidgetArea)
        self.compare = CompareView(self)
        self.diff = DiffView(self)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.compare, "Compare")
        self.tabs.addTab(self.diff, "Diff")
        self.tabs.setTabToolTip(0, "the figures of every pane side by side")
        self.tabs.setTabToolTip(1, "what differs between two answers, word by word")
        self.tabs.setCornerWidget(self.compare.bar, Qt.TopRightCorner)
        self.tabs.currentChanged.connect(lambda i: self.compare.bar.setVisible(i == 0))
        self.setWidget(self.tabs)
        self._trackers: list[MetricsTracker] = []
        self._timer = QTimer(self)
        self._timer.setInterval(SAMPLE_MS)
        self._timer.timeout.connect(self._on_timer)
        window.addDockWidget(Qt.BottomDockWidgetArea, self)
        self.hide()
        window.runsStarted.connect(self._on_runs_started)
        window.allFinished.connect(self._on_all_finished)
        self.visibilityChanged.connect(self._on_visibility)
        self.tabs.currentChanged.connect(lambda _i: self._on_visibility(self.isVisible()))

    # -- the window's action ------------------------------------------------------------------------------
    def bind(self, action) -> None:
        """Make `action` (View > Compare view) a check box that follows the dock."""
        action.setCheckable(True)
        action.setChecked(self.isVisible())
        self.visibilityChanged.connect(lambda _v: action.setChecked(not self.isHidden()))

    def toggle(self, *_args) -> None:
        self.setVisible(self.isHidden())
        if self.isVisible():
            self.raise_()
            if not self.sized:
                self.sized = True
                self.fit_default()

    def fit_default(self) -> None:
        """The dock's first height: `DOCK_SHARE` of the window, less what the panes area needs to stay readable
        (`PanesArea.readable_height`), never under the height that shows every row of its table (then the
        timeline gives the panes what it can). Left to Qt it took what its table asked for and squeezed the panes
        down to their headers at 1280x800; at its minimum it showed one row of four at 1024x700."""
        window = self.window_
        least = self.minimumSizeHint().height()
        height = max(least, round(window.height() * DOCK_SHARE))
        window.resizeDocks([self], [height], Qt.Vertical)
        area = getattr(window, "panes_area", None)
        if area is None or window.layout() is None:
            return
        window.layout().activate()          # (the sizes now, to see what the panes are left)
        # every row of the table shown (up to MAX_FIT_ROWS) where the panes keep their readable height, and
        # never fewer than MIN_FIT_ROWS (at 1024x700 eight rows would leave the panes a sliver: the table scrolls)
        rows = min(MAX_FIT_ROWS, max(1, self.compare.model.rowCount(), len(getattr(window, "panes", []))))
        beside = height - self.compare.table.height()     # what of the dock is not the table
        floor = max(least, beside + self.compare.rows_height(min(rows, MIN_FIT_ROWS)))
        least = max(least, beside + self.compare.rows_height(rows))
        if least > height:
            height = least
            window.resizeDocks([self], [height], Qt.Vertical)
            window.layout().activate()
        least = floor
        short = area.readable_height() - area.height()
        if short > 0 and height > least:     # the dock gives back down to its minimum, ...
            window.resizeDocks([self], [max(least, height - short)], Qt.Vertical)
            window.layout().activate()
            short = area.readable_height() - area.height()
        split, timeline = getattr(window, "main_split", None), getattr(window, "timeline", None)
        if short > 0 and split is not None and timeline is not None:    # ... then the timeline (its lanes scroll)
            sizes = split.sizes()
            p, t = split.indexOf(area), split.indexOf(timeline)
            if p >= 0 and t >= 0:
                give = max(0, min(short, sizes[t] - timeline.minimumHeight()))
                sizes[t] -= give
                sizes[p] += give
                split.setSizes(sizes)

    # -- sampling ---------------------------------------------------------------------------------------------
    def set_runs(self, runs, sample: bool = True) -> None:
        """Track these runs; `sample`: show their figures now (else at the next tick of the 10 Hz timer)."""
        self._trackers = [MetricsTracker(r) for r in runs]
        # the diff picks among every exchange, each turn of a conversation too (NAME#K, as `diff --a NAME#K`)
        every = self.window_.runs()
        self.diff.set_runs(every if len(every) > len(runs) else runs)
        if sample and not self.isHidden():   # (hidden, it samples when shown: a send builds no table nobody sees)
            self.sample()

    def sample(self) -> None:
        """Snapshot every run now and show it."""
        self.compare.set_metrics([t.snapshot() for t in self._trackers])
        self.sampled.emit()

    @property
    def streaming(self) -> bool:
        return any(t.run.status not in FINAL_STATUSES for t in self._trackers)

    def _on_runs_started(self, _n: int = 0) -> None:
        # the first figures come with the timer's first tick: the send that started the runs has just built
        # their panes, and filling and fitting the table too made that one stall of the window longer
        self.set_runs(self.window_.current_runs(), sample=False)
        self._timer.start()

    def _on_all_finished(self) -> None:
        self._timer.stop()
        if self.isHidden():   # (sampled when shown: at once here it read every run's events in one go, 0.25 s)
            return
        self.sample()
        if not self.isHidden() and self.tabs.currentWidget() is self.diff:   # else: when it is shown
            self.diff.refresh()

    def _on_timer(self) -> None:
        if self.isHidden():
            return
        self.sample()
        if self.tabs.currentWidget() is self.diff:
            self.diff.refresh_if_due()
        if not self.streaming:
            self._timer.stop()

    def _on_visibility(self, visible: bool) -> None:
        if not visible:
            return
        _warm_prices()
        runs = self.window_.current_runs()
        if len(runs) != len(self._trackers) or any(t.run is not r for t, r in zip(self._trackers, runs)):
            self.set_runs(runs)
        else:
            self.sample()
        if self.tabs.currentWidget() is self.diff:
            self.diff.refresh()


def _warm_prices() -> None:
    """Load the price database when the view opens, not at the first run's end mid-stream (about 0.2 s)."""
    warm_up()
