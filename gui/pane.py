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

import shiboken6
from PySide6.QtCore import QEvent, QSize, QTimer, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QTabWidget, QVBoxLayout, QWidget

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
BELOW_MIN_LINES = 4.5            # ... and what is under the tabs at least this many, when it has that much


class BelowTabs(QScrollArea):
    """What a pane shows under its tabs: the tool-result editors with their buttons (docked by
    `gui.conversation`), the "quiet for N s" line, the error banner and the notice, one above the other.

    It is as tall as its contents when the pane has the room (the tabs keep their minimum: `TEXT_MIN_LINES`
    lines of the Text tab), else as tall as the room left, at least `BELOW_MIN_LINES` lines, scrolling then: a
    short pane (1024x700, eight providers, the Raw tab's table) cut the banners' advice and the "Send results"
    buttons off with no way to reach them."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("belowTabs")
        self.setFrameShape(QFrame.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)   # (never widens the pane)
        inner = QWidget(self)
        inner.setObjectName("belowTabsContents")
        self.box = QVBoxLayout(inner)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.setSpacing(4)
        self.setWidget(inner)
        inner.installEventFilter(self)
        self._width = -1

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
            return inner.heightForWidth(width)
        return inner.sizeHint().height()

    def sizeHint(self) -> QSize:
        return QSize(0, self.contents_height())

    def minimumSizeHint(self) -> QSize:
        # all of it when the pane has the room above the others' minimums (the Text tab's included), else what
        # room there is, and never under `BELOW_MIN_LINES` lines (the panes area scrolls then)
        lines = round(self.fontMetrics().lineSpacing() * BELOW_MIN_LINES) + 8
        return QSize(0, min(self.contents_height(), max(lines, self._room())))

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
        if obj is self.widget() and e.type() == QEvent.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(obj, e)

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if e.size().width() != self._width:      # labels wrap otherwise at another width
            self._width = e.size().width()
            self.updateGeometry()

    def show_bottom(self) -> None:
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
BANNER_STYLES = {
    "error": "QLabel#errorBanner { background: #fde8e8; color: #7f1d1d; border: 1px solid #f5b5b5; "
             "border-radius: 4px; padding: 4px; }",
    "stalled": "QLabel#errorBanner { background: #ffedd5; color: #7c2d12; border: 1px solid #fdba74; "
               "border-radius: 4px; padding: 4px; }",
    "notice": "QLabel#noticeBanner { background: #fef9c3; color: #713f12; border: 1px solid #fde047; "
              "border-radius: 4px; padding: 4px; }",
}


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
    def _fit_text_min(self) -> None:
        """The Text tab keeps `TEXT_MIN_LINES` lines (what is under the tabs scrolls instead)."""
        answer = self.text_view.answer
        answer.setMinimumHeight(answer.fontMetrics().lineSpacing() * TEXT_MIN_LINES + 2 * answer.frameWidth() + 8)

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == QEvent.FontChange and self.__dict__.get("_parts_made"):
            self._fit_text_min()

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if e.size().height() != e.oldSize().height():
            self.below.updateGeometry()     # (how much of it the pane shows depends on the pane's height)

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
        label.setStyleSheet(BANNER_STYLES[style])
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
            self.error_label.setStyleSheet(BANNER_STYLES["stalled" if status == "stalled" else "error"])
            self.error_label.setText(report[0] if report else "")
            self.error_label.setToolTip(report[1] if report else "")
            self.error_label.setVisible(bool(report))
        notice = notice_report(run, reply) if final else None
        if notice != self._notice:
            self._notice = notice
            self.notice_label.setText(notice or "")
            self.notice_label.setVisible(bool(notice))
        fmt = f"{run.provider.format} · {run.provider.model}"
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
