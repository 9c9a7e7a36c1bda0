"""The tool-result editors of a pane whose conversation ends in tool calls: one editor per call, prefilled with
the preset's mock result (`core.live.tool_mocks.mock_results`), editable as JSON or as plain text, each with an
"error result" box, and the buttons that send them ("Send results" for this pane, "... in every pane").

What an error result becomes is decided by the request layer (`core.live.request`): `is_error: true` in
Anthropic's `tool_result`, an `error` object in Gemini's `functionResponse`, text starting with "Error:" in the
OpenAI formats, which have no flag. The panel only collects `tool_result` parts (`results()`).
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from core.live.conversation import Part, tool_result
from core.wire.jsonfast import loads as parse_json   # a ValueError, never a RecursionError, on deep input

from gui.theme import mono_font
from gui.widgets import plain_label

ARGS_SHOWN = 60            # a call's arguments in its editor's title are cut here (the tooltip has them all)
EDITOR_LINES = (2, 3)      # each editor's height, in lines: at least, and at most
ERROR_AS = {"anthropic": "sent as a tool_result with is_error: true",
            "gemini": "sent as the functionResponse's error object",
            "openai-chat": "sent as tool message text starting with 'Error:' (Chat Completions has no error flag)",
            "openai-responses": "sent as function_call_output text starting with 'Error:' (no error flag)"}


def result_kind(text: str) -> str:
    """"JSON" when the result parses as JSON, else "text" (both are sent; JSON objects keep their shape where
    the API takes one, as Gemini's functionResponse does)."""
    try:
        parse_json(text)
    except (ValueError, RecursionError):
        return "text"
    return "JSON"


class CallResultEditor(QWidget):
    """One call's result: a title (tool, arguments, id), the editor, and the error box."""

    def __init__(self, call: Part, prefill: Part | None, fmt: str, parent=None) -> None:
        super().__init__(parent)
        self.call = call
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(1)
        row = QHBoxLayout()
        row.setSpacing(6)
        args = " ".join((call.arguments or "{}").split())
        short = args if len(args) <= ARGS_SHOWN else args[:ARGS_SHOWN - 1] + "…"
        self.title = plain_label(f"{call.name or '?'} {short}", self)
        self.title.setObjectName("dim")
        self.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)   # cut in a narrow pane (tooltip)
        self.title.setMinimumWidth(40)
        self.title.setToolTip(f"Result for the call {call.name}({args})" + (f"\nid {call.id}" if call.id else ""))
        self.kind = plain_label("", self)
        self.kind.setObjectName("dim")
        self.error_check = QCheckBox("error result", self)
        self.error_check.setToolTip("Send this result as a failed tool: " + ERROR_AS.get(fmt, "marked as an error"))
        row.addWidget(self.title, 1)
        row.addWidget(self.kind)
        row.addWidget(self.error_check)
        lay.addLayout(row)
        self.edit = QPlainTextEdit(self)
        self.edit.setObjectName("toolResult")
        self.edit.setFont(mono_font())
        self.edit.setTabChangesFocus(True)
        self.edit.setPlaceholderText("The tool's result: JSON or plain text")
        self.edit.setToolTip("The result sent back for this call (prefilled by the preset's mock; edit freely: "
                             "JSON or plain text)")
        self.edit.textChanged.connect(self._update_kind)
        lay.addWidget(self.edit)
        if prefill is not None:
            self.edit.setPlainText(prefill.text)
            self.error_check.setChecked(prefill.is_error)
        self._fit()
        self._update_kind()

    def _fit(self) -> None:
        line, pad = self.edit.fontMetrics().lineSpacing(), 2 * self.edit.frameWidth() + 8
        self.edit.setMinimumHeight(line * EDITOR_LINES[0] + pad)
        self.edit.setMaximumHeight(line * EDITOR_LINES[1] + pad)

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == e.Type.FontChange:
            self._fit()

    def _update_kind(self) -> None:
        self.kind.setText(result_kind(self.edit.toPlainText()))

    def result(self) -> Part:
        return tool_result(self.call, self.edit.toPlainText(), self.error_check.isChecked())


class ToolResultsPanel(QWidget):
    """The editors for the calls a conversation ends with and their send buttons (shown while there are calls),
    and, at the right of the heading, any other actions on the next turn (`add_action`, always shown).

    Signals:
        sendRequested(): "Send results": continue this pane's conversation with them.
        sendEverywhereRequested(): "Send results in every pane": every pane sends its own editors' results.
    """

    sendRequested = Signal()
    sendEverywhereRequested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("toolResults")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 0)
        lay.setSpacing(2)
        top = self.top = QHBoxLayout()
        self.heading = plain_label("", self)
        self.heading.setWordWrap(True)
        top.addWidget(self.heading, 1)
        lay.addLayout(top)
        self.editors_box = QVBoxLayout()
        self.editors_box.setSpacing(4)
        lay.addLayout(self.editors_box)
        row = self.buttons = QHBoxLayout()
        self.send_button = QPushButton("Send results", self)
        self.send_button.setToolTip("Continue this pane's conversation with these results")
        self.send_button.clicked.connect(self.sendRequested)
        self.send_all_button = QPushButton("… in every pane", self)
        self.send_all_button.setToolTip("Send results in every pane: each pane waiting for tool results sends its "
                                        "own editors' (Ctrl+Shift+R)")
        self.send_all_button.clicked.connect(self.sendEverywhereRequested)
        row.addWidget(self.send_button)
        row.addWidget(self.send_all_button)
        row.addStretch(1)
        lay.addLayout(row)
        self.editors: list[CallResultEditor] = []
        self._calls: tuple[Part, ...] = ()
        self._actions = 0
        self._show_calls(False)

    def add_action(self, widget) -> None:
        """Another action on the next turn, at the right of the heading's row (shown with or without calls)."""
        self.top.addWidget(widget, 0, Qt.AlignRight | Qt.AlignTop)
        self._actions += 1
        self._show_calls(bool(self._calls))

    def _show_calls(self, on: bool) -> None:
        for w in (self.heading, self.send_button, self.send_all_button):
            w.setVisible(on)
        self.setVisible(on or bool(self._actions))

    def wanted(self) -> bool:
        """Whether the panel has anything to show (calls, or other actions)."""
        return bool(self._calls) or bool(self._actions)

    @property
    def calls(self) -> tuple[Part, ...]:
        return self._calls

    def set_calls(self, calls: Sequence[Part], prefill: Sequence[Part], fmt: str) -> None:
        """Show one editor per call, prefilled with `prefill` (results in the same order); none: hide."""
        calls = tuple(calls)
        if calls == self._calls:
            return
        self._calls = calls
        for e in self.editors:
            self.editors_box.removeWidget(e)
            e.deleteLater()
        by_id = {r.id: r for r in prefill if r.id}
        self.editors = []
        for i, c in enumerate(calls):
            pre = by_id.get(c.id) if c.id else None
            if pre is None and i < len(prefill):
                pre = prefill[i]
            e = CallResultEditor(c, pre, fmt, self)
            self.editors_box.addWidget(e)
            self.editors.append(e)
        n = len(calls)
        self.heading.setText("Result to send back (mock, editable):" if n == 1 else
                             f"{n} results to send back (mocks, editable):")
        self._show_calls(bool(calls))

    def results(self) -> tuple[Part, ...]:
        """The tool_result parts the editors hold, one per call, in the calls' order."""
        return tuple(e.result() for e in self.editors)

    def set_sending_enabled(self, on: bool) -> None:
        self.send_button.setEnabled(on)
        self.send_all_button.setEnabled(on)
