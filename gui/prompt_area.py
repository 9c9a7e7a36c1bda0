"""The area above the panes: the prompt (or, after a replay, the captured prompt, read-only) beside the provider
picker, and under them a bar with the collapse toggle, the demo scenario, Send and Stop all.

Collapsed (the toggle, View > Prompt area, Ctrl+Shift+P), only the bar is left, with the prompt's first line in
it, so the panes get the height: at 1024x700 that is the difference between a Raw table of a handful of rows and
one worth scanning. Send and Stop stay in reach either way.

The area never sets the window's minimum width: should the prompt's option row be wider than the window (a
1024 px screen, a large font), the prompt and picker scroll sideways instead of pushing the window off-screen.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QStackedWidget, QToolButton, QVBoxLayout, QWidget

from gui.replay_view import CapturedPromptView
from gui.widgets import ElidedLabel

QWIDGETSIZE_MAX = (1 << 24) - 1


class SidewaysScroll(QScrollArea):
    """A frameless area that scrolls its widget horizontally when it is narrower than the widget's minimum, and
    is as tall as the widget needs (it never scrolls vertically)."""

    def __init__(self, widget: QWidget, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.NoFrame)
        self.setWidgetResizable(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setWidget(widget)
        widget.installEventFilter(self)

    def eventFilter(self, obj, e) -> bool:
        # a scroll area does not pass its widget's new size hints on: a section opened in the prompt left the
        # splitter holding the area at its old height (the Tools editor one clipped line)
        if obj is self.widget() and e.type() == QEvent.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(obj, e)

    def _bar_height(self) -> int:
        """The horizontal scroll bar's height while it shows (it takes its height from the viewport, which would
        then cut off the widget's last row), else 0."""
        if self.widget().minimumSizeHint().width() > self.viewport().width():
            return self.horizontalScrollBar().sizeHint().height()
        return 0

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.widget().minimumSizeHint().height() + self._bar_height())

    def sizeHint(self) -> QSize:
        return QSize(0, self.widget().sizeHint().height() + self._bar_height())

    def resizeEvent(self, e) -> None:
        had = self._bar_height()
        super().resizeEvent(e)
        if self._bar_height() != had:   # the bar came or went: the height wanted changed with it
            self.updateGeometry()


class PromptArea(QWidget):
    """The prompt panel and the picker, collapsible, over the Send / Stop bar.

    Signals:
        collapsedChanged(bool): the area was collapsed (True) or expanded (False) by its toggle.
    """

    collapsedChanged = Signal(bool)

    def __init__(self, prompt, picker: QWidget, bar_widgets: list, parent=None) -> None:
        """`bar_widgets`: what the bar shows right of the prompt's summary (the scenario, Send, Stop all)."""
        super().__init__(parent)
        self.prompt = prompt
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 2)
        lay.setSpacing(4)
        inner = QWidget()
        bl = QHBoxLayout(inner)
        bl.setContentsMargins(0, 0, 0, 0)
        self.stack = QStackedWidget(inner)
        self.stack.addWidget(prompt)
        self.captured = CapturedPromptView(self.stack)
        self.stack.addWidget(self.captured)
        bl.addWidget(self.stack, 3)
        bl.addWidget(picker, 1)
        self.body = SidewaysScroll(inner, self)
        lay.addWidget(self.body, 1)

        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.toggle = QToolButton(self)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.toggle.setText("Prompt")
        self.toggle.clicked.connect(lambda: self._set_collapsed(not self._collapsed, emit=True))
        self.summary = ElidedLabel("", self)
        self.summary.setObjectName("dim")
        bar.addWidget(self.toggle)
        bar.addWidget(self.summary, 1)
        for w in bar_widgets:
            bar.addWidget(w)
        lay.addLayout(bar)
        self._collapsed = False
        prompt.prompt.textChanged.connect(self._update_summary)
        self._update_toggle()

    # -- collapsing --------------------------------------------------------------------------------------------
    @property
    def collapsed(self) -> bool:
        return self._collapsed

    def set_collapsed(self, on: bool) -> None:
        """Collapse the area to its bar (True) or show it whole (False)."""
        self._set_collapsed(on, emit=False)

    def _set_collapsed(self, on: bool, emit: bool) -> None:
        if on == self._collapsed:
            return
        self._collapsed = on
        self.body.setVisible(not on)
        self._update_toggle()
        self._update_summary()
        if on:   # the splitter this sits in cannot give it more than the bar
            self.setMaximumHeight(self.minimumSizeHint().height())
        else:
            self.setMaximumHeight(QWIDGETSIZE_MAX)
        if emit:
            self.collapsedChanged.emit(on)

    def _update_toggle(self) -> None:
        self.toggle.setArrowType(Qt.RightArrow if self._collapsed else Qt.DownArrow)
        self.toggle.setToolTip(("Show" if self._collapsed else "Hide") + " the prompt and the provider list "
                               "(Ctrl+Shift+P); hidden, the panes get the height")

    def _update_summary(self) -> None:
        if not self._collapsed:
            self.summary.setText("")
            return
        if self.showing_captured:
            self.summary.setText(self.captured.summary())
            return
        lines = self.prompt.prompt.toPlainText().strip().splitlines()
        self.summary.setText(lines[0] if lines else "(no prompt yet)")

    # -- the captured prompt of a replay ---------------------------------------------------------------------
    @property
    def showing_captured(self) -> bool:
        return self.stack.currentWidget() is self.captured

    def show_captured(self, spec, source) -> None:
        """Show a replayed capture's prompt read-only in the prompt's place (the draft is kept)."""
        self.captured.show_spec(spec, source)
        self.stack.setCurrentWidget(self.captured)
        self._update_summary()

    def show_draft(self) -> None:
        """Show the user's own, editable prompt again."""
        self.stack.setCurrentWidget(self.prompt)
        self._update_summary()
