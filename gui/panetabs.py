"""A pane's tabs after Text, one small widget each, built when first shown or first used (`PaneWidget.tab`).

Blocks (one row per content block; the detail below shows the selected block, or every block in short), Raw
(every SSE frame and comment line, opening on what each carried, filterable by kind, event name and text, with
the payload and what it produced, or its bytes under the network chunks that carried them), Usage (the running
usage, each value with its frame and reporting style, and every snapshot), Diagnostics (the core's findings,
each linked to its frame) and Request (the request with the body exactly as sent, secrets masked, or
pretty-printed; the response status, headers and any non-stream body such as an HTTP error's; copy as curl).

Each tab reads its `PaneController`'s models; `refresh()` brings what is not a model (detail texts, scrolling)
up to date and is called by the pane on every `controller.refreshed`. A tab that links to a frame says so with
a signal (`framesPicked`, `frameActivated`), and the pane shows it in the Raw tab.
"""
from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QPlainTextEdit, QPushButton, QSplitter, QToolButton, QVBoxLayout, QWidget)

from core.live.recorder import FINAL_STATUSES
from core.wire.carries import KIND_LABELS, KINDS

from gui.framebytes import DECODED, DetailModeBar, bytes_text
from gui.models import FrameRole, block_detail
from gui.panetext import blocks_overview, curl_text, frame_detail_text, request_text
from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.theme import set_footnote
from gui.widgets import plain_label, readonly_text, table

FILTER_CHARS = 9   # the Raw tab's filter boxes are this many characters wide, whatever their entries (a box that
                   # sized itself to `response.output_text.delta` widened its pane), and shrink to FILTER_MIN_CHARS
FILTER_MIN_CHARS = 4
TEXT_FILTER_CHARS = 7   # the Raw tab's text filter keeps this many characters (it was squeezed to "fi…"): the
                        # event box gives way first
NO_DIAGNOSTICS = "No diagnostics: the stream followed its format's rules."


def no_stream_reason(run, short: bool = False) -> str:
    """Why an exchange that ended has no frames: an HTTP error's body, a request not sent, nothing received
    (`short`: without where to read more)."""
    status = run.http_status
    if status is not None and status >= 400:
        return (f"the body was an HTTP {status} error, not a stream" if short else
                f"the provider answered HTTP {status} with an error body, not a stream (the body is in the Req "
                "tab; the banner under the tabs says what to do)")
    if run.request is None or status is None:
        return "no response arrived" + ("" if short else " (the banner under the tabs says why)")
    return "the response carried no frame" + ("" if short else " (its body is in the Req tab)")


def note_label(parent) -> QLabel:
    """A hidden, word-wrapped, dim line saying why a tab has nothing to show."""
    label = plain_label("", parent)
    set_footnote(label)
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignLeft | Qt.AlignTop)
    label.hide()
    return label


def ended(controller) -> bool:
    return controller.status in FINAL_STATUSES


def fixed_combo(parent, chars: int = FILTER_CHARS) -> QComboBox:
    """A combo box whose width never follows its entries (its popup shows them whole): `chars` wide when there
    is room, a few characters at least, so that a narrow pane is never widened by it."""
    box = QComboBox(parent)
    box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(chars)
    box.setMinimumWidth(box.fontMetrics().horizontalAdvance("x" * FILTER_MIN_CHARS) + 28)
    return box


def fit_popup(box: QComboBox) -> None:
    """Let the popup list (a window of its own: it widens nothing) show the longest entry whole."""
    fm = box.view().fontMetrics()
    widest = max((fm.horizontalAdvance(box.itemText(i)) for i in range(box.count())), default=0)
    box.view().setMinimumWidth(widest + 32)

TEXT, BLOCKS, RAW, USAGE, DIAGNOSTICS, REQUEST = range(6)
TAB_TITLES = (("Text", "The reply as plain text, thinking apart"),
              ("Blocks", "One row per content block; select one to see its frames in Raw"),
              ("Raw", "Every SSE frame and comment line as it arrived"),
              ("Usage", "Token usage: each value with the frame it came from and how it is reported"),
              ("Diag", "Diagnostics: what a borrowed parser would trip on, each with its frame"),
              ("Req", "Request: the request as sent (secrets masked), the response status and headers"))


class PaneTab(QWidget):
    """A tab's content: a margin-less vertical layout over the pane's controller."""

    def __init__(self, controller, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.lay = QVBoxLayout(self)
        self.lay.setContentsMargins(0, 0, 0, 0)

    def refresh(self) -> None:
        """Bring what the models do not update themselves up to date (nothing, unless a tab says otherwise)."""


class BlocksTab(PaneTab):
    """The blocks table and, below it, the selected block's content (or every block in short).

    Signals:
        framesPicked(list): the frames of the blocks just selected (the pane selects them in the Raw tab).
    """

    framesPicked = Signal(list)

    def __init__(self, controller, parent=None) -> None:
        super().__init__(controller, parent)
        c = controller
        split = QSplitter(Qt.Vertical, self)
        self.table = table(c.blocks, split)
        self.table.setColumnHidden(1, not self._multi_choice())   # "choice": when a reply has several
        hh = self.table.horizontalHeader()
        for col, width in enumerate((30, 48, 70, 90, 90, 70, 50, 60, 150)):
            hh.resizeSection(col, width)
        # what a narrow pane should show first: type, tool name, JSON validity and the content; then the rest
        for visual, logical in enumerate((0, 1, 2, 3, 7, 8, 5, 6, 4)):
            hh.moveSection(hh.visualIndex(logical), visual)
        self._fit_columns()
        c.blocks.rowsInserted.connect(lambda *_a: self._fit_columns())
        c.blocks.modelReset.connect(self._fit_columns)
        self.detail = readonly_text(split)
        self.detail.setPlaceholderText("Every block appears here: tool calls with their arguments, text and "
                                       "thinking in short. Select a block for all of its content; its frames "
                                       "are then selected in the Raw tab.")
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([160, 300])
        self.lay.addWidget(split)
        self._detail_block = None   # the index of the block whose content the detail shows (None: all, short)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self._show_overview()

    def refresh(self) -> None:
        c = self.controller
        if self._detail_block is not None:
            row = c.blocks.row_of_index(self._detail_block)
            if row in c.changed_blocks:
                self._show_block(row)
        elif c.changed_blocks:
            self._show_overview()
        if c.changed_blocks and self._multi_choice() == self.table.isColumnHidden(1):
            self.table.setColumnHidden(1, not self._multi_choice())
        if c.changed_blocks:
            self._fit_columns()

    # the columns that are empty for text blocks (name, JSON) shrink to their contents; the content column
    # takes what is left of the pane's width (it was pushed off the right edge of a 300 px pane)
    NAME, JSON, CONTENT = 3, 7, 8

    def _fit_columns(self) -> None:
        hh = self.table.horizontalHeader()
        t = self.table
        for col in (0, 2, self.NAME, self.JSON):
            hint = max(t.sizeHintForColumn(col), hh.sectionSizeFromContents(col).width())
            hh.resizeSection(col, max(24, hint))
        hh.setStretchLastSection(False)
        # the content column: the room left once every column before it has its width (at least 80 px; the
        # columns after it are a scroll away)
        last = hh.visualIndex(self.CONTENT)
        before = [hh.logicalIndex(v) for v in range(last)]
        used = sum(hh.sectionSize(col) for col in before if not hh.isSectionHidden(col))
        room = t.viewport().width() - used
        hh.resizeSection(self.CONTENT, max(80, room))

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._fit_columns()

    def _multi_choice(self) -> bool:
        return any(b.choice for b in self.controller.run.decoder.reply.blocks.values())

    def _selected(self, *_a) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            self._detail_block = None
            self._show_overview()
            return
        blocks = self.controller.blocks
        row = rows[0].row()
        self._detail_block = blocks.block(row).index
        self._show_block(row)
        # every frame of the block, those that produced nothing included (RunView.frames_of_block)
        frames_of = self.controller.view.frames_of_block
        self.framesPicked.emit(sorted({f for r in rows for f in frames_of(blocks.block(r.row()))}))

    def _show_overview(self) -> None:
        """Nothing selected: every block in short (tool calls with their arguments)."""
        sb = self.detail.verticalScrollBar()
        pos = sb.value()
        self.detail.setPlainText(blocks_overview(self.controller.run.decoder.reply.ordered_blocks()))
        sb.setValue(pos)

    def _show_block(self, row: int) -> None:
        sb = self.detail.verticalScrollBar()
        at_bottom = sb.value() >= sb.maximum() - 4
        self.detail.setPlainText(block_detail(self.controller.blocks.block(row)))
        if at_bottom:
            sb.setValue(sb.maximum())


class RawTab(PaneTab):
    """Every SSE frame and comment line, opening on what each carried (filter by kind, event name or text), and
    the selected one's detail: decoded (payload and the events it produced) or its bytes (hex or text) under
    the network chunks that carried them. The table follows the newest frames until the user scrolls up or
    selects a frame. Nothing in it changes the pane's width: the filter boxes have a fixed width.

    Signals:
        framesSelected(list): the frame numbers selected (in order; the timeline highlights them).
    """

    framesSelected = Signal(list)

    def __init__(self, controller, parent=None) -> None:
        super().__init__(controller, parent)
        c = controller
        row = QHBoxLayout()
        self.kind_filter = fixed_combo(self)
        self.kind_filter.addItem("all kinds", "")
        for k in KINDS:
            self.kind_filter.addItem(KIND_LABELS[k], k)
        self.kind_filter.setToolTip("Show only frames that carried this: text, thinking, tool arguments, usage, "
                                    "keepalives, errors, diagnostics, or nothing")
        fit_popup(self.kind_filter)
        self.kind_filter.currentIndexChanged.connect(
            lambda _i: c.frames_proxy.set_kind(self.kind_filter.currentData() or ""))
        self.event_filter = fixed_combo(self)
        self.event_filter.addItem("all events", "")
        self.event_filter.setToolTip("Show only frames with this event name")
        self.event_filter.currentIndexChanged.connect(self._event_chosen)
        self.text_filter = QLineEdit(self)
        self.text_filter.setPlaceholderText("filter text…")
        self.text_filter.setClearButtonEnabled(True)
        self.text_filter.setMinimumWidth(self.text_filter.fontMetrics().horizontalAdvance("x" * TEXT_FILTER_CHARS)
                                         + 28)   # (with its clear button)
        self.text_filter.textChanged.connect(c.frames_proxy.set_text)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy the selected frames' raw bytes")
        self.copy_button.clicked.connect(self.copy_selected)
        row.setSpacing(4)
        row.addWidget(self.kind_filter)
        row.addWidget(self.event_filter)
        row.addWidget(self.text_filter, 1)
        row.addWidget(self.copy_button)
        self.lay.addLayout(row)
        self.empty_note = note_label(self)    # an exchange that ended with no frame: why (no empty table)
        self.lay.addWidget(self.empty_note)
        split = self.split = QSplitter(Qt.Vertical, self)
        self.table = table(c.frames_proxy, split)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
        hh = self.table.horizontalHeader()
        for col, width in enumerate((190, 40, 60, 120, 48, 50)):
            hh.resizeSection(col, width)
        bottom = QWidget(split)
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.setSpacing(0)
        self.detail_mode = DetailModeBar(bottom)
        self.detail_mode.modeChanged.connect(lambda _m: self._selected())
        self.detail = readonly_text(bottom)
        self.detail.setPlaceholderText("Select a frame: its payload, pretty-printed, and what it produced; "
                                       "Hex or Bytes: its raw bytes and the network chunks that carried them.")
        bl.addWidget(self.detail_mode)
        bl.addWidget(self.detail, 1)
        split.addWidget(self.table)
        split.addWidget(bottom)
        split.setSizes([300, 220])
        split.setStretchFactor(0, 3)   # the detail keeps a readable share as the pane grows (bytes, chunks)
        split.setStretchFactor(1, 2)
        self.lay.addWidget(split, 1)
        self.following = True   # keep the newest frame in view
        self.table.selectionModel().selectionChanged.connect(self._selected)
        c.frames.eventNamesChanged.connect(self._update_event_names)
        self.table.verticalScrollBar().valueChanged.connect(self._scrolled)
        self._update_event_names()
        self.table.scrollToBottom()
        self._empty_for = None
        self._show_empty()

    def refresh(self) -> None:
        if self.following:
            self.table.scrollToBottom()
        self._show_empty()

    def _show_empty(self) -> None:
        """An exchange that ended with no frame says why in place of the empty table and its detail."""
        c = self.controller
        empty = ended(c) and not c.run.decoder.frames and not c.view.comments
        key = (empty, c.run.http_status, c.status)
        if key == self._empty_for:
            return
        self._empty_for = key
        if empty:
            self.empty_note.setText(f"No frames: {no_stream_reason(c.run)}.")
        self.empty_note.setVisible(empty)
        self.split.setVisible(not empty)
        self.lay.setStretchFactor(self.empty_note, 1 if empty else 0)

    def _scrolled(self, value: int) -> None:
        self.following = value >= self.table.verticalScrollBar().maximum() - 1

    def _event_chosen(self, _i=None) -> None:
        name = self.event_filter.currentData() or ""
        self.event_filter.setToolTip(f"Showing only `{name}` frames" if name
                                     else "Show only frames with this event name")
        self.controller.frames_proxy.set_event(name)

    def _update_event_names(self) -> None:
        view = self.controller.view
        current = self.event_filter.currentData()
        self.event_filter.blockSignals(True)
        self.event_filter.clear()
        self.event_filter.addItem("all events", "")
        for n in sorted(view.event_names):
            self.event_filter.addItem(n, n)
        if view.comments:
            self.event_filter.addItem(": comment", ": comment")
        self.event_filter.setCurrentIndex(max(0, self.event_filter.findData(current)))
        self.event_filter.blockSignals(False)
        fit_popup(self.event_filter)

    def select_frames(self, frames, scroll: bool = True) -> None:
        """Select these frame numbers (rows hidden by the filter are skipped); scroll to the first."""
        c = self.controller
        sel = QItemSelection()
        proxy = c.frames_proxy
        last_col = c.frames.columnCount() - 1
        first = None
        for n in frames:
            src_row = c.frames.row_of_frame(n)
            if src_row < 0:
                continue
            pi = proxy.mapFromSource(c.frames.index(src_row, 0))
            if not pi.isValid():
                continue
            sel.select(pi, proxy.index(pi.row(), last_col))
            first = pi if first is None else first
        sm = self.table.selectionModel()
        sm.blockSignals(True)
        sm.select(sel, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        sm.blockSignals(False)
        self.table.viewport().update()
        if first is not None and scroll:
            self.following = False
            self.table.scrollTo(first, QAbstractItemView.PositionAtCenter)
        self._selected()

    def _source_rows(self, rows) -> list[int]:
        proxy = self.controller.frames_proxy
        return [proxy.mapToSource(r).row() for r in rows]

    def _items(self, rows) -> list:
        frames = self.controller.frames
        return [frames.item(r) for r in self._source_rows(rows)]

    def selected_frames(self) -> list[int]:
        """The frame numbers selected, in stream order (comment lines have none)."""
        rows = sorted(self._source_rows(self.table.selectionModel().selectedRows()))
        items = [self.controller.frames.item(r) for r in rows]
        return [i.n for i in items if hasattr(i, "event")]

    def _selected(self, *_a) -> None:
        rows = self.table.selectionModel().selectedRows()
        frames = self.selected_frames()
        self.controller.frames.set_selected_frames(frames)
        self.framesSelected.emit(frames)
        if not rows:
            self.detail.clear()
            return
        src = self._source_rows(rows[:1])[0]
        mode = self.detail_mode.mode
        if mode == DECODED:
            item = self.controller.frames.item(src)
            produced = self.controller.view.frame_events_of(item.n) if hasattr(item, "event") else []
            text = frame_detail_text(item, produced, len(rows))
        else:
            text = bytes_text(self.controller.view, src, mode)
            if len(rows) > 1:
                text = f"({len(rows)} frames selected; the first is shown)\n" + text
        # bytes keep their lines (a hex dump's columns, the line ends as sent); the payload wraps
        self.detail.setLineWrapMode(QPlainTextEdit.WidgetWidth if mode == DECODED else QPlainTextEdit.NoWrap)
        self.detail.setPlainText(text)

    def copy_selected(self) -> None:
        """Copy the selected frames' raw bytes, in stream order."""
        rows = sorted(self.table.selectionModel().selectedRows(), key=lambda i: i.row())
        raws = [item.raw.decode("utf-8", "replace") for item in self._items(rows)]
        if raws:
            QGuiApplication.clipboard().setText("".join(raws))


class UsageTab(PaneTab):
    """The running usage (one row per canonical value) above every usage snapshot.

    Signals:
        frameActivated(object): a row was double-clicked: the frame it came from.
    """

    frameActivated = Signal(object)

    def __init__(self, controller, parent=None) -> None:
        super().__init__(controller, parent)
        split = QSplitter(Qt.Vertical, self)
        self.table = table(controller.usage, split)
        hh = self.table.horizontalHeader()
        for col, width in enumerate((80, 60, 70, 220)):
            hh.resizeSection(col, width)
        self.history_table = table(controller.usage_history, split)
        split.addWidget(self.table)
        split.addWidget(self.history_table)
        for t in (self.table, self.history_table):
            t.doubleClicked.connect(lambda i: self.frameActivated.emit(i.data(FrameRole)))
        self.lay.addWidget(split, 1)
        # no usage snapshot (yet): the second table is hidden and this says so
        self.none_note = note_label(self)
        self.lay.addWidget(self.none_note)
        self._none_for = None
        self.refresh()

    def refresh(self) -> None:
        c = self.controller
        none = not c.view.usage_events
        key = (none, c.status)
        if key == self._none_for:
            return
        self._none_for = key
        self.history_table.setVisible(not none)
        self.none_note.setVisible(none)
        if none:
            run = c.run
            self.none_note.setText(
                ("No usage reported: " + (no_stream_reason(run, short=True) if not run.decoder.frames
                                          else "the stream carried no token counts") + "."
                 ) if ended(c) else "No usage reported yet: each snapshot is listed here as it arrives.")


class DiagnosticsTab(PaneTab):
    """The core's findings, one line each (the full message in its tooltip).

    Signals:
        frameActivated(object): a finding was double-clicked or activated: the frame it concerns.
    """

    frameActivated = Signal(object)

    def __init__(self, controller, parent=None) -> None:
        super().__init__(controller, parent)
        split = self.split = QSplitter(Qt.Vertical, self)
        t = self.table = table(controller.diagnostics, split)
        t.setWordWrap(False)   # one line per finding, elided with "…" (the full message is in the detail below)
        t.setTextElideMode(Qt.ElideRight)
        hh = t.horizontalHeader()
        hh.resizeSection(0, 50)
        hh.resizeSection(1, 150)
        fit = lambda *_a: t.resizeRowsToContents() if t.model().rowCount() <= 400 else None  # noqa: E731
        controller.diagnostics.rowsInserted.connect(fit)
        hh.sectionResized.connect(fit)
        fit()
        t.setToolTip("Double-click a finding to see its frame in the Raw tab")
        t.doubleClicked.connect(lambda i: self.frameActivated.emit(i.data(FrameRole)))
        t.activated.connect(lambda i: self.frameActivated.emit(i.data(FrameRole)))
        # every finding in full under the one-line rows (the selected one alone when there is a selection): a
        # 300 px pane cut them to "usage arrived…" above an empty table
        self.detail = readonly_text(split, mono=False)
        self.detail.setLineWrapMode(QPlainTextEdit.WidgetWidth)
        split.addWidget(t)
        split.addWidget(self.detail)
        split.setSizes([120, 300])
        self.lay.addWidget(split, 1)
        self.none_note = note_label(self)
        self.lay.addWidget(self.none_note, 1)
        t.selectionModel().selectionChanged.connect(lambda *_a: self._show_detail())
        self._shown = None
        self.refresh()

    def refresh(self) -> None:
        c = self.controller
        n = c.diagnostics.rowCount()
        rows = tuple(sorted(i.row() for i in self.table.selectionModel().selectedRows()))
        key = (n, c.status, rows)
        if key != self._shown:
            self._shown = key
            self._show_detail()

    def _show_detail(self) -> None:
        c = self.controller
        diags = c.run.decoder.reply.diagnostics
        n = c.diagnostics.rowCount()
        none = n == 0
        self.split.setVisible(not none)
        self.none_note.setVisible(none)
        if none:
            run = c.run
            self.none_note.setText(
                (NO_DIAGNOSTICS if run.decoder.frames else f"No diagnostics: {no_stream_reason(run, short=True)}.")
                if ended(c) else "No diagnostics so far.")
            return
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows()) or range(n)
        lines = []
        for r in rows:
            if r < len(diags):
                d = diags[r]
                lines.append(f"{'frame ' + str(d.frame) if d.frame >= 0 else 'the stream'} · {d.code}\n{d.message}")
        self.detail.setPlainText("\n\n".join(lines))
        self._shown = (n, c.status, tuple(sorted(i.row() for i in self.table.selectionModel().selectedRows())))


class RequestTab(PaneTab):
    """The request as sent and the response's status, headers and non-stream body (`panetext.request_text`)."""

    def __init__(self, controller, parent=None) -> None:
        super().__init__(controller, parent)
        row = QHBoxLayout()
        self.pretty_check = QCheckBox("Pretty-print JSON", self)
        self.pretty_check.setToolTip("Off: the body exactly as sent (byte for byte, secrets masked). On: the "
                                     "same JSON indented for reading.")
        self.pretty_check.toggled.connect(lambda _on: self._show())
        self.curl_button = QPushButton("Copy as curl", self)
        self.curl_button.setToolTip("Copy a curl command for this request; the key is replaced by its "
                                    "environment variable")
        self.curl_button.clicked.connect(self.copy_curl)
        row.addWidget(self.pretty_check)
        row.addStretch(1)
        row.addWidget(self.curl_button)
        self.lay.addLayout(row)
        self.text = readonly_text(self)
        self.lay.addWidget(self.text, 1)
        self._shown = None
        self._show()

    def _key(self) -> tuple:
        """What the text depends on: it is rebuilt only when this changes (not on every streamed chunk)."""
        run = self.controller.run
        body = run.metrics.bytes if run.body_kind not in (None, "event-stream") else None
        return (id(run.request), id(run.response_headers), run.http_status, body, run.status,
                self.pretty_check.isChecked())

    def refresh(self) -> None:
        if self._key() != self._shown:
            self._show()

    def _show(self) -> None:
        run = self.controller.run
        self._shown = self._key()
        sb = self.text.verticalScrollBar()
        pos = sb.value()
        self.text.setPlainText(request_text(run, pretty=self.pretty_check.isChecked()))
        sb.setValue(pos)
        self.curl_button.setEnabled(run.request is not None)

    def copy_curl(self) -> None:
        text = curl_text(self.controller.run)
        if text:
            QGuiApplication.clipboard().setText(text)


TAB_CLASSES = {BLOCKS: BlocksTab, RAW: RawTab, USAGE: UsageTab, DIAGNOSTICS: DiagnosticsTab, REQUEST: RequestTab}
