"""Run > Repeat…: the prompt k times per checked provider, with the statistics of the runs and their plots.

A window of its own (non-modal: the panes stay usable). Start takes the window's prompt, its checked providers
(the demo ones on the chosen scenario) and its timeouts, and runs `core.live.repeat.RepeatLoop` as a task on the
qasync loop: k runs per provider (1-100), in rounds, at most C at a time. The progress bar says "run 7/20" as
each run ends; Cancel stops it and keeps every finished run (and the ones in flight, as cancelled). Each run is a
capture of its own (the loop keeps it); Export all runs writes them to one native `.jsonl` capture or to a
`.csv` with one row per run (`core.live.runs_csv`), as `bench --export / --csv` do.

What is shown: the statistics table (`core.live.stats`: TTFT, total, tokens/s and gap as p50 / p95 / min / max,
errors by type, cost) and the plots (`gui.stats_plots`). Both are brought up to date at most 10 times a second,
whatever the rate runs end at. No run is kept in a Qt model: the table holds text cells of the statistics, the
plots their points, and each run's token curve is taken from the run while it is handed over (`on_progress`).

Signals:
    progressed(int, int): a run ended (runs done, runs planned).
    repeatFinished(): the loop ended (every run done, or cancelled).
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (QDialog, QFileDialog, QHBoxLayout, QProgressBar, QPushButton, QSpinBox,
                               QSplitter, QVBoxLayout, QWidget)

from core.live.capture import CaptureAppender
from core.live.metrics import METHODS
from core.live.repeat import MAX_CONCURRENCY, MAX_REPEAT, RepeatLoop
from core.live.runs_csv import RunsCsv
from core.live.stats import STATS_HEADER, provider_stats, stats_table
from core.live.summary import plural
from core.live.token_curve import token_curve

from gui import plaintips
from gui.theme import fitted_size, set_footnote
from gui.widgets import plain_label, table

UPDATE_MS = 100      # the table and the plots at most 10 times a second
EXPORT_FILTERS = ("Native capture, every run (*.jsonl)", "CSV, one row per run (*.csv)")
METHODS_NOTE = ("Figures over the runs that completed (failed runs are counted by error type). TTFT: request sent "
                "to the first content byte. Tokens/s: output tokens over the first-to-last content time (est.: "
                "characters / 4). p50 / p95 interpolate between ranks. Hover here for every method.")
METHODS_TEXT = ("Latency and rate figures are over the runs that completed; a failed run is counted under its error "
                "type. Percentiles interpolate linearly between the closest ranks; the gap figures pool every "
                "inter-chunk gap of those runs.\n" + "\n".join(METHODS))
_INVALID = QModelIndex()


def _header_tips(header: tuple[str, ...]) -> list[str]:
    """ "p95" under "TTFT p50" is the TTFT's p95: the full name of each statistics column, for its tooltip."""
    tips, group = [], ""
    for h in header:
        if " p50" in h:
            group = h.rsplit(" ", 1)[0]
        tips.append(f"{group} {h}" if h in ("p95", "min", "max") and group else h)
    return tips


class StatsModel(QAbstractTableModel):
    """The statistics table's text cells (`core.live.stats.stats_table`): a row per provider."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.header: tuple[str, ...] = STATS_HEADER
        self.rows: list[tuple[str, ...]] = []
        self._tips = _header_tips(STATS_HEADER)

    def set_stats(self, stats) -> None:
        header, rows = stats_table(stats)
        self.beginResetModel()
        self.header, self.rows = header, rows
        self._tips = _header_tips(header)
        self.endResetModel()

    def cell(self, row: int, title: str) -> str:
        return self.rows[row][self.header.index(title)]

    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self.header)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation != Qt.Horizontal or not 0 <= section < len(self.header):
            return None
        if role == Qt.DisplayRole:
            return self.header[section]
        if role == Qt.ToolTipRole:
            return self._tips[section]
        return None

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        if role in (Qt.DisplayRole, Qt.ToolTipRole):
            return self.rows[index.row()][index.column()]
        if role == Qt.TextAlignmentRole:
            left = index.column() == 0 or index.column() >= len(self.header) - 2
            return int((Qt.AlignLeft if left else Qt.AlignRight) | Qt.AlignVCenter)
        return None


DIALOG_SIZE = (1200, 780)   # the dialog's first size, within the screen's available geometry


class RepeatDialog(QDialog):
    """Run > Repeat…; see the module docstring."""

    progressed = Signal(int, int)
    repeatFinished = Signal()

    def __init__(self, window) -> None:
        super().__init__(window)
        from gui.stats_plots import StatsPlots   # pyqtgraph (and numpy) load with this view only

        self.window_ = window
        self.setWindowTitle("Repeated runs")
        self.setObjectName("repeatDialog")
        self.setModal(False)
        self.loop: RepeatLoop | None = None
        self.task: asyncio.Task | None = None
        self.curves: dict = {}          # run number -> TokenCurve (what the line plot needs of a run)
        self.error: str | None = None
        self._dirty = False

        self.repeat = QSpinBox(self)
        self.repeat.setRange(1, MAX_REPEAT)
        self.repeat.setValue(10)
        self.repeat.setSuffix(" runs per provider")
        self.repeat.setToolTip(f"how many times the prompt is sent to each provider (1 to {MAX_REPEAT})")
        self.concurrency = QSpinBox(self)
        self.concurrency.setRange(1, MAX_CONCURRENCY)
        self.concurrency.setValue(1)
        self.concurrency.setPrefix("at most ")
        self.concurrency.setSuffix(" at a time")
        self.concurrency.setToolTip("runs in flight at once (1: one after another); runs go in rounds, every "
                                    "provider's first, then every one's second, ...")
        self.start_button = QPushButton("Start", self)
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("stop: the finished runs are kept, the ones in flight end cancelled")
        self.export_button = QPushButton("Export all runs…", self)
        self.export_button.setToolTip("every run to one native .jsonl capture, or a .csv with one row per run")
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button.clicked.connect(self.export_dialog)
        self.providers_label = plain_label("", self)
        self.providers_label.setWordWrap(True)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("no runs yet")
        self.progress.setTextVisible(True)
        self.status = plain_label("", self)
        self.status.setWordWrap(True)
        self.stats = StatsModel(self)
        self.stats_table = table(self.stats, self)
        self.stats_table.setObjectName("statsTable")
        self.stats_table.horizontalHeader().setStretchLastSection(True)
        self.plots = StatsPlots(self)
        self.methods = plain_label(METHODS_NOTE, self)
        self.methods.setToolTip(METHODS_TEXT)
        self.methods.setWordWrap(True)
        set_footnote(self.methods)      # dimmed, readable (drawn disabled it was 1.6:1)

        bar = QHBoxLayout()
        bar.addWidget(self.repeat)
        bar.addWidget(self.concurrency)
        bar.addWidget(self.start_button)
        bar.addWidget(self.cancel_button)
        bar.addStretch(1)
        bar.addWidget(self.export_button)
        split = QSplitter(Qt.Vertical, self)
        top = QWidget(split)
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.stats_table)
        split.addWidget(top)
        split.addWidget(self.plots)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.providers_label)
        lay.addWidget(self.progress)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)
        lay.addWidget(self.methods)

        self._timer = QTimer(self)
        self._timer.setInterval(UPDATE_MS)
        self._timer.timeout.connect(self._on_timer)
        window.provider_model.selectionChanged.connect(self._show_providers)
        window.scenario.currentTextChanged.connect(self._show_providers)
        self._show_providers()
        self._set_running(False)
        self.resize(*fitted_size(DIALOG_SIZE, window.screen()))   # (1200x780 on a 1024x700 screen went off it)

    # -- state ------------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def results(self) -> list:
        return [] if self.loop is None else list(self.loop.results)

    def _set_running(self, on: bool) -> None:
        self.start_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        self.repeat.setEnabled(not on)
        self.concurrency.setEnabled(not on)
        self.export_button.setEnabled(not on and bool(self.results))

    def _show_providers(self, *_args) -> None:
        providers = self.window_.selected_providers()
        if not providers:
            self.providers_label.setText("Providers: none checked (check some in the window)")
            return
        names = ", ".join(p.name for p in providers)
        demo = [p for p in providers if p.is_demo]
        scenario = f" (demo providers on the {demo[0].model!r} scenario)" if demo else ""
        self.providers_label.setText(f"Providers (the window's checked ones): {names}{scenario}")

    # -- running ----------------------------------------------------------------------------------------------
    def start(self) -> bool:
        """Start k runs per checked provider on the running loop; False (and why, shown) when nothing started."""
        if self.running:
            return False
        w = self.window_
        try:
            spec = w.prompt.spec()
        except ValueError as exc:
            self.status.setText(f"Not started: {exc}")
            return False
        if not spec.user.strip():
            self.status.setText("Not started: type a prompt in the window first")
            return False
        providers = w.selected_providers()
        if not providers:
            self.status.setText("Not started: check at least one provider in the window")
            return False
        self.loop = RepeatLoop(providers, spec, repeat=self.repeat.value(), concurrency=self.concurrency.value(),
                               connect_timeout=w.connect_timeout, read_timeout=w.read_timeout,
                               on_progress=self._on_progress)
        self.curves = {}
        self.error = None
        total = self.loop.total
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self.progress.setFormat(f"run 0/{total}")
        self.status.setText(f"Running {plural(total, 'run')}: {self.repeat.value()} per provider, at most "
                            f"{self.concurrency.value()} at a time…")
        self.plots.reset([p.name for p in providers])
        self.stats.set_stats([])
        self.task = asyncio.ensure_future(self.loop.run())
        self.task.add_done_callback(self._task_done)
        self._set_running(True)
        self._timer.start()
        return True

    def cancel(self) -> None:
        if self.loop is not None and self.running:
            self.loop.cancel()
            self.status.setText("Cancelling: the runs in flight end cancelled and are kept…")

    def _on_progress(self, progress, run) -> None:
        # `run` is valid during this call only: take what the line plot needs, keep nothing else of it
        self.curves[progress.result.number] = token_curve(run)
        self.progress.setValue(progress.done)
        self.progress.setFormat(progress.text())
        self._dirty = True
        self.progressed.emit(progress.done, progress.total)

    def _task_done(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            self.error = f"{type(exc).__name__}: {exc}"
        self._timer.stop()
        self._update_view()
        done, total = len(self.results), self.loop.total if self.loop else 0
        if self.error:
            self.status.setText(f"Stopped after {done} of {total} runs: {self.error}")
        elif self.loop is not None and self.loop.cancelled:
            self.status.setText(f"Cancelled after {done} of {total} runs; the finished runs are kept (Export all "
                                "runs writes them)")
        else:
            failed = sum(1 for r in self.results if not r.metrics.ok)
            self.status.setText(f"Finished: {plural(done, 'run')}" + (f", {failed} failed" if failed else ""))
        self._set_running(False)
        self.repeatFinished.emit()

    def _on_timer(self) -> None:
        if self._dirty:
            self._update_view()

    def _update_view(self) -> None:
        self._dirty = False
        results = self.results
        order = {p.name: i for i, p in enumerate(self.loop.providers)} if self.loop else {}
        self.stats.set_stats(sorted(provider_stats(results), key=lambda st: order.get(st.provider, len(order))))
        self.stats_table.resizeColumnsToContents()
        self.plots.update_plots(results, self.curves)

    # -- export -----------------------------------------------------------------------------------------------
    def export_runs(self, path) -> Path:
        """Every run so far to `path`: `.jsonl` (one native capture) or `.csv` (a row per run)."""
        results = self.results
        if not results:
            raise ValueError("no runs to export yet")
        path = Path(path)
        if path.suffix.lower() == ".csv":
            with RunsCsv(path) as out:
                for r in results:
                    out.add(r)
            return path
        if path.suffix.lower() != ".jsonl":
            raise ValueError(f"{path.name}: export all runs as .jsonl (a native capture) or .csv")
        out = CaptureAppender(path, len(results))
        try:
            for r in results:
                out.add(r.capture.to_run())
        finally:
            out.close()
        return path

    def export_dialog(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export all runs",
                                                   str(self.window_._dialog_dir() / "streamscope-runs.jsonl"),
                                                   ";;".join(EXPORT_FILTERS))
        if not path:
            return
        if Path(path).suffix.lower() not in (".jsonl", ".csv"):
            path += ".csv" if chosen == EXPORT_FILTERS[1] else ".jsonl"
        try:
            out = self.export_runs(path)
        except (OSError, ValueError) as exc:
            plaintips.warn(self, "Export all runs", f"Could not export to {path}:\n{exc}")
            return
        self.status.setText(f"Exported {plural(len(self.results), 'run')} to {out}")
