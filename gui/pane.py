"""One provider's pane: a header (name, format, model, finish reason, status, metrics, Stop), a "quiet for N s"
line while a live stream sends nothing, an error banner (red; amber when stalled) or a notice (a stream that
finished with findings worth a look), and six tabs.

Tabs: Text (live reply, thinking apart, tool calls inline), Blocks (one row per content block; the detail
below shows the selected block, or every block in short), Raw (every SSE frame and comment line, filterable,
with the payload and what it produced), Usage (the running usage, each value with its frame and reporting
style, and every snapshot), Diagnostics (the core's findings, each linked to its frame) and Request (the
request with the body exactly as sent, secrets masked, or pretty-printed; the response status, headers and any
non-stream body such as an HTTP error's; copy as curl).

The pane gets its `PaneController` in `__init__` and only displays: the controller's models feed the tables,
and `controller.refreshed` (at most ~60 times a second) updates the text views and the header.
"""
from __future__ import annotations

import json

from PySide6.QtCore import QEvent, QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFrame, QHBoxLayout, QHeaderView,
                               QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSplitter, QTableView,
                               QTabWidget, QVBoxLayout, QWidget)

from core.wire import events as ev

from gui.controller import PaneController
from gui.models import FrameRole, block_detail, pretty_payload
from gui.runview import FINAL_STATUSES
from gui.textview import ReplyTextView
from gui.theme import mono_font  # noqa: F401  (re-exported: the prompt's tools editor uses it too)

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
_LAZY_WIDGETS.update({name: REQUEST for name in ("request_text", "curl_button", "pretty_check")})
MIN_RATE_SPAN_NS = 100_000_000   # tokens per second are shown once content has streamed for this long
QUIET_AFTER_NS = 1_000_000_000   # "quiet for N s" is shown after this long without content (or a quarter of
                                 # the read timeout, when that is shorter)
MAX_BODY_SHOWN = 64 * 1024       # a non-stream response body (an error body) shown in the Request tab, at most
# diagnostics that are normal for a provider (not worth a notice on a finished pane; still listed in Diag)
ROUTINE_DIAGNOSTICS = {"keepalive", "usage-only-chunk", "cumulative-usage-repeated", "unknown-event"}
BANNER_STYLES = {
    "error": "QLabel#errorBanner { background: #fde8e8; color: #7f1d1d; border: 1px solid #f5b5b5; "
             "border-radius: 4px; padding: 4px; }",
    "stalled": "QLabel#errorBanner { background: #ffedd5; color: #7c2d12; border: 1px solid #fdba74; "
               "border-radius: 4px; padding: 4px; }",
    "notice": "QLabel#noticeBanner { background: #fef9c3; color: #713f12; border: 1px solid #fde047; "
              "border-radius: 4px; padding: 4px; }",
}
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


class Table(QTableView):
    """A read-only table whose row height follows its font (View > font size)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._fit_rows()

    def _fit_rows(self) -> None:
        h = self.fontMetrics().height() + 6
        vh = self.verticalHeader()
        if vh.defaultSectionSize() != h:
            vh.setDefaultSectionSize(h)
            if self.wordWrap():
                self.resizeRowsToContents()

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == QEvent.FontChange:
            self._fit_rows()


def _table(model, parent=None) -> QTableView:
    t = Table(parent)
    t.setModel(model)
    t.setSelectionBehavior(QAbstractItemView.SelectRows)
    t.setAlternatingRowColors(True)
    t.setWordWrap(False)
    t.verticalHeader().setVisible(False)
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


def _header(run, name: str) -> str | None:
    for k, v in run.response_headers or ():
        if k.lower() == name:
            return v.strip()
    return None


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
            wait = _header(run, "retry-after")
            when = f"wait {wait} s (its retry-after header)" if wait and wait.isdigit() else \
                f"wait until {wait} (its retry-after header)" if wait else "wait a moment"
            advice = f"rate limited: {when} and send again, or send to fewer providers at once."
        elif http is not None and http >= 500:
            advice = "the provider failed on its side: send again later."
        elif http is not None and http >= 400:
            advice = "the request was refused: check the model name and parameters (Request tab)."
        elif etype == "connection_dropped":
            advice = "send again."
        elif etype == "stalled" or status == "stalled":
            advice = ("the provider may be overloaded: send again, or raise the read timeout "
                      "(Run → Timeouts…).")
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
    if http is not None and http >= 400:
        tail = "The provider's error body is in the Request tab." if run.chunks else ""
    elif run.sent and reply.blocks:
        tail = "What arrived before is kept here and can be exported."
    elif run.sent and run.chunks:
        tail = "What arrived is in the Raw tab."
    else:
        tail = ""
    short_msg = message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "…"
    lines = [head, short_msg, "What to do: " + advice + (" " + tail if tail else "")]
    full = [head, message, "What to do: " + advice + (" " + tail if tail else "")]
    return "\n".join(x for x in lines if x), "\n".join(x for x in full if x)


def notice_report(run, reply) -> str | None:
    """For a pane that finished without an error: the findings worth a look (a frame that was not JSON, a
    missing end marker, invalid tool arguments, ...), or None. Routine ones (keepalives, usage-only chunks)
    are left to the Diag tab."""
    if run.status != "done" or run.error is not None:
        return None
    notable = [d for d in reply.diagnostics if d.code not in ROUTINE_DIAGNOSTICS]
    if not notable:
        return None
    codes: dict[str, list[int]] = {}
    for d in notable:
        codes.setdefault(d.code, []).append(d.frame)
    parts = []
    for code, frames in codes.items():
        where = [str(f) for f in frames if f >= 0]
        parts.append(code + (f" (frame{'s' if len(where) > 1 else ''} {', '.join(where[:4])}"
                             f"{'…' if len(where) > 4 else ''})" if where else ""))
    lost = ""
    if "data-not-json" in codes:
        lost = " Frames that were not JSON were skipped: their content is missing from the reply."
    elif "missing-terminator" in codes:
        lost = " The stream ended without its end marker: the reply may be incomplete."
    n = len(notable)
    return (f"Finished, with {n} finding{'s' if n != 1 else ''} a strict client would trip on: "
            f"{'; '.join(parts)}.{lost} See the Diag tab.")


def end_note(run, reply) -> str | None:
    """For the Text tab of a finished pane whose reply stopped short of its end: where, and why, in one line
    (the banner above says more). None when the stream finished, or nothing arrived (the placeholder says so)."""
    if run.status not in FINAL_STATUSES or not reply.blocks:
        return None
    last = max((f for b in reply.blocks.values() for f in b.frames[-1:]), default=None)
    at = f" after frame {last}" if last is not None else ""
    if run.status == "cancelled":
        return f"⟂ Stopped here{at}: you cancelled the stream."
    if reply.error is not None:
        return f"⟂ The reply stops here: the provider sent an error inside the stream at frame {reply.error.frame}."
    if run.status == "stalled":
        return f"⟂ The reply stops here{at}: nothing more arrived before the read timeout."
    if run.status == "error":
        return f"⟂ The reply stops here{at}: the exchange failed (see the message above)."
    if not reply.terminated:
        return f"⟂ The stream ended here{at} without its end marker: the reply may be incomplete."
    return None


def finish_text(reply) -> str:
    """"finish tool_calls (tool_use)": the canonical finish reason and, when it differs, the provider's own."""
    f = reply.finish
    if f is None:
        return ""
    canon = f.canonical or "?"
    raw = f.raw if isinstance(f.raw, str) else (None if f.raw is None else json.dumps(f.raw))
    return f"finish {canon}" + (f" ({raw})" if raw and raw != canon else "")


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
        self.name_label.setObjectName("paneName")     # bold, by the style sheet (the size follows View > font)
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
        self.format_label.setWordWrap(True)
        self.format_label.setToolTip("Wire format · model; once known, the finish reason (canonical, then the "
                                     "provider's own in parentheses)")
        lay.addWidget(self.format_label)
        self.metrics_label = plain_label("", self)
        self.metrics_label.setObjectName("metrics")
        self.metrics_label.setWordWrap(True)
        lay.addWidget(self.metrics_label)
        self.read_timeout: float | None = None   # set by the window for live sends (None: a replay)
        self.quiet_label = plain_label("", self)
        self.quiet_label.setObjectName("quiet")
        self.quiet_label.setWordWrap(True)
        self.quiet_label.setStyleSheet("QLabel#quiet { color: #c2410c; font-weight: bold; }")
        self.quiet_label.setToolTip("Nothing (or only keepalives) arrived for this long. A stream that sends no "
                                    "byte for the read timeout ends as stalled (Run → Timeouts…).")
        self.quiet_label.hide()
        lay.addWidget(self.quiet_label)
        self.error_label = self._banner("errorBanner", "error", lay)
        self.notice_label = self._banner("noticeBanner", "notice", lay)

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        # never cut a tab's title: a narrow pane scrolls its tab bar instead
        self.tabs.setUsesScrollButtons(True)
        self.tabs.setElideMode(Qt.ElideNone)
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
        self._notice = None
        self._format_text = None
        self._placeholder_for = None
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
        for col, width in enumerate((30, 48, 70, 90, 90, 70, 50, 60, 150)):
            hh.resizeSection(col, width)
        # what a narrow pane should show first: type, tool name, JSON validity and the content; then the rest
        for visual, logical in enumerate((0, 1, 2, 3, 7, 8, 5, 6, 4)):
            hh.moveSection(hh.visualIndex(logical), visual)
        self.block_detail = _readonly_text(w)
        self.block_detail.setPlaceholderText("Every block appears here: tool calls with their arguments, text "
                                             "and thinking in short. Select a block for all of its content; its "
                                             "frames are then selected in the Raw tab.")
        w.addWidget(self.blocks_table)
        w.addWidget(self.block_detail)
        w.setSizes([160, 300])
        self.blocks_table.selectionModel().selectionChanged.connect(self._block_selected)
        page.addWidget(w)
        self._show_blocks_overview()

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
        t = self.diagnostics_table
        t.setWordWrap(True)   # the message is the point of the row: wrap it rather than elide it
        t.setTextElideMode(Qt.ElideNone)
        hh = t.horizontalHeader()
        hh.resizeSection(0, 50)
        hh.resizeSection(1, 150)
        fit = lambda *_a: t.resizeRowsToContents() if t.model().rowCount() <= 400 else None  # noqa: E731
        c.diagnostics.rowsInserted.connect(fit)
        hh.sectionResized.connect(fit)
        fit()
        self.diagnostics_table.setToolTip("Double-click a finding to see its frame in the Raw tab")
        self.diagnostics_table.doubleClicked.connect(lambda i: self.show_frame(i.data(FrameRole)))
        self.diagnostics_table.activated.connect(lambda i: self.show_frame(i.data(FrameRole)))
        page.addWidget(self.diagnostics_table)

    def _build_request_tab(self, page: QVBoxLayout) -> None:
        row = QHBoxLayout()
        self.pretty_check = QCheckBox("Pretty-print JSON", self)
        self.pretty_check.setToolTip("Off: the body exactly as sent (byte for byte, secrets masked). On: the "
                                     "same JSON indented for reading.")
        self.pretty_check.toggled.connect(lambda _on: self._update_request())
        self.curl_button = QPushButton("Copy as curl", self)
        self.curl_button.setToolTip("Copy a curl command for this request; the key is replaced by its "
                                    "environment variable")
        self.curl_button.clicked.connect(self.copy_curl)
        row.addWidget(self.pretty_check)
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
            elif c.changed_blocks:
                self._show_blocks_overview()
            if c.changed_blocks and self._multi_choice() == self.blocks_table.isColumnHidden(1):
                self.blocks_table.setColumnHidden(1, not self._multi_choice())
        if RAW in built and self._follow_frames:
            self.frames_table.scrollToBottom()
        self._update_header()
        self._update_tab_titles()
        if REQUEST in built and self._request_key() != self._request_shown:
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

    def _banner(self, object_name: str, style: str, layout) -> QLabel:
        """A hidden, selectable, plain-text banner (error or notice) added to `layout`."""
        label = plain_label("", self)
        label.setObjectName(object_name)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        label.setStyleSheet(BANNER_STYLES[style])
        label.hide()
        layout.addWidget(label)
        return label

    def _update_header(self) -> None:
        c = self.controller
        run = c.run
        status = c.status
        if status != self._badge_status:
            self._badge_status = status
            bg, fg = STATUS_COLORS.get(status, ("#6b7280", "#ffffff"))
            self.badge.setText(status)
            self.badge.setStyleSheet(f"QLabel {{ background: {bg}; color: {fg}; border-radius: 8px; "
                                     f"padding: 1px 8px; font-weight: bold; }}")
        self.stop_button.setEnabled(c.task is not None and not c.task.done())
        self.metrics_label.setText(self.metrics_text())
        self.update_quiet()
        reply = run.decoder.reply
        final = status in FINAL_STATUSES
        report = error_report(run, reply) if (final or reply.error is not None) else None
        if report != self._advice:
            self._advice = report
            self.error_label.setStyleSheet(BANNER_STYLES["stalled" if status == "stalled" else "error"])
            self.error_label.setText(report[0] if report else "")
            self.error_label.setToolTip(report[1] if report else "")
            self.error_label.setVisible(bool(report))
        notice = notice_report(run, reply) if final else None
        if notice != self._notice:
            self._notice = notice
            self.notice_label.setText(notice or "")
            self.notice_label.setVisible(bool(notice))
        fmt = f"{run.provider.format} · {run.provider.model}"
        fin = finish_text(reply)
        fmt += f" · {fin}" if fin else ""
        if fmt != self._format_text:
            self._format_text = fmt
            self.format_label.setText(fmt)
        if final and self._placeholder_for != status:
            self._placeholder_for = status
            self.text_view.answer.setPlaceholderText(self._empty_reply_text())
        self.text_view.set_end_note(end_note(run, reply) if final else None)

    def _empty_reply_text(self) -> str:
        """What the Text tab says when a finished pane has no reply text."""
        run = self.controller.run
        if run.status == "cancelled":
            return "(no reply: cancelled before any content arrived)"
        if not run.sent:
            return "(not sent: see the message above)"
        if run.http_status is not None and run.http_status >= 400:
            return f"(no reply: the provider answered HTTP {run.http_status}; its error body is in the Request tab)"
        if run.status == "stalled":
            return "(no reply: nothing arrived before the read timeout)"
        if run.status == "error":
            return "(no reply: the exchange failed before any content; see the message above and the Raw tab)"
        return "(the reply was empty: see the Blocks and Raw tabs)"

    def update_quiet(self) -> None:
        """Show "quiet for N s" while a live stream sends nothing (or only keepalives); hide it otherwise."""
        text = self.quiet_text()
        if text != self.quiet_label.text():
            self.quiet_label.setText(text or "")
        if bool(text) != self.quiet_label.isVisibleTo(self):
            self.quiet_label.setVisible(bool(text))

    def quiet_text(self) -> str | None:
        run = self.controller.run
        q, qc = run.quiet_ns(), run.quiet_content_ns()
        if q is None or qc is None:
            return None
        rt = self.read_timeout
        threshold = QUIET_AFTER_NS if not rt else min(QUIET_AFTER_NS, int(rt * 1e9 / 4))
        if qc < threshold:
            return None
        limit = f"; stalled at {rt:g} s without a byte" if rt else ""
        if run.http_status is None:
            return f"waiting for the response headers for {q / 1e9:.1f} s{limit}"
        what = "no content yet after" if run.metrics.t_first_content_ns is None else "quiet for"
        if q >= threshold:
            if qc - q < 200_000_000:
                return f"{what} {qc / 1e9:.1f} s, not a byte{limit}"
            return f"{what} {qc / 1e9:.1f} s, not a byte for {q / 1e9:.1f} s{limit}"
        k = run.metrics.keepalives
        return (f"{what} {qc / 1e9:.1f} s: keepalives only ({k} so far; they reset the read timeout)"
                if k else f"{what} {qc / 1e9:.1f} s: bytes, but no content")

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

    def _request_key(self) -> tuple:
        run = self.controller.run
        body = run.metrics.bytes if run.body_kind not in (None, "event-stream") else None
        return (id(run.request), id(run.response_headers), run.http_status, body, run.status,
                self.pretty_check.isChecked())

    def _update_request(self) -> None:
        run = self.controller.run
        self._request_shown = self._request_key()
        sb = self.request_text.verticalScrollBar()
        pos = sb.value()
        self.request_text.setPlainText(request_text(run, pretty=self.pretty_check.isChecked()))
        sb.setValue(pos)
        self.curl_button.setEnabled(run.request is not None)

    # -- selection links ---------------------------------------------------------------------------------
    def _block_selected(self, *_a) -> None:
        rows = self.blocks_table.selectionModel().selectedRows()
        if not rows:
            self._detail_block = None
            self._show_blocks_overview()
            return
        row = rows[0].row()
        self._detail_block = self.controller.blocks.block(row).index
        self._show_block(row)
        frames = []
        for r in rows:
            frames.extend(self.controller.blocks.block(r.row()).frames)
        self.select_frames(frames, scroll=True)

    def _show_blocks_overview(self) -> None:
        """Nothing selected: every block in short (tool calls with their arguments)."""
        blocks = self.controller.run.decoder.reply.ordered_blocks()
        sb = self.block_detail.verticalScrollBar()
        pos = sb.value()
        self.block_detail.setPlainText(blocks_overview(blocks))
        sb.setValue(pos)

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


OVERVIEW_TEXT_CHARS = 300


def blocks_overview(blocks) -> str:
    """Every block in short, for the Blocks tab's detail when no block is selected: tool calls whole (their
    arguments pretty-printed once complete), text and thinking cut to their first few hundred characters."""
    out = []
    for b in blocks:
        head = f"── block {b.index} · {b.kind}" + (f" · choice {b.choice}" if b.choice else "") + \
            ("" if b.complete else " · streaming") + " ──"
        if b.kind == "tool_call":
            body = block_detail(b)
        else:
            text = block_detail(b)
            if len(text) > OVERVIEW_TEXT_CHARS:
                text = text[:OVERVIEW_TEXT_CHARS] + f"… ({len(text):,} chars: select the row for all of it)"
            body = text
        out.append(head + "\n" + body)
    return "\n\n".join(out)


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
    if isinstance(e, ev.InBandError):
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


def request_body(req, pretty: bool = False) -> str:
    """The request body as text: exactly the bytes `core.live.transport` sends (`HttpRequest.content()`, the same
    serialization, from the redacted request), or indented JSON when `pretty`."""
    body = req.body
    if isinstance(body, (bytes, bytearray)):
        return body.decode("utf-8", "replace")
    if isinstance(body, str):
        return body
    if pretty:
        return json.dumps(body, indent=2, ensure_ascii=False)
    return req.content().decode("utf-8", "replace")


def response_body(run, pretty: bool = False) -> str | None:
    """A response body that is not an event stream (an HTTP error's body, a JSON answer), or None."""
    if run.body_kind in (None, "event-stream") or not run.chunks:
        return None
    if run.body_kind == "other" and run.decoder.frames:
        return None    # decoded as a stream: it is in the Raw tab
    data = run.body
    cut = len(data) > MAX_BODY_SHOWN
    text = data[:MAX_BODY_SHOWN].decode("utf-8", "replace")
    if pretty and not cut:
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pass
    return text + (f"\n… ({len(data) - MAX_BODY_SHOWN:,} more bytes: export the run for all of it)" if cut else "")


def request_text(run, pretty: bool = False) -> str:
    """The redacted request as sent (the body byte for byte unless `pretty`), then the response status, headers
    and, when it is not an event stream, the response body."""
    req = run.request
    if req is None:
        return "(no request was sent)"
    lines = [f"{req.method} {req.url}"]
    lines.extend(_headers_lines(req.headers))
    lines.append("")
    lines.append(request_body(req, pretty))
    lines.append("")
    if isinstance(req.body, dict):
        n = len(req.content())
        lines.append(f"── body: {n:,} bytes, " + ("pretty-printed here (untick Pretty-print JSON for the exact "
                                                    "bytes)" if pretty else "exactly as sent")
                     + " (secrets masked); httpx adds Host, Connection and Content-Length ──")
    if not run.sent:
        lines.append("(this request was not sent)")
    notes = req.notes
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines.extend(f"  • {n}" for n in notes)
    lines.append("")
    lines.append("── response ──")
    status = run.http_status
    if status is not None:
        lines.append(" ".join(x for x in (run.http_version, str(status), run.reason_phrase) if x))
    else:
        lines.append("(no response yet)" if not run.finished else "(no response)")
    lines.extend(_headers_lines(run.response_headers))
    body = response_body(run, pretty)
    if body is not None:
        lines.append("")
        lines.append(f"── response body ({len(run.body):,} bytes, not an event stream) ──")
        lines.append(body)
    return "\n".join(lines)


def curl_text(run) -> str | None:
    req = run.request
    if req is None:
        return None
    from core.live.request import curl_command

    return curl_command(req, run.provider.api_key_env or None)
