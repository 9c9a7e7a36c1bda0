"""Qt item models over core data: frames, blocks, usage, diagnostics, providers.

Each model reads a pane's `RunView` (core objects, never re-parsed) and is brought up to date by `refresh()`,
which the pane calls at most once per repaint tick. Core lists only grow while a run is live, so refreshing
is a `beginInsertRows` for the new rows plus one `dataChanged` for the rows whose content moved on.
Everything is displayed as plain text.
"""
from __future__ import annotations

import json
from array import array

from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Signal
from PySide6.QtGui import QBrush, QColor

from core.live.recorder import TIMING_RECORDED
from core.wire.carries import KINDS, carries, frame_kinds
from core.wire.jsonfast import arguments_problem, json_text_problem
from core.wire.sse import SSEComment, SSEFrame

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.runview import RunView

ItemRole = Qt.UserRole + 1        # the core object behind a row (SSE item, Block, Diagnostic, ProviderConfig)
FrameRole = Qt.UserRole + 2       # the frame number a row concerns (-1: none)
KindRole = Qt.UserRole + 3        # frames: the timeline kind of the frame

_INVALID = QModelIndex()


def _preview(text: str, limit: int = 160) -> str:
    if len(text) > limit:
        text = text[:limit] + "…"
    return text.replace("\r", "\\r").replace("\n", "⏎")


class TableModel(QAbstractTableModel):
    """Shared plumbing: fixed headers, flat rows, no children."""

    HEADERS: tuple[str, ...] = ()

    def columnCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None

    def _grow(self, old: int, new: int) -> None:
        if new > old:
            self.beginInsertRows(_INVALID, old, new - 1)
            self._rows = new
            self.endInsertRows()


class RunTableModel(TableModel):
    """A table over one run's `RunView`, whose rows only grow (`_grow`) as the run does."""

    def __init__(self, view: RunView, parent=None) -> None:
        super().__init__(parent)
        self.view = view
        self._rows = 0

    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else self._rows


# -- Raw frames -------------------------------------------------------------------------------------------
KIND_BIT = {k: 1 << i for i, k in enumerate(KINDS)}   # a frame's filter kinds (core.wire.carries) as bits
_COMMENT_KINDS = KIND_BIT["keepalive"]                 # a comment line is a keepalive
_CACHED_ROWS = 4096                                     # carries texts kept (the rows on screen, and a few pages)


class FramesModel(RunTableModel):
    """Every SSE item the decoder kept (dispatched frames and comment lines), in stream order.

    Columns: what the frame carried (`core.wire.carries`, from the normalized events it produced: the column
    the table opens on), frame number (blank for a comment), arrival in ms since send, event name (`: comment`
    for comment lines), the network chunk(s) that carried it (`3→4`: split across chunks), raw size in bytes,
    a one-line data preview.

    Nothing is computed per frame as frames arrive: a row's carries text and filter kinds are worked out when
    first shown or filtered, and kept (they change only when an end-of-stream finding concerns that frame,
    `RunView.revised_frames`).
    """

    HEADERS = ("carries", "#", "ms", "event", "chunk", "bytes", "data")
    COL_CARRIES, COL_N, COL_MS, COL_EVENT, COL_CHUNK, COL_BYTES, COL_DATA = range(7)
    eventNamesChanged = Signal()
    """New event names appeared (for the pane's filter box)."""
    rowsRevised = Signal()
    """Rows already shown changed what they carried (an end-of-stream finding): a kind filter must look again."""
    selectedFramesChanged = Signal()
    """`selected_frames` changed (the Raw tab's selection; the timeline highlights them)."""

    def __init__(self, view: RunView, parent=None) -> None:
        super().__init__(view, parent)
        self._carries: dict[int, str] = {}
        self._kinds = array("h")     # row -> its kind bits (0: not worked out yet)
        self.selected_frames: tuple[int, ...] = ()

    def refresh(self) -> None:
        revised = self.view.revised_frames
        if revised:
            self._revise(revised)
        self._grow(self._rows, self.view.items_seen)
        if self.view.new_event_names:
            self.view.new_event_names = False
            self.eventNamesChanged.emit()

    def _revise(self, frames) -> None:
        rows = sorted({r for r in map(self.row_of_frame, set(frames)) if r >= 0})
        if not rows:
            return
        for r in rows:
            self._carries.pop(r, None)
            if r < len(self._kinds):
                self._kinds[r] = 0
        self.dataChanged.emit(self.index(rows[0], 0), self.index(rows[-1], len(self.HEADERS) - 1))
        self.rowsRevised.emit()

    def item(self, row: int):
        return self.view.run.decoder.items[row]

    def row_of_frame(self, n: int) -> int:
        rows = self.view.frame_row
        return rows[n] if 0 <= n < len(rows) and rows[n] < self._rows else -1

    def set_selected_frames(self, frames) -> None:
        """The frames selected in the Raw tab (in order; the timeline highlights them)."""
        frames = tuple(frames)
        if frames != self.selected_frames:
            self.selected_frames = frames
            self.selectedFramesChanged.emit()

    def carries_of(self, row: int) -> str:
        """What item `row` carried, in a few words (`core.wire.carries.carries`; a comment line: its text)."""
        text = self._carries.get(row)
        if text is None:
            item = self.view.run.decoder.items[row]
            if isinstance(item, SSEFrame):
                text = carries(self.view.frame_events_of(item.n))
            else:
                text = f"keepalive (comment {_preview(json.dumps(item.text.strip(), ensure_ascii=False), 30)})"
            if len(self._carries) >= _CACHED_ROWS:
                self._carries.clear()
            self._carries[row] = text
        return text

    def kinds_of(self, row: int) -> int:
        """Item `row`'s filter kinds as `KIND_BIT` bits (`core.wire.carries.frame_kinds`)."""
        kinds = self._kinds
        if row >= len(kinds):
            kinds.extend([0] * (max(self._rows, row + 1) - len(kinds)))
        bits = kinds[row]
        if not bits:
            item = self.view.run.decoder.items[row]
            if isinstance(item, SSEFrame):
                bits = 0
                for k in frame_kinds(self.view.frame_events_of(item.n)):
                    bits |= KIND_BIT[k]
            else:
                bits = _COMMENT_KINDS
            kinds[row] = bits
        return bits

    def chunk_text(self, row: int) -> str:
        span = self.view.chunk_range(row)
        if span is None:
            return ""
        first, last = span
        return str(first) if first == last else f"{first}→{last}"

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if row >= self._rows:
            return None
        item = self.view.run.decoder.items[row]
        is_frame = isinstance(item, SSEFrame)   # (SSEFrame or CompactSSEFrame)
        if role == Qt.DisplayRole:
            if col == 0:
                return self.carries_of(row)
            if col == 1:
                return str(item.n) if is_frame else ""
            if col == 2:   # (a recording that held no per-chunk time: a dash, not the 0 its chunks were put at)
                ms = self.view.ms(self.view.item_ns[row])
                return "" if ms is None else f"{ms:.1f}" if self.view.run.timing == TIMING_RECORDED else "—"
            if col == 3:
                return item.event if is_frame else ": comment"
            if col == 4:
                return self.chunk_text(row)
            if col == 5:
                return str(len(item.raw))
            if col == 6:
                return _preview(item.data if is_frame else item.text)
            return None
        if role == Qt.ToolTipRole:
            if col == 0:
                return self.carries_of(row)
            if col == 4:
                span = self.view.chunk_range(row)
                if span is not None and span[0] != span[1]:
                    return f"split across network chunks {span[0]} to {span[1]} (see the Bytes view)"
                return None if span is None else f"carried by network chunk {span[0]}"
            if col == 6:
                return _preview(item.data if is_frame else item.text, 600)
            return None
        if role == Qt.ForegroundRole:
            if not is_frame:
                return QBrush(QColor(128, 128, 128))
            if col == 4:
                span = self.view.chunk_range(row)
                if span is not None and span[0] != span[1]:
                    return QBrush(QColor(194, 65, 12))   # a split frame stands out
            return None
        if role == Qt.TextAlignmentRole and col in (1, 2, 4, 5):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == ItemRole:
            return item
        if role == FrameRole:
            return item.n if is_frame else -1
        if role == KindRole:
            return self.view.item_kind(row)
        return None


class FrameFilterProxy(QSortFilterProxyModel):
    """Filters the frames table by what the frames carried (`core.wire.carries.KINDS`: text, thinking, tool
    arguments, usage, keepalive, error, diagnostic, nothing; a comment line is a keepalive), by event name
    (exact; `: comment` for comment lines) and by text."""

    COMMENTS = ": comment"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._event = ""
        self._kind = 0      # KIND_BIT of the kind shown (0: every kind)
        self._text = ""

    def setSourceModel(self, model) -> None:
        old = self.sourceModel()
        if old is not None and hasattr(old, "rowsRevised"):
            old.rowsRevised.disconnect(self._revised)
        super().setSourceModel(model)
        if hasattr(model, "rowsRevised"):
            model.rowsRevised.connect(self._revised)

    def _revised(self) -> None:
        if self._kind:
            self._change_filter("_kind", self._kind)

    def set_event(self, name: str) -> None:
        self._change_filter("_event", name or "")

    def set_kind(self, kind: str) -> None:
        """Show only frames of this kind (one of `core.wire.carries.KINDS`; "" for every kind)."""
        self._change_filter("_kind", KIND_BIT[kind] if kind else 0)

    def set_text(self, text: str) -> None:
        self._change_filter("_text", (text or "").lower())

    def _change_filter(self, attr: str, value) -> None:
        if hasattr(self, "beginFilterChange"):      # Qt >= 6.10
            self.beginFilterChange()
            setattr(self, attr, value)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            setattr(self, attr, value)
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row, source_parent) -> bool:
        if not self._event and not self._text and not self._kind:
            return True
        model = self.sourceModel()
        item = model.item(source_row)
        is_frame = isinstance(item, SSEFrame)
        if self._event:
            if (item.event if is_frame else self.COMMENTS) != self._event:
                return False
        if self._kind and not model.kinds_of(source_row) & self._kind:
            return False
        if self._text:
            hay = (item.event + "\n" + item.data) if is_frame else item.text
            if self._text not in hay.lower():
                return False
        return True


def pretty_payload(item) -> str:
    """A frame's data pretty-printed when it is JSON (display only; the core already decoded it)."""
    if isinstance(item, SSEComment):
        return ": " + item.text
    data = item.data
    if json_text_problem(data) is not None:   # not JSON, or nested too deep for json to print
        return data
    return json.dumps(json.loads(data), indent=2, ensure_ascii=False)


# -- Blocks -----------------------------------------------------------------------------------------------
class BlocksModel(RunTableModel):
    """One row per content block of the reply, in order of first appearance.

    Columns: block index, choice, type, tool name, tool-call id, state (streaming / complete), size in
    characters, JSON validity of complete tool-call arguments, and the start of the content (the view elides
    it at the end).
    """

    HEADERS = ("#", "choice", "type", "name", "id", "state", "size", "JSON", "content")

    def __init__(self, view: RunView, parent=None) -> None:
        super().__init__(view, parent)
        self._keys: list[int] = []
        self._sig: list[tuple] = []
        self._valid: dict[int, bool | None] = {}

    def block(self, row: int):
        return self.view.run.decoder.reply.blocks[self._keys[row]]

    def row_of_index(self, index: int) -> int:
        try:
            return self._keys.index(index)
        except ValueError:
            return -1

    def refresh(self) -> list[int]:
        """Returns the rows whose content changed (new rows included)."""
        blocks = self.view.run.decoder.reply.blocks
        changed: list[int] = []
        first = None
        last = -1
        for row, key in enumerate(self._keys):
            b = blocks[key]
            sig = (b.size, b.complete, len(b.frames), b.name, b.id)
            if sig != self._sig[row]:
                self._sig[row] = sig
                self._valid.pop(key, None)
                changed.append(row)
                first = row if first is None else first
                last = row
        if len(blocks) > len(self._keys):
            known = set(self._keys)
            new = [k for k in blocks if k not in known]
            for k in new:
                b = blocks[k]
                self._keys.append(k)
                self._sig.append((b.size, b.complete, len(b.frames), b.name, b.id))
            old = self._rows
            self._grow(old, len(self._keys))
            changed.extend(range(old, self._rows))
        if first is not None:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.HEADERS) - 1))
        return changed

    def validity(self, row: int) -> bool | None:
        key = self._keys[row]
        if key not in self._valid:
            b = self.block(row)
            self._valid[key] = (arguments_problem(b.arguments) is None) if (b.kind == "tool_call" and b.complete) \
                else None
        return self._valid[key]

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= self._rows:
            return None
        row, col = index.row(), index.column()
        b = self.block(row)
        if role == Qt.DisplayRole:
            if col == 0:
                return str(b.index)
            if col == 1:
                return str(b.choice)
            if col == 2:
                kind = b.kind + (" (redacted)" if b.redacted else "")
                return kind + (f" [{b.provider_type}]" if b.provider_type else "")
            if col == 3:
                return b.name or ""
            if col == 4:
                return b.id or ""
            if col == 5:
                return "complete" if b.complete else "streaming"
            if col == 6:
                return str(b.size)
            if col == 7:
                v = self.validity(row)
                return "" if v is None else ("✓ valid" if v else "✗ invalid")
            if col == 8:
                return content_start(b)
            return None
        if role == Qt.ForegroundRole and col == 7:
            v = self.validity(row)
            if v is not None:
                return QBrush(QColor(30, 140, 60) if v else QColor(200, 40, 40))
        if role == Qt.TextAlignmentRole and col in (0, 1, 6):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == ItemRole:
            return b
        if role == FrameRole:
            return b.frames[0] if b.frames else -1
        return None


CONTENT_START_CHARS = 200   # the Blocks table shows this much of a block's content, from its start


def content_start(block, limit: int = CONTENT_START_CHARS) -> str:
    """The first `limit` characters of a block's content on one line (from its first parts only: a long block
    costs no join), with "…" when there is more."""
    taken, n = [], 0
    for part in block.parts:
        taken.append(part)
        n += len(part)
        if n > limit:
            break
    if not taken and block.redacted:
        return "(redacted thinking)"
    return _preview("".join(taken), limit)


def block_detail(block) -> str:
    """The full content of a block for the detail view: tool arguments pretty-printed once complete."""
    if block.kind == "tool_call":
        args = block.arguments or ""
        head = f"tool call {block.name or '?'}  id={block.id or '—'}\n"
        if block.complete:
            if arguments_problem(args) is None:
                body = json.dumps(json.loads(args or "{}"), indent=2, ensure_ascii=False)
                return head + "arguments (complete, valid JSON):\n" + body
            return head + "arguments (complete, INVALID JSON, shown as received):\n" + args
        return head + "arguments (streaming):\n" + args
    if block.redacted:
        return "(redacted thinking: the provider sent only encrypted data)"
    text = block.text
    if text is None:
        raw = block.raw
        return json.dumps(raw, indent=2, ensure_ascii=False, default=str) if raw is not None else ""
    if block.signature:
        text += f"\n\n[signature: {len(block.signature)} chars]"
    return text


# -- Usage ------------------------------------------------------------------------------------------------
USAGE_FIELDS = (("input_tokens", "input"), ("output_tokens", "output"), ("total_tokens", "total"),
                ("cache_read_tokens", "cache read"), ("cache_write_tokens", "cache write"),
                ("reasoning_tokens", "reasoning"))

REPORTING_TEXT = {
    "up-front": "up front (at the start of the stream)",
    "cumulative": "cumulative, repeated on every chunk",
    "final": "once, with the final event",
    "usage-chunk": "in a final usage-only chunk",
}


def reporting_text(reporting: str | None) -> str:
    if reporting is None:
        return ""
    return REPORTING_TEXT.get(reporting, reporting)


class UsageModel(RunTableModel):
    """The running usage: one row per canonical value, with the frame it came from and how it is reported.

    A value "comes from" the frame where it took its current value (a cumulative count repeated unchanged
    by later chunks still points at the frame that first reported it); `updates` counts the snapshots
    that carried the field.
    """

    HEADERS = ("value", "tokens", "from frame", "reported", "updates")

    def __init__(self, view: RunView, parent=None) -> None:
        super().__init__(view, parent)
        self._seen = 0
        self._state: list[list] = [[None, -1, None, 0] for _ in USAGE_FIELDS]  # value, frame, reporting, n
        self._rows = len(USAGE_FIELDS)   # one row per canonical value, from the start

    def refresh(self) -> bool:
        view = self.view
        total = len(view.usage_events)
        if total == self._seen:
            return False
        for k in range(self._seen, total):
            e = view.usage_update(k)
            for st, (attr, _label) in zip(self._state, USAGE_FIELDS):
                v = getattr(e.usage, attr)
                if v is None:
                    continue
                st[3] += 1
                if v != st[0]:
                    st[0], st[1], st[2] = v, e.frame, e.reporting
        self._seen = total
        self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, len(self.HEADERS) - 1))
        return True

    def value(self, attr: str):
        for st, (a, _l) in zip(self._state, USAGE_FIELDS):
            if a == attr:
                return st[0]
        raise KeyError(attr)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= self._rows:
            return None
        row, col = index.row(), index.column()
        value, frame, reporting, n = self._state[row]
        if role == Qt.DisplayRole:
            if col == 0:
                return USAGE_FIELDS[row][1]
            if col == 1:
                return "—" if value is None else str(value)
            if col == 2:
                return "" if value is None else str(frame)
            if col == 3:   # (the output row also says which of the core's rules read it: Usage.rule)
                rule = getattr(self.view.run.decoder.reply.usage, "rule", None) if row == 1 else None
                return (reporting_text(reporting) + (f"; {rule}" if rule else "")) if value is not None else ""
            if col == 4:
                return str(n)
        if role == FrameRole:
            return frame if value is not None else -1
        if role == Qt.TextAlignmentRole and col in (1, 2, 4):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None


class UsageHistoryModel(RunTableModel):
    """Every usage snapshot as it arrived: frame, how it was reported, and the canonical values."""

    HEADERS = ("frame", "reported") + tuple(label for _a, label in USAGE_FIELDS)

    def refresh(self) -> None:
        self._grow(self._rows, len(self.view.usage_events))

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= self._rows:
            return None
        e = self.view.usage_update(index.row())
        frame, usage, reporting = e.frame, e.usage, e.reporting
        col = index.column()
        if role == Qt.DisplayRole:
            if col == 0:
                return str(frame)
            if col == 1:
                return reporting or ""
            v = getattr(usage, USAGE_FIELDS[col - 2][0])
            return "" if v is None else str(v)
        if role == Qt.ToolTipRole:
            return json.dumps(usage.raw, ensure_ascii=False, default=str) if usage.raw is not None else None
        if role == FrameRole:
            return frame
        return None


# -- Diagnostics ------------------------------------------------------------------------------------------
class DiagnosticsModel(RunTableModel):
    """The core's findings (what a borrowed parser would trip on), each with the frame it concerns."""

    HEADERS = ("frame", "code", "message")

    def refresh(self) -> bool:
        n = len(self.view.run.decoder.reply.diagnostics)
        grew = n > self._rows
        self._grow(self._rows, n)
        return grew

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= self._rows:
            return None
        d = self.view.run.decoder.reply.diagnostics[index.row()]
        col = index.column()
        if role == Qt.DisplayRole:
            if col == 0:
                return "" if d.frame < 0 else str(d.frame)
            if col == 1:
                return d.code
            if col == 2:
                return d.message
        if role == Qt.ToolTipRole and col == 2:
            return d.message
        if role == ItemRole:
            return d
        if role == FrameRole:
            return d.frame
        return None


# -- Providers --------------------------------------------------------------------------------------------
class ProviderListModel(QAbstractListModel):
    """The configured providers, checkable: the checked ones get a pane when the prompt is sent."""

    selectionChanged = Signal()
    """The set of checked providers changed."""

    def __init__(self, providers: list, checked: set[str] | None = None, key_status=None, parent=None) -> None:
        super().__init__(parent)
        self._providers = list(providers)
        self._checked = set(checked if checked is not None else (p.name for p in self._providers))
        self._key_status = key_status or (lambda p: None)

    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self._providers)

    def providers(self) -> list:
        return list(self._providers)

    def set_providers(self, providers: list, checked: set[str] | None = None) -> None:
        self.beginResetModel()
        keep = self._checked if checked is None else set(checked)
        self._providers = list(providers)
        names = {p.name for p in self._providers}
        self._checked = keep & names
        self.endResetModel()
        self.selectionChanged.emit()

    def checked(self) -> list:
        return [p for p in self._providers if p.name in self._checked]

    def checked_names(self) -> list[str]:
        return [p.name for p in self.checked()]

    def set_checked(self, names) -> None:
        self._checked = set(names) & {p.name for p in self._providers}
        if self._providers:
            self.dataChanged.emit(self.index(0), self.index(len(self._providers) - 1), [Qt.CheckStateRole])
        self.selectionChanged.emit()

    def flags(self, index):
        if not index.isValid():
            return Qt.NoItemFlags
        return Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsUserCheckable

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= len(self._providers):
            return None
        p = self._providers[index.row()]
        if role == Qt.DisplayRole:
            status = self._key_status(p)
            return f"{p.name}" + (f"  ({status})" if status else "")
        if role == Qt.ToolTipRole:
            return f"{p.format} · {p.model}\n{p.base_url}\nkey: ${p.api_key_env}" if p.api_key_env else \
                f"{p.format} · {p.model}\n{p.base_url}"
        if role == Qt.CheckStateRole:
            return Qt.Checked if p.name in self._checked else Qt.Unchecked
        if role == ItemRole:
            return p
        return None

    def setData(self, index, value, role=Qt.EditRole) -> bool:
        if not index.isValid() or role != Qt.CheckStateRole:
            return False
        p = self._providers[index.row()]
        state = Qt.CheckState(value) if not isinstance(value, Qt.CheckState) else value
        if state == Qt.Checked:
            self._checked.add(p.name)
        else:
            self._checked.discard(p.name)
        self.dataChanged.emit(index, index, [Qt.CheckStateRole])
        self.selectionChanged.emit()
        return True


class ProviderTableModel(TableModel):
    """The providers file being edited in the settings dialog: one row per provider."""

    HEADERS = ("name", "format", "base URL", "model", "key")

    def __init__(self, providers: list, parent=None) -> None:
        super().__init__(parent)
        self._providers = list(providers)
        self._origin: list[str | None] = [p.name for p in self._providers]   # each row's name when opened

    def rowCount(self, parent=_INVALID) -> int:
        return 0 if parent.isValid() else len(self._providers)

    def providers(self) -> list:
        return list(self._providers)

    def renames(self) -> dict[str, str]:
        """{name when the dialog opened: name now} of the providers renamed (the window keeps their check)."""
        return {old: p.name for old, p in zip(self._origin, self._providers) if old is not None and old != p.name}

    def provider(self, row: int):
        return self._providers[row]

    def replace(self, row: int, provider) -> None:
        self._providers[row] = provider
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))

    def append(self, provider) -> int:
        row = len(self._providers)
        self.beginInsertRows(_INVALID, row, row)
        self._providers.append(provider)
        self._origin.append(None)
        self.endInsertRows()
        return row

    def remove(self, row: int) -> None:
        self.beginRemoveRows(_INVALID, row, row)
        del self._providers[row]
        del self._origin[row]
        self.endRemoveRows()

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or index.row() >= len(self._providers):
            return None
        p = self._providers[index.row()]
        if role == Qt.DisplayRole:
            return (p.name, p.format, p.base_url, p.model, f"${p.api_key_env}" if p.api_key_env else "")[
                index.column()]
        if role == ItemRole:
            return p
        return None

