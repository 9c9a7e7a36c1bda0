"""Run > Tap…: a tap in front of the user's own application's provider, watched live in a window of its own.

    dlg = TapDialog(settings, parent)          # listen address and upstreams (remembered), checked on OK
    window = TapWindow(dlg.mounts, dlg.host, dlg.port)
    await window.start()                       # the tap starts in a process of its own; None: cannot listen
    await window.aclose()                      # stops the tap: open exchanges end cancelled, clients answered
    open_tap(main_window, settings, current)   # the menu action: the dialog, then the window (or raise it)

The tap (`core.servers.tap.process.ProcessTapServer`) forwards in a process of its own, so neither the window's
painting nor the recorder's work ever delays forwarding, and forwarding (Python in h11, httpx and uvicorn for
every chunk) never takes the GIL from the window's thread. The child feeds the recorder's calls back; they run on
the decode worker (`core.live.decode_worker`), holding its lock (`gui.controller.DECODE_LOCK`), which the
window's refreshes hold too, and waiting at its gate while the window's thread is busy. The tap's listeners
(`tap.on_started`, `tap.on_ended`) run on the feed's reader thread and the worker and only emit queued signals
to the window. Each exchange is recorded by the core
into a `ProviderRun` as it goes; a shown exchange gets a `PaneController`
(with no task of its own: the tap feeds the run, and `run.on_update` marks the pane dirty as for any run) and
a `PaneWidget`, exactly as a pane of the comparison window. Exchanges that are not shown have no pane, and a
pane is built from the run's records whenever it is shown again.

Which exchanges are shown (as many as fit the window at a pane's minimum width, at most `MAX_SHOWN`: two at 1024
px, three at 1280, four at 1920; the window never grows for them): the pinned ones (at most two, kept shown,
leftmost), then either the newest ones ("Follow new exchanges", the default) or the ones picked in the list
(picking turns following off; checking it again shows the newest). Export writes every exchange seen, as File >
Export does.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QFrame, QGridLayout, QGroupBox, QHBoxLayout, QHeaderView, QLineEdit, QMainWindow,
                               QPushButton, QScrollArea, QSizePolicy, QSplitter, QStyle, QVBoxLayout, QWidget)

from core.cli.tap import parse_listen, setup_snippets
from core.live.capture import export
from core.live.decode_worker import shared_worker
from core.live.recorder import FINAL_STATUSES
from core.live.summary import plural
from core.servers.tap.process import ProcessTapServer
from core.servers.tap.server import listen_problem
from core.servers.tap.upstreams import Mounts, UpstreamSpecError, parse_upstreams

from gui import plaintips
from gui.controller import PaneController, RepaintScheduler, gate_decoding_on_this_thread
from gui.exchange_list import (DURATION, PATH, PIN, STATUS, TOKENS, ExchangeListModel, ExchangeRole, cell_texts,
                                time_text)
from gui.pane import MIN_WIDTH as PANE_MIN_WIDTH
from gui.pane import PaneWidget
from gui.panes_area import columns_that_fit
from gui.persisted import PersistedSettings
from gui.qtcompat import MainThreadGC
from gui.theme import fitted_size, mono_font, set_verdict
from gui.widgets import plain_label, table

MAX_SHOWN = 4      # panes side by side
LIST_WIDTH = 330           # px: the list of exchanges beside the panes (1024-1280 px windows)
LIST_WIDTH_WIDE = 680      # ... at most, on a wide window, where it shows every column
LIST_WIDTH_LEAVES = 1290   # ... leaving this much for the panes (MAX_SHOWN at their minimum width, and the handles)
MAX_PINNED = 2     # pinned to compare
PATH_LEAST = 12    # characters: the path column's least width (`_fit_path`)
WINDOW_SIZE = (1280, 800)  # the window's first size, within the screen's available geometry (`fitted_size`)


def _loop_running() -> bool:
    try:
        return asyncio.get_event_loop().is_running()
    except RuntimeError:
        return False


def choose_shown(newest_first: list, pinned: list, picked: list, follow: bool, limit: int = MAX_SHOWN) -> list:
    """The exchanges to show, left to right: the pinned ones, then the newest (following) or the picked ones."""
    rest = newest_first if follow else picked
    return (list(pinned) + [ex for ex in rest if ex not in pinned])[:limit]


def split_upstreams(text: str) -> list[str]:
    """The dialog's upstreams field: `--upstream` values separated by spaces ("emulator", "openai anthropic",
    "local=http://127.0.0.1:11434")."""
    return text.split()


class TapDialog(QDialog):
    """Run > Tap…: where the tap listens and where it forwards, checked as the command line checks them; the
    values are remembered (`gui.persisted`). After `accept()`: `host`, `port`, `mounts`."""

    def __init__(self, settings: PersistedSettings | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tap")
        self.settings = settings or PersistedSettings()
        self.host: str | None = None
        self.port: int | None = None
        self.mounts: Mounts | None = None
        form = QFormLayout(self)
        intro = plain_label("A tap sits in front of your application's provider: point your app at it, and "
                            "every exchange is forwarded untouched and shown live here.", self)
        intro.setWordWrap(True)
        form.addRow(intro)
        self.listen_edit = QLineEdit(self.settings.tap_listen, self)
        self.listen_edit.setToolTip("HOST:PORT on this machine (port 0 picks a free one)")
        self.upstreams_edit = QLineEdit(self.settings.tap_upstreams, self)
        self.upstreams_edit.setToolTip("One URL or built-in name (openai, anthropic, gemini, emulator) maps the "
                                       "root onto it; several, separated by spaces, are mounted by name "
                                       "(NAME=URL, or the built-in names): /anthropic/v1/messages -> "
                                       "https://api.anthropic.com/v1/messages")
        self.insecure_box = QCheckBox("Allow a plain http:// upstream on another machine", self)
        self.insecure_box.setChecked(self.settings.tap_allow_insecure)
        self.insecure_box.setToolTip("Your client's key would cross the network in clear")
        form.addRow("Listen on", self.listen_edit)
        form.addRow("Upstreams", self.upstreams_edit)
        form.addRow(self.insecure_box)
        hint = plain_label("emulator: the built-in emulator (works offline). Several upstreams: e.g. "
                           "\"openai anthropic local=http://127.0.0.1:11434\".", self)
        hint.setObjectName("dim")
        hint.setWordWrap(True)
        form.addRow(hint)
        self.error_label = plain_label("", self)
        self.error_label.setObjectName("tapDialogError")
        set_verdict(self.error_label, "error")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        form.addRow(self.error_label)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        buttons.button(QDialogButtonBox.Ok).setText("Start tap")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(560, self.sizeHint().height())

    def problem(self) -> str | None:
        """Why the fields cannot be used (None: they can; `host`, `port` and `mounts` are set)."""
        try:
            host, port = parse_listen(self.listen_edit.text())
        except ValueError as exc:
            return str(exc).replace("--listen ", "Listen on: ")
        why = listen_problem(host, False)
        if why:
            return why.replace(", or give --allow-remote if you mean it", " (the command line's --allow-remote "
                                                                          "can, the window does not)")
        try:
            mounts = parse_upstreams(split_upstreams(self.upstreams_edit.text()),
                                     allow_insecure=self.insecure_box.isChecked())
        except UpstreamSpecError as exc:
            return f"Upstreams: {exc}"
        self.host, self.port, self.mounts = host, port, mounts
        return None

    def accept(self) -> None:
        why = self.problem()
        if why:
            self.error_label.setText(why)
            self.error_label.show()
            return
        s = self.settings
        s.tap_listen = self.listen_edit.text().strip()
        s.tap_upstreams = " ".join(split_upstreams(self.upstreams_edit.text()))
        s.tap_allow_insecure = self.insecure_box.isChecked()
        super().accept()


class SnippetRow(QWidget):
    """One setup snippet (read-only, selectable) with a Copy button that puts it on the clipboard."""

    copied = Signal(str)
    """The snippet was put on the clipboard (its text)."""

    def __init__(self, client: str, snippet: str, parent=None) -> None:
        super().__init__(parent)
        self.client = client
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = plain_label(client, self)
        self.label.setMinimumWidth(90)
        self.text = QLineEdit(snippet, self)
        self.text.setReadOnly(True)
        self.text.setFont(mono_font())
        self.text.setCursorPosition(0)
        self.text.setToolTip(snippet)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setToolTip(f"Copy the {client} setup to the clipboard")
        self.copy_button.clicked.connect(self.copy)
        lay.addWidget(self.label)
        lay.addWidget(self.text, 1)
        lay.addWidget(self.copy_button)

    def copy(self) -> None:
        QApplication.clipboard().setText(self.text.text())
        self.copied.emit(self.text.text())


class _PinClicks(QObject):
    """A mouse click on a row's pin box toggles the pin without selecting the row (selecting picks what is
    shown, and pinning must not change that)."""

    def __init__(self, view, model: ExchangeListModel) -> None:
        super().__init__(view)
        self.view = view
        self.model = model
        view.viewport().installEventFilter(self)

    def eventFilter(self, obj, e) -> bool:
        kind = e.type()
        if kind not in (QEvent.MouseButtonPress, QEvent.MouseButtonRelease, QEvent.MouseButtonDblClick):
            return False
        index = self.view.indexAt(e.position().toPoint())
        if not index.isValid() or index.column() != PIN:
            return False
        if kind == QEvent.MouseButtonPress and e.button() == Qt.LeftButton:
            ex = index.data(ExchangeRole)
            self.model.pinToggled.emit(ex, not self.model.is_pinned(ex))
        return True


class ExchangePane(QFrame):
    """A shown exchange: a strip (method, path, time, Pin) over the exchange's `PaneWidget`.

    Signals:
        pinToggled(object, bool): the strip's Pin button was toggled (the exchange, pinned or not).
    """

    pinToggled = Signal(object, bool)

    def __init__(self, ex, scheduler: RepaintScheduler, parent=None, stop=None) -> None:
        """`stop(ex)`: what the pane's Stop does (the tap ends that exchange alone). `ex` None: a spare, made
        while the window idles (its widgets made and styled) and given its exchange by `attach`."""
        super().__init__(parent)
        self.exchange = None
        self.controller = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        strip = QHBoxLayout()
        strip.setContentsMargins(6, 2, 6, 0)
        self.request_label = plain_label("", self)
        self.request_label.setObjectName("tapRequest")
        self.request_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)   # long paths are cut
        self.request_label.setFont(mono_font())
        self.pin_button = QPushButton("Pin", self)
        self.pin_button.setCheckable(True)
        self.pin_button.setToolTip("Pinned exchanges stay shown (at most two)")
        self.pin_button.toggled.connect(lambda on: self.pinToggled.emit(self.exchange, on))
        strip.addWidget(self.request_label, 1)
        strip.addWidget(self.pin_button)
        lay.addLayout(strip)
        self.pane = PaneWidget(None, self)
        self.pane.stopRequested.connect(lambda _name: self.controller.cancel())
        lay.addWidget(self.pane, 1)
        if ex is None:
            self.pane.make_parts()
            self.ensurePolished()     # (styled now: a hidden widget is otherwise polished when first shown)
        else:
            self.attach(ex, scheduler, stop)

    def attach(self, ex, scheduler: RepaintScheduler, stop=None) -> None:
        """Show this exchange (a spare's, once)."""
        self.exchange = ex
        self.controller = PaneController(ex.run, scheduler, self)
        if stop is not None:
            self.controller.stopper = lambda: stop(ex)
        self.request_label.setText(f"{ex.method} {ex.path}")
        self.request_label.setToolTip(f"{ex.name}: {ex.method} {ex.path} at {time_text(ex.run.started_at)}")
        self.pane.attach(self.controller)
        self.controller.refresh()

    def set_pinned(self, on: bool) -> None:
        if self.pin_button.isChecked() != on:
            self.pin_button.blockSignals(True)
            self.pin_button.setChecked(on)
            self.pin_button.blockSignals(False)
        self.pin_button.setText("Pinned" if on else "Pin")

    def retire(self) -> None:
        """The pane is no longer shown: its controller stops listening to the run."""
        if self.controller is not None:
            self.controller.retire()


SPARE_AFTER_MS = 300      # spare panes are made this long after the last exchange ended (or the tap started)


class TapWindow(QMainWindow):
    """The tap's window (see the module docstring).

    Signals:
        exchangeStarted(object): the tap started an exchange (a row was added).
        exchangeEnded(object): an exchange ended (its run is final).
        stopped(): the tap stopped serving (every open exchange ended).
    """

    exchangeStarted = Signal(object)
    exchangeEnded = Signal(object)
    stopped = Signal()
    _exchange_began = Signal(object)     # (internal: from the tap's thread)
    _exchange_over = Signal(object)
    _tap_lost = Signal(str)

    def __init__(self, mounts: Mounts, host: str = "127.0.0.1", port: int = 0, *,
                 settings: PersistedSettings | QSettings | None = None, emulator_speed: float = 1.0,
                 parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("StreamScope Tap")
        self.settings = settings if isinstance(settings, PersistedSettings) else PersistedSettings(settings)
        # the tap forwards in a process of its own; its exchanges are recorded here on the decode worker, which
        # takes turns with this thread at its gate, as for the window's own streams
        worker = shared_worker()
        gate_decoding_on_this_thread(worker)
        self.server = ProcessTapServer(mounts, host, port, emulator_speed=emulator_speed, worker=worker)
        self.tap = self.server.tap
        # the tap's listeners run on its reader's and the worker's threads: they only hand the exchange over
        self._exchange_began.connect(self._on_started, Qt.QueuedConnection)
        self._exchange_over.connect(self._on_ended, Qt.QueuedConnection)
        self._tap_lost.connect(self._on_lost, Qt.QueuedConnection)
        self.tap.on_started.append(self._exchange_began.emit)
        self.tap.on_ended.append(self._exchange_over.emit)
        self.tap.on_lost.append(self._tap_lost.emit)
        self._serving = False
        self.host, self.port = host, port
        self.base_url: str | None = None
        self.listen_error: str | None = None
        self.pinned: list = []
        self.picked: list = []
        self.follow = True
        self.panes: dict[int, ExchangePane] = {}     # id(exchange) -> its pane, while shown
        self.spares: list[ExchangePane] = []          # panes made ahead while no exchange streams (_make_spare)
        self._spare_timer = QTimer(self)
        self._spare_timer.setSingleShot(True)
        self._spare_timer.timeout.connect(self._make_spare)
        # retired panes are deleted one per loop turn: a pane's text document takes 5-30 ms to free, and the
        # four panes a new round of exchanges replaces held the window for all of them at once
        self._retired: list[ExchangePane] = []
        self._delete_timer = QTimer(self)
        self._delete_timer.setSingleShot(True)
        self._delete_timer.timeout.connect(self._delete_one)
        self.last_export: Path | None = None
        self._stop_task: asyncio.Task | None = None
        self._start_task: asyncio.Task | None = None      # set by open_tap
        self._syncing_selection = False
        self.scheduler = RepaintScheduler(parent=self)

        self.list_model = ExchangeListModel(lambda ex: ex in self.pinned, self)
        self.list_model.pinToggled.connect(self.set_pinned)

        # -- the top row --
        self.listen_label = plain_label("Starting…", self)
        self.listen_label.setObjectName("tapListening")
        self.listen_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.listen_label.setWordWrap(True)
        self.follow_box = QCheckBox("Follow new exchanges", self)
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Show the newest exchanges as they come in (picking some in the list turns "
                                   "this off)")
        self.follow_box.toggled.connect(self.set_follow)
        self.export_button = QPushButton("Export…", self)
        self.export_button.setToolTip("Write every exchange seen to a capture (.jsonl, .har, .md, .sse, .yaml); "
                                      "keys are redacted")
        self.export_button.clicked.connect(self.export_dialog)
        self.stop_button = QPushButton("Stop tap", self)
        self.stop_button.setToolTip("Stop listening: open exchanges end as cancelled, their clients get a clean end")
        self.stop_button.clicked.connect(self.stop_soon)
        self.stop_button.setEnabled(False)
        top = QHBoxLayout()
        top.setContentsMargins(6, 6, 6, 0)
        top.addWidget(self.listen_label, 1)
        top.addWidget(self.follow_box)
        top.addWidget(self.export_button)
        top.addWidget(self.stop_button)

        # -- the list and the setup snippets, left --
        left = QWidget(self)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(6, 0, 0, 6)
        ll.addWidget(plain_label("Exchanges (newest first; pick to show, pin to keep)", left))
        self.list_view = table(self.list_model, left)
        self.list_view.setObjectName("tapExchanges")
        self.list_view.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self._pin_clicks = _PinClicks(self.list_view, self.list_model)   # a pin click does not pick the row
        header = self.list_view.horizontalHeader()
        header.setStretchLastSection(False)
        # widths fitted to a row's cells when it comes or ends (`_fit_row`), not as the live rows tick:
        # ResizeToContents (and resizeColumnToContents) asks every row's every cell, role by role, on each change,
        # and under firehoses each of those Python calls waits for the GIL while the decoding runs (the window
        # stalled 0.5 s at a time; fitting every row as one ended was still a seventh of the window's thread)
        for col in range(self.list_model.columnCount()):
            header.setSectionResizeMode(col, QHeaderView.Interactive)
            # (from the headers' own widths, not the header's default 100 px: `_fit_row` only ever widens)
            self.list_view.setColumnWidth(col, header.sectionSizeHint(col))
        self._path_width = header.sectionSizeHint(PATH)   # what the path's cells want (`_fit_path`)
        self.list_view.viewport().installEventFilter(self)  # (resized: `_fit_path`)
        self.list_model.rowsInserted.connect(self._on_rows_inserted)
        self.list_view.setTextElideMode(Qt.ElideLeft)      # a path's end names the endpoint
        self.list_view.selectionModel().selectionChanged.connect(self._on_selection)
        ll.addWidget(self.list_view, 1)
        self.setup_box = QGroupBox("Point your app at the tap", left)
        self.setup_layout = QGridLayout(self.setup_box)
        self.snippets: list[SnippetRow] = []
        ll.addWidget(self.setup_box)

        # -- the panes, right --
        self.panes_split = QSplitter(Qt.Horizontal, self)
        self.panes_split.setChildrenCollapsible(False)
        self.placeholder = plain_label("Waiting for the first request: point your application at the tap (the "
                                       "snippets on the left), and each exchange opens here as a pane, live.",
                                       self.panes_split)
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.panes_split.addWidget(self.placeholder)
        # as many panes as fit are shown (`shown_limit`); the area scrolls sideways rather than widen the window
        # past the screen should they not (two pinned on a narrow window)
        self.panes_scroll = QScrollArea(self)
        self.panes_scroll.setFrameShape(QFrame.NoFrame)
        self.panes_scroll.setWidgetResizable(True)
        self.panes_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.panes_scroll.setWidget(self.panes_split)
        self._limit = 0

        self.split = QSplitter(Qt.Horizontal, self)
        self.split.addWidget(left)
        self.split.addWidget(self.panes_scroll)
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([LIST_WIDTH, 950])
        self._list_width_chosen = False            # the user moved the split: the list keeps the width they gave
        self.split.splitterMoved.connect(self._on_split_moved)

        central = QWidget(self)
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addLayout(top)
        cl.addWidget(self.split, 1)
        self.setCentralWidget(central)
        self.status_label = plain_label("", self)
        self.statusBar().addWidget(self.status_label, 1)
        self._update_status()

        self._layout_timer = QTimer(self)        # the panes are (re)built after the tap's callback returns
        self._layout_timer.setSingleShot(True)
        self._layout_timer.timeout.connect(lambda: self.update_panes(max_new=1))
        self._tick = QTimer(self)                # elapsed times, "quiet for", the list's live rows
        self._tick.setInterval(100)
        self._tick.timeout.connect(self._on_tick)
        screen = self.screen() or QGuiApplication.primaryScreen()
        self.resize(*fitted_size(WINDOW_SIZE, screen))   # (1280x800 on a 1024x700 screen went off it)

    # -- serving ------------------------------------------------------------------------------------------
    @property
    def serving(self) -> bool:
        return self._serving

    async def start(self) -> str | None:
        """Start listening; the base URL, or None when it could not (`listen_error` says why, and so does the
        window)."""
        try:
            self.base_url = await asyncio.get_running_loop().run_in_executor(None, self.server.start)
            self._serving = True
        except (OSError, RuntimeError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.listen_error = f"Could not listen on {self.host}:{self.port}: {why}"
            self.listen_label.setText(self.listen_error)
            self._update_status()
            return None
        self.listen_label.setText(f"Tapping on {self.base_url} -> {self.tap.mounts.describe()}")
        self._show_snippets()
        self.stop_button.setEnabled(True)
        self._tick.start()
        self._spare_timer.start(SPARE_AFTER_MS)
        self._update_status()
        return self.base_url

    def _show_snippets(self) -> None:
        for i, (client, snippet) in enumerate(setup_snippets(self.base_url, self.tap.mounts)):
            row = SnippetRow(client, snippet, self.setup_box)
            row.copied.connect(lambda text, c=client: self.statusBar().showMessage(f"Copied the {c} setup", 3000))
            self.setup_layout.addWidget(row, i, 0)
            self.snippets.append(row)

    async def stop(self) -> None:
        """Stop the tap: each open exchange ends `cancelled` (its upstream request closed, its client's response
        ended cleanly); everything seen stays shown and exportable."""
        if self._stop_task is None:
            self._stop_task = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stop_task)

    def stop_soon(self) -> None:
        """The Stop button (and closing the window): stop without waiting here."""
        if self._stop_task is None:
            self._stop_task = asyncio.ensure_future(self._stop())

    async def _stop(self) -> None:
        self.stop_button.setEnabled(False)
        self.stop_button.setText("Stopping…")
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.server.stop)
        finally:
            self._serving = False
            self._tick.stop()
            MainThreadGC.streaming(False, owner=self)
            self.stop_button.setText("Stopped")
            if self.base_url:
                self.listen_label.setText(f"Stopped (was tapping on {self.base_url} -> "
                                          f"{self.tap.mounts.describe()})")
            self.scheduler.flush()
            self._on_tick()
            self._update_status()
            self.stopped.emit()

    def _on_lost(self, why: str) -> None:
        """The tap's process ended on its own (its open exchanges ended with what they had received)."""
        if not self.serving or self._stop_task is not None:
            return
        self.stop_soon()
        self.statusBar().showMessage(f"The tap stopped: {why}", 10000)

    async def aclose(self) -> None:
        """Stop the tap (if it runs) and wait until it has."""
        if self.serving or self._stop_task is not None:
            await self.stop()

    def closeEvent(self, e) -> None:
        # closing stops the tap; outside the running loop (Qt events pumped by hand) aclose() will
        if self.serving and _loop_running():
            self.stop_soon()
        super().closeEvent(e)

    # -- the tap's listeners (queued from the tap's thread) ------------------------------------------------
    def _on_started(self, ex) -> None:
        MainThreadGC.streaming(True, owner=self)     # (young collections only while exchanges stream)
        self.list_model.add(ex)
        self._update_status()
        if self.follow:
            self._layout_timer.start(0)
        self.exchangeStarted.emit(ex)

    # the widest a live cell gets, so that a growing duration or token count is not elided between fits
    _LIVE_WIDEST = {STATUS: "streaming · 200", DURATION: "59.9 s", TOKENS: "99,999 / ~99,999"}

    def _fit_row(self, ex) -> None:
        """Widen the columns that `ex`'s cells (or the headers) do not fit: one row measured here, in Python, not
        every row's cells asked by Qt. Never narrower: what the user widened stays so."""
        view = self.list_view
        header = view.horizontalHeader()
        metrics = view.fontMetrics()
        style = view.style()
        # what Qt adds to a cell's text when it sizes one: the item's margins (QCommonStyle), a pixel of
        # rounding (it measures the text's bounding rectangle, not its advance) and the grid line
        pad = 2 * (style.pixelMetric(QStyle.PM_FocusFrameHMargin, None, view) + 1) + 1 + 1
        wanted = {PIN: style.pixelMetric(QStyle.PM_IndicatorWidth, None, view) + pad}
        for col, text in cell_texts(ex):
            wanted[col] = metrics.horizontalAdvance(text) + pad
        for col, widest in self._LIVE_WIDEST.items():
            wanted[col] = max(wanted[col], metrics.horizontalAdvance(widest) + 16)
        # a long path is elided at its start (its end names the endpoint) rather than pushing the rest away
        wanted[PATH] = min(wanted[PATH], metrics.horizontalAdvance("x" * 24))
        for col, width in wanted.items():
            width = max(width, header.sectionSizeHint(col))
            if col == PATH:
                self._path_width = max(self._path_width, width)
            elif width > view.columnWidth(col):
                view.setColumnWidth(col, width)
        self._fit_path()

    def _fit_path(self) -> None:
        """The path column takes what the list's width leaves the others, up to what its cells want and down to
        `PATH_LEAST` characters (elided at its start): every column fits a wide list (at 1920 px the tokens were
        cut), and on a narrow one the columns right of the path scroll."""
        view = self.list_view
        others = sum(view.columnWidth(c) for c in range(self.list_model.columnCount()) if c != PATH)
        least = min(self._path_width, view.fontMetrics().horizontalAdvance("x" * PATH_LEAST))
        width = max(least, min(self._path_width, view.viewport().width() - others))
        if width != view.columnWidth(PATH):
            view.setColumnWidth(PATH, width)

    def _on_rows_inserted(self, _parent, first: int, last: int) -> None:
        for row in range(first, last + 1):
            ex = self.list_model.exchange(row)
            if ex is not None:
                self._fit_row(ex)

    def _on_ended(self, ex) -> None:
        if not self.tap.in_flight:
            MainThreadGC.streaming(False, owner=self)
            self._spare_timer.start(SPARE_AFTER_MS)
        self.list_model.changed(ex)
        self._fit_row(ex)
        pane = self.panes.get(id(ex))
        if pane is not None:
            pane.controller.mark_dirty()
        self._update_status()
        self.exchangeEnded.emit(ex)

    def _on_tick(self) -> None:
        for pane in self.panes.values():
            p = pane.pane
            if pane.controller.status not in FINAL_STATUSES:
                p.metrics_label.setText(p.metrics_text())
                p.update_quiet()
        self.list_model.refresh_live()

    # -- what is shown ------------------------------------------------------------------------------------
    def exchanges(self) -> list:
        """Every exchange seen, newest first."""
        return self.list_model.exchanges()

    def shown(self) -> list:
        """The exchanges that have a pane, left to right."""
        widgets = (self.panes_split.widget(i) for i in range(self.panes_split.count()))
        return [w.exchange for w in widgets if isinstance(w, ExchangePane) and w.exchange is not None]

    def pane_for(self, ex) -> ExchangePane | None:
        return self.panes.get(id(ex))

    def update_panes(self, max_new: int | None = None) -> None:
        """Show `choose_shown(...)`: panes no longer chosen are retired, new ones built, all put in order.
        `max_new`: build at most that many now and the rest in the next loop turns (a pane costs about 10 ms,
        and four new exchanges at once would hold the window's thread for all of them)."""
        self._layout_timer.stop()
        self._limit = self.shown_limit()
        wanted = choose_shown(self.exchanges(), self.pinned, self.picked, self.follow, self._limit)
        keep = {id(ex) for ex in wanted}
        for key in [k for k in self.panes if k not in keep]:
            pane = self.panes.pop(key)
            pane.retire()
            pane.hide()
            pane.setParent(None)
            self._retired.append(pane)
        if self._retired and not self._delete_timer.isActive():
            self._delete_timer.start(0)
        changed = False
        built = 0
        placed = 0
        for ex in wanted:
            pane = self.panes.get(id(ex))
            if pane is None:
                if max_new is not None and built >= max_new:
                    continue              # (the next turn's)
                if self.spares:
                    pane = self.spares.pop(0)
                    pane.attach(ex, self.scheduler, stop=self.server.stop_exchange)
                else:
                    pane = ExchangePane(ex, self.scheduler, self.panes_split, stop=self.server.stop_exchange)
                pane.pinToggled.connect(self.set_pinned)
                self.panes[id(ex)] = pane
                built += 1
                changed = True
            pane.set_pinned(ex in self.pinned)
            placed += 1
            if self.panes_split.indexOf(pane) != placed:
                self.panes_split.insertWidget(placed, pane)      # index 0 is the placeholder
                changed = True
            pane.show()          # a child added to a visible splitter is not shown by itself
        self.placeholder.setVisible(not wanted)
        if changed and wanted:
            self.panes_split.setSizes([0] + [1000] * placed)
        if placed < len(wanted):
            self._layout_timer.start(0)

    def _delete_one(self) -> None:
        if self._retired:
            self._retired.pop(0).deleteLater()
        if self._retired:
            self._delete_timer.start(0)

    def _make_spare(self) -> None:
        """While no exchange streams, make the panes the next exchanges will fill, one per loop turn (a pane
        costs 10-40 ms to make while streams take the machine's cores: four new exchanges at once then held the
        window that long four times over); as many as are shown."""
        if not self.serving or self.tap.in_flight or not self.isVisible() or len(self.spares) >= self.shown_limit():
            return
        pane = ExchangePane(None, self.scheduler, self.panes_split)   # (a hidden child at the splitter's end)
        pane.hide()
        self.spares.append(pane)
        self._spare_timer.start(0)

    def shown_limit(self) -> int:
        """How many panes are shown: as many as fit the panes area at `gui.pane.MIN_WIDTH` each (at most
        `MAX_SHOWN`), and the pinned ones whatever the width."""
        # (+ 8: an ExchangePane's frame and margins around its PaneWidget)
        fit = columns_that_fit(self.panes_scroll.viewport().width(), self.panes_split.handleWidth(),
                               PANE_MIN_WIDTH + 8)
        return max(len(self.pinned), min(MAX_SHOWN, fit))

    def _check_limit(self, *_) -> None:
        timer = getattr(self, "_layout_timer", None)      # (a resize may come before __init__ is done)
        if timer is not None and self.shown_limit() != self._limit and not timer.isActive():
            timer.start(0)

    def _on_split_moved(self, *_) -> None:
        self._list_width_chosen = True
        self._check_limit()

    def eventFilter(self, obj, e) -> bool:
        if e.type() == QEvent.Resize and obj is self.list_view.viewport():
            self._fit_path()
        return super().eventFilter(obj, e)

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if not getattr(self, "_list_width_chosen", True):
            # a wide window gives the list room for its columns (and the snippets), as long as MAX_SHOWN panes
            # still fit beside it; a narrow one keeps LIST_WIDTH
            wide = min(LIST_WIDTH_WIDE, max(LIST_WIDTH, self.width() - LIST_WIDTH_LEAVES))
            if self.split.sizes()[0] != wide:
                self.split.setSizes([wide, max(1, self.split.width() - wide)])
        self._check_limit()

    def set_pinned(self, ex, on: bool) -> bool:
        """Pin `ex` (it stays shown, leftmost) or unpin it; False when two are pinned already."""
        if on and ex not in self.pinned:
            if len(self.pinned) >= MAX_PINNED:
                self.statusBar().showMessage(f"{MAX_PINNED} exchanges are pinned already: unpin one first", 5000)
                self.list_model.pin_changed(ex)
                pane = self.panes.get(id(ex))
                if pane is not None:
                    pane.set_pinned(False)
                return False
            self.pinned.append(ex)
        elif not on and ex in self.pinned:
            self.pinned.remove(ex)
        self.list_model.pin_changed(ex)
        self.update_panes()
        return True

    def set_follow(self, on: bool) -> None:
        """Follow new exchanges (show the newest), or keep showing the ones picked in the list."""
        self.follow = bool(on)
        if self.follow_box.isChecked() != self.follow:
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(self.follow)
            self.follow_box.blockSignals(False)
        if self.follow:
            self.picked = []
            self._syncing_selection = True
            self.list_view.clearSelection()
            self._syncing_selection = False
        self.update_panes()

    def pick(self, exchanges: list) -> None:
        """Show these exchanges (after the pinned ones), as selecting their rows does; following stops."""
        sm = self.list_view.selectionModel()
        self._syncing_selection = True
        sm.clearSelection()
        for ex in exchanges:
            row = self.list_model.row_of(ex)
            if row >= 0:
                sm.select(self.list_model.index(row, 0), QItemSelectionModel.Select | QItemSelectionModel.Rows)
        self._syncing_selection = False
        self._on_selection()

    def _on_selection(self, *_args) -> None:
        if self._syncing_selection:
            return
        rows = sorted({i.row() for i in self.list_view.selectionModel().selectedRows()})
        picked = [self.list_model.index(r, PIN).data(ExchangeRole) for r in rows]
        if not picked:
            return
        self.picked = picked
        if self.follow:
            self.follow = False
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)
            self.follow_box.blockSignals(False)
        self.update_panes()

    # -- the status bar -----------------------------------------------------------------------------------
    def status_text(self) -> str:
        seen = plural(self.tap.seen, "exchange")
        live = sum(1 for ex in self.list_model.exchanges() if not ex.finished)
        flight = f", {live} in flight" if live else ""
        if self.serving and self.base_url:
            return f"Listening on {self.base_url} · {seen} seen{flight}"
        if self.listen_error:
            return f"Not listening · {seen} seen"
        if self.base_url:
            return f"Stopped · {seen} seen{flight}"
        return f"Starting on {self.host}:{self.port}…"

    def _update_status(self) -> None:
        self.status_label.setText(self.status_text())

    # -- export ------------------------------------------------------------------------------------------
    def export_exchanges(self, path) -> Path:
        """Write every exchange seen (oldest first) to `path`, the format chosen by its extension (keys
        redacted, as every export)."""
        runs = [ex.run for ex in reversed(self.exchanges())]
        out = export(runs, path)
        self.last_export = out
        self.settings.add_recent(str(out))
        self.statusBar().showMessage(f"Exported {plural(len(runs), 'exchange')} to {out}", 6000)
        return out

    def export_dialog(self) -> None:
        from gui.main_window import EXPORT_FILTERS, export_path

        if not self.exchanges():
            self.statusBar().showMessage("Nothing to export yet: no exchange has come through the tap", 4000)
            return
        recent = self.settings.recent_files
        folder = Path(recent[0]).parent if recent and Path(recent[0]).parent.is_dir() else Path.home()
        path, chosen = QFileDialog.getSaveFileName(self, "Export the tap's exchanges",
                                                   str(folder / f"streamscope-tap{EXPORT_FILTERS[0][1]}"),
                                                   ";;".join(f for f, _ext in EXPORT_FILTERS))
        if not path:
            return
        path = export_path(path, chosen)
        try:
            self.export_exchanges(path)
        except (OSError, ValueError) as exc:
            plaintips.warn(self, "Export", f"Could not export to {path}:\n{exc}")


def open_tap(parent, settings: PersistedSettings, current: TapWindow | None = None) -> TapWindow | None:
    """Run > Tap…: raise the tap window while its tap still runs; else ask where to listen and forward (the
    dialog), open a new window and start it. Returns the window (None: the dialog was cancelled)."""
    if current is not None and current.serving:
        current.show()
        current.raise_()
        current.activateWindow()
        return current
    dlg = TapDialog(settings, parent)
    if not dlg.exec():
        return current
    window = TapWindow(dlg.mounts, dlg.host, dlg.port, settings=settings)
    window.show()
    window._start_task = asyncio.ensure_future(window.start())
    return window
