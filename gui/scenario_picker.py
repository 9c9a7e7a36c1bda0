"""The demo scenario picker shows each scenario's one-line description: the closed box keeps the short name,
the open list shows the name and, under it, the description (dimmed, wrapped to two lines; all of it in the
item's tooltip). The descriptions are the emulator's own catalog (`core.servers.emulator.scenarios.SCENARIOS`,
served at `/scenarios`), read from each item's ToolTipRole as the window sets it."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPalette
from PySide6.QtWidgets import QComboBox, QStyle, QStyledItemDelegate, QStyleOptionViewItem

POPUP_MIN_WIDTH = 520     # px: wide enough that most descriptions fit in their two lines
TEXT_WIDTH = POPUP_MIN_WIDTH - 48   # the descriptions wrap at this width (room for margins and a scroll bar),
                                    # the same when sizing and painting, whatever width the list gets
DESCRIPTION_LINES = 2
PAD = 4
BASE_TIP = "The scenario the built-in emulator plays for the demo providers"


def wrapped(text: str, fm: QFontMetrics, width: int, lines: int = DESCRIPTION_LINES) -> list[str]:
    """`text` cut into at most `lines` lines of at most `width` px at word breaks; the last elided."""
    words = text.split()
    out: list[str] = []
    cur = ""
    i = 0
    while i < len(words) and len(out) < lines - 1:
        trial = f"{cur} {words[i]}".strip()
        if cur and fm.horizontalAdvance(trial) > width:
            out.append(cur)
            cur = ""
            continue
        cur = trial
        i += 1
    rest = " ".join([cur] + words[i:]).strip() if len(out) == lines - 1 else cur
    if rest:
        out.append(fm.elidedText(rest, Qt.ElideRight, width))
    return out


class ScenarioDelegate(QStyledItemDelegate):
    """Paints a scenario as its name, then its description (ToolTipRole) dimmed on up to two lines."""

    def __init__(self, view, parent=None) -> None:
        super().__init__(parent)
        self.view = view

    def _text_width(self, option) -> int:
        return TEXT_WIDTH

    def sizeHint(self, option, index) -> QSize:
        fm = option.fontMetrics
        desc = index.data(Qt.ToolTipRole) or ""
        n = len(wrapped(str(desc), fm, self._text_width(option))) if desc else 0
        return QSize(POPUP_MIN_WIDTH, 2 * PAD + fm.height() * (1 + n) + (2 if n else 0))

    def paint(self, painter, option, index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        name = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else self.view.style()
        style.drawControl(QStyle.CE_ItemViewItem, opt, painter, opt.widget)   # background and selection
        selected = bool(opt.state & QStyle.State_Selected)
        pal = opt.palette
        fm = opt.fontMetrics
        x, y = opt.rect.x() + 2 * PAD, opt.rect.y() + PAD
        width = self._text_width(opt)
        painter.save()
        bold = opt.font
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(pal.color(QPalette.HighlightedText if selected else QPalette.Text))
        painter.drawText(QRect(x, y, width, fm.height()), Qt.AlignLeft | Qt.AlignVCenter,
                         QFontMetrics(bold).elidedText(name, Qt.ElideRight, width))
        desc = index.data(Qt.ToolTipRole)
        if desc:
            painter.setFont(option.font)
            painter.setPen(pal.color(QPalette.HighlightedText) if selected else pal.color(QPalette.PlaceholderText))
            for k, line in enumerate(wrapped(str(desc), fm, width), 1):
                painter.drawText(QRect(x, y + 2 + k * fm.height(), width, fm.height()),
                                 Qt.AlignLeft | Qt.AlignVCenter, line)
        painter.restore()


def show_descriptions(combo: QComboBox) -> ScenarioDelegate:
    """Make `combo`'s open list show each item's description (its ToolTipRole) under its name, and its own
    tooltip say what the current scenario does."""
    view = combo.view()
    delegate = ScenarioDelegate(view, combo)
    view.setItemDelegate(delegate)
    view.setMinimumWidth(POPUP_MIN_WIDTH)
    view.setTextElideMode(Qt.ElideRight)

    def tip(i: int) -> None:
        desc = combo.itemData(i, Qt.ToolTipRole) if i >= 0 else None
        combo.setToolTip(f"{combo.itemText(i)}: {desc}\n\n{BASE_TIP}" if desc else BASE_TIP)

    combo.currentIndexChanged.connect(tip)
    tip(combo.currentIndex())
    return delegate
