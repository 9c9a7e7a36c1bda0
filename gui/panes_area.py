"""Where the panes sit: side by side in a splitter, each at least `PANE_MIN_WIDTH` wide, in a horizontally
scrolling area, so 1 to 8 panes never widen the window past the screen.

Why side by side and scrolling rather than a grid: a pane is read top to bottom (its header, then a tall tab:
the reply, the Raw table), and comparing providers means reading the same line of each; two rows would halve
every pane's height, which is what a laptop screen has least of. As many panes as fit at that width are shown
whole, sharing the width evenly (four at 1280 px, three at 1024 px), the others are a scroll away, and the timeline below keeps one lane per provider in
view. Any pane can be shown alone over the whole area (`toggle_focus`: its header's focus button, a
double-click on its header, or Ctrl+Shift+F), and again to show them all.

Each send starts with equal widths (dragging a handle changes them for that run only): a width a pane once
took must not carry over to the next run.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter

from gui.pane import MIN_WIDTH

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.widgets import plain_label

PLACEHOLDER = ("Type a prompt above, check some providers, and press Ctrl+Enter: each provider's reply streams in "
               "its own pane here.")


READABLE_LINES = 12     # the panes area's minimum height, in lines: a pane's header, turn row, tab bar, 4 lines of text


def columns_that_fit(width: int, handle: int, pane_width: int = MIN_WIDTH) -> int:
    """How many panes of `pane_width` fit side by side in `width`, a splitter handle of `handle` between each two
    (at least one)."""
    return max(1, (width + handle) // (pane_width + handle))


class PanesArea(QScrollArea):
    """The panes, side by side, scrolling horizontally when they do not fit.

    Signals:
        focusChanged(object): a pane was shown alone (the pane) or every pane shown again (None).
    """

    focusChanged = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        # a pane's tabs and what is under them scroll on their own down to a minimum (gui.pane.BelowTabs); an
        # area shorter than that scrolls (it cut the panes' bottoms off, out of reach)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.placeholder = plain_label(PLACEHOLDER, self.splitter)
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.splitter.addWidget(self.placeholder)
        self.setWidget(self.splitter)
        self.panes: list = []
        self.focused = None

    def readable_height(self) -> int:
        """`READABLE_LINES` lines: what a dock (Compare) opening leaves the panes when the window has the room
        (not a minimum size: on a small screen a large font would push the window past it)."""
        return self.fontMetrics().lineSpacing() * READABLE_LINES + self.horizontalScrollBar().sizeHint().height()

    def set_panes(self, panes: list) -> None:
        """Show these panes (the previous ones are the caller's to delete), at equal widths."""
        self.focused = None
        self.panes = list(panes)
        for p in self.panes:
            self.splitter.addWidget(p)
            p.setVisible(True)          # (a spare made ahead waited hidden in the splitter)
        self.placeholder.setVisible(not self.panes)
        self.equalize()

    def clear(self) -> None:
        """Forget the panes (hidden; the caller deletes them) and show the placeholder."""
        for p in self.panes:
            p.hide()
        self.panes = []
        if self.focused is not None:
            self.focused = None
            self.focusChanged.emit(None)
        self.placeholder.show()

    def equalize(self) -> None:
        """Every visible pane the same width."""
        widgets = [self.splitter.widget(i) for i in range(self.splitter.count())]
        self.splitter.setSizes([0 if w.isHidden() else 1000 for w in widgets])
        self._fit_columns()

    def columns(self) -> int:
        """How many panes the view shows whole at once."""
        shown = [p for p in self.panes if not p.isHidden()]
        return max(1, min(len(shown), columns_that_fit(self.viewport().width(), self.splitter.handleWidth())))

    def _fit_columns(self) -> None:
        """Make the panes that fit share the view's width, the others following at the same width."""
        shown = [p for p in self.panes if not p.isHidden()]
        k = self.columns()
        handle = self.splitter.handleWidth()
        if len(shown) <= k:
            self.splitter.setMinimumWidth(0)
            return
        width = max(MIN_WIDTH, (self.viewport().width() - (k - 1) * handle) // k)
        self.splitter.setMinimumWidth(len(shown) * width + (len(shown) - 1) * handle)
        self.splitter.setSizes([width if not self.splitter.widget(i).isHidden() else 0
                                for i in range(self.splitter.count())])
        self.horizontalScrollBar().setSingleStep(width + handle)

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if self.panes:
            self._fit_columns()

    def sizes(self) -> list[int]:
        """The panes' widths, in order."""
        return [p.width() for p in self.panes]

    # -- one pane alone ------------------------------------------------------------------------------------
    def pane_of(self, widget):
        """The pane (one of `set_panes`' widgets) that is `widget` or holds it; None when none does. (A pane may
        be a container of the provider's pane widgets, one per turn.)"""
        for p in self.panes:
            if widget is not None and (widget is p or p.isAncestorOf(widget)):
                return p
        return None

    def toggle_focus(self, widget) -> None:
        """Show the pane of `widget` alone over the whole area; when it already is, show every pane again."""
        pane = self.pane_of(widget)
        if pane is None:
            return
        if self.focused is pane:
            self.focused = None
            for p in self.panes:
                p.show()
        else:
            self.focused = pane
            for p in self.panes:
                p.setVisible(p is pane)
        self.equalize()
        self.focusChanged.emit(self.focused)

    def reveal(self, widget) -> None:
        """Scroll the pane of `widget` into view (when the panes do not all fit)."""
        pane = self.pane_of(widget)
        if pane is not None and pane.isVisibleTo(self.splitter):
            self.ensureWidgetVisible(pane, 0, 0)
