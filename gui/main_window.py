"""The comparison window: prompt area and provider picker on top (`gui.prompt_area`, collapsible), one pane per
provider side by side (`gui.panes_area`: they scroll horizontally rather than widen the window past the screen),
the timeline below, and the File / Run / Providers / View / Help menus.

The window prepares runs with the core (`core.live.recorder.prepare_runs`), gives each to a `PaneController` (which
owns its asyncio task on the qasync loop) and a `PaneWidget`, and lists the controllers in the timeline's
model. Export and replay call `core.live.capture` exactly as the headless commands do. Its dialogs are in
`gui.dialogs` (and `gui.settings_dialog`); what it remembers between sessions goes through `gui.persisted`.
"""
from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import gc
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (QApplication, QComboBox, QFileDialog, QListView, QMainWindow,
                               QPushButton, QSplitter, QVBoxLayout, QWidget)

from core.live.capture import EXPORT_EXTENSIONS, EXPORT_TYPES, export, export_type
from core.live.importers import read_capture
from core.live.config import key_source
from core.live.recorder import FINAL_STATUSES, REBUILD_PAUSE, ProviderRun, prepare_runs
from core.live.replay import captured_spec, replay_into
from core.live.summary import plural
from core.live.tool_loop import conversations_of, handover_note, handover_source
from core.live.decode_worker import shared_worker
from core.live.transport import stream_provider
from core.servers.emulator.scenarios import DEFAULT_SCENARIO, SCENARIOS, THINKING_ON_REQUEST

from gui import plaintips
from gui.compare_view import CompareDock
from gui.controller import PaneController, RepaintScheduler, gate_decoding_on_this_thread
from gui.conversation import ConversationPane
from gui.dialogs import ShortcutsDialog, TimeoutsDialog, about_box
from gui.followup import FollowUps
from gui.models import ProviderListModel
from gui.pane import PaneWidget
from gui.panes_area import PanesArea
from gui.panetabs import TAB_TITLES
from gui.qtcompat import MainThreadGC
from gui.persisted import PersistedSettings
from gui.prompt import PromptPanel
from gui.prompt_area import PromptArea
from gui.replay_view import draft_from_spec, finished_message, window_title
from gui.scenario_picker import show_descriptions
from gui.theme import apply_font_size, apply_theme, default_font_size
from gui.timeline import TimelineModel, TimelineView
from gui.widgets import plain_label

MAX_PANES = 8
DEFAULT_SIZE = (1500, 950)   # the first start's window size, within the screen's available geometry
DEFAULT_TOP_HEIGHT = 150     # px: the prompt area when it is shown
PANES_LEAST = 120            # px: what opening a prompt section leaves the panes at the least
TIMELINE_HEIGHT = (100, 150)  # px: the timeline's first height, from a short (700 px) to a tall screen
EXPORT_FILTERS = tuple((f"{t.label} (*{t.extension})", t.extension) for t in EXPORT_TYPES)
# File > Open: every kind `core.live.importers.read_capture` reads
OPEN_FILTER = ("Recordings (*.jsonl *.har *.sse *.yaml *.yml *.json);;Native capture (*.jsonl);;HAR 1.2 (*.har);;"
               "Raw event stream (*.sse);;VCR cassette (*.yaml *.yml *.json);;All files (*)")
OPENABLE = (".jsonl", ".har", ".sse", ".yaml", ".yml", ".json")


def _opens_by_content(path: str) -> bool:
    """Whether a recent file whose extension says nothing (opened through "All files") is a recording, by its
    first bytes, as the importer tells one: so a file that opened stays enabled in the recent files."""
    from core.live.importers import is_event_stream, kind_of, whole_reply_format

    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    return kind_of(head) != "sse" or is_event_stream(head) or whole_reply_format(head, None) is not None


def export_path(path: str, chosen_filter: str = "") -> str:
    """The export path with the extension of the chosen file type added when the name has none we know."""
    if export_type(path) is not None:
        return path
    for f, ext in EXPORT_FILTERS:
        if f == chosen_filter:
            return path + ext
    return path + EXPORT_FILTERS[0][1]


def _fresh_run(source: ProviderRun) -> ProviderRun:
    """A new run to replay `source` into (same provider, request, spec and notes)."""
    run = ProviderRun(source.provider, source.request, source.spec)
    run.notes = list(source.notes)
    return run


async def _replay_after(before: asyncio.Task | None, run: ProviderRun, source: ProviderRun, speed,
                        worker=None) -> None:
    """Replay `source` into `run` once the conversation's previous turn (`before`) has replayed (decoded on
    `worker`'s thread, as live streams are)."""
    if before is not None:
        await asyncio.gather(before, return_exceptions=True)
    await replay_into(run, source, speed=speed, worker=worker)


def export_renamed_note(typed: str, written) -> str:
    """The status line when the export dialog added an extension to the name the user typed."""
    ext = Path(typed).suffix
    why = f"{ext} is not an export type" if ext else "the name had no extension"
    return f"Exported to {written} ({why}: the extension picks the format, so {Path(written).suffix} was added)"


def hidden_note(hidden, path) -> str:
    """The status line's note on the conversations of a recording beyond `MAX_PANES` (lists of runs), which a
    replay does not show: how many, whose, and where they can be read (the headless replay prints every
    exchange)."""
    if not hidden:
        return ""
    names = list(dict.fromkeys(conv[0].provider.name for conv in hidden if conv))
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f" · {plural(len(hidden), 'conversation')} not shown (at most {MAX_PANES} panes): {shown}; "
            f"`main.py replay {path} --headless` prints every exchange")


def default_size(screen) -> tuple[int, int]:
    """`DEFAULT_SIZE`, shrunk to fit the screen's available geometry."""
    w, h = DEFAULT_SIZE
    if screen is None:
        return w, h
    avail = screen.availableGeometry()
    return min(w, avail.width()), min(h, avail.height())


def split_sizes(window_height: int) -> list[int]:
    """The first heights of the prompt area, the panes and the timeline in a window this tall."""
    lo, hi = TIMELINE_HEIGHT
    timeline = max(lo, min(hi, round(window_height * 0.16)))
    return [DEFAULT_TOP_HEIGHT, max(200, window_height - 60 - DEFAULT_TOP_HEIGHT - timeline), timeline]


class MainWindow(QMainWindow):
    """The comparison window.

    Signals:
        runsStarted(int): a send or a replay started this many panes.
        allFinished(): every pane of the current send / replay reached a final status.
        providersChanged(): the provider list was reloaded (settings dialog, reload).
    """

    runsStarted = Signal(int)
    allFinished = Signal()
    providersChanged = Signal()

    def __init__(self, providers: list, *, settings: QSettings | None = None, config_path=None,
                 demo_providers: list | None = None, read_timeout: float | None = None,
                 connect_timeout: float | None = None, client_factory=None, parent=None) -> None:
        """read_timeout / connect_timeout: None takes the value set in Run > Timeouts… (persisted), else the
        defaults (60 s / 10 s); a number given here wins for this window and is not persisted."""
        super().__init__(parent)
        plaintips.install()   # every tooltip shown as plain text (server, capture and config text included)
        self.setWindowTitle(window_title())
        self.settings = PersistedSettings(settings)
        self.config_path = config_path
        self.read_timeout = read_timeout if read_timeout is not None else self.settings.read_timeout
        self.connect_timeout = connect_timeout if connect_timeout is not None else self.settings.connect_timeout
        self._pane_tab = 0                        # the tab new panes open on (Ctrl+1..6)
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self._client_factory = client_factory
        self._client = None
        self._demo = list(demo_providers or [])
        self.scheduler = RepaintScheduler(parent=self)
        # the streams' decoding runs on this thread of its own, off the window's (core.live.decode_worker);
        # None decodes on the window's thread
        self.decode_worker = shared_worker()
        # with the worker decoding, the window's thread waits for the GIL at each Python call Qt makes (a
        # paint's data() calls, a timer): the interpreter's default switch interval (5 ms) is each such wait's
        # bound; 1 ms keeps a repaint's dozens of them short
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
        gate_decoding_on_this_thread(self.decode_worker)
        self.controllers: list[PaneController] = []
        self._spares: list[tuple[ConversationPane, PaneWidget]] = []   # made ahead of a send (_make_spares)
        self._spares_pending = False
        self.panes: list[PaneWidget] = []
        self.conversations: list[ConversationPane] = []   # one per provider: its turns (`panes`: the newest)
        self._all_finished_emitted = True
        self.replaying = False                    # the panes show a replayed capture
        self._expanded_top = DEFAULT_TOP_HEIGHT   # the prompt area's height before it was collapsed
        self.keep_on_screen = True                # fit_to_screen() at the first show (False: a size was asked)
        self.last_export: Path | None = None
        self.tap_window = None                    # Run > Tap… (gui.tap_window)
        self.last_skipped: list = []              # what the last File > Open skipped (core.live.importers)
        self._opening: str | None = None          # the file File > Open is reading (in the background)
        self.no_exchange_box = None               # the box saying an opened recording held no LLM exchange
        self._open_task: asyncio.Future | None = None
        # remember the platform default before a persisted size changes it (View > Default font size)
        self._default_font_size = default_font_size(QApplication.instance())

        all_providers = list(providers) + [d for d in self._demo if d.name not in {p.name for p in providers}]
        default_checked = {p.name for p in providers} or {p.name for p in self._demo}
        self.provider_model = ProviderListModel(all_providers, default_checked, key_status=self._key_status,
                                                parent=self)

        # -- widgets --
        self.prompt = PromptPanel(self)
        self.provider_list = QListView(self)
        self.provider_list.setModel(self.provider_model)
        self.provider_list.setToolTip("Checked providers get a pane when you send")
        self.provider_list.setMinimumWidth(150)   # (names elide: the prompt row needs the width at 1024 px)
        self.provider_list.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.provider_list.setTextElideMode(Qt.ElideRight)
        self.scenario = QComboBox(self)
        for i, (name, description) in enumerate(SCENARIOS.items()):   # the emulator's own catalog
            self.scenario.addItem(name)
            self.scenario.setItemData(i, description, Qt.ToolTipRole)
        self.scenario.setToolTip("The scenario the built-in emulator plays for the demo providers")
        show_descriptions(self.scenario)   # the open list shows each scenario's description under its name
        self.scenario.textActivated.connect(self._scenario_picked)
        self.send_button = QPushButton("Send  (Ctrl+Enter)", self)
        self.send_button.setDefault(True)
        self.stop_button = QPushButton("Stop all  (Esc)", self)
        self.send_button.clicked.connect(self.send)
        self.stop_button.clicked.connect(self.stop_all)
        self.followups = FollowUps(self)

        picker = QWidget(self)
        rl = QVBoxLayout(picker)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.setSpacing(4)
        rl.addWidget(plain_label("Providers", picker))
        rl.addWidget(self.provider_list, 1)
        self.scenario_label = plain_label("Demo scenario", self)
        # the follow-up controls go under the provider list, which scrolls sideways with the prompt: in the bar
        # they would widen the window's minimum past a small screen
        rl.addWidget(self.followups.controls)
        self.prompt_area = PromptArea(self.prompt, picker, [self.scenario_label, self.scenario, self.send_button,
                                                            self.stop_button], self)
        self.prompt_area.collapsedChanged.connect(self.set_prompt_collapsed)
        self.prompt_area.captured.draftRequested.connect(self.show_draft)
        self.prompt_area.captured.reuseRequested.connect(self.reuse_captured_prompt)

        self.panes_area = PanesArea(self)
        self.panes_area.focusChanged.connect(self._focus_changed)

        self.timeline_model = TimelineModel(self)
        self.timeline = TimelineView(self.timeline_model, self)
        self.timeline.frameClicked.connect(self.show_frame)

        self.main_split = QSplitter(Qt.Vertical, self)
        self.main_split.addWidget(self.prompt_area)
        self.main_split.addWidget(self.panes_area)
        self.main_split.addWidget(self.timeline)
        self.main_split.setStretchFactor(0, 0)
        self.main_split.setStretchFactor(1, 1)
        self.main_split.setStretchFactor(2, 0)
        self.main_split.setChildrenCollapsible(False)
        self.main_split.setSizes(split_sizes(DEFAULT_SIZE[1]))
        self.setCentralWidget(self.main_split)

        self.provider_model.selectionChanged.connect(self._update_scenario_enabled)
        self.compare_dock = CompareDock(self)   # View > Compare view: the figures side by side, the diff
        self.repeat_dialog = None               # Run > Repeat… (gui/repeat_view.py, made on first use)
        self._build_menus()
        self.statusBar().showMessage("Ready")
        self._section_grants: dict[str, tuple[int, int]] = {}   # what opening a prompt section took (panes, timeline)
        self._restore_settings()
        # (after the restore: a saved splitter already holds the sections the saved prompt opens)
        self.prompt.sectionToggled.connect(self._fit_prompt_section)
        self._update_scenario_enabled()
        self._tick = QTimer(self)   # elapsed times and the timeline's "now" while something streams
        self._tick.setInterval(100)
        self._tick.timeout.connect(self._on_tick)
        QTimer.singleShot(0, self._warm_up)

    # -- menus ------------------------------------------------------------------------------------------------
    def _build_menus(self) -> None:
        """The menus; every action with a shortcut is listed by Help > Keyboard shortcuts (`shortcut_rows`)."""
        self._shortcut_help: list[tuple[QAction, str]] = []

        def action(text: str, slot, keys=(), help_text: str | None = None, menu=None) -> QAction:
            a = QAction(text, self)
            if keys:
                seqs: list[QKeySequence] = []
                for k in keys:   # a sequence listed twice would make the action's own shortcut ambiguous
                    seq = QKeySequence(k)
                    if not seq.isEmpty() and all(seq != other for other in seqs):
                        seqs.append(seq)
                a.setShortcuts(seqs)
                a.setShortcutContext(Qt.WindowShortcut)
                self._shortcut_help.append((a, help_text or text.replace("&", "").rstrip("…")))
            a.triggered.connect(slot)
            self.addAction(a)      # shortcuts work even while the menu bar is hidden
            if menu is not None:
                menu.addAction(a)
            return a

        mb = self.menuBar()
        m = mb.addMenu("&File")
        self.act_open = action("&Open capture (instant replay)…", lambda: self.open_capture_dialog(speed=None),
                               ["Ctrl+O"], "open a recording (.jsonl, .har, .sse, .yaml) and replay it instantly", m)
        self.act_open_rt = action("&Replay capture in real time…", lambda: self.open_capture_dialog(speed=1.0),
                                  ["Ctrl+Shift+O"], "open a capture and replay it with its original timing", m)
        self.recent_menu = m.addMenu("Recent files")
        m.addSeparator()
        self.act_export = action("&Export current run…", self.export_dialog, ["Ctrl+S", "Ctrl+E"],
                                 f"export the current run ({', '.join(EXPORT_EXTENSIONS)})", m)
        m.addSeparator()
        self.act_quit = action("&Quit", self.close, ["Ctrl+Q"], "quit", m)

        m = mb.addMenu("&Run")
        self.act_send = action("&Send", self.send, ["Ctrl+Return", "Ctrl+Enter"],
                               "send the prompt to every checked provider", m)
        self.act_stop = action("Stop &all", self.stop_all, [Qt.Key_Escape], "stop every stream", m)
        m.addSeparator()
        self.act_follow_up = action("&Follow up in every pane", lambda: self.followups.follow_up(),
                                    ["Ctrl+Shift+Return", "Ctrl+Shift+Enter"],
                                    "send the prompt as the next turn of every pane's conversation", m)
        self.act_send_results = action("Send tool &results in every pane", lambda: self.followups.send_results(),
                                       ["Ctrl+Shift+R"], "send the tool results in every pane that waits for them",
                                       m)
        self.act_auto_tools = action("&Automatic tool rounds", lambda: self.followups.auto(), ["Ctrl+Shift+A"],
                                     "run the tool loop with the mock tools (up to the rounds set)", m)
        m.addSeparator()
        self.act_repeat = action("&Repeat…", self.open_repeat, (), menu=m)
        self.act_timeouts = action("&Timeouts…", self.open_timeouts, (), menu=m)
        self.act_tap = action("Ta&p…", self.open_tap, (), menu=m)

        m = mb.addMenu("&Providers")
        self.act_settings = action("&Settings…", self.open_settings, (), menu=m)
        self.act_reload = action("&Reload providers file", self.reload_providers, (), menu=m)

        m = mb.addMenu("&View")
        group = QActionGroup(self)
        self.act_light = QAction("&Light", self, checkable=True)
        self.act_dark = QAction("&Dark", self, checkable=True)
        for a in (self.act_light, self.act_dark):
            group.addAction(a)
            m.addAction(a)
        self.act_light.triggered.connect(lambda: self.set_theme("light"))
        self.act_dark.triggered.connect(lambda: self.set_theme("dark"))
        m.addSeparator()
        self.act_font_larger = action("&Larger font", lambda: self.set_font_size(self.font_size + 1),
                                      ["Ctrl++", "Ctrl+=", QKeySequence.ZoomIn], "larger font", m)
        self.act_font_smaller = action("&Smaller font", lambda: self.set_font_size(self.font_size - 1),
                                       ["Ctrl+-", QKeySequence.ZoomOut], "smaller font", m)
        self.act_font_default = action("&Default font size", lambda: self.set_font_size(0), ["Ctrl+0"],
                                       "default font size", m)
        m.addSeparator()
        self.act_prompt_area = action("&Prompt area", lambda on: self.set_prompt_collapsed(not on),
                                      ["Ctrl+Shift+P"], "show / hide the prompt area (the panes get the height)", m)
        self.act_prompt_area.setCheckable(True)
        self.act_prompt_area.setChecked(True)
        self.act_focus = action("&Focus pane", self.toggle_focus, ["Ctrl+Shift+F"],
                                "show the current pane alone; again to show every pane", m)
        tabs = m.addMenu("Pane &tab")
        self.act_tabs = []
        for i, (title, _tip) in enumerate(TAB_TITLES):
            self.act_tabs.append(action(f"&{i + 1} {title}", lambda _=False, i=i: self.show_pane_tab(i),
                                        [f"Ctrl+{i + 1}"], f"show the {title} tab in every pane", tabs))
        m.addSeparator()
        self.act_compare = action("&Compare view", self.compare_dock.toggle, ["Ctrl+K"],
                                  "show / hide the Compare view (every pane's figures, the diff of two answers)", m)
        self.compare_dock.bind(self.act_compare)
        a = m.addAction("&Fit timeline")
        a.triggered.connect(self.timeline.fit)

        m = mb.addMenu("&Help")
        self.act_shortcuts = action("&Keyboard shortcuts", self.show_shortcuts, ["F1"],
                                    "this list", m)
        a = m.addAction("&About StreamScope")
        a.triggered.connect(self.show_about)

    # -- providers --------------------------------------------------------------------------------------------
    @staticmethod
    def _key_status(p) -> str | None:
        src = key_source(p)
        if src == "missing":
            return f"no key: set ${p.api_key_env}"
        return None

    def set_providers(self, providers: list) -> None:
        all_providers = list(providers) + [d for d in self._demo if d.name not in {p.name for p in providers}]
        self.provider_model.set_providers(all_providers)
        self.providersChanged.emit()

    def reload_providers(self) -> None:
        from core.live.config import ConfigError, load_providers

        try:
            self.set_providers(load_providers(self.config_path))
            self.statusBar().showMessage("Providers reloaded", 3000)
        except ConfigError as exc:
            plaintips.warn(self, "Providers file", str(exc))

    def open_settings(self) -> None:
        from gui.settings_dialog import SettingsDialog

        if not self._providers_file_editable():
            return
        configured = [p for p in self.provider_model.providers() if not p.is_demo]
        dlg = SettingsDialog(configured, config_path=self.config_path, parent=self)
        if dlg.exec():
            renames = dlg.model.renames()
            checked = [renames.get(n, n) for n in self.provider_model.checked_names()]
            self.set_providers(dlg.providers())
            if renames:
                self.provider_model.set_checked(checked)     # a renamed provider stays checked

    def _providers_file_editable(self) -> bool:
        """Whether the settings dialog may write the providers file. One that does not read (a mistake made in an
        editor) gave the window no providers, and the dialog's OK then replaced it with an empty one: now the
        user is told what is wrong, and only starting over (the file kept beside it as `.bak`) goes on."""
        import shutil

        from PySide6.QtWidgets import QMessageBox

        from core.live.config import ConfigError, default_config_path, load_providers

        path = Path(self.config_path) if self.config_path is not None else default_config_path()
        if not path.exists():
            return True
        try:
            load_providers(path)
            return True
        except ConfigError as exc:
            problem = str(exc)
        box = plaintips.warning_box(self, "Providers file", f"{path} cannot be read, so the dialog would start "
                                    f"from no providers and saving would replace it:\n\n{problem}\n\nFix the file "
                                    f"in an editor (then Providers > Reload providers file), or start over "
                                    f"with the file kept as {path.name}.bak.")
        box.setStandardButtons(QMessageBox.Cancel)
        start_over = box.addButton("Start over (keep a .bak)", QMessageBox.DestructiveRole)
        box.setDefaultButton(QMessageBox.Cancel)
        box.exec()
        if box.clickedButton() is not start_over:
            return False
        backup = path.with_name(path.name + ".bak")
        try:
            shutil.copy2(path, backup)
        except OSError as exc:
            plaintips.warn(self, "Providers file", f"cannot keep {backup}: {exc.strerror or exc}; nothing changed")
            return False
        self.statusBar().showMessage(f"{path.name} kept as {backup}", 8000)
        return True

    def _update_scenario_enabled(self) -> None:
        on = any(p.is_demo for p in self.provider_model.checked())
        self.scenario.setEnabled(on)
        self.scenario_label.setEnabled(on)

    def _warm_up(self) -> None:
        """Import what the first send needs (the HTTP stack, its async backend, the format adapters) while the
        user is still typing, so the first streams do not stall the window for a few hundred ms."""
        import importlib

        from core.live import cost
        from core.wire.adapters import adapter_for
        from core.wire.formats import FORMATS

        self.client()
        for name in ("anyio._backends._asyncio", "httpcore._async.http11", "h11", "sniffio", "numpy"):
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        for fmt in FORMATS:
            adapter_for(fmt)
        # the price database: every run is priced when it ends, and loading it then stalled the window 0.2 s
        QTimer.singleShot(300, cost.warm_up)
        # what start-up made lives as long as the app: out of the cycle collector's sight (gc.freeze), a full
        # collection mid-stream looks only at what came after (it was one of the 30-50 ms stalls)
        QTimer.singleShot(600, gc.freeze)
        self._spares_later(650)

    def _scenario_picked(self, name: str) -> None:
        """The emulator's thinking scenario thinks only when the request asks, as each API does: picking it (the
        user, not a restored setting) ticks Thinking, so that the demo shows what the scenario is for."""
        if name == THINKING_ON_REQUEST and not self.prompt.thinking.isChecked():
            self.prompt.thinking.setChecked(True)
            self.statusBar().showMessage("Thinking turned on: the thinking scenario thinks only when asked", 5000)

    # -- sending ----------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return any(c.task is not None and not c.task.done() for c in self.controllers)

    def selected_providers(self) -> list:
        """The checked providers, the demo ones set to the chosen emulator scenario."""
        scenario = self.scenario.currentText() or DEFAULT_SCENARIO
        return [dataclasses.replace(p, model=scenario) if p.is_demo else p for p in self.provider_model.checked()]

    def client(self):
        if self._client is None:
            from core.live.transport import new_client

            self._client = (self._client_factory or new_client)()
        return self._client

    def send(self) -> bool:
        """Send the prompt to every checked provider (at most 8); False when nothing was sent. With "Continue
        conversation" ticked, the prompt is the next turn of every pane's conversation instead."""
        if self.followups.wants_follow_up():
            return self.followups.follow_up()
        try:
            spec = self.prompt.spec()
        except ValueError as exc:
            self.statusBar().showMessage(f"Not sent: {exc}", 6000)
            return False
        if not spec.user.strip():
            self.statusBar().showMessage("Not sent: type a prompt first", 4000)
            return False
        providers = self.selected_providers()
        if not providers:
            self.statusBar().showMessage("Not sent: check at least one provider", 4000)
            return False
        if len(providers) > MAX_PANES:
            self.statusBar().showMessage(f"Only the first {MAX_PANES} checked providers are sent", 6000)
            providers = providers[:MAX_PANES]
        runs = prepare_runs(providers, spec)
        self.show_draft()
        client = self.client()
        connect_timeout, read_timeout = self.connect_timeout, self.read_timeout
        worker = self.decode_worker
        self._start(runs, lambda run: stream_provider(run, client, connect_timeout=connect_timeout,
                                                      read_timeout=read_timeout, worker=worker),
                    read_timeout=read_timeout)
        self._save_prompt_settings()
        return True

    def _start(self, runs: list, make_coro, read_timeout: float | None = None, note: str = "",
               replay_of=None) -> None:
        """Show one pane per run and start it; `replay_of`: the capture file the runs are replayed from; `note`:
        added to the status bar's messages (what a File > Open skipped)."""
        self._finished_note = note
        self.stop_all()
        self._clear_panes()
        self.replaying = replay_of is not None
        self.setWindowTitle(window_title(replay_of))
        for run in runs:
            c = PaneController(run, self.scheduler, self)
            conv, pane = self._spares.pop(0) if self._spares else (None, None)
            if pane is not None:
                pane.attach(c, replay=self.replaying)
            else:
                conv = ConversationPane(None, self.panes_area.splitter)
                pane = PaneWidget(c, conv.stack, replay=self.replaying)   # (made where it lives: no re-parenting)
            pane.read_timeout = read_timeout
            if self._pane_tab:
                pane.tabs.setCurrentIndex(self._pane_tab)
            pane.stopRequested.connect(lambda _name, c=c: c.cancel())
            pane.focusRequested.connect(lambda pane=pane: self.toggle_focus(pane))
            c.finished.connect(self._pane_finished)
            self.controllers.append(c)
            self.panes.append(pane)
            conv.add_turn(pane)
            self.followups.attach(conv)
            self.conversations.append(conv)
        self.panes_area.set_panes(self.conversations)
        self._fit_timeline(len(runs))
        self.timeline_model.set_controllers(self.controllers, replay=self.replaying)
        self._all_finished_emitted = False
        for c in self.controllers:
            if c.run.finished:   # refused before sending (no key, insecure transport, bad request)
                c.refresh()
            else:
                c.start(make_coro(c.run))
        self._tick.start()
        MainThreadGC.streaming(True)
        self._streaming_what = ("Replaying" if self.replaying else "Streaming", "provider")
        self.statusBar().showMessage(self.streaming_message())
        self.runsStarted.emit(len(runs))
        self._pane_finished()

    def _fit_timeline(self, lanes: int) -> None:
        """Give the timeline a readable line per lane (its labels), taken from the panes, up to a quarter of the
        window; it never shrinks here (the user may have made it taller)."""
        sizes = self.main_split.sizes()
        if len(sizes) != 3 or not sum(sizes):
            return
        t = self.timeline
        need = t.AXIS_H + t.LEGEND_H + 8 + lanes * (t.fontMetrics().height() + 4)
        grow = min(need, sum(sizes) // 4) - sizes[2]
        if grow > 0:
            self.main_split.setSizes([sizes[0], sizes[1] - grow, sizes[2] + grow])

    def continue_conversations(self, items: list, make_coro, read_timeout: float | None = None) -> None:
        """Add a turn to conversations and start it: items are (ConversationPane, run, source), `source` naming
        whose reply the turn's history came from when it is not the pane's own (else None)."""
        started = []
        for conv, run, source in items:
            if source and not self.replaying and handover_source(run.notes) is None:
                run.notes.append(handover_note(source))      # (the capture keeps it: a replay marks the turn too)
            c = PaneController(run, self.scheduler, self)
            pane = PaneWidget(c, conv.stack, replay=self.replaying)
            pane.focusRequested.connect(lambda pane=pane: self.toggle_focus(pane))
            pane.read_timeout = read_timeout
            pane.stopRequested.connect(lambda _name, c=c: c.cancel())
            c.finished.connect(self._pane_finished)
            conv.add_turn(pane, source)
            started.append(c)
        self.panes = [conv.latest for conv in self.conversations]
        self.controllers = [p.controller for p in self.panes]
        self.timeline_model.set_controllers(self.controllers)
        self._all_finished_emitted = False
        for c in started:
            if c.run.finished:   # refused before sending (a history the API would reject, no key, ...)
                c.refresh()
            else:
                c.start(make_coro(c.run))
        self._tick.start()
        MainThreadGC.streaming(True)
        self._streaming_what = ("Streaming the next turn in", "pane")
        self.statusBar().showMessage(self.streaming_message())
        self.runsStarted.emit(len(started))
        self._pane_finished()

    def _make_spares(self) -> None:
        """While the window idles, make the conversations and panes the next send will fill (one per loop turn,
        as many as providers are checked): making 8 of them at the send held the window 100 ms."""
        self._spares_pending = False
        want = min(MAX_PANES, len(self.selected_providers()))
        if self.running or len(self._spares) >= want or not self.isVisible():
            return
        conv = ConversationPane(None, self.panes_area.splitter)
        conv.hide()
        pane = PaneWidget(None, conv.stack)
        pane.make_parts()
        conv.stack.addWidget(pane)
        conv._dock(pane)
        conv.ensurePolished()        # (styled now: a hidden widget is otherwise polished when first shown)
        self._spares.append((conv, pane))
        self._spares_later(0)

    def _spares_later(self, ms: int) -> None:
        if not self._spares_pending:
            self._spares_pending = True
            QTimer.singleShot(ms, self._make_spares)

    def _clear_panes(self) -> None:
        self.panes_area.clear()
        every = [c for conv in self.conversations for c in conv.controllers()] or list(self.controllers)
        for c in every:
            c.cancel()
            c.retire()
        for p in self.panes:
            p.hide()
            p.deleteLater()
        for conv in self.conversations:
            conv.hide()
            conv.deleteLater()
        self.conversations = []
        self.panes = []
        self.controllers = []
        self.timeline_model.set_controllers([])

    def stop_all(self) -> None:
        for c in self.controllers:
            c.cancel()

    def stop(self, name: str) -> None:
        for c in self.controllers:
            if c.name == name:
                c.cancel()

    _streaming_what = ("Streaming", "provider")

    def streaming_message(self) -> str:
        """The status bar while panes stream: how many still do (those that stalled, failed or ended are not
        counted: "Streaming 8 providers…" stayed while four had ended), and how many have ended."""
        live = sum(1 for c in self.controllers if not c.is_final)
        verb, noun = self._streaming_what
        ended = len(self.controllers) - live
        return f"{verb} {plural(live, noun)}…" + (f" ({ended} ended)" if ended else "")

    def _pane_finished(self) -> None:
        if self._all_finished_emitted or not self.controllers:
            return
        if not all(c.is_final for c in self.controllers):
            message = self.streaming_message()
            if self.statusBar().currentMessage() != message:
                self.statusBar().showMessage(message)
            return
        if all(c.is_final for c in self.controllers):
            self._all_finished_emitted = True
            self._tick.stop()
            MainThreadGC.streaming(False)
            self._spares_later(1500)
            self.timeline_model.refresh()
            self.timeline.update()
            self.statusBar().showMessage(finished_message((c.status for c in self.controllers), self.replaying)
                                         + self._finished_note)
            self.allFinished.emit()

    @property
    def finished(self) -> bool:
        return self._opening is None and all(c.is_final for c in self.controllers)

    def _on_tick(self) -> None:
        """10 Hz while streaming: elapsed times and the timeline (which is too costly to repaint per batch)."""
        for c, p in zip(self.controllers, self.panes):
            if c.status not in FINAL_STATUSES and p.built:    # (a pane not built yet shows it when it is)
                p.metrics_label.setText(p.metrics_text())
                p.update_quiet()
        self.timeline_model.refresh()
        self.timeline.update()

    def show_frame(self, name: str, frame: int) -> None:
        for c, p, conv in zip(self.controllers, self.panes, self.conversations):
            if c.name == name:
                conv.show_pane(p)
                p.show_frame(frame)
                if self.panes_area.focused not in (None, self.panes_area.pane_of(p)):   # one shown alone: this one
                    self.panes_area.toggle_focus(p)
                self.panes_area.reveal(p)

    def current_runs(self) -> list[ProviderRun]:
        """The newest exchange of each pane (one per provider: what a per-pane view such as Compare shows)."""
        return [c.run for c in self.controllers]

    def runs(self) -> list[ProviderRun]:
        """Every exchange of every pane, turn by turn (every pane's first, then every second, ...), as
        `run --auto-tools` sends and exports them."""
        if not self.conversations:
            return [c.run for c in self.controllers]
        turns = [conv.runs() for conv in self.conversations]
        return [t[i] for i in range(max(map(len, turns))) for t in turns if i < len(t)]

    # -- export and replay ------------------------------------------------------------------------------------
    def export_runs(self, path) -> Path:
        """Write the current runs to `path` (the format chosen by its extension), as `main.py run --export` does."""
        out = export(self.runs(), path)
        self.last_export = out
        if str(out).lower().endswith(OPENABLE):   # (a .md report or a .csv cannot be opened: not a recent file)
            self._add_recent(str(out))
        runs = len(self.runs())
        turns = f" ({plural(runs, 'exchange')})" if runs != len(self.controllers) else ""
        self.statusBar().showMessage(f"Exported {plural(len(self.controllers), 'provider')}{turns} to {out}", 6000)
        return out

    def export_dialog(self) -> None:
        if not self.controllers:
            self.statusBar().showMessage("Nothing to export yet: send a prompt first", 4000)
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, f"Export current run (the extension picks the format: {', '.join(EXPORT_EXTENSIONS)})",
            str(self._dialog_dir() / f"streamscope-capture{EXPORT_FILTERS[0][1]}"),
            ";;".join(f for f, _ext in EXPORT_FILTERS))
        if not path:
            return
        typed, path = path, export_path(path, chosen)
        try:
            out = self.export_runs(path)
        except (OSError, ValueError) as exc:
            plaintips.warn(self, "Export", f"Could not export to {path}:\n{exc}")
            return
        if path != typed:   # the name had no extension of an export type: say what was written
            self.statusBar().showMessage(export_renamed_note(typed, out), 10000)

    def _dialog_dir(self) -> Path:
        """Where the file dialogs open: the folder of the last file opened or exported, else the home folder."""
        for f in self.recent_files():
            d = Path(f).parent
            if d.is_dir():
                return d
        return Path.home()

    def open_capture(self, path, speed: float | None = None, format: str | None = None) -> int:
        """Replay a recording (native .jsonl, HAR, .sse, VCR cassette: `read_capture`, `format` overriding the
        wire format) into the panes, each conversation's turns in its pane one after the other: instantly (speed
        None) or with its timing / `speed`; the entries that are not LLM exchanges are skipped, and the status
        bar says which (`last_skipped`). Returns the number of exchanges replayed."""
        return self._replay_opened(read_capture(path, format=format), path, speed)

    async def open_capture_in_background(self, path, speed: float | None = None, format: str | None = None) -> int:
        """`open_capture`, with the file read and its runs rebuilt on another thread (a 26 MB capture of four
        firehoses took 0.8 s, the window frozen meanwhile); the status bar says it is opening."""
        self.statusBar().showMessage(f"Opening {path}…")
        self._opening = str(path)
        gate = self.decode_worker.gate if self.decode_worker is not None else None
        timeout = self.decode_worker.gate_timeout if self.decode_worker is not None else 0

        def read_here():
            if gate is not None:      # wait, as the decode worker does, while this window handles events
                REBUILD_PAUSE.set(lambda: gate.is_set() or gate.wait(timeout))
            return read_capture(path, format=format)

        def read():                   # (in a context of its own: the pool's thread keeps no pause hook)
            return contextvars.Context().run(read_here)

        # the reader makes as many objects as a stream does: young collections only meanwhile, and the full
        # one (the previous run's, due a second after it ended) not while the file is read (it held the
        # window 145 ms there); the replay streams from then on, and its end settles it as a send's does
        MainThreadGC.streaming(True, owner="capture reader")
        try:
            try:
                opened = await asyncio.get_running_loop().run_in_executor(None, read)
            finally:
                self._opening = None
            return self._replay_opened(opened, path, speed)
        finally:
            MainThreadGC.streaming(False, owner="capture reader")

    def _replay_opened(self, opened, path, speed: float | None) -> int:
        self.last_skipped = list(opened.skipped)
        if not opened.runs:       # nothing to replay: said, and the panes stay as they were
            from core.live.importers import no_exchange_message

            message = no_exchange_message(path, opened)
            skipped = "".join(f"\n· {s.entry}: {s.why}" for s in opened.skipped[:10])
            more = f"\n(and {len(opened.skipped) - 10} more)" if len(opened.skipped) > 10 else ""
            message = message[:1].upper() + message[1:]
            self.statusBar().showMessage(message)
            # (not modal-blocking: `main.py replay FILE` opens it at start, where nothing would dismiss it)
            self.no_exchange_box = plaintips.warning_box(self, "Open capture", message + skipped + more)
            self.no_exchange_box.open()
            return 0
        skipped = opened.skipped
        note = (f" · skipped {len(skipped)}: {skipped[0].entry}: {skipped[0].why}"
                + (f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else "")) if skipped else ""
        conversations = conversations_of(list(opened.runs))
        note += hidden_note(conversations[MAX_PANES:], path)
        turns = [[(_fresh_run(s), s) for s in conv] for conv in conversations[:MAX_PANES]]
        source_of = {id(r): s for conv in turns for r, s in conv}
        previous: dict[int, asyncio.Task] = {}    # a conversation's turns replay one after the other

        worker = self.decode_worker

        def replay(run):
            return _replay_after(previous.get(id(run)), run, source_of[id(run)], speed, worker)

        self._start([conv[0][0] for conv in turns], replay, read_timeout=None, note=note, replay_of=path)
        for depth in range(1, max(map(len, turns), default=0)):
            items = []
            for conv, exchanges in zip(self.conversations, turns):
                if depth < len(exchanges):
                    previous[id(exchanges[depth][0])] = conv.latest.controller.task
                    items.append((conv, exchanges[depth][0], handover_source(exchanges[depth][1].notes)))
            self.continue_conversations(items, replay, read_timeout=None)
        for conv in self.conversations:
            conv.show_turn(0)      # (each next turn is shown as it starts)
        self.prompt_area.show_captured(captured_spec(opened.runs), path)
        self._add_recent(str(path))
        self.statusBar().showMessage(f"Replaying {path} ({'instantly' if not speed else f'at {speed:g}x'})"
                                     + note)
        return sum(map(len, turns))

    def open_capture_dialog(self, speed: float | None) -> None:
        path, _f = QFileDialog.getOpenFileName(self, "Open capture", str(self._dialog_dir()),
                                               OPEN_FILTER)
        if path:
            self._open_with_errors(path, speed)

    def _open_with_errors(self, path, speed) -> None:
        """File > Open and the recent files: read in the background, a message box when it cannot be read."""
        if self._opening is not None:
            self.statusBar().showMessage(f"Still opening {self._opening}: one file at a time", 4000)
            return

        async def open_it() -> None:
            # the box is shown once this task has returned (`_open_error`): its modal loop run inside the task
            # let qasync wake another task in it ("Cannot enter into task ... while another task is being
            # executed")
            try:
                await self.open_capture_in_background(path, speed)
            except (OSError, ValueError) as exc:
                self.statusBar().clearMessage()
                self._open_error(f"Could not open {path}:\n{exc}")
            except Exception as exc:  # noqa: BLE001 - a reader's bug on odd input: said, never left "Opening…"
                self.statusBar().clearMessage()
                self._open_error(f"Could not open {path}:\nthe reader failed ({type(exc).__name__}: {exc})")
            finally:
                self._opening = None

        self._opening = str(path)            # (at once: the task starts in the next loop turn)
        self.statusBar().showMessage(f"Opening {path}…")
        self._open_task = asyncio.ensure_future(open_it())

    def _open_error(self, text: str) -> None:
        """Say File > Open could not read a file, in a warning box shown from the next loop turn (out of the task
        that read it; dropped if the window is gone)."""
        QTimer.singleShot(0, self, lambda: plaintips.warn(self, "Open capture", text))

    def _add_recent(self, path: str) -> None:
        self.settings.add_recent(path)
        self._update_recent_menu()

    def recent_files(self) -> list[str]:
        return self.settings.recent_files

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            a = self.recent_menu.addAction("(none)")
            a.setEnabled(False)
            return
        for f in files:
            a = self.recent_menu.addAction(f)
            if f.lower().endswith(OPENABLE) or _opens_by_content(f):
                a.triggered.connect(lambda _=False, f=f: self._open_with_errors(f, None))
            else:
                a.setEnabled(False)   # .md reports are not replayable
                a.setToolTip("exports in this format cannot be replayed")

    # -- view -------------------------------------------------------------------------------------------------
    @property
    def font_size(self) -> int:
        return QApplication.font().pointSize()

    def set_theme(self, name: str) -> None:
        apply_theme(QApplication.instance(), name)
        (self.act_dark if name == "dark" else self.act_light).setChecked(True)
        self.settings.theme = name

    def set_font_size(self, size: int) -> None:
        """Every widget's font size in points (0: the platform default), persisted."""
        pt = apply_font_size(QApplication.instance(), size)
        self.settings.font_size = 0 if size <= 0 else pt
        self.timeline.updateGeometry()
        self.timeline.update()

    def show_pane_tab(self, index: int) -> None:
        """Show tab `index` (0 Text … 5 Request) in every pane, and in the panes of the next sends."""
        self._pane_tab = index
        for p in self.panes + [conv.shown for conv in self.conversations]:
            p.tabs.setCurrentIndex(index)

    def current_pane(self):
        """The pane shown alone, else the one holding the keyboard focus, else the first (`panes_area` panes)."""
        area = self.panes_area
        return area.focused or area.pane_of(QApplication.focusWidget()) or (area.panes[0] if area.panes else None)

    def toggle_focus(self, pane=None) -> None:
        """Show `pane` (or the pane holding it; default: `current_pane()`) alone over the panes area; again to
        show every pane. (From a triggered action, `pane` is its `checked` flag: the current pane then.)"""
        self.panes_area.toggle_focus(pane if isinstance(pane, QWidget) else self.current_pane())

    def _focus_changed(self, focused) -> None:
        for p in self.panes:
            p.header.set_focused(focused is not None and self.panes_area.pane_of(p) is focused)

    def set_prompt_collapsed(self, on: bool) -> None:
        """Collapse the prompt area to its Send / Stop bar (True) or show it whole; persisted."""
        self.act_prompt_area.setChecked(not on)
        self.settings.prompt_collapsed = on
        if on == self.prompt_area.collapsed:
            return
        sizes = self.main_split.sizes()
        if on and sizes[0] >= DEFAULT_TOP_HEIGHT // 2:   # (not the bar's height restored from a collapsed close)
            self._expanded_top = sizes[0]
        self.prompt_area.set_collapsed(on)
        top = self.prompt_area.maximumHeight() if on else self._expanded_top
        self.main_split.setSizes([top, max(0, sizes[1] + sizes[0] - top), sizes[2]])

    def _fit_prompt_section(self, name: str, delta: int) -> None:
        """A prompt section (System, Sampling, Tools) opened (`delta` > 0: the height it wants) or closed (< 0):
        the prompt area grows by that much, or gives it back. The height is taken from the panes down to their
        readable height, then from the timeline down to its minimum, then from the panes down to
        `PANES_LEAST`: a splitter only keeps its other children as they were, which left the Tools editor one
        clipped line and pushed the follow-up controls out of view."""
        if self.prompt_area.collapsed:
            return
        sizes = self.main_split.sizes()
        if len(sizes) != 3 or not sum(sizes):
            return
        top, panes, timeline = sizes
        if delta > 0:
            want = delta
            readable = min(self.panes_area.readable_height(), panes)
            a = max(0, min(want, panes - readable))
            b = max(0, min(want - a, timeline - self.timeline.minimumHeight()))
            c = max(0, min(want - a - b, panes - a - PANES_LEAST))
            self._section_grants[name] = (a + c, b)
            top, panes, timeline = top + a + b + c, panes - a - c, timeline - b
            self.main_split.setSizes([top, panes, timeline])
            return
        # the layouts drop the closed section now (else the splitter keeps the area at its old minimum)
        for _ in range(8):   # (each layout passes the change to its parent's in a request of its own)
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
        from_panes, from_timeline = self._section_grants.pop(name, (-delta, 0))
        top, panes, timeline = self.main_split.sizes()
        give = max(0, min(from_panes + from_timeline, top - self.prompt_area.minimumSizeHint().height()))
        to_timeline = min(from_timeline, give)
        self.main_split.setSizes([top - give, panes + give - to_timeline, timeline + to_timeline])

    # -- replay: the captured prompt in the draft's place ----------------------------------------------------
    def show_draft(self) -> None:
        """Show the user's own, editable prompt again (after a replay showed the captured one)."""
        self.prompt_area.show_draft()

    def reuse_captured_prompt(self, spec) -> None:
        """Copy a replayed capture's prompt and settings into the draft and show it, ready to send live."""
        if spec is not None:
            self.prompt.restore(draft_from_spec(self.prompt.state(), spec))
        self.show_draft()

    # -- timeouts ---------------------------------------------------------------------------------------------
    def set_timeouts(self, connect: float | None = None, read: float | None = None, persist: bool = True) -> None:
        """The connect / read timeouts (seconds) of the next sends; persisted unless `persist` is False."""
        if connect is not None and connect > 0:
            self.connect_timeout = float(connect)
            if persist:
                self.settings.connect_timeout = self.connect_timeout
        if read is not None and read > 0:
            self.read_timeout = float(read)
            if persist:
                self.settings.read_timeout = self.read_timeout
        self.act_timeouts.setText(f"&Timeouts… (connect {self.connect_timeout:g} s, read "
                                  f"{self.read_timeout:g} s)")

    def open_repeat(self) -> None:
        """Run > Repeat…: the prompt k times per checked provider, with statistics and plots."""
        from gui.repeat_view import RepeatDialog   # pyqtgraph is loaded on first use

        if self.repeat_dialog is None:
            self.repeat_dialog = RepeatDialog(self)
        self.repeat_dialog.show()
        self.repeat_dialog.raise_()

    def open_tap(self) -> None:
        """Run > Tap…: the tap dialog, then the tap window (gui.tap_window)."""
        from gui.tap_window import open_tap

        self.tap_window = open_tap(self, self.settings, self.tap_window)

    def open_timeouts(self) -> None:
        dlg = TimeoutsDialog(self.connect_timeout, self.read_timeout, self)
        if dlg.exec():
            connect, read = dlg.values()
            self.set_timeouts(connect, read)
            self.statusBar().showMessage(f"Timeouts: connect {connect:g} s, read {read:g} s (from the next send)",
                                         6000)

    # -- help -------------------------------------------------------------------------------------------------
    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every action with a shortcut, in menu order; and the timeline's mouse."""
        rows = []
        for a, text in self._shortcut_help:
            keys = []
            for k in a.shortcuts():
                t = k.toString(QKeySequence.NativeText)
                if t and t not in keys:
                    keys.append(t)
            rows.append((" / ".join(keys), text))
        rows.append(("Wheel / drag / double-click", "timeline: zoom / pan / fit (hover shows a frame, click "
                                                    "selects it in its pane)"))
        return rows

    def show_shortcuts(self) -> None:
        """Help > Keyboard shortcuts, window-modal, without a nested event loop."""
        self.shortcuts_dialog = ShortcutsDialog(self.shortcut_rows(), self)
        self.shortcuts_dialog.open()

    def show_about(self) -> None:
        about_box(self).exec()

    # -- persistence ------------------------------------------------------------------------------------------
    def _restore_settings(self) -> None:
        s = self.settings
        geo = s.geometry
        if geo is not None:
            self.restoreGeometry(geo)   # Qt moves and shrinks it into the screen's available geometry
        else:
            self.resize(*default_size(self.screen()))
        if s.window_state is not None:
            self.restoreState(s.window_state)
            self.compare_dock.sized = True      # (its height is the one the user left)
        if s.main_split is not None:
            self.main_split.restoreState(s.main_split)
        else:   # the first start: the panes get what the screen leaves (the splitter gives them any later growth)
            self.main_split.setSizes(split_sizes(self.height()))
        if s.prompt_collapsed:
            self.set_prompt_collapsed(True)
        self.prompt.restore(s.prompt_state)
        names = s.selected_providers
        if names is not None:
            self.provider_model.set_checked(names)
        scen = s.scenario
        if scen and self.scenario.findText(scen) >= 0:
            self.scenario.setCurrentText(scen)
        self.set_theme(s.theme)
        if s.font_size:
            self.set_font_size(s.font_size)
        self.set_timeouts(persist=False)    # shows the current values in the menu
        self._update_recent_menu()

    def _save_prompt_settings(self) -> None:
        s = self.settings
        s.prompt_state = self.prompt.state()
        # providers this window does not list (a replay window without the demo providers, a providers file
        # that failed to load) keep their saved check: only what the user could see is changed
        listed = {p.name for p in self.provider_model.providers()}
        kept = [n for n in (s.selected_providers or []) if n not in listed]
        s.selected_providers = self.provider_model.checked_names() + kept
        s.scenario = self.scenario.currentText()

    def save_settings(self) -> None:
        s = self.settings
        s.geometry = self.saveGeometry()
        s.window_state = self.saveState()
        s.main_split = self.main_split.saveState()
        self._save_prompt_settings()
        s.sync()

    async def aclose(self) -> None:
        """Stop every stream, wait for the tasks to end, and close the HTTP client."""
        self.stop_all()
        if self._open_task is not None and not self._open_task.done():
            self._open_task.cancel()          # (a file still being read is not replayed into a closed window)
            await asyncio.gather(self._open_task, return_exceptions=True)
        if self.tap_window is not None:
            await self.tap_window.aclose()
        tasks = [c.task for c in self.controllers if c.task is not None and not c.task.done()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    # -- the screen ------------------------------------------------------------------------------------------
    def showEvent(self, e) -> None:
        super().showEvent(e)
        if self.keep_on_screen:
            self.keep_on_screen = False
            QTimer.singleShot(0, self.fit_to_screen)   # once the frame (title bar, borders) is known

    def fit_to_screen(self) -> None:
        """Shrink and move the window, its frame included, into its screen's available geometry."""
        screen = self.screen()
        if screen is None:
            return
        avail = screen.availableGeometry()
        frame = self.frameGeometry()
        over_w, over_h = max(0, frame.width() - avail.width()), max(0, frame.height() - avail.height())
        if over_w or over_h:
            self.resize(max(1, self.width() - over_w), max(1, self.height() - over_h))
            frame = self.frameGeometry()
        x = min(max(frame.x(), avail.x()), avail.x() + max(0, avail.width() - frame.width()))
        y = min(max(frame.y(), avail.y()), avail.y() + max(0, avail.height() - frame.height()))
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    def closeEvent(self, e) -> None:
        if self.tap_window is not None:
            self.tap_window.close()       # its tap stops; aclose() waits for it
        self.save_settings()
        self.stop_all()
        client, self._client = self._client, None
        if client is not None:
            try:
                loop = asyncio.get_event_loop()
                if loop.is_running():
                    loop.create_task(client.aclose())
            except RuntimeError:
                pass
        super().closeEvent(e)
