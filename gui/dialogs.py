"""The window's small dialogs: Run > Timeouts…, Help > Keyboard shortcuts and Help > About. (Providers >
Settings… is `gui.settings_dialog`.)"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout,
                               QHeaderView, QMessageBox, QTableWidget, QTableWidgetItem, QVBoxLayout)

from gui.widgets import plain_label

ABOUT_TEXT = ("StreamScope 0.1\n\nSends one prompt to several LLM providers at once and shows their replies side "
              "by side as they stream, with every frame that came over the wire.")


class TimeoutsDialog(QDialog):
    """Run > Timeouts…: the connect and read timeouts of live sends (the read timeout ends a quiet stream as
    stalled; keepalives count as bytes, so they keep a stream alive)."""

    def __init__(self, connect_timeout: float, read_timeout: float, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Timeouts")
        form = QFormLayout(self)
        self.connect_spin = QDoubleSpinBox(self)
        self.connect_spin.setRange(0.5, 600.0)
        self.connect_spin.setDecimals(1)
        self.connect_spin.setSuffix(" s")
        self.connect_spin.setValue(connect_timeout)
        self.connect_spin.setToolTip("How long to wait for the TCP / TLS connection")
        self.read_spin = QDoubleSpinBox(self)
        self.read_spin.setRange(0.5, 3600.0)
        self.read_spin.setDecimals(1)
        self.read_spin.setSuffix(" s")
        self.read_spin.setValue(read_timeout)
        self.read_spin.setToolTip("A stream that sends no byte for this long (response headers included) ends "
                                  "as stalled; keepalive comments and pings count as bytes")
        form.addRow("Connect timeout", self.connect_spin)
        form.addRow("Read timeout (stalled after)", self.read_spin)
        note = plain_label("Applies to the next send. Replays keep their recorded timing.", self)
        note.setWordWrap(True)
        form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> tuple[float, float]:
        """(connect, read) in seconds."""
        return self.connect_spin.value(), self.read_spin.value()


class ShortcutsDialog(QDialog):
    """Help > Keyboard shortcuts: a table of (keys, what they do) rows, which the window builds from its
    actions themselves (`MainWindow.shortcut_rows`), so the list cannot drift from the shortcuts."""

    def __init__(self, rows: list[tuple[str, str]], parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        lay = QVBoxLayout(self)
        table = QTableWidget(len(rows), 2, self)
        table.setObjectName("shortcuts")
        table.setHorizontalHeaderLabels(["Keys", "Action"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        table.setSelectionMode(QAbstractItemView.NoSelection)
        # one line per row, every row the same height: a long description is elided, whole in its tooltip
        table.setWordWrap(False)
        table.setTextElideMode(Qt.ElideRight)
        rows_header = table.verticalHeader()
        rows_header.setSectionResizeMode(QHeaderView.Fixed)
        rows_header.setDefaultSectionSize(table.fontMetrics().height() + 8)
        for r, (keys, text) in enumerate(rows):
            for c, value in enumerate((keys, text)):
                item = QTableWidgetItem(value)
                item.setToolTip(value)
                table.setItem(r, c, item)
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        table.horizontalHeader().setStretchLastSection(True)
        self.table = table
        lay.addWidget(table)
        buttons = QDialogButtonBox(QDialogButtonBox.Close, self)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        # wide enough for the longest description, within reason; tall enough for every row
        fm = table.fontMetrics()
        widest = max((fm.horizontalAdvance(k) + fm.horizontalAdvance(t) for k, t in rows), default=400)
        screen = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        self.resize(min(max(640, widest + 80), 1000, screen.width() - 40),
                    min(120 + len(rows) * rows_header.defaultSectionSize(), 760, screen.height() - 40))


def about_box(parent=None) -> QMessageBox:
    """Help > About StreamScope (plain text)."""
    box = QMessageBox(parent)
    box.setWindowTitle("About StreamScope")
    box.setTextFormat(Qt.PlainText)
    box.setText(ABOUT_TEXT)
    return box
