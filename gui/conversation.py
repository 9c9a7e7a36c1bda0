"""One provider's conversation in the window: every exchange (turn) is its own `PaneWidget` over its own
`PaneController`, stacked, and the turn list (`gui.turns.TurnList`) picks which one the pane shows, so each turn
keeps its Text / Blocks / Raw / Usage / Diag / Request tabs. Under the tabs, when the conversation ends in tool
calls, the result editors (`gui.tool_results.ToolResultsPanel`); above them, when the next turn continues from
another pane's reply, a notice of what cannot cross formats.

The turn list and the notice are placed inside whichever turn's pane is shown, above its tabs, and the editors
with the "Continue everyone from this reply" button below them (first in the pane's `below` area, which scrolls
with the banners when the pane is short), so the pane looks like a single exchange's, with
its turns listed under its header.

What the next turn continues from (`base()`) is the newest exchange, unless "Continue everyone from this reply"
handed another (`set_handover`). Sending is the window's job (`gui.followup.FollowUps`); this widget only shows
and asks, through its signals.
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QStackedWidget, QToolButton, QVBoxLayout, QWidget

from core.live.tool_loop import pending_calls
from core.live.tool_mocks import mock_results

from gui.pane import banner_style, is_dark
from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.tool_results import ToolResultsPanel
from gui.turns import TurnList, turn_row_text, turn_tooltip
from gui.widgets import plain_label



NOTE_HEAD_CHARS = 90      # a crossing note in the handover notice: what was dropped, without the why


def note_head(note: str) -> str:
    """A crossing note in short: what was dropped or changed ("1 signature(s) from another API dropped"); the
    reason after its colon (or in parentheses) is left to the tooltip and the request's notes."""
    head = note.split(":", 1)[0].split(" (", 1)[0].strip()
    return head if len(head) <= NOTE_HEAD_CHARS else head[:NOTE_HEAD_CHARS - 1] + "…"


class ConversationPane(QWidget):
    """A provider's turns, one `PaneWidget` each, and what the next turn will send.

    Signals:
        sendResultsRequested(object): this pane's "Send results" (argument: this ConversationPane).
        sendResultsEverywhereRequested(): "Send results in every pane".
        continueEveryoneRequested(object): "Continue everyone from this reply" (argument: this ConversationPane;
            the reply is that of the turn shown, `shown_index`).
        turnShown(int): the pane now shows this turn (0 = the first exchange).
    """

    sendResultsRequested = Signal(object)
    sendResultsEverywhereRequested = Signal()
    continueEveryoneRequested = Signal(object)
    turnShown = Signal(int)

    def __init__(self, first=None, parent=None) -> None:
        """`first`: the first turn's pane (None: `add_turn` it; a pane made with `stack` as its parent is not
        moved between parents, which costs a re-polish of every widget in it)."""
        super().__init__(parent)
        self.setObjectName("conversation")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        self.stack = QStackedWidget(self)
        lay.addWidget(self.stack, 1)

        # placed inside the shown turn's pane (`_dock`)
        self.turn_list = TurnList(self)
        self.turn_list.turnSelected.connect(self.show_turn)
        # the result editors and "Continue everyone" are built when a turn first ends (`results`): a send builds
        # 4-8 conversations at once, and every widget made then is a stall of the window as the streams begin
        self._results: ToolResultsPanel | None = None
        self._continue_button: QToolButton | None = None
        self.notice = plain_label("", self)
        self.notice.setObjectName("handoverNotice")
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self._notice_dark: bool | None = None
        self._colour_notice()
        self.notice.hide()

        self.turns: list = []                  # PaneWidget per exchange, oldest first
        self.sources: list[str | None] = []    # per turn: whose reply its history came from, when not its own
        self._handover = None                  # (spec, run, label, notes): the next turn's history, when handed
        self._shown = -1
        self._docked = None
        if first is not None:
            self.add_turn(first)

    # -- turns ------------------------------------------------------------------------------------------------
    def _colour_notice(self) -> None:
        """The handover notice in the current theme's colours (its light blue glared on the dark window)."""
        dark = is_dark(self.palette())
        if dark != self._notice_dark:
            self._notice_dark = dark
            self.notice.setStyleSheet(banner_style("handover", dark))

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.PaletteChange, QEvent.StyleChange) and "notice" in self.__dict__:
            self._colour_notice()

    @property
    def latest(self):
        """The newest turn's `PaneWidget`."""
        return self.turns[-1]

    @property
    def shown(self):
        """The `PaneWidget` of the turn the pane shows."""
        return self.turns[self._shown] if self.turns else None

    @property
    def shown_index(self) -> int:
        return self._shown

    @property
    def provider(self):
        return self.latest.controller.run.provider

    def controllers(self) -> list:
        return [p.controller for p in self.turns]

    def runs(self) -> list:
        return [p.controller.run for p in self.turns]

    def add_turn(self, pane, source: str | None = None) -> None:
        """Append an exchange (its pane, already built over its controller) and show it."""
        self.turns.append(pane)
        self.sources.append(source)
        if self.stack.indexOf(pane) < 0:    # (a spare conversation holds its pane already)
            self.stack.addWidget(pane)
        index = len(self.turns) - 1
        c = pane.controller
        c.refreshed.connect(lambda i=index: self._update_row(i))
        c.finished.connect(self._update_next)
        c.statusChanged.connect(lambda status, i=index: self._started(i, status))
        self._handover = None          # a handed-over history is used by the turn it led to
        self.show_turn(index)          # (on the tab the previous turn showed)
        self._update_next()

    def show_turn(self, index: int) -> None:
        """Show turn `index` (0 = first) in the pane, on the tab the previous turn showed."""
        if not 0 <= index < len(self.turns):
            return
        pane = self.turns[index]
        old = self.shown if 0 <= self._shown < len(self.turns) else None
        if old is not None and old is not pane:
            pane.tabs.setCurrentIndex(old.tabs.currentIndex())
        self._shown = index
        self._dock(pane)
        self.stack.setCurrentWidget(pane)
        self._update_rows()
        self._update_continue()
        self.turnShown.emit(index)

    def _started(self, index: int, status: str) -> None:
        """A turn that waited (a replayed conversation's next exchange) began: follow it from the one before."""
        if status != "pending" and self._shown == index - 1:
            self.show_turn(index)

    @property
    def results(self) -> ToolResultsPanel:
        """The result editors under the shown turn's tabs (with "Continue everyone"), built on first use."""
        if self._results is None:
            self._results = panel = ToolResultsPanel(self)
            panel.sendRequested.connect(lambda: self.sendResultsRequested.emit(self))
            panel.sendEverywhereRequested.connect(self.sendResultsEverywhereRequested)
            self._continue_button = button = QToolButton(panel)
            button.setText("Continue everyone")
            button.setToolTip(
                "Continue everyone from this reply: this turn's conversation becomes every pane's history, mapped "
                "to each API's format (what cannot cross, such as signatures and encrypted reasoning, is dropped "
                "and noted). Then type a follow-up or send the tool results.")
            button.clicked.connect(lambda: self.continueEveryoneRequested.emit(self))
            panel.add_action(button)
            docked, self._docked = self._docked, None
            if docked is not None:
                self._dock(docked)
        return self._results

    @property
    def continue_button(self) -> QToolButton:
        self.results
        return self._continue_button

    def show_pane(self, pane) -> None:
        """Show the turn whose pane this is."""
        if pane in self.turns:
            self.show_turn(self.turns.index(pane))

    def _dock(self, pane) -> None:
        """Move the turn list and notice above the shown pane's tabs and the result editors below them."""
        if self._docked is pane:
            return
        results = self._results
        extras = (self.turn_list, self.notice) + ((results,) if results is not None else ())
        for w in extras:
            holder = w.parentWidget()
            if holder is not None and holder.layout() is not None:
                holder.layout().removeWidget(w)
        lay = pane.layout()
        at = lay.indexOf(pane.tabs) if lay is not None else -1
        if at < 0:     # a pane laid out otherwise: the extras go around it, in this widget
            own = self.layout()
            own.insertWidget(0, self.notice)
            own.insertWidget(0, self.turn_list)
            if results is not None:
                own.addWidget(results)
        else:
            lay.insertWidget(at, self.notice)
            lay.insertWidget(at, self.turn_list)
            if results is not None:   # first under the tabs, with the banners (scrolling when the pane is short)
                below = getattr(pane, "below", None)
                if below is not None:
                    below.box.insertWidget(0, results)
                else:
                    lay.insertWidget(lay.indexOf(pane.tabs) + 1, results)
        for w in extras:
            w.setVisible(w is self.turn_list or (w is self.notice and bool(self.notice.text()))
                         or (w is results and results.wanted()))
        self._docked = pane

    # -- rows -------------------------------------------------------------------------------------------------
    def _row(self, i: int) -> tuple[str, str]:
        run = self.turns[i].controller.run
        return turn_row_text(i + 1, run, self.sources[i]), turn_tooltip(i + 1, run, self.sources[i])

    def _update_rows(self) -> None:
        self.turn_list.set_rows([self._row(i) for i in range(len(self.turns))], self._shown)

    def _update_row(self, i: int) -> None:
        item = self.turn_list.item(i)
        if item is None:
            self._update_rows()
            return
        text, tip = self._row(i)
        if item.text() != text:
            item.setText(text)
        if item.toolTip() != tip:
            item.setToolTip(tip)
        if i == self._shown:
            self._update_continue()

    def _update_continue(self) -> None:
        run = self.shown.controller.run if self.shown is not None else None
        ok = run is not None and run.spec is not None and run.ok and self.shown.controller.is_final
        if ok or self._results is not None:
            self.continue_button.setEnabled(ok)

    # -- the next turn ----------------------------------------------------------------------------------------
    def base(self) -> tuple:
        """(spec, run): the exchange the next turn continues (its spec, and the run whose reply it adds)."""
        if self._handover is not None:
            return self._handover[0], self._handover[1]
        run = self.latest.controller.run
        return run.spec, run

    @property
    def handover_source(self) -> str | None:
        """Whose reply the next turn's history comes from, when it is handed over (else None)."""
        return None if self._handover is None else self._handover[2]

    def ready(self) -> bool:
        """Whether a next turn can be sent: the newest exchange has ended (and the history is known)."""
        spec, run = self.base()
        return self.latest.controller.is_final and run.finished and spec is not None

    def pending(self) -> tuple:
        """The tool calls the next turn must answer (those the base reply ends with, once it has ended)."""
        if not self.ready():
            return ()
        return pending_calls(self.base()[1])

    def set_handover(self, spec, run, label: str | None, notes: Sequence[str]) -> None:
        """The next turn continues from `run` (another pane's reply, or an earlier turn of this one)."""
        self._handover = (spec, run, label, tuple(notes))
        self._update_next()

    def clear_handover(self) -> None:
        self._handover = None
        self._update_next()

    def _update_next(self) -> None:
        """The editors for the calls the next turn answers, and the handover notice."""
        self._update_rows()
        self._update_continue()
        calls = self.pending()
        fmt = self.provider.format
        if calls or self._results is not None:
            self.results.set_calls(calls, mock_results(calls) if calls else (), fmt)
        text = tip = ""
        if self._handover is not None and self._handover[2]:
            _spec, run, label, notes = self._handover
            text = f"Next turn continues from {label} ({run.provider.format} → {fmt})"
            tip = text + (":\n" + "\n".join(f"• {n}" for n in notes) if notes else "")
            text += ": " + "; ".join(note_head(n) for n in notes) if notes else ": everything crosses as it is"
            text += ". The next request's notes say more."
        self.notice.setText(text)
        self.notice.setToolTip(tip)
        self.notice.setVisible(bool(text))
