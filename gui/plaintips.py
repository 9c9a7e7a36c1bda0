"""Tooltips and message boxes that never render text as HTML.

Qt shows a tooltip as rich text whenever `Qt.mightBeRichText` guesses so, and a text from a server, a capture or a
providers file can look like markup: `<img src=file:///some/local.png>` in an SSE frame would show a local file,
and `<img src=file:///dev/zero>` aborts the process (`std::bad_alloc`). Rather than trusting every `setToolTip` and
`ToolTipRole` in the window to escape its text, one application-wide event filter (`install`) takes every tooltip
request, finds the text Qt was about to show (a widget's tooltip, an item view's `ToolTipRole`, a header
section's, a tab's, a graphics item's) and shows it escaped (`plain_tooltip`). Widgets that call
`QToolTip.showText` themselves (the timeline's hover) pass their text through `plain_tooltip` too.

Tooltips are also bounded: a frame's data can be megabytes, and a tooltip is a glance, not a viewer.
"""
from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QGraphicsView, QHeaderView, QMessageBox,
                               QTabBar, QToolTip, QWidget)

MAX_TOOLTIP_CHARS = 2_000
_TOOLTIP = QEvent.ToolTip
MAX_TOOLTIP_LINES = 40


def bounded(text: str) -> str:
    """At most MAX_TOOLTIP_CHARS characters and MAX_TOOLTIP_LINES lines, saying what was left out."""
    cut = len(text) > MAX_TOOLTIP_CHARS
    if cut:
        text = text[:MAX_TOOLTIP_CHARS]
    lines = text.split("\n")
    if len(lines) > MAX_TOOLTIP_LINES:
        text = "\n".join(lines[:MAX_TOOLTIP_LINES])
        cut = True
    return text + "\n… (cut; the full text is in the view)" if cut else text


def plain_tooltip(text: str) -> str:
    """`text` as a tooltip that Qt shows literally: escaped markup, line breaks kept, bounded."""
    if not text:
        return ""
    # escaped and wrapped in an element, the text is rich text whatever Qt guesses, and shows literally;
    # pre-wrap keeps spaces and line breaks (indented JSON) yet lets a long line wrap
    return '<p style="white-space:pre-wrap">' + html.escape(bounded(str(text)), quote=False) + "</p>"


def tooltip_source(widget: QObject, pos) -> str | None:
    """The text Qt would show as the tooltip of `widget` at `pos` (widget coordinates), or None when it has none
    (the event then goes on to the parent, as Qt does)."""
    parent = widget.parent()
    if isinstance(widget, QHeaderView) or isinstance(parent, QHeaderView):
        header = widget if isinstance(widget, QHeaderView) else parent
        section = header.logicalIndexAt(pos)
        model = header.model()
        if section >= 0 and model is not None:
            text = model.headerData(section, header.orientation(), Qt.ToolTipRole)
            if text:
                return str(text)
    elif isinstance(parent, QAbstractItemView) and widget is parent.viewport():
        index = parent.indexAt(pos)
        if index.isValid():
            text = index.data(Qt.ToolTipRole)
            if text:
                return str(text)
    elif isinstance(parent, QGraphicsView) and widget is parent.viewport():
        item = parent.itemAt(pos)
        while item is not None:
            if item.toolTip():
                return item.toolTip()
            item = item.parentItem()
    if isinstance(widget, QTabBar):
        tab = widget.tabAt(pos)
        if tab >= 0 and widget.tabToolTip(tab):
            return widget.tabToolTip(tab)
    if isinstance(widget, QWidget) and widget.toolTip():
        return widget.toolTip()
    return None


class PlainTextToolTips(QObject):
    """The application-wide filter: every QEvent.ToolTip is answered here with the escaped text.

    It is also the application's only Python event filter: `on_every_event`, when set, is called for every event
    (the decode gate: `gui.controller.gate_decoding_on_this_thread`). Each Python call Qt makes takes the GIL,
    and while the decode worker runs each can wait up to the interpreter's switch interval: a second filter
    doubled that wait for every event, every widget's every paint included."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.on_every_event: Callable[[], None] | None = None

    def eventFilter(self, obj, event) -> bool:   # noqa: N802 (Qt's name)
        # (called for every event of the application: QEvent.ToolTip looked up once, not ~5 µs per event)
        hook = self.on_every_event
        if hook is not None:
            hook()
        if event.type() != _TOOLTIP or not isinstance(obj, QWidget):
            return False
        text = tooltip_source(obj, event.pos())
        if text is None:
            return False          # Qt ignores it and offers it to the parent, which comes back here
        QToolTip.showText(event.globalPos(), plain_tooltip(text), obj)
        return True


_FILTER: PlainTextToolTips | None = None


def install(app: QApplication | None = None) -> PlainTextToolTips:
    """Install the filter on the application once (the window calls it; so does any top-level window)."""
    global _FILTER
    app = app or QApplication.instance()
    if _FILTER is None or _FILTER.parent() is not app:
        hook = _FILTER.on_every_event if _FILTER is not None else None
        _FILTER = PlainTextToolTips(app)
        _FILTER.on_every_event = hook
        app.installEventFilter(_FILTER)
    return _FILTER


def warning_box(parent, title: str, text: str) -> QMessageBox:
    """A warning box whose text is shown as plain text (an error may quote a server or a providers file)."""
    box = QMessageBox(QMessageBox.Warning, title, str(text), QMessageBox.Ok, parent)
    box.setTextFormat(Qt.PlainText)
    return box


def warn(parent, title: str, text: str) -> None:
    """Show `warning_box` and wait for the user (modal)."""
    warning_box(parent, title, text).exec()
