"""Small widgets the window, the panes and the dialogs share: a plain-text label, a read-only table whose rows
follow the font size, and a read-only monospace text view."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QPlainTextEdit, QTableView

from gui.theme import mono_font


def plain_label(text: str = "", parent=None) -> QLabel:
    """A label that never interprets its text as rich text (provider output and names are plain text)."""
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
