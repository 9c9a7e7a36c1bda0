"""A pane's header: four lines of fixed height, so every pane's tabs start at the same height whatever its texts.

    name (elided) ................. [status] [focus] [Stop]
    format · model · finish (elided)       [adapted]
    TTFT · elapsed · frames          (the metrics, broken at " · ", two lines,
    in / out tokens · tokens per s    the rest elided)

Every elided text has its full text in its tooltip. The status badge is as wide as the longest word it can show,
so it is never clipped and never moves its neighbours. The "adapted" badge shows when the request was adapted to
the provider's API (the request's notes: max_tokens raised for thinking, `n` ignored, ...), the notes in its
tooltip; it sits on the format line, so that the provider's name keeps the first line's room (beside it, a
300 px pane elided "demo-openai-responses" to "demo…"). Double-clicking the header (or the focus button) asks
the window to show this pane alone.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.replay_view import BADGE_WORDS
from gui.widgets import ElidedLabel, plain_label

BADGE_PADDING_PX = 6           # each side, as the badge's style sheet says
STATUS_COLORS = {
    "pending": ("#6b7280", "#ffffff"),
    "connecting": ("#2563eb", "#ffffff"),
    "streaming": ("#0891b2", "#ffffff"),
    "done": ("#16a34a", "#ffffff"),
    "error": ("#dc2626", "#ffffff"),
    "cancelled": ("#a16207", "#ffffff"),
    "stalled": ("#c2410c", "#ffffff"),
}
FORMAT_TIP = "Wire format · model; once known, the finish reason (canonical, then the provider's own in parentheses)"
METRICS_TIP = ("Time to first token · elapsed · frames · input / output tokens (~: estimated from the characters "
               "received, until the provider reports them) · output tokens per second")


class PaneHeader(QWidget):
    """The header widgets of one pane (the pane fills them in).

    Signals:
        focusRequested(): the header was double-clicked or its focus button pressed.
    """

    focusRequested = Signal()

    def __init__(self, name: str, parent=None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        top = QHBoxLayout()
        top.setSpacing(4)
        self.name_label = ElidedLabel(name, self)
        self.name_label.setObjectName("paneName")     # bold, by the style sheet (the size follows View > font)
        self.adapted_badge = plain_label("adapted", self)
        self.adapted_badge.setObjectName("adapted")   # (its colour per theme: QLabel#adapted in the style sheets;
        #                                                  no frame, so the format line keeps its height)
        self.adapted_badge.hide()
        self.badge = plain_label("", self)
        self.badge.setObjectName("statusBadge")
        self.badge.setAlignment(Qt.AlignCenter)
        self.focus_button = QToolButton(self)
        self.focus_button.setAutoRaise(True)
        self.focus_button.setCheckable(True)
        self.focus_button.setToolTip("Show this pane alone, over the whole panes area; again to show every pane "
                                     "(also: double-click the header, Ctrl+Shift+F)")
        self.focus_button.clicked.connect(lambda _on: self.focusRequested.emit())
        self.stop_button = QToolButton(self)   # (a tool button: as narrow as its word, the name gets the room)
        self.stop_button.setText("Stop")
        self.stop_button.setToolTip("Stop this provider's stream (the others go on)")
        top.addWidget(self.name_label, 1)
        top.addWidget(self.badge)
        top.addWidget(self.focus_button)
        top.addWidget(self.stop_button)
        lay.addLayout(top)
        self.format_label = ElidedLabel("", self, description=FORMAT_TIP)
        self.format_label.setObjectName("dim")
        second = QWidget(self)
        row = QHBoxLayout(second)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(self.format_label, 1)
        row.addWidget(self.adapted_badge)
        self.adapted_badge.setParent(second)
        lay.addWidget(second)
        self.metrics_label = ElidedLabel("", self, lines=2, description=METRICS_TIP)
        self.metrics_label.setObjectName("metrics")
        lay.addWidget(self.metrics_label)
        self._badge_word = None
        self._focused = False
        self.set_focused(False)
        self._fit_badge()

    # -- the badges ------------------------------------------------------------------------------------------
    def set_status(self, status: str, word: str) -> None:
        """Show `word` (the status, or how a replay says it) in the status's colours."""
        if word == self._badge_word:
            return
        self._badge_word = word
        bg, fg = STATUS_COLORS.get(status, ("#6b7280", "#ffffff"))
        self.badge.setText(word)
        self.badge.setStyleSheet(f"QLabel {{ background: {bg}; color: {fg}; border-radius: 8px; "
                                 f"padding: 1px {BADGE_PADDING_PX}px; font-weight: bold; }}")

    def set_adapted(self, notes) -> None:
        """Show the "adapted" badge when the request has notes (its adaptations), the notes in its tooltip."""
        notes = list(notes or ())
        self.adapted_badge.setVisible(bool(notes))
        self.adapted_badge.setToolTip("The request was adapted to this API:\n" + "\n".join(f"• {n}" for n in notes)
                                      + "\n\n(the Request tab shows the request as sent)" if notes else "")

    def _fit_badge(self) -> None:
        """The badge as wide as its longest word in bold, so no status is clipped and the row never moves."""
        f = QFont(self.badge.font())
        f.setBold(True)
        fm = QFontMetrics(f)
        words = set(STATUS_COLORS) | set(BADGE_WORDS.values())
        self.badge.setFixedWidth(max(fm.horizontalAdvance(w) for w in words) + 2 * BADGE_PADDING_PX + 4)

    def set_focused(self, on: bool) -> None:
        """The focus button's look: "show alone" when the pane shares the area, "show all" when it is alone."""
        self._focused = on
        self.focus_button.setChecked(on)
        self.focus_button.setIcon(focus_icon(self.palette().color(QPalette.WindowText), alone=on))

    # -- events ----------------------------------------------------------------------------------------------
    def mouseDoubleClickEvent(self, e) -> None:
        self.focusRequested.emit()
        e.accept()

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == QEvent.FontChange:
            self._fit_badge()
        elif e.type() == QEvent.PaletteChange:   # (the theme changed: the icon is drawn in the text colour)
            self.set_focused(self._focused)


def focus_icon(color: QColor, alone: bool, size: int = 16) -> QIcon:
    """A diagonal double arrow in `color`: heads out ("show this pane alone"), or heads in ("show every pane")."""
    pm = QPixmap(size, size)
    pm.fill(Qt.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(QPen(color, 1.6, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
    lo, hi, mid, head = 3.0, size - 3.0, size / 2.0, 4.0
    ends = ((QPointF(lo, hi), QPointF(mid - 1, mid + 1)), (QPointF(hi, lo), QPointF(mid + 1, mid - 1)))
    for corner, centre in ends:
        p.drawLine(corner, centre)
        tip, back = (centre, corner) if alone else (corner, centre)
        sx = 1.0 if back.x() > tip.x() else -1.0        # the head's arms point back along the line
        sy = 1.0 if back.y() > tip.y() else -1.0
        p.drawLine(tip, QPointF(tip.x() + sx * head, tip.y()))
        p.drawLine(tip, QPointF(tip.x(), tip.y() + sy * head))
    p.end()
    return QIcon(pm)
