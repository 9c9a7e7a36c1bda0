"""The Tap window's list of exchanges: a thin table model over the tap's `core.live.exchange.Exchange` objects,
newest first (time, status, path, duration, tokens, format, method), with a check box per row to pin it.

The model only reads what the core recorded (`exchange.run`: status, HTTP status, metrics, reply usage). Rows are
added by `add()` as the tap starts an exchange; `changed()` (an exchange ended) and `refresh_live()` (the
window's tick, for the durations of the exchanges still in flight) repaint their cells. Pinning is the
window's decision (at most two): a click on the check box emits `pinToggled`; the model asks `is_pinned(ex)`
what to show, and the window calls `pin_changed(ex)` once it has decided.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlsplit

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Signal

from core.live.summary import MISSING, duration, error_line

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)

ExchangeRole = Qt.UserRole + 1    # the Exchange behind a row

# (the status comes right after the time and the path is elided: the list is about 330 px wide beside the panes
# at 1024-1280 px, and how each exchange ended is what it is scanned for; the method, nearly always POST, last)
PIN, TIME, STATUS, PATH, DURATION, TOKENS, FORMAT, METHOD = range(8)
HEADERS = ("Pin", "Time", "Status", "Path", "Duration", "Tokens", "Format", "Method")
HEADER_TIPS = (
    "Pinned exchanges stay shown (at most two: compare them side by side)",
    "When the request came in (local time)",
    "How the exchange ended, and the upstream's HTTP status",
    "The path the client asked for (the tooltip adds the query, keys redacted)",
    "Total time (so far, while in flight)",
    "Input / output tokens as the final usage reports them (~ an estimate while streaming)",
    "The wire format, from the path or else from the frames (– when neither tells one)",
    "HTTP method",
)
_INVALID = QModelIndex()


def time_text(started_at: float | None) -> str:
    return MISSING if started_at is None else time.strftime("%H:%M:%S", time.localtime(started_at))


def format_text(ex) -> str:
    return ex.format if ex.format_source != "none" else MISSING


def status_text(run) -> str:
    return run.status + (f" · {run.http_status}" if run.http_status is not None else "")


def duration_text(run) -> str:
    if run.status == "pending":
        return MISSING
    return duration(run.metrics.t_total_ns if run.finished else run.clock())


def tokens_text(run) -> str:
    u = run.reply.usage
    if u is not None and (u.input_tokens is not None or u.output_tokens is not None):
        def n(v):
            return MISSING if v is None else f"{v:,}"
        return f"{n(u.input_tokens)} / {n(u.output_tokens)}"
    est = run.metrics.output_tokens_estimated
    return f"{MISSING} / ~{est:,}" if est else MISSING


_CELLS: dict[int, Callable] = {
    TIME: lambda ex: time_text(ex.run.started_at),
    METHOD: lambda ex: ex.method,
    PATH: lambda ex: urlsplit(ex.path).path,      # the query is in the tooltip
    FORMAT: format_text,
    STATUS: lambda ex: status_text(ex.run),
    DURATION: lambda ex: duration_text(ex.run),
    TOKENS: lambda ex: tokens_text(ex.run),
}


def cell_texts(ex) -> list[tuple[int, str]]:
    """(column, text) of each text cell of `ex`'s row, as the table shows them (the pin column has none)."""
    return [(col, cell(ex)) for col, cell in _CELLS.items()]


class ExchangeListModel(QAbstractTableModel):
    """The exchanges, newest first.

    Signals:
        pinToggled(object, bool): the user clicked a row's pin box (the exchange, whether it asks to pin).
    """

    pinToggled = Signal(object, bool)

    def __init__(self, is_pinned: Callable[[object], bool] = lambda _ex: False, parent=None) -> None:
        super().__init__(parent)
        self._items: list = []            # oldest first; row r is _items[-1 - r]
        self._index: dict[int, int] = {}  # id(exchange) -> position in _items
        self.is_pinned = is_pinned

    # -- rows --------------------------------------------------------------------------------------------
    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def exchange(self, row: int):
        return self._items[-1 - row] if 0 <= row < len(self._items) else None

    def exchanges(self) -> list:
        """Every exchange, newest first."""
        return self._items[::-1]

    def row_of(self, ex) -> int:
        i = self._index.get(id(ex))
        return -1 if i is None else len(self._items) - 1 - i

    def add(self, ex) -> None:
        """A new exchange: it becomes the first row."""
        if id(ex) in self._index:
            return
        self.beginInsertRows(_INVALID, 0, 0)
        self._index[id(ex)] = len(self._items)
        self._items.append(ex)
        self.endInsertRows()

    def changed(self, ex, first: int = PIN, last: int = METHOD) -> None:
        row = self.row_of(ex)
        if row >= 0:
            self.dataChanged.emit(self.index(row, first), self.index(row, last))

    def pin_changed(self, ex) -> None:
        self.changed(ex, PIN, PIN)

    def refresh_live(self) -> None:
        """Repaint the status, duration and tokens of the exchanges still in flight."""
        n = len(self._items)
        for i in range(n - 1, -1, -1):
            if not self._items[i].finished:
                row = n - 1 - i
                self.dataChanged.emit(self.index(row, STATUS), self.index(row, TOKENS))   # (the path's cell between: one range)

    # -- cells -------------------------------------------------------------------------------------------
    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation != Qt.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.DisplayRole:
            return HEADERS[section]
        if role == Qt.ToolTipRole:
            return HEADER_TIPS[section]
        return None

    def flags(self, index):
        f = Qt.ItemIsEnabled | Qt.ItemIsSelectable
        if index.column() == PIN:
            f |= Qt.ItemIsUserCheckable
        return f

    def data(self, index, role=Qt.DisplayRole):
        ex = self.exchange(index.row()) if index.isValid() else None
        if ex is None:
            return None
        col = index.column()
        if role == ExchangeRole:
            return ex
        if col == PIN:
            if role == Qt.CheckStateRole:
                return Qt.Checked if self.is_pinned(ex) else Qt.Unchecked
            if role == Qt.ToolTipRole:
                return "Pinned: stays shown" if self.is_pinned(ex) else "Pin to keep it shown (at most two)"
            return None
        if role == Qt.DisplayRole:
            return _CELLS[col](ex)
        if role == Qt.ToolTipRole:
            if col == STATUS and ex.run.error is not None:
                return error_line(ex.run.error)
            if col == PATH:
                return f"{ex.name}: {ex.method} {ex.path}"
            return None
        if role == Qt.TextAlignmentRole and col in (DURATION, TOKENS):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def setData(self, index, value, role=Qt.EditRole) -> bool:
        if not index.isValid() or index.column() != PIN or role != Qt.CheckStateRole:
            return False
        ex = self.exchange(index.row())
        on = Qt.CheckState(value) == Qt.Checked if not isinstance(value, bool) else value
        self.pinToggled.emit(ex, bool(on))
        return True
