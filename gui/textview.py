"""The pane's Text tab: the live reply as plain text, thinking shown apart (collapsible, dimmed).

`ReplyTextView.update_from(reply)` appends only what the reply gained since the last call (the blocks keep
their fragments as lists; the view remembers how many fragments of each block it has shown), and follows the
tail unless the user scrolled up. Only `QPlainTextEdit.insertPlainText`-style calls are used: model output is
never interpreted as HTML.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QFont, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit, QSplitter, QToolButton, QVBoxLayout, QWidget

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.theme import dim_text_color


def _segment_header(block, first: bool, multi_choice: bool, prev_choice) -> str:
    head = ""
    if multi_choice and block.choice != prev_choice:
        head += ("" if first else "\n\n") + f"── choice {block.choice} ──\n"
        first = True
    if block.kind == "tool_call":
        head += ("" if first else "\n\n") + f"⟦tool call: {block.name or '?'}"
        head += f"  id={block.id}⟧\n" if block.id else "⟧\n"
    elif block.kind == "refusal":
        head += ("" if first else "\n\n") + "⟦refusal⟧ "
    elif block.kind == "other":
        head += ("" if first else "\n\n") + f"⟦{block.provider_type or 'other'} block⟧"
    elif not first:
        head += "\n\n"
    return head


class _Stream:
    """Incremental rendering of a sequence of blocks into one QPlainTextEdit."""

    def __init__(self, edit: QPlainTextEdit, kinds: tuple[str, ...]) -> None:
        self.edit = edit
        self.kinds = kinds
        self.shown: list[list] = []   # [block key, parts shown, size shown]
        self.chars = 0
        self.multi = False            # shown with "── choice N ──" headers (a second choice arrived)
        # following the tail: the scroll bar is kept at its end as the range grows, which the document's layout
        # does after the insert (scrolling right after it stopped a line or two short of a long reply's end).
        # A value set otherwise is the user's (scrolled up: not followed; back at the end: followed again),
        # except those the editor sets itself while it inserts or is resized: it keeps its top line then
        self.follow = True
        self._own = 0                 # > 0: the editor or this stream is setting the values
        sb = edit.verticalScrollBar()
        sb.rangeChanged.connect(self._on_range)
        sb.valueChanged.connect(self._on_value)
        if isinstance(edit, TailEdit):
            edit.stream = self

    def _to_end(self) -> None:
        sb = self.edit.verticalScrollBar()
        if sb.value() != sb.maximum():
            self._own += 1
            try:
                sb.setValue(sb.maximum())
            finally:
                self._own -= 1

    def _on_range(self, *_a) -> None:
        if self.follow:
            self._to_end()

    def _on_value(self, value: int) -> None:
        if not self._own:
            self.follow = value >= self.edit.verticalScrollBar().maximum() - 4

    def own_change(self, change) -> None:
        """Run `change` (an insert, a resize) as the editor's own: the values it sets are not the user's; the
        tail is followed again after it."""
        self._own += 1
        try:
            change()
        finally:
            self._own -= 1
        if self.follow:
            self._to_end()

    def _blocks(self, reply) -> list:
        return [b for b in reply.ordered_blocks() if b.kind in self.kinds]

    def update(self, reply) -> bool:
        blocks = self._blocks(reply)
        shown = self.shown
        multi = any(b.choice for b in blocks)
        # can we append? the shown blocks must be a prefix, and only the last of them may have grown; and
        # once a second choice arrives, what was shown of the first gets its header too
        ok = len(blocks) >= len(shown) and multi == self.multi
        if ok:
            for i, (key, nparts, size) in enumerate(shown):
                b = blocks[i]
                if (b.index != key or len(b.parts) < nparts or (len(b.parts) == nparts and b.size != size)
                        or (i < len(shown) - 1 and b.size != size)):
                    ok = False
                    break
        if not ok:
            self._render_all(blocks)
            return True
        pieces: list[str] = []
        if shown:
            last = shown[-1]
            b = blocks[len(shown) - 1]
            if len(b.parts) > last[1]:
                pieces.append("".join(b.parts[last[1]:]))
                last[1], last[2] = len(b.parts), b.size
        for i in range(len(shown), len(blocks)):
            b = blocks[i]
            prev = blocks[i - 1].choice if i else None
            pieces.append(_segment_header(b, i == 0, multi, prev))
            pieces.append("".join(b.parts) if not b.redacted else "(redacted)")
            shown.append([b.index, len(b.parts), b.size])
        text = "".join(pieces)
        if text:
            self._append(text)
            return True
        return False

    def _render_all(self, blocks) -> None:
        self.shown = []
        self.edit.clear()
        self.chars = 0
        pieces = []
        multi = self.multi = any(b.choice for b in blocks)
        for i, b in enumerate(blocks):
            prev = blocks[i - 1].choice if i else None
            pieces.append(_segment_header(b, i == 0, multi, prev))
            pieces.append("".join(b.parts) if not b.redacted else "(redacted)")
            self.shown.append([b.index, len(b.parts), b.size])
        self._append("".join(pieces))

    def _append(self, text: str) -> None:
        edit = self.edit
        cursor = QTextCursor(edit.document())
        cursor.movePosition(QTextCursor.End)
        self.own_change(lambda: cursor.insertText(text))   # (and followed as the layout grows the range)
        self.chars += len(text)


class TailEdit(QPlainTextEdit):
    """A read-only text whose resizes are its own scroll changes for the `_Stream` that fills it (it keeps its top
    line as it re-wraps, which is not the user scrolling up)."""

    stream: _Stream | None = None

    def resizeEvent(self, e) -> None:
        if self.stream is None:
            super().resizeEvent(e)
        else:
            self.stream.own_change(lambda: QPlainTextEdit.resizeEvent(self, e))


class ReplyTextView(QWidget):
    """Thinking (collapsible, dimmed) above the answer (text, refusals, tool calls), both plain text."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.thinking_toggle = QToolButton(self)
        self.thinking_toggle.setCheckable(True)
        self.thinking_toggle.setChecked(True)
        self.thinking_toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.thinking_toggle.setArrowType(Qt.DownArrow)
        self.thinking_toggle.setAutoRaise(True)
        self.thinking_toggle.toggled.connect(self._toggle)
        self.thinking = TailEdit(self)
        self.thinking.setReadOnly(True)
        self.thinking.setObjectName("thinking")
        self.thinking.setToolTip("The model's thinking, shown apart from the answer")
        self._dim_thinking()
        f = QFont()            # italic only: the family and size follow the application (View > font size)
        f.setItalic(True)
        self.thinking.setFont(f)
        self.answer = TailEdit(self)
        self.answer.setReadOnly(True)
        self.answer.setObjectName("answer")
        self.answer.setPlaceholderText("The reply appears here as it streams.")
        self.split = QSplitter(Qt.Vertical, self)
        self.split.addWidget(self.thinking)
        self.split.addWidget(self.answer)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 3)
        # where a stream that did not finish stopped: right under its last text (apart from it, so that copying
        # the text copies only what the model sent)
        self.end_note = QLabel(self)
        self.end_note.setObjectName("endNote")
        self.end_note.setTextFormat(Qt.PlainText)
        self.end_note.setWordWrap(True)
        self.end_note.hide()
        lay.addWidget(self.thinking_toggle)
        lay.addWidget(self.split, 1)
        lay.addWidget(self.end_note)
        self._thinking = _Stream(self.thinking, ("thinking",))
        self._answer = _Stream(self.answer, ("text", "refusal", "tool_call", "other"))
        self._has_thinking = False
        self._reply = None
        self.thinking_toggle.hide()
        self.thinking.hide()

    def _dim_thinking(self) -> None:
        """Thinking is dimmed, but readable: text blended towards the background of the current theme."""
        dim = dim_text_color(QApplication.palette())
        pal = QPalette()       # only the text colour is set: every other role follows the theme
        for group in (QPalette.Active, QPalette.Inactive):
            pal.setColor(group, QPalette.Text, dim)
        self.thinking.setPalette(pal)

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        # a theme switch sets the palette, then re-polishes with the style sheet, which restores the palette the
        # widget had before: so the dim colour is recomputed once all that is over
        if e.type() in (QEvent.ApplicationPaletteChange, QEvent.PaletteChange, QEvent.StyleChange) \
                and not self._dim_pending:
            self._dim_pending = True
            QTimer.singleShot(0, self, self._dim_later)   # dropped if the view is deleted first

    _dim_pending = False

    def _dim_later(self) -> None:
        self._dim_pending = False
        self._dim_thinking()

    def _toggle(self, on: bool) -> None:
        self.thinking.setVisible(on and self._has_thinking)
        self.thinking_toggle.setArrowType(Qt.DownArrow if on else Qt.RightArrow)

    def update_from(self, reply) -> None:
        if reply is not self._reply:   # a new snapshot (the core re-decoded the run): start over
            self._reply = reply
            self._answer.shown = [[-1, 0, 0]] if self._answer.shown else []
            self._thinking.shown = [[-1, 0, 0]] if self._thinking.shown else []
        self._answer.update(reply)
        # (thinking blocks with no text, as Responses reasoning items with `summary: []`, show nothing: an empty
        # "Thinking (0 chars)" box said nothing the Blocks tab does not; `chars` counts the separators too)
        if (self._thinking.update(reply) or self._thinking.shown) and (
                self._has_thinking or any(b.size for b in reply.blocks.values() if b.kind == "thinking")):
            if not self._has_thinking:
                self._has_thinking = True
                self.thinking_toggle.show()
                self.thinking.setVisible(self.thinking_toggle.isChecked())
            self.thinking_toggle.setText(f"Thinking ({self._thinking.chars:,} chars)")

    def set_end_note(self, text: str | None) -> None:
        """Say under the text where and why the stream stopped short (None: it finished, or is still going)."""
        if text != (self.end_note.text() if self.end_note.isVisibleTo(self) else None):
            self.end_note.setText(text or "")
            self.end_note.setVisible(bool(text))

    def answer_text(self) -> str:
        return self.answer.toPlainText()

    def thinking_text(self) -> str:
        return self.thinking.toPlainText()
