"""One provider's pane: a header (name, format, model, status, metrics, Stop) and six tabs.

Tabs: Text (live reply, thinking apart), Blocks (one row per content block, detail below), Raw (every SSE
frame and comment line, filterable, with the payload and what it produced), Usage (the running usage, each
value with its frame and reporting style, and every snapshot), Diagnostics (the core's findings, each linked to
its frame) and Request (the redacted request, response status and headers, copy as curl).

The pane gets its `PaneController` in `__init__` and only displays: the controller's models feed the tables,
and `controller.refreshed` (at most ~60 times a second) updates the text views and the header.
"""
from __future__ import annotations

import json

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFrame, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QPlainTextEdit, QPushButton, QSplitter, QTableView, QTabWidget,
                               QVBoxLayout, QWidget)

from core import events as ev

from .controller import PaneController
from .models import FrameRole, block_detail, pretty_payload
from .runview import FINAL_STATUSES
from .textview import ReplyTextView

TEXT, BLOCKS, RAW, USAGE, DIAGNOSTICS, REQUEST = range(6)
TAB_TITLES = (("Text", "The reply as plain text, thinking apart"),
              ("Blocks", "One row per content block; select one to see its frames in Raw"),
              ("Raw", "Every SSE frame and comment line as it arrived"),
              ("Usage", "Token usage: each value with the frame it came from and how it is reported"),
              ("Diag", "Diagnostics: what a borrowed parser would trip on, each with its frame"),
              ("Request", "The request as sent (secrets masked), the response status and headers"))
_LAZY_WIDGETS = {name: BLOCKS for name in ("blocks_table", "block_detail")}
_LAZY_WIDGETS.update({name: RAW for name in ("frames_table", "frame_detail", "event_filter", "text_filter",
                                             "copy_frame_button")})
_LAZY_WIDGETS.update({name: USAGE for name in ("usage_table", "usage_history_table")})
_LAZY_WIDGETS["diagnostics_table"] = DIAGNOSTICS
_LAZY_WIDGETS.update({name: REQUEST for name in ("request_text", "curl_button")})
MIN_RATE_SPAN_NS = 100_000_000   # tokens per second are shown once content has streamed for this long
STATUS_COLORS = {
    "pending": ("#6b7280", "#ffffff"),
    "connecting": ("#2563eb", "#ffffff"),
    "streaming": ("#0891b2", "#ffffff"),
    "done": ("#16a34a", "#ffffff"),
    "error": ("#dc2626", "#ffffff"),
    "cancelled": ("#a16207", "#ffffff"),
    "stalled": ("#c2410c", "#ffffff"),
}


def plain_label(text: str = "", parent=None) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.PlainText)
    return label


def mono_font():
    return QFontDatabase.systemFont(QFontDatabase.FixedFont)


def _table(model, parent=None) -> QTableView:
    t = QTableView(parent)
    t.setModel(model)
    t.setSelectionBehavior(QAbstractItemView.SelectRows)
    t.setAlternatingRowColors(True)
    t.setWordWrap(False)
    t.verticalHeader().setVisible(False)
    t.verticalHeader().setDefaultSectionSize(20)
    t.horizontalHeader().setStretchLastSection(True)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
    t.setEditTriggers(QAbstractItemView.NoEditTriggers)
    return t


def _readonly_text(parent=None, mono=True) -> QPlainTextEdit:
    e = QPlainTextEdit(parent)
    e.setReadOnly(True)
    if mono:
        e.setFont(mono_font())
    return e


# -- what to tell the user about an error ---------------------------------------------------------------------
WHAT = {"http_error": "The provider answered with an HTTP error",
        "connection_dropped": "The connection was cut mid-stream",
        "stalled": "The stream stalled",
        "connect_failed": "Could not connect to the provider",
        "missing_key": "Not sent: no API key",
        "bad_request": "Not sent: the request could not be built",
        "insecure_transport": "Not sent: the key would travel over plain http://",
        "not_event_stream": "The provider answered with a body that is not an event stream",
        "unframed_error": "The provider sent an error outside any SSE event",
        "transport_error": "The connection failed",
        "internal_error": "StreamScope failed while reading this stream (a bug: please report it)"}
MAX_MESSAGE = 240


def _provider_error(raw) -> tuple[str | None, str | None]:
    if isinstance(raw, list) and raw:
        raw = raw[0]
    if not isinstance(raw, dict):
        return None, None
    e = raw.get("error") if isinstance(raw.get("error"), dict) else raw
    t = e.get("type") or e.get("status") or e.get("code")
    return (None if t is None else str(t)), e.get("message")


def error_report(run, reply) -> tuple[str, str] | None:
    """(short text, full text) for the pane's error banner, or None when there was no error.

    Plain lines: what happened (with the HTTP status and the provider's error type), the provider's message
    (the short text cuts it), and what to do."""
    status = run.status
    err = run.error if isinstance(run.error, dict) else None
    in_band = reply.error
    if status not in ("error", "stalled") and in_band is None:
        return None
    if status == "cancelled" or (err or {}).get("type") == "cancelled":
        return None
    etype = (err or {}).get("type")
    http = run.http_status
    message = (err or {}).get("message") or ""
    if in_band is not None and (err is None or etype == in_band.type):
        head = f"Error inside the stream at frame {in_band.frame}"
        head += f", after HTTP {http}" if http is not None else ""
        head += f" · {in_band.type}" if in_band.type else ""
        message = in_band.message
        advice = "the provider failed mid-reply; send again."
    else:
        head = WHAT.get(etype or "", f"The exchange failed ({etype})" if etype else "The exchange failed")
        ptype, pmsg = _provider_error((err or {}).get("raw"))
        if http is not None:
            head += f" · HTTP {http}"
        if ptype:
            head += f" · {ptype}"
        if etype == "http_error" and pmsg:
            message = str(pmsg)
        if http in (401, 403):
            advice = "check the API key (its environment variable or keyring entry) and the account's access."
        elif http == 429:
            advice = "rate limited: wait a moment and send again, or send to fewer providers at once."
        elif http is not None and http >= 500:
            advice = "the provider failed on its side: send again later."
        elif http is not None and http >= 400:
            advice = "the request was refused: check the model name and parameters (Request tab)."
        elif etype == "connection_dropped":
            advice = "send again."
        elif etype == "stalled" or status == "stalled":
            advice = "the provider may be overloaded: send again, or raise the read timeout."
        elif etype == "connect_failed":
            advice = "check the base URL, the network and any proxy (Providers → Settings…)."
        elif etype == "missing_key":
            advice = "set the environment variable, or store the key in the OS keyring (Providers → Settings…)."
        elif etype == "insecure_transport":
            advice = "use https://, or allow insecure transport for this provider if the network is trusted."
        elif etype == "bad_request":
            advice = "fix the prompt settings the message names (tools, tool choice)."
        else:
            advice = "see the Raw and Diagnostics tabs; send again."
    sent = run.sent
    tail = "What arrived before is kept here and can be exported." if sent and run.chunks else ""
    short_msg = message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "…"
    lines = [head, short_msg, "What to do: " + advice + (" " + tail if tail else "")]
    full = [head, message, "What to do: " + advice + (" " + tail if tail else "")]
    return "\n".join(x for x in lines if x), "\n".join(x for x in full if x)


class PaneWidget(QFrame):
    """One provider's live pane.

    Signals:
        stopRequested(str): the pane's Stop button was pressed (argument: the provider name).
    """

    stopRequested = Signal(str)

    def __init__(self, controller: PaneController, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("pane")
        run = controller.run
        p = run.provider
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)

        # header
        top = QHBoxLayout()
        self.name_label = plain_label(p.name, self)
        f = self.name_label.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.1)
        self.name_label.setFont(f)
        self.badge = plain_label("", self)
        self.badge.setAlignment(Qt.AlignCenter)
        self.badge.setMinimumWidth(74)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setToolTip("Stop this provider's stream (the others go on)")
        self.stop_button.clicked.connect(lambda: self.stopRequested.emit(p.name))
        top.addWidget(self.name_label)
        top.addStretch(1)
        top.addWidget(self.badge)
        top.addWidget(self.stop_button)
        lay.addLayout(top)
        self.format_label = plain_label(f"{p.format} · {p.model}", self)
        self.format_label.setObjectName("dim")
        lay.addWidget(self.format_label)
        self.metrics_label = plain_label("", self)
        self.metrics_label.setObjectName("metrics")
        self.metrics_label.setWordWrap(True)
        lay.addWidget(self.metrics_label)
        self.error_label = plain_label("", self)
        self.error_label.setObjectName("errorBanner")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.error_label.setStyleSheet("QLabel#errorBanner { background: #fde8e8; color: #7f1d1d; "
                                       "border: 1px solid #f5b5b5; border-radius: 4px; padding: 4px; }")
        self.error_label.hide()
        lay.addWidget(self.error_label)

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.ElideRight)
        self.tabs.tabBar().setExpanding(False)
        lay.addWidget(self.tabs, 1)
        self._built: set[int] = {TEXT}
        self._follow_frames = True
        self.text_view = ReplyTextView(self)
        self.tabs.addTab(self.text_view, "Text")
        # the other tabs are built when first shown (or first used): a send builds 4-8 panes at once
        self._pages: dict[int, QVBoxLayout] = {}
        for index, (title, tip) in enumerate(TAB_TITLES[1:], start=1):
            page = QWidget(self)
            pl = QVBoxLayout(page)
            pl.setContentsMargins(0, 2, 0, 0)
            self._pages[index] = pl
            self.tabs.addTab(page, title)
            self.tabs.setTabToolTip(index, tip)
        self.tabs.currentChanged.connect(self.ensure_tab)

        controller.refreshed.connect(self.update_view)
        controller.statusChanged.connect(lambda _s: self._update_header())
        self._request_shown = None
        self._detail_block = None
        self._badge_status = None
        self._advice = None
        self._titles = None
        self.update_view()

    # -- tabs (built on demand) -------------------------------------------------------------------------
    def ensure_tab(self, index: int) -> None:
        """Build tab `index` if it is not built yet."""
        if index in self._built or index not in self._pages:
            return
        self._built.add(index)
        (None, self._build_blocks_tab, self._build_raw_tab, self._build_usage_tab, self._build_diagnostics_tab,
         self._build_request_tab)[index](self._pages[index])

    def __getattr__(self, name):
        # a tab's widgets (frames_table, blocks_table, ...) exist once the tab is built: build it on first use
        index = _LAZY_WIDGETS.get(name)
        if index is None or index in self.__dict__.get("_built", (index,)):
            raise AttributeError(name)
        self.ensure_tab(index)
        return self.__dict__[name] if name in self.__dict__ else object.__getattribute__(self, name)

    def _build_blocks_tab(self, page: QVBoxLayout) -> None:
        c = self.controller
        w = QSplitter(Qt.Vertical, self)
        self.blocks_table = _table(c.blocks, w)
        self.blocks_table.setColumnHidden(1, not self._multi_choice())   # "choice": when a reply has several
        hh = self.blocks_table.horizontalHeader()
        for col, width in enumerate((30, 48, 70, 90, 90, 70, 56, 64)):
            hh.resizeSection(col, width)
        self.block_detail = _readonly_text(w)
        self.block_detail.setPlaceholderText("Select a block: its full content (tool arguments pretty-printed "
                                             "once complete). Its frames are selected in the Raw tab.")
        w.addWidget(self.blocks_table)
        w.addWidget(self.block_detail)
        self.blocks_table.selectionModel().selectionChanged.connect(self._block_selected)
        page.addWidget(w)

    def _build_raw_tab(self, page: QVBoxLayout) -> None:
        c = self.controller
        row = QHBoxLayout()
        self.event_filter = QComboBox(self)
        self.event_filter.addItem("all events", "")
        self.event_filter.setToolTip("Show only frames with this event name")
        self.event_filter.currentIndexChanged.connect(
            lambda _i: c.frames_proxy.set_event(self.event_filter.currentData() or ""))
        self.text_filter = QLineEdit(self)
        self.text_filter.setPlaceholderText("filter text…")
        self.text_filter.setClearButtonEnabled(True)
        self.text_filter.textChanged.connect(c.frames_proxy.set_text)
        self.copy_frame_button = QPushButton("Copy", self)
        self.copy_frame_button.setToolTip("Copy the selected frames' raw bytes")
        self.copy_frame_button.clicked.connect(self.copy_selected_frames)
        row.addWidget(self.event_filter)
        row.addWidget(self.text_filter, 1)
        row.addWidget(self.copy_frame_button)
        page.addLayout(row)
        split = QSplitter(Qt.Vertical, self)
        self.frames_table = _table(c.frames_proxy, split)
        self.frames_table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
        hh = self.frames_table.horizontalHeader()
        for col, width in enumerate((44, 60, 130, 50)):
            hh.resizeSection(col, width)
        self.frame_detail = _readonly_text(split)
        self.frame_detail.setPlaceholderText("Select a frame: its payload, pretty-printed, and what it produced.")
        split.addWidget(self.frames_table)
        split.addWidget(self.frame_detail)
        split.setSizes([300, 160])
        page.addWidget(split, 1)
        self.frames_table.selectionModel().selectionChanged.connect(self._frame_selected)
        c.frames.eventNamesChanged.connect(self._update_event_names)
        self.frames_table.verticalScrollBar().valueChanged.connect(self._frames_scrolled)
        self._update_event_names()
        if self._follow_frames:
            self.frames_table.scrollToBottom()

    def _build_usage_tab(self, page: QVBoxLayout) -> None:
        c = self.controller
        w = QSplitter(Qt.Vertical, self)
        self.usage_table = _table(c.usage, w)
        hh = self.usage_table.horizontalHeader()
        for col, width in enumerate((80, 60, 70, 220)):
            hh.resizeSection(col, width)
        self.usage_history_table = _table(c.usage_history, w)
        w.addWidget(self.usage_table)
        w.addWidget(self.usage_history_table)
        self.usage_table.doubleClicked.connect(lambda i: self.show_frame(i.data(FrameRole)))
        self.usage_history_table.doubleClicked.connect(lambda i: self.show_frame(i.data(FrameRole)))
        page.addWidget(w)

    def _build_diagnostics_tab(self, page: QVBoxLayout) -> None:
        c = self.controller
        self.diagnostics_table = _table(c.diagnostics, self)
        hh = self.diagnostics_table.horizontalHeader()
        hh.resizeSection(0, 50)
        hh.resizeSection(1, 170)
        self.diagnostics_table.setToolTip("Double-click a finding to see its frame in the Raw tab")
        self.diagnostics_table.doubleClicked.connect(lambda i: self.show_frame(i.data(FrameRole)))
        self.diagnostics_table.activated.connect(lambda i: self.show_frame(i.data(FrameRole)))
        page.addWidget(self.diagnostics_table)

    def _build_request_tab(self, page: QVBoxLayout) -> None:
        row = QHBoxLayout()
        self.curl_button = QPushButton("Copy as curl", self)
        self.curl_button.setToolTip("Copy a curl command for this request; the key is replaced by its "
                                    "environment variable")
        self.curl_button.clicked.connect(self.copy_curl)
        row.addStretch(1)
        row.addWidget(self.curl_button)
        page.addLayout(row)
        self.request_text = _readonly_text(self)
        page.addWidget(self.request_text, 1)
        self._update_request()

    # -- updates -----------------------------------------------------------------------------------------
    def update_view(self) -> None:
        c = self.controller
        self.text_view.update_from(c.run.decoder.reply)
        built = self._built
        if BLOCKS in built:
            if self._detail_block is not None:
                row = c.blocks.row_of_index(self._detail_block)
                if row in c.changed_blocks:
                    self._show_block(row)
            if c.changed_blocks and self._multi_choice() == self.blocks_table.isColumnHidden(1):
                self.blocks_table.setColumnHidden(1, not self._multi_choice())
        if RAW in built and self._follow_frames:
            self.frames_table.scrollToBottom()
        self._update_header()
        self._update_tab_titles()
        if REQUEST in built:
            shown = self._request_shown
            if shown is None or shown[0] is not c.run.request or shown[1] is not c.run.response_headers \
                    or shown[2] != c.run.http_status:
                self._update_request()

    def _multi_choice(self) -> bool:
        return any(b.choice for b in self.controller.run.decoder.reply.blocks.values())

    def _frames_scrolled(self, value: int) -> None:
        sb = self.frames_table.verticalScrollBar()
        self._follow_frames = value >= sb.maximum() - 1

    def _update_tab_titles(self) -> None:
        c = self.controller
        n = c.diagnostics.rowCount()
        titles = (f"Blocks {c.blocks.rowCount()}", f"Raw {c.view.frames_seen}", f"Diag {n}" if n else "Diag")
        if titles != self._titles:
            self._titles = titles
            self.tabs.setTabText(BLOCKS, titles[0])
            self.tabs.setTabText(RAW, titles[1])
            self.tabs.setTabText(DIAGNOSTICS, titles[2])

    def _update_header(self) -> None:
        c = self.controller
        run, view = c.run, c.view
        status = c.status
        if status != self._badge_status:
            self._badge_status = status
            bg, fg = STATUS_COLORS.get(status, ("#6b7280", "#ffffff"))
            self.badge.setText(status)
            self.badge.setStyleSheet(f"QLabel {{ background: {bg}; color: {fg}; border-radius: 8px; "
                                     f"padding: 1px 8px; font-weight: bold; }}")
        self.stop_button.setEnabled(c.task is not None and not c.task.done())
        self.metrics_label.setText(self.metrics_text())
        reply = run.decoder.reply
        report = error_report(run, reply) if (status in FINAL_STATUSES or reply.error is not None) else None
        if report != self._advice:
            self._advice = report
            self.error_label.setText(report[0] if report else "")
            self.error_label.setToolTip(report[1] if report else "")
            self.error_label.setVisible(bool(report))

    def metrics_text(self) -> str:
        """TTFT, elapsed, frames, input / output tokens (~ while estimated) and tokens per second."""
        c = self.controller
        run, view = c.run, c.view
        m = run.metrics
        parts = []
        ttft = view.ms(m.t_first_content_ns)
        parts.append(f"TTFT {ttft:,.0f} ms" if ttft is not None else "TTFT —")
        parts.append(f"{view.ms(run.clock()) / 1000:.2f} s" if run.status != "pending" else "— s")
        parts.append(f"{view.frames_seen:,} frames")
        inp = c.usage.value("input_tokens")
        out = c.usage.value("output_tokens")
        tok = f"in {inp:,}" if inp is not None else "in —"
        if out is not None:
            tok += f" / out {out:,} tok"
        elif m.output_tokens_estimated:
            tok += f" / out ~{m.output_tokens_estimated:,} tok"
        else:
            tok += " / out — tok"
        parts.append(tok)
        span = (m.t_last_content_ns or 0) - (m.t_first_content_ns or 0)
        if m.tokens_per_s is not None and span >= MIN_RATE_SPAN_NS:   # a burst gives no meaningful rate
            parts.append(f"{'' if m.tokens_per_s_exact else '~'}{m.tokens_per_s:,.0f} tok/s")
        return " · ".join(parts)

    def _update_event_names(self) -> None:
        if RAW not in self._built:
            return
        names = sorted(self.controller.view.event_names)
        current = self.event_filter.currentData()
        self.event_filter.blockSignals(True)
        self.event_filter.clear()
        self.event_filter.addItem("all events", "")
        for n in names:
            self.event_filter.addItem(n, n)
        if self.controller.view.comments:
            self.event_filter.addItem(": comment", ": comment")
        i = self.event_filter.findData(current)
        self.event_filter.setCurrentIndex(max(0, i))
        self.event_filter.blockSignals(False)

    def _update_request(self) -> None:
        run = self.controller.run
        req = run.request
        self._request_shown = (req, run.response_headers, run.http_status)
        self.request_text.setPlainText(request_text(run))
        self.curl_button.setEnabled(req is not None)

    # -- selection links ---------------------------------------------------------------------------------
    def _block_selected(self, *_a) -> None:
        rows = self.blocks_table.selectionModel().selectedRows()
        if not rows:
            self._detail_block = None
            return
        row = rows[0].row()
        self._detail_block = self.controller.blocks.block(row).index
        self._show_block(row)
        frames = []
        for r in rows:
            frames.extend(self.controller.blocks.block(r.row()).frames)
        self.select_frames(frames, scroll=True)

    def _show_block(self, row: int) -> None:
        sb = self.block_detail.verticalScrollBar()
        at_bottom = sb.value() >= sb.maximum() - 4
        self.block_detail.setPlainText(block_detail(self.controller.blocks.block(row)))
        if at_bottom:
            sb.setValue(sb.maximum())

    def select_frames(self, frames, scroll: bool = True) -> None:
        """Select these frame numbers in the Raw table (rows hidden by the filter are skipped)."""
        self.ensure_tab(RAW)
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
        sm = self.frames_table.selectionModel()
        sm.blockSignals(True)
        sm.select(sel, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        sm.blockSignals(False)
        self.frames_table.viewport().update()
        if first is not None and scroll:
            self._follow_frames = False
            self.frames_table.scrollTo(first, QAbstractItemView.PositionAtCenter)
        self._frame_selected()

    def show_frame(self, n) -> None:
        """Switch to the Raw tab with frame `n` selected (from Diagnostics, Usage or the timeline)."""
        if n is None or n < 0:
            return
        self.tabs.setCurrentIndex(RAW)
        self.select_frames([n])

    def _frame_selected(self, *_a) -> None:
        rows = self.frames_table.selectionModel().selectedRows()
        if not rows:
            self.frame_detail.clear()
            return
        proxy = self.controller.frames_proxy
        src = proxy.mapToSource(rows[0])
        item = self.controller.frames.item(src.row())
        self.frame_detail.setPlainText(self.frame_detail_text(item, len(rows)))

    def frame_detail_text(self, item, selected: int = 1) -> str:
        view = self.controller.view
        lines = []
        if hasattr(item, "event"):
            head = f"frame {item.n} · event {item.event} · offset {item.offset} · {len(item.raw)} bytes"
            if item.id:
                head += f" · id {item.id}"
            if item.retry is not None:
                head += f" · retry {item.retry}"
            lines.append(head)
        else:
            lines.append(f"comment line (before frame {item.n}) · offset {item.offset} · {len(item.raw)} bytes")
        if selected > 1:
            lines.append(f"({selected} frames selected; the first is shown)")
        lines.append("")
        lines.append(pretty_payload(item))
        if hasattr(item, "event"):
            produced = view.frame_events_of(item.n)
            lines.append("")
            lines.append("produced:" if produced else "produced: nothing (no normalized event)")
            for e in produced:
                lines.append("  " + describe_event(e))
        return "\n".join(lines)

    # -- actions -----------------------------------------------------------------------------------------
    def copy_selected_frames(self) -> None:
        rows = self.frames_table.selectionModel().selectedRows()
        proxy = self.controller.frames_proxy
        raws = []
        for r in sorted(rows, key=lambda i: i.row()):
            item = self.controller.frames.item(proxy.mapToSource(r).row())
            raws.append(item.raw.decode("utf-8", "replace"))
        if raws:
            QGuiApplication.clipboard().setText("".join(raws))

    def copy_curl(self) -> None:
        text = curl_text(self.controller.run)
        if text:
            QGuiApplication.clipboard().setText(text)


def describe_event(e) -> str:
    """One line per normalized event, for the frame detail view (plain text)."""
    name = type(e).__name__
    if isinstance(e, (ev.TextDelta, ev.ThinkingDelta, ev.RefusalDelta)):
        return f"{name} block {e.index}: {e.text!r}"
    if isinstance(e, ev.ToolArgsDelta):
        return f"{name} block {e.index}: {e.fragment!r}"
    if isinstance(e, ev.ToolArgsReplaced):
        return f"{name} block {e.index}: {e.arguments!r}"
    if isinstance(e, ev.SignatureDelta):
        return f"{name} block {e.index}: {len(e.signature)} chars"
    if isinstance(e, ev.BlockStarted):
        extra = "".join(f" {k}={v}" for k, v in (("id", e.id), ("name", e.name)) if v)
        return f"{name} block {e.index} ({e.kind}){extra}"
    if isinstance(e, ev.BlockStopped):
        return f"{name} block {e.index}"
    if isinstance(e, ev.UsageUpdated):
        u = e.usage
        return f"{name} ({e.reporting}): in={u.input_tokens} out={u.output_tokens} total={u.total_tokens}"
    if isinstance(e, ev.Finished):
        return f"{name}: {e.reason.canonical} (raw {e.reason.raw!r})"
    if isinstance(e, ev.StreamError):
        return f"{name}: {e.type}: {e.message}"
    if isinstance(e, ev.Terminated):
        return f"{name}: {e.marker}"
    if isinstance(e, ev.Diagnostic):
        return f"{name} {e.code}: {e.message}"
    if isinstance(e, ev.ResponseStarted):
        return f"{name}: id={e.response_id} model={e.model}"
    return name


def _headers_lines(headers) -> list[str]:
    if headers is None:
        return []
    pairs = headers.items() if hasattr(headers, "items") else headers
    return [f"{k}: {v}" for k, v in pairs]


def request_text(run) -> str:
    """The redacted request as sent, then the response status and headers."""
    req = run.request
    if req is None:
        return "(no request was sent)"
    lines = [f"{req.method} {req.url}"]
    lines.extend(_headers_lines(req.headers))
    lines.append("")
    body = req.body
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    lines.append(body if isinstance(body, str) else json.dumps(body, indent=2, ensure_ascii=False))
    notes = req.notes
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines.extend(f"  • {n}" for n in notes)
    lines.append("")
    lines.append("── response ──")
    status = run.http_status
    lines.append(f"HTTP {status}" if status is not None else "(no response yet)")
    lines.extend(_headers_lines(run.response_headers))
    return "\n".join(lines)


def curl_text(run) -> str | None:
    req = run.request
    if req is None:
        return None
    from core.request import curl_command

    return curl_command(req, run.provider.api_key_env or None)
