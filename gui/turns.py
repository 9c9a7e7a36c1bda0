"""A conversation's turns as a compact vertical list: one row per exchange (its number, what the user sent, how
it finished: the tools it calls or its finish reason, its input/output tokens), newest at the bottom; selecting a row shows that exchange in the pane's tabs
(`gui.conversation.ConversationPane` does the showing).

`turn_row_text(number, run, source)` is the row's wording (plain text, read from the run's spec and reply snapshot:
nothing here parses wire data).
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem

from core.live.recorder import FINAL_STATUSES
from core.live.summary import finish_text
from core.live.tool_loop import pending_calls

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)

SAID_CHARS = 36           # the user's text is cut here in the row (the tooltip has more)
TIP_CHARS = 600
MAX_ROWS_SHOWN = 4        # taller conversations scroll


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def said_text(spec) -> str:
    """What the user side of this exchange sent: its text, else the tool results it answered with."""
    if spec is None:
        return "(no prompt recorded)"
    if spec.user.strip():
        return spec.user
    try:
        last = spec.dialogue().last
    except ValueError:
        last = None
    if last is not None and last.role == "user" and last.tool_results:
        names = [f"{r.name or r.id}{' (error)' if r.is_error else ''}" for r in last.tool_results]
        return "results: " + ", ".join(names)
    return "(continues the conversation)"


def outcome_text(run, short: bool = False) -> str:
    """How the exchange ended: "→ get_weather" for the tools it calls (its finish reason, tool_calls, said so),
    else its finish reason ("stop (end_turn)"; `short`: the canonical one alone), or its status while it is not
    done ("streaming…", "error: history_rejected")."""
    status = run.status
    if status not in FINAL_STATUSES:
        return status + "…"
    if status != "done" or run.error is not None:
        etype = (run.error or {}).get("type") if isinstance(run.error, dict) else None
        # (a stall's or a cancel's error type is its status again: "stalled", not "stalled: stalled")
        return f"{status}: {etype}" if etype and etype != status else status
    calls = pending_calls(run)
    if calls:
        return "→ " + ", ".join(c.name or "?" for c in calls)
    finish = run.reply.finish
    if finish is None:
        return "done"
    return (finish.canonical or "done") if short else finish_text(finish)


def tokens_text(run) -> str:
    u = run.reply.usage
    if u is None or (u.input_tokens is None and u.output_tokens is None):
        return ""
    fmt = lambda v: "–" if v is None else f"{v:,}"  # noqa: E731
    return f"{fmt(u.input_tokens)}/{fmt(u.output_tokens)} tok"


def turn_row_text(number: int, run, source: str | None = None) -> str:
    """"2 · results: get_weather → calculator · 120/18 tok" (`source`: the pane whose reply this exchange's
    history came from, when it is another's: the row starts with ↪)."""
    outcome = outcome_text(run, short=True)
    text = f"{number} · {_one_line(said_text(run.spec), SAID_CHARS)}" + (" " if outcome.startswith("→") else " · ")
    text += outcome
    tokens = tokens_text(run)
    if tokens:
        text += " · " + tokens
    return f"↪ {text}" if source else text


def turn_tooltip(number: int, run, source: str | None = None) -> str:
    lines = [f"Turn {number} of this pane's conversation (click to show its exchange in the tabs)",
             f"sent: {_one_line(said_text(run.spec), TIP_CHARS)}"]
    finish = finish_text(run.reply.finish) if run.status == "done" else ""
    lines.append(f"outcome: {outcome_text(run)}" + (f" (finish {finish})" if finish and pending_calls(run) else ""))
    tokens = tokens_text(run)
    if tokens:
        lines.append(f"tokens in/out: {tokens}")
    if source:
        lines.append(f"history: {source}")
    return "\n".join(lines)


class TurnList(QListWidget):
    """The turn rows (plain text). The pane keeps them current with `set_rows`.

    Signals:
        turnSelected(int): the user picked the row of this turn (0 = the first exchange).
    """

    turnSelected = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("turnList")
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.ElideRight)
        self.setUniformItemSizes(True)
        self.setFrameShape(QListWidget.NoFrame)
        self.setToolTip("This pane's conversation, one row per exchange; click a turn to see it in the tabs")
        self.currentRowChanged.connect(self._picked)
        self._quiet = False

    def _picked(self, row: int) -> None:
        if row >= 0 and not self._quiet:
            self.turnSelected.emit(row)

    def set_rows(self, rows: list[tuple[str, str]], current: int) -> None:
        """Rows of (text, tooltip); `current` is the row shown as selected. Only what changed is touched."""
        self._quiet = True
        try:
            while self.count() > len(rows):
                self.takeItem(self.count() - 1)
            for i, (text, tip) in enumerate(rows):
                item = self.item(i)
                if item is None:
                    item = QListWidgetItem(text)
                    item.setToolTip(tip)
                    self.addItem(item)
                    continue
                if item.text() != text:
                    item.setText(text)
                if item.toolTip() != tip:
                    item.setToolTip(tip)
            if self.currentRow() != current:
                self.setCurrentRow(current)
        finally:
            self._quiet = False
        self._fit()

    def _fit(self) -> None:
        rows = max(1, min(self.count(), MAX_ROWS_SHOWN))
        h = self.sizeHintForRow(0) if self.count() else self.fontMetrics().height() + 4
        height = rows * max(h, 1) + 2 * self.frameWidth() + 2
        if self.maximumHeight() != height:
            self.setFixedHeight(height)
        if self.count():
            self.scrollToItem(self.item(self.currentRow() if self.currentRow() >= 0 else self.count() - 1))

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == e.Type.FontChange:
            self._fit()
