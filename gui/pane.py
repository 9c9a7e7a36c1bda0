"""One provider's pane: a header of fixed height (`gui.pane_header`: name, status, adapted mark, format, model,
finish reason, metrics, focus, Stop), six tabs: Text (live reply, thinking apart, tool calls inline) and the five
of `gui.panetabs` (Blocks, Raw, Usage, Diag, Request), each built when first shown or first used; and under them
a "quiet for N s" line while a live stream sends nothing, an error banner (red; amber when stalled) or a notice
(a stream that finished with findings worth a look).

The pane is `MIN_WIDTH` wide at least and never wider because of what it shows: its size hints are fixed, so
a tab that opens (the Raw table's filter sized to its longest event name) cannot widen it and squeeze its
neighbours.

The pane gets its `PaneController` in `__init__` and only displays: the controller's models feed the tables,
and `controller.refreshed` (at most ~60 times a second) updates the text views, the built tabs and the header.
What the pane says is written in `gui.panetext`.
"""
from __future__ import annotations

import weakref
from math import ceil

import shiboken6
from PySide6.QtCore import QEvent, QSize, QTimer, Signal
from PySide6.QtGui import QPalette, QTextDocument
from PySide6.QtWidgets import (QFrame, QLabel, QPlainTextEdit, QScrollArea, QSizePolicy, QTabWidget, QVBoxLayout,
                               QWidget)

from core.live.recorder import FINAL_STATUSES
from core.live.summary import finish_text, plural

from gui.controller import PaneController
from gui.pane_header import PaneHeader
from gui.panetabs import (BLOCKS, DIAGNOSTICS, RAW, REQUEST, TAB_CLASSES, TAB_TITLES, TEXT, USAGE, BlocksTab,
                          DiagnosticsTab, RawTab, RequestTab, UsageTab)
from gui.panetext import (METRICS_TIP, empty_reply_text, end_note, error_report, metrics_text, notice_report,
                          quiet_text)
from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.replay_view import badge_word
from gui.theme import set_verdict
from gui.textview import ReplyTextView
from gui.widgets import plain_label

class _BuildQueue:
    """Panes not built yet, built one per event-loop turn: a send makes up to eight panes at once, and building
    all of them in one go (header, text views, banners: 5-10 ms each, then their layout) held the window 90-200
    ms before the first byte was read. A pane that is asked for one of its parts first is built then."""

    def __init__(self) -> None:
        self._panes: list = []
        self._scheduled = False

    def add(self, pane) -> None:
        self._panes.append(weakref.ref(pane))
        if not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(0, self._next)

    def _next(self) -> None:
        self._scheduled = False
        while self._panes:
            pane = self._panes.pop(0)()
            if pane is None or not shiboken6.isValid(pane) or pane.built:
                continue
            pane._build()
            break
        if self._panes:        # the next one in a later turn (timers and input get the loop in between)
            self._scheduled = True
            QTimer.singleShot(0, self._next)


_BUILDS = _BuildQueue()
# what `_build` makes: asked for before it ran, it runs then (PaneWidget.__getattr__)
_LAZY_PARTS = frozenset({"header", "name_label", "badge", "stop_button", "format_label", "metrics_label",
                         "adapted_badge", "quiet_label", "error_label", "notice_label", "text_view"})

MIN_WIDTH = 300                  # px: a pane narrower than this is not readable (the panes area scrolls instead)
TEXT_MIN_LINES = 4               # the Text tab keeps this many lines however short the pane (the banners scroll)
TEXT_SHORT_LINES = 2             # ... only this many while tool-result editors wait to be sent under the tabs
TEXT_EMPTY_LINES = 0             # ... and none when the exchange ended with no reply text (the box holds only
                                 # "(no reply: ...)"): its banner below says why and what to do, whole, and the
                                 # box keeps what the banner leaves
BELOW_MIN_LINES = 4.5            # ... and what is under the tabs at least this many, when it has that much
EDITOR_MIN_LINES = 1             # an editor under the tabs (a tool result) shrinks to this many lines in a short
                                 # pane, so that the buttons under it stay in view (it scrolls; it grows back to
                                 # its own maximum where there is room)
THINKING_SCAN_CHARS = 20_000     # the thinking's height is measured on this much of it at most (more fills a pane)


class _BelowContents(QWidget):
    """What `BelowTabs` scrolls. Its height for a width is the least it can take there: its editors at their
    minimum (`QScrollArea` lays a height-for-width widget out at that height at least, and the preferred one
    left two tool-result editors at three lines each, scrolling "Send results" out of a 1024x700 pane)."""

    def heightForWidth(self, width: int) -> int:
        lay = self.layout()
        h = lay.totalHeightForWidth(width)
        for e in self.findChildren(QPlainTextEdit):
            if not e.isReadOnly() and e.isVisibleTo(self):
                h -= max(0, min(e.sizeHint().height(), e.maximumHeight()) - e.minimumHeight())
        return h


class BelowTabs(QScrollArea):
    """What a pane shows under its tabs: the tool-result editors with their buttons (docked by
    `gui.conversation`), the "quiet for N s" line, the error banner and the notice, one above the other.

    It is as tall as its contents when the pane has the room (the tabs keep their minimum: `TEXT_MIN_LINES`
    lines of the Text tab), else as tall as the room left, at least `BELOW_MIN_LINES` lines, scrolling then: a
    short pane (1024x700, eight providers, the Raw tab's table) cut the banners' advice and the "Send results"
    buttons off with no way to reach them."""

    contentsChanged = Signal()   # a part was shown, hidden or docked (the pane may give the Text tab less)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("belowTabs")
        self.setFrameShape(QFrame.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)   # (never widens the pane)
        inner = _BelowContents(self)
        inner.setObjectName("belowTabsContents")
        self.box = QVBoxLayout(inner)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.setSpacing(4)
        self.setWidget(inner)
        inner.installEventFilter(self)
        self._width = -1
        self._given = -1             # the minimum height the pane's layout was last given
        self.has_editors = False     # a visible, editable text box (the tool-result editors) is docked here

    def contents_height(self) -> int:
        """How tall the contents are at the area's width (their labels wrap)."""
        inner = self.widget()
        if not any(not self.box.itemAt(i).isEmpty() for i in range(self.box.count())):
            return 0
        width = self.width()
        bar = self.verticalScrollBar()
        if bar.isVisible():
            width -= bar.sizeHint().width()
        if inner.hasHeightForWidth() and width > 50:
            return self.box.totalHeightForWidth(width)
        return inner.sizeHint().height()

    def sizeHint(self) -> QSize:
        return QSize(0, self.contents_height())

    def minimumSizeHint(self) -> QSize:
        self._given = self.least_height()
        return QSize(0, self._given)

    def least_height(self) -> int:
        # all of it when the pane has the room above the others' minimums (the Text tab's included), else what
        # room there is, and never under `BELOW_MIN_LINES` lines (the panes area scrolls then)
        lines = round(self.fontMetrics().lineSpacing() * BELOW_MIN_LINES) + 8
        return min(self.contents_height(), max(lines, self._room()))

    def recheck(self) -> None:
        """The pane's layout is about to be redone: if the room changed since the layout last asked (the Text
        tab's minimum changed, its layout caches this area's minimum), it asks again."""
        if self.least_height() != self._given:
            self.updateGeometry()

    def _room(self) -> int:
        """The pane's height less what its other parts need at least."""
        pane = self.parentWidget()
        lay = pane.layout() if pane is not None else None
        if lay is None:
            return 0
        m = lay.contentsMargins()
        used, n = m.top() + m.bottom(), 0
        for i in range(lay.count()):
            item = lay.itemAt(i)
            if item.widget() is self or item.isEmpty():
                continue
            n += 1
            # (a wrapped label needs its height at this width; the tabs their minimum, not their preferred height)
            label = isinstance(item.widget(), QLabel) and item.hasHeightForWidth()
            used += (item.heightForWidth(pane.width() - m.left() - m.right()) if label
                     else item.minimumSize().height())
        return pane.height() - used - lay.spacing() * n

    def eventFilter(self, obj, e) -> bool:
        # the contents changed (a banner shown, its text set, the editors docked): a new height for the pane
        inner = self.widget()
        if obj is inner and e.type() == QEvent.ChildAdded and e.child().isWidgetType():
            e.child().installEventFilter(self)    # (a docked panel lays its editors out in its own layout)
        elif e.type() == QEvent.LayoutRequest and (obj is inner or obj.parent() is inner):
            self._compact_editors()
            self.updateGeometry()
            self.contentsChanged.emit()
        return super().eventFilter(obj, e)

    def _compact_editors(self) -> None:
        """Let the editors docked here shrink to `EDITOR_MIN_LINES` (their own maximum stays): at 1024x700 two
        tool-result editors at their two-line minimum pushed "Send results" out of the pane."""
        editors = [e for e in self.widget().findChildren(QPlainTextEdit)
                   if not e.isReadOnly() and e.isVisibleTo(self.widget())]
        self.has_editors = bool(editors)
        for e in editors:
            h = e.fontMetrics().lineSpacing() * EDITOR_MIN_LINES + 2 * e.frameWidth() + 8
            if e.minimumHeight() > h:
                e.setMinimumHeight(h)

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if e.size().width() != self._width:      # labels wrap otherwise at another width
            self._width = e.size().width()
            self.updateGeometry()

    def show_bottom(self) -> None:
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
# the banners' (background, text, border) in the light theme and in the dark one (each text about 10:1 on its
# background; the dark ones are the light ones' hues, dimmed, so that a banner does not glare on a dark window)
BANNER_COLOURS = {
    "error": (("#fde8e8", "#7f1d1d", "#f5b5b5"), ("#3f1d1f", "#fecaca", "#9b2c2c")),
    "stalled": (("#ffedd5", "#7c2d12", "#fdba74"), ("#3d2612", "#fed7aa", "#c2410c")),
    "notice": (("#fef9c3", "#713f12", "#fde047"), ("#36300f", "#fef08a", "#a16207")),
    "handover": (("#e0f2fe", "#0c4a6e", "#7dd3fc"), ("#0c2a3d", "#bae6fd", "#0369a1")),   # (gui/conversation.py)
}
_BANNER_NAMES = {"error": "errorBanner", "stalled": "errorBanner", "notice": "noticeBanner",
                 "handover": "handoverNotice"}


def is_dark(palette: QPalette) -> bool:
    """Whether `palette` is a dark theme's (its window colour is dark)."""
    return palette.color(QPalette.Active, QPalette.Window).lightness() < 128


def banner_style(kind: str, dark: bool) -> str:
    """The style sheet of an error ("error"), stall ("stalled") or notice ("notice") banner in that theme."""
    bg, fg, border = BANNER_COLOURS[kind][1 if dark else 0]
    return (f"QLabel#{_BANNER_NAMES[kind]} {{ background: {bg}; color: {fg}; border: 1px solid {border}; "
            "border-radius: 4px; padding: 4px; }")


BANNER_STYLES = {kind: banner_style(kind, False) for kind in BANNER_COLOURS}   # (the light theme's)


class PaneWidget(QFrame):
    """One provider's live pane.

    Signals:
        stopRequested(str): the pane's Stop button was pressed (argument: the provider name).
        focusRequested(): the header was double-clicked or its focus button pressed (show this pane alone).
    """

    stopRequested = Signal(str)
    focusRequested = Signal()

    def __init__(self, controller: PaneController | None, parent=None, replay: bool = False) -> None:
        """`controller` None: a spare pane, made ahead of a send (`make_parts` while the window idles) and
        given its run by `attach`."""
        super().__init__(parent)
        self.controller = controller
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("pane")
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)

        self.replay = replay                   # a replayed capture: its badge says "replaying" / "replayed"
        self.read_timeout: float | None = None   # set by the window for live sends (None: a replay)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        # never cut a tab's title: a narrow pane scrolls its tab bar instead
        self.tabs.setUsesScrollButtons(True)
        self.tabs.setElideMode(Qt.ElideNone)
        self.tabs.tabBar().setExpanding(False)
        lay.addWidget(self.tabs, 1)
        self.below = BelowTabs(self)     # (the banners and result editors: scrolls when the pane is short)
        self.below.contentsChanged.connect(self._fit_text_min)
        lay.addWidget(self.below)
        self._built: dict[int, QWidget] = {}
        # every tab's contents are built later: Text and the header by `_build` (see `_BuildQueue`), the other
        # tabs when first shown (or first used)
        self._pages: dict[int, QVBoxLayout] = {}
        for index, (title, tip) in enumerate(TAB_TITLES):
            page = QWidget(self)
            pl = QVBoxLayout(page)
            pl.setContentsMargins(0, 2 if index else 0, 0, 0)
            self._pages[index] = pl
            self.tabs.addTab(page, title)
            if index:
                self.tabs.setTabToolTip(index, tip)
        self.tabs.currentChanged.connect(self.tab)
        self._badge_status = None
        self._notes = None
        self._advice = None
        self._notice = None
        self._format_text = None
        self._placeholder_for = None
        self._titles = None
        self._error_kind = "error"      # the error banner's colours: "error", or "stalled" (amber)
        self._dark: bool | None = None   # the theme the banners are coloured for
        self._split_for = None          # the exchange whose thinking / answer split was sized (`_share_text`)
        self._split_moved = False       # ... and the user has dragged it since (left alone then)
        self._parts_made = False     # the header, Text tab and banners exist
        self._parts_built = False    # ... and show the controller's run
        if controller is not None:
            _BUILDS.add(self)

    def __getattr__(self, name: str):
        # (only for an attribute not set yet: a part `make_parts` makes, asked for before it ran: made now, and
        # bound to the run when there is one)
        if name in _LAZY_PARTS and self.__dict__.get("_parts_made") is False:
            if self.__dict__.get("controller") is None:
                self.make_parts()
            else:
                self._build()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def built(self) -> bool:
        """Whether the header and the Text tab show the run yet (a pane is built within a few loop turns)."""
        return self._parts_built

    def attach(self, controller: PaneController, replay: bool = False) -> None:
        """Give a spare pane its run (cheap when its parts are made: they are only bound to it)."""
        self.controller = controller
        self.replay = replay
        if self._parts_made:
            self._build()
        else:
            _BUILDS.add(self)

    def _build(self) -> None:
        """The parts (`make_parts`), bound to the controller's run."""
        if self._parts_built or self.controller is None:
            return
        self.make_parts()
        self._parts_built = True
        controller = self.controller
        self.name_label.setText(controller.run.provider.name)
        controller.refreshed.connect(self.update_view)
        controller.statusChanged.connect(lambda _s: self._update_header())
        self.update_view()

    def make_parts(self) -> None:
        """The header, the Text tab and the banners: what a pane shows first (no run needed)."""
        if self._parts_made:
            return
        self._parts_made = True
        lay = self.layout()
        self.header = PaneHeader("", self)
        self.header.stop_button.clicked.connect(lambda: self.stopRequested.emit(self.controller.run.provider.name))
        self.header.focusRequested.connect(self.focusRequested.emit)
        lay.insertWidget(0, self.header)
        h = self.header
        self.name_label, self.badge, self.stop_button = h.name_label, h.badge, h.stop_button
        self.format_label, self.metrics_label, self.adapted_badge = h.format_label, h.metrics_label, h.adapted_badge
        self.metrics_label.setToolTip(METRICS_TIP)
        # what ended the stream (or is wrong with it) goes under the tabs, so that every pane's tabs start at the
        # same height however long its banner is
        self.quiet_label = plain_label("", self)
        self.quiet_label.setObjectName("quiet")
        self.quiet_label.setWordWrap(True)
        self.quiet_label.setStyleSheet("QLabel#quiet { font-weight: bold; }")
        set_verdict(self.quiet_label, "warning")
        self.quiet_label.setToolTip("Nothing (or only keepalives) arrived for this long. A stream that sends no "
                                    "byte for the read timeout ends as stalled (Run → Timeouts…).")
        self.quiet_label.hide()
        below = self.below.box
        below.addWidget(self.quiet_label)
        self.error_label = self._banner("errorBanner", "error", below)
        self.notice_label = self._banner("noticeBanner", "notice", below)
        self.text_view = ReplyTextView(self._pages[TEXT].parentWidget())
        self.text_view.split.splitterMoved.connect(self._split_dragged)
        self.text_view.split.installEventFilter(self)    # (its resizes: `_share_text` again)
        self._fit_text_min()
        self._pages[TEXT].addWidget(self.text_view)
        self._built[TEXT] = self.text_view

    # -- tabs (built on demand) -------------------------------------------------------------------------
    def tab(self, index: int) -> QWidget:
        """Tab `index`'s widget (TEXT .. REQUEST), built now if it is not built yet."""
        self._build()
        if self.controller is None:            # a spare: only the Text tab exists
            self.make_parts()
            return self.text_view if index == TEXT else self._pages[index].parentWidget()
        w = self._built.get(index)
        if w is None:
            page = self._pages[index]
            w = TAB_CLASSES[index](self.controller, page.parentWidget())
            page.addWidget(w)
            self._built[index] = w
            if index == BLOCKS:
                w.framesPicked.connect(self.select_frames)
            elif index in (USAGE, DIAGNOSTICS):
                w.frameActivated.connect(self.show_frame)
        return w

    @property
    def blocks_tab(self) -> BlocksTab:
        return self.tab(BLOCKS)

    @property
    def raw_tab(self) -> RawTab:
        return self.tab(RAW)

    @property
    def usage_tab(self) -> UsageTab:
        return self.tab(USAGE)

    @property
    def diagnostics_tab(self) -> DiagnosticsTab:
        return self.tab(DIAGNOSTICS)

    @property
    def request_tab(self) -> RequestTab:
        return self.tab(REQUEST)

    def select_frames(self, frames, scroll: bool = True) -> None:
        """Select these frame numbers in the Raw table (rows hidden by the filter are skipped)."""
        self.raw_tab.select_frames(frames, scroll)

    def show_frame(self, n) -> None:
        """Switch to the Raw tab with frame `n` selected (from Diagnostics, Usage or the timeline)."""
        if n is None or n < 0:
            return
        self.tabs.setCurrentIndex(RAW)
        self.select_frames([n])

    # -- updates -----------------------------------------------------------------------------------------
    def update_view(self) -> None:
        if not self._parts_built:
            return             # (`_build` shows the run as it is then)
        self.text_view.update_from(self.controller.run.decoder.reply)
        for index, w in self._built.items():
            if index != TEXT:
                w.refresh()
        self._update_header()
        self._update_tab_titles()

    def _update_tab_titles(self) -> None:
        """Diag says how many findings; the Blocks and Raw counts are in their tooltips (short titles fit a
        300 px pane)."""
        c = self.controller
        n = c.diagnostics.rowCount()
        counts = (c.blocks.rowCount(), c.view.frames_seen, n)
        if counts != self._titles:
            self._titles = counts
            self.tabs.setTabText(DIAGNOSTICS, f"{TAB_TITLES[DIAGNOSTICS][0]} {n}" if n else TAB_TITLES[DIAGNOSTICS][0])
            self.tabs.setTabToolTip(BLOCKS, f"{plural(counts[0], 'block')}. {TAB_TITLES[BLOCKS][1]}")
            self.tabs.setTabToolTip(RAW, f"{plural(counts[1], 'frame')}. {TAB_TITLES[RAW][1]}")
            self.tabs.setTabToolTip(DIAGNOSTICS, f"{plural(n, 'finding')}. {TAB_TITLES[DIAGNOSTICS][1]}")

    # -- size: fixed hints, so the contents never change the pane's width -----------------------------------
    def _text_lines(self) -> int:
        """How many lines the Text tab keeps at least: fewer when what is under the tabs matters more (result
        editors wait to be sent; the exchange ended with no reply text, and its banner says why)."""
        c = self.controller
        if (c is not None and self._parts_built and c.status in FINAL_STATUSES
                and self.text_view.answer.document().isEmpty() and not self.text_view.thinking.isVisibleTo(self)
                and self.below.contents_height()):
            return TEXT_EMPTY_LINES
        return TEXT_SHORT_LINES if self.below.has_editors else TEXT_MIN_LINES

    def _fit_text_min(self) -> None:
        """The Text tab keeps `TEXT_MIN_LINES` lines (what is under the tabs scrolls instead), or
        fewer while what is under the tabs matters more (`_text_lines`)."""
        if not self.__dict__.get("_parts_made"):
            return
        answer = self.text_view.answer
        lines = self._text_lines()
        h = answer.fontMetrics().lineSpacing() * lines + 2 * answer.frameWidth() + 8
        if answer.minimumHeight() != h:
            answer.setMinimumHeight(h)
            self.below.updateGeometry()

    def _split_dragged(self, *_a) -> None:
        self._split_moved = True

    _share_pending = False
    _need_cache: dict | None = None

    def _share_later(self) -> None:
        """`_share_text` on the next loop turn, once however many resizes asked for it (a window resize sends
        each split several: every call lays out up to THINKING_SCAN_CHARS of text twice)."""
        if not self._share_pending:
            self._share_pending = True
            QTimer.singleShot(0, self, self._share_now)

    def _share_now(self) -> None:
        self._share_pending = False
        self._share_text()

    def _share_text(self) -> None:
        """Thinking and answer share the Text tab by what they hold: the thinking as tall as its text where the
        answer leaves the room (it kept a quarter of the tab, scrolling, above an answer of two lines and an
        empty box under them). Once per exchange, when it ends (and as the tab resizes, until the user drags
        the divider)."""
        view = self.text_view
        split = view.split
        total = split.height() - split.handleWidth()
        if not view.thinking.isVisibleTo(self) or total <= 0:
            return

        cache = self._need_cache if self._need_cache is not None else {}
        self._need_cache = cache

        def need(edit: QPlainTextEdit) -> int:
            # (the exchange has ended: its text changes no more; the height for a width is kept)
            key = (id(edit), edit.document().characterCount(), edit.viewport().width(), edit.font().key())
            if key not in cache:
                if len(cache) > 64:
                    cache.clear()
                cache[key] = measure(edit)
            return cache[key]

        def measure(edit: QPlainTextEdit) -> int:
            text = edit.toPlainText()[:THINKING_SCAN_CHARS]
            width = edit.viewport().width()
            if not text or width <= 40:
                return 0
            doc = QTextDocument()      # (laid out at the box's width as the box lays out its own)
            doc.setDefaultFont(edit.font())
            doc.setDocumentMargin(edit.document().documentMargin())
            doc.setPlainText(text)
            doc.setTextWidth(width)
            return ceil(doc.size().height()) + 2 * edit.frameWidth() + 2

        answer_min = max(view.answer.minimumHeight(), view.answer.minimumSizeHint().height())
        thinking_min = view.thinking.minimumSizeHint().height()
        want_t, want_a = need(view.thinking), max(need(view.answer), answer_min)
        if want_t + want_a <= total:       # both whole: the thinking its height, the answer the rest
            t = want_t
        else:                              # not both: by what each holds, each keeping its minimum
            t = round(total * want_t / max(1, want_t + want_a))
            t = max(thinking_min, min(t, total - answer_min))
        split.setSizes([t, total - t])

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if not self.__dict__.get("_parts_made"):
            return
        if e.type() == QEvent.FontChange:
            self._fit_text_min()
        elif e.type() in (QEvent.PaletteChange, QEvent.StyleChange):
            self._colour_banners()

    def _colour_banners(self) -> None:
        """The banners in the current theme's colours (light pastel ones glared on the dark window)."""
        dark = is_dark(self.palette())
        if dark == self._dark:
            return
        self._dark = dark
        self.error_label.setStyleSheet(banner_style(self._error_kind, dark))
        self.notice_label.setStyleSheet(banner_style("notice", dark))

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if e.size().height() != e.oldSize().height():
            self.below.updateGeometry()     # (how much of it the pane shows depends on the pane's height)

    def event(self, e) -> bool:
        if e.type() == QEvent.LayoutRequest and self.__dict__.get("_parts_made"):
            self.below.recheck()
        return super().event(e)

    def eventFilter(self, obj, e) -> bool:
        if (e.type() == QEvent.Resize and self._split_for is not None and not self._split_moved
                and obj is self.__dict__.get("text_view", self).split):
            self._share_later()   # (once the boxes have their new widths)
        return super().eventFilter(obj, e)

    def sizeHint(self) -> QSize:
        return QSize(MIN_WIDTH, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(MIN_WIDTH, super().minimumSizeHint().height())

    def _banner(self, object_name: str, style: str, layout) -> QLabel:
        """A hidden, selectable, plain-text banner (error or notice) added to `layout`."""
        label = plain_label("", self)
        label.setObjectName(object_name)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        label.setStyleSheet(banner_style(style, is_dark(self.palette())))
        label.hide()
        layout.addWidget(label)
        return label

    def _update_header(self) -> None:
        if not self._parts_built:
            return
        c = self.controller
        run = c.run
        status = c.status
        if status != self._badge_status:
            self._badge_status = status
            self.header.set_status(status, badge_word(status, self.replay))
        notes = tuple(run.request.notes) if run.request is not None else ()
        if notes != self._notes:
            self._notes = notes
            self.header.set_adapted(notes)
        self.stop_button.setEnabled(c.can_stop)
        self.metrics_label.setText(self.metrics_text())
        self.update_quiet()
        reply = run.decoder.reply
        final = status in FINAL_STATUSES
        report = error_report(run, reply) if (final or reply.error is not None) else None
        if report != self._advice:
            self._advice = report
            self._error_kind = "stalled" if status == "stalled" else "error"
            self._dark = None
            self._colour_banners()
            self.error_label.setText(report[0] if report else "")
            self.error_label.setToolTip(report[1] if report else "")
            self.error_label.setVisible(bool(report))
        notice = notice_report(run, reply) if final else None
        if notice != self._notice:
            self._notice = notice
            self.notice_label.setText(notice or "")
            self.notice_label.setVisible(bool(notice))
        # (a raw .sse body names no model: no dangling separator then)
        fmt = " · ".join(x for x in (run.provider.format, run.provider.model) if x)
        if run.body_kind == "json" and run.decoder.frames:
            fmt += " · not streamed"   # (a whole JSON reply, read as its stream would be: the run's notes say so)
        fin = finish_text(reply.finish)
        fmt += f" · finish {fin}" if fin else ""
        if fmt != self._format_text:
            self._format_text = fmt
            self.format_label.setText(fmt)
        if final and self._placeholder_for != status:
            self._placeholder_for = status
            self.text_view.answer.setPlaceholderText(empty_reply_text(run))
        self.text_view.set_end_note(end_note(run, reply) if final else None)
        self._fit_text_min()
        if final and self._split_for is not run:
            self._split_for, self._split_moved, self._need_cache = run, False, None
            self._share_later()   # (once the end note and banners are laid out)

    def update_quiet(self) -> None:
        """Show "quiet for N s" while a live stream sends nothing (or only keepalives); hide it otherwise."""
        text = quiet_text(self.controller.run, self.read_timeout)
        if text != self.quiet_label.text():
            self.quiet_label.setText(text or "")
        if bool(text) != self.quiet_label.isVisibleTo(self):
            self.quiet_label.setVisible(bool(text))

    def metrics_text(self) -> str:
        """TTFT, elapsed, frames, input / output tokens (~ while estimated) and tokens per second."""
        return metrics_text(self.controller.run, self.controller.view)
