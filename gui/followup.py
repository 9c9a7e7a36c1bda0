"""The window's conversation actions: follow up in every pane, send tool results (one pane or all), the automatic
tool rounds with the presets' mocks, and "continue everyone from this reply"; and the small control row for them.

Every next exchange is built by the core (`core.live.tool_loop.follow_up`: the conversation so far, mapped to each
provider's format by the request layer, what cannot cross dropped with a note) and prepared by the recorder
(`prepare_run`: a history the API would reject is refused there, `history_rejected`, and shown in its pane).
`FollowUps` decides which panes continue with what, and hands the runs to the window
(`MainWindow.continue_conversations`), which adds them as new turns and streams them.
"""
from __future__ import annotations

import dataclasses

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QSpinBox, QVBoxLayout, QWidget

from core.live.recorder import prepare_run
from core.live.request import PromptSpec
from core.live.summary import plural
from core.live.tool_loop import follow_up, handover_notes
from core.live.tool_mocks import mock_results
from core.live.transport import stream_provider

from gui.widgets import plain_label

DEFAULT_AUTO_ROUNDS = 3
MAX_AUTO_ROUNDS = 20


def next_spec(base_spec: PromptSpec, base_run, settings: PromptSpec | None, user: str = "",
              results=()) -> PromptSpec:
    """The spec of the turn after `base_run`: its conversation, the tool results and/or the user's text, with the
    prompt's current `settings` (None: those the conversation had). After a failed exchange the new text replaces
    the one that failed (its reply is not history)."""
    if base_run.ok:
        nxt = follow_up(base_spec, base_run, user=user, results=results)
    else:
        nxt = dataclasses.replace(base_spec, user=user or base_spec.user)
    if settings is None:
        return nxt
    return dataclasses.replace(settings, user=nxt.user, history=nxt.history, conversation=nxt.conversation)


class ConversationControls(QWidget):
    """"Continue conversation" (Send follows up in every pane) and the automatic tool rounds."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.continue_check = QCheckBox("Continue conversation", self)
        self.continue_check.setToolTip("On: Send continues every pane's own conversation with the prompt as the "
                                       "next user turn. Off: Send starts new conversations. Ctrl+Shift+Enter "
                                       "always follows up.")
        lay.addWidget(self.continue_check)
        row = QHBoxLayout()
        row.setSpacing(4)
        self.rounds_label = plain_label("Auto tools", self)
        self.rounds = QSpinBox(self)
        self.rounds.setRange(1, MAX_AUTO_ROUNDS)
        self.rounds.setValue(DEFAULT_AUTO_ROUNDS)
        self.rounds.setSuffix(" rounds")
        tip = ("Run the tool loop with the presets' mock tools (the calculator computes, the clock gives a fixed "
               "time, the weather a deterministic forecast): up to this many rounds in every pane. When no pane "
               "waits for tool results, the prompt is sent first (Ctrl+Shift+A).")
        self.rounds.setToolTip(tip)
        self.rounds_label.setToolTip(tip)
        self.auto_button = QPushButton("Auto", self)
        self.auto_button.setToolTip(tip)
        row.addWidget(self.rounds_label)
        row.addWidget(self.rounds, 1)
        row.addWidget(self.auto_button)
        lay.addLayout(row)


class FollowUps(QObject):
    """What continues which conversation; the window owns one.

    Signals:
        autoFinished(int): the automatic tool rounds ended (argument: how many rounds ran).
    """

    autoFinished = Signal(int)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.controls = ConversationControls(window)
        self.controls.auto_button.clicked.connect(lambda: self.auto())
        window.allFinished.connect(self._all_finished)
        self._auto_active = False      # Auto is running: each time every pane has ended, the next round goes
        self._auto_left = 0            # rounds it may still run
        self._auto_ran = 0

    def attach(self, conv) -> None:
        """Wire a new conversation pane's buttons."""
        conv.sendResultsRequested.connect(lambda c: self.send_results([c]))
        conv.sendResultsEverywhereRequested.connect(lambda: self.send_results())
        conv.continueEveryoneRequested.connect(self.continue_everyone)

    # -- what can continue ------------------------------------------------------------------------------------
    def conversations(self) -> list:
        return list(self.window.conversations)

    def ready(self) -> list:
        """The panes whose conversation can take a next turn now."""
        return [c for c in self.conversations() if c.ready()]

    def waiting_for_results(self) -> list:
        return [c for c in self.ready() if c.pending()]

    def wants_follow_up(self) -> bool:
        """Send continues the conversations: the box is ticked and some pane can continue."""
        return self.controls.continue_check.isChecked() and bool(self.ready())

    @property
    def auto_running(self) -> bool:
        return self._auto_active

    # -- sending ----------------------------------------------------------------------------------------------
    def _status(self, text: str, ms: int = 6000) -> None:
        self.window.statusBar().showMessage(text, ms)

    def _send(self, items: list) -> bool:
        """items: (conversation, spec). Prepare each run (the history check is there) and start the turns."""
        if not items:
            return False
        w = self.window
        client = w.client()
        connect_timeout, read_timeout = w.connect_timeout, w.read_timeout
        pairs = [(conv, prepare_run(conv.provider, spec), conv.handover_source) for conv, spec in items]
        worker = w.decode_worker
        w.continue_conversations(pairs, lambda run: stream_provider(run, client, connect_timeout=connect_timeout,
                                                                    read_timeout=read_timeout, worker=worker),
                                 read_timeout=read_timeout)
        return True

    def follow_up(self, text: str | None = None) -> bool:
        """Continue every pane that can with the prompt's text as the next user turn (and, where the conversation
        ends in tool calls, that pane's edited results). False when nothing was sent."""
        w = self.window
        try:
            settings = w.prompt.spec()
        except ValueError as exc:
            self._status(f"Not sent: {exc}")
            return False
        text = settings.user if text is None else text
        if not text.strip():
            self._status("Not sent: type a follow-up first", 4000)
            return False
        convs = self.ready()
        if not convs:
            self._status("Nothing to follow up: send a prompt first (or wait for the replies to end)", 5000)
            return False
        items = []
        for conv in convs:
            spec, run = conv.base()
            results = conv.results.results() if conv.pending() else ()
            items.append((conv, next_spec(spec, run, settings, text, results)))
        sent = self._send(items)
        if sent:
            w._save_prompt_settings()
            self._status(f"Following up in {plural(len(items), 'pane')}…", 4000)
        return sent

    def send_results(self, convs=None) -> bool:
        """Send the result editors' content: in `convs`, or in every pane that waits for tool results."""
        convs = [c for c in (self.waiting_for_results() if convs is None else convs) if c.pending()]
        if not convs:
            self._status("No pane is waiting for tool results", 4000)
            return False
        items = []
        for conv in convs:
            spec, run = conv.base()
            items.append((conv, next_spec(spec, run, None, results=conv.results.results())))
        return self._send(items)

    # -- automatic rounds -------------------------------------------------------------------------------------
    def auto(self, rounds: int | None = None) -> bool:
        """Run up to `rounds` (default: the spin box) tool rounds in every pane with the mocks; when no pane waits
        for tool results, send the prompt first (a follow-up when "Continue conversation" is ticked)."""
        n = self.controls.rounds.value() if rounds is None else max(0, int(rounds))
        if self.auto_running:
            return False
        self._auto_ran = 0
        self._auto_left = n
        if self.waiting_for_results():
            self._auto_active = True
            return self._auto_round()
        w = self.window
        sent = self.follow_up() if self.wants_follow_up() else w.send()
        if sent:
            self._auto_active = True
            if w.finished:   # everything was refused before sending
                self._all_finished()
        return sent

    def _auto_round(self) -> bool:
        convs = self.waiting_for_results() if self._auto_left > 0 else []
        if not convs:
            self._end_auto()
            return False
        self._auto_left -= 1
        self._auto_ran += 1
        items = []
        for conv in convs:
            spec, run = conv.base()
            items.append((conv, next_spec(spec, run, None, results=mock_results(conv.pending()))))
        self._status(f"Automatic tool round {self._auto_ran}: {plural(len(items), 'pane')}…", 4000)
        return self._send(items)

    def _end_auto(self) -> None:
        if not self._auto_active:
            return
        self._auto_active = False
        self._auto_left = 0
        ran = self._auto_ran
        self._status(f"Automatic tools: {plural(ran, 'round')} run", 8000)
        self.autoFinished.emit(ran)

    def _all_finished(self) -> None:
        if not self._auto_active:
            return
        if any(c.status == "cancelled" for c in self.window.controllers):   # Stop ends the loop too
            self._end_auto()
            return
        QTimer.singleShot(0, self._auto_round)   # (not from inside the finishing pane's refresh)

    # -- continue everyone ------------------------------------------------------------------------------------
    def continue_everyone(self, source) -> bool:
        """The reply shown in `source` becomes every pane's history for its next turn, with a note in each pane
        of what its format cannot take (signatures, encrypted reasoning)."""
        pane = source.shown
        run = pane.controller.run
        spec = run.spec
        if spec is None or not run.ok or not pane.controller.is_final:
            self._status("Only a finished reply can be continued", 4000)
            return False
        turn = source.shown_index + 1
        label = f"{run.provider.name}'s turn {turn}"
        for conv in self.conversations():
            if conv is source and source.shown is source.latest:
                conv.clear_handover()      # its own newest reply: nothing is handed over
                continue
            notes = handover_notes(spec, run, conv.provider.format)
            conv.set_handover(spec, run, "this pane's turn " + str(turn) if conv is source else label, notes)
        what = "send the tool results" if source.pending() or any(c.pending() for c in self.conversations()) \
            else "type a follow-up (Ctrl+Shift+Enter)"
        self._status(f"Every pane now continues from {label}: {what}", 8000)
        return True
