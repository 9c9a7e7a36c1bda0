"""Small widgets the window, the panes and the dialogs share: a plain-text label, an elided plain-text label, a
read-only table whose rows follow the font size, and a read-only monospace text view."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QPlainTextEdit, QSizePolicy, QTableView

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.theme import mono_font


def plain_label(text: str = "", parent=None) -> QLabel:
    """A label that never interprets its text as rich text (provider output and names are plain text)."""
    label = QLabel(text, parent)
    label.setTextFormat(Qt.PlainText)
    return label


class ElidedLabel(QLabel):
    """A plain-text label of a fixed number of lines that never asks for more width than it is given.

    Text that does not fit is cut at the end with "…" (never mid-word without one). With `lines` > 1 the text
    is broken at its `separator` (" · ": the pane header's figures), as many parts per line as fit, the last
    line elided. `text()` is the full text and the tooltip shows it, followed by `description` when there is
    one. The height is always `lines` lines, so a row of these labels keeps its height whatever the text:
    neighbouring panes stay aligned.
    """

    def __init__(self, text: str = "", parent=None, *, lines: int = 1, description: str = "",
                 separator: str = " · ") -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.PlainText)
        self._lines = max(1, lines)
        self._description = description
        self._separator = separator
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:
        if text == self.text():
            return
        super().setText(text)
        self._update_tip()
        self.update()

    def set_description(self, description: str) -> None:
        """What the label is about, shown under the full text in its tooltip."""
        self._description = description
        self._update_tip()

    def _update_tip(self) -> None:
        parts = [p for p in (self.text(), self._description) if p]
        self.setToolTip("\n\n".join(parts))

    def shown_lines(self, width: int | None = None) -> list[str]:
        """The lines drawn at `width` pixels (default: the label's own width), elided as they are painted."""
        fm = self.fontMetrics()
        width = self.contentsRect().width() if width is None else width
        text = self.text().replace("\n", " ")
        if self._lines == 1:
            return [fm.elidedText(text, Qt.ElideRight, width)] if text else []
        parts = text.split(self._separator)
        lines: list[str] = []
        while parts and len(lines) < self._lines - 1:
            line = parts.pop(0)
            while parts and fm.horizontalAdvance(line + self._separator + parts[0]) <= width:
                line += self._separator + parts.pop(0)
            lines.append(fm.elidedText(line, Qt.ElideRight, width))
        if parts:
            lines.append(fm.elidedText(self._separator.join(parts), Qt.ElideRight, width))
        return lines

    def is_elided(self) -> bool:
        """True when some of the text does not show (it is then only in the tooltip)."""
        return self._separator.join(self.shown_lines()) != self.text().replace("\n", " ")

    def _line_height(self) -> int:
        return self.fontMetrics().lineSpacing()

    def sizeHint(self) -> QSize:
        m = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self.text()) // self._lines
        return QSize(width + m.left() + m.right(), self._line_height() * self._lines + m.top() + m.bottom())

    def minimumSizeHint(self) -> QSize:
        m = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance("…") + m.left() + m.right(),
                     self._line_height() * self._lines + m.top() + m.bottom())

    def paintEvent(self, _e) -> None:
        painter = QPainter(self)
        r = self.contentsRect()
        h = self._line_height()
        style = self.style()
        for i, line in enumerate(self.shown_lines(r.width())):
            row = r.adjusted(0, i * h, 0, 0)
            row.setHeight(h)
            style.drawItemText(painter, row, int(Qt.AlignLeft | Qt.AlignVCenter), self.palette(),
                               self.isEnabled(), line, self.foregroundRole())

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == QEvent.FontChange:
            self.updateGeometry()


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


def table(model, parent=None) -> Table:
    """A read-only `Table` over `model`: whole rows selected, alternating colours, no row numbers."""
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


def readonly_text(parent=None, mono: bool = True) -> QPlainTextEdit:
    """A read-only plain-text view (monospace unless `mono` is False; its size follows View > font size)."""
    e = QPlainTextEdit(parent)
    e.setReadOnly(True)
    if mono:
        e.setFont(mono_font())
    return e
