"""The Diff tab of the Compare view: what differs between two answers of the current run.

Pick A and B (and a choice, for an n > 1 reply); the two texts are shown side by side with the words only in A
marked red in A and the words only in B marked green in B, and under them the tool calls (same tool? the
arguments compared key by key, each differing JSON path listed), thinking lengths, finish reasons and usage, in
the words `python main.py diff` prints (`core.cli.diff.detail_lines`). The comparison is the core's
(`core.wire.answer_diff.diff_replies` over the runs' reply snapshots); this view only lays it out.

Model text is inserted as plain text into the documents (`QTextCursor.insertText` with a character format per
piece), never as HTML. Each marked piece carries its diff op in the format's `DIFF_OP` property, which
`marked_pieces()` reads back (what the tests check). The diff is recomputed when the sides change, when the runs
end, and about once a second while they stream and the tab is shown.
"""
from __future__ import annotations

import time

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPlainTextEdit, QSpinBox, QSplitter, QVBoxLayout, QWidget

from core.cli.diff import detail_lines
from core.wire.answer_diff import ReplyDiff, diff_replies

from gui.qtfast import Qt   # (Qt's members looked up once: see gui/qtfast.py)
from gui.theme import theme_name
from gui.widgets import plain_label, readonly_text

DIFF_OP = QTextFormat.UserProperty + 1     # "delete" | "insert" | "replace" on a marked piece
LIVE_INTERVAL_S = 1.0                      # while streaming: at most one diff a second
COLORS = {   # (only in A, only in B) backgrounds, readable under the theme's text colour
    "light": (QColor("#fecaca"), QColor("#bbf7d0")),
    "dark": (QColor("#7f1d1d"), QColor("#14532d")),
}


def side_labels(runs) -> list[str]:
    """What each run is called in the pickers: its name, or NAME#K where a name occurs more than once (as
    `diff --a NAME#K` names it)."""
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.name] = counts.get(r.name, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        seen[r.name] = seen.get(r.name, 0) + 1
        out.append(r.name if counts[r.name] == 1 else f"{r.name}#{seen[r.name]}")
    return out


class DiffView(QWidget):
    """Two answers side by side, word by word; see the module docstring."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._runs: list = []
        self._last_live = 0.0
        self.diff: ReplyDiff | None = None
        self.side_a = QComboBox(self)
        self.side_b = QComboBox(self)
        for c, tip in ((self.side_a, "A: its words not in B are marked red"),
                       (self.side_b, "B: its words not in A are marked green")):
            c.setToolTip(tip)
            c.setMinimumContentsLength(14)
            c.currentIndexChanged.connect(self.refresh)
        self.choice = QSpinBox(self)
        self.choice.setRange(0, 0)
        self.choice.setPrefix("choice ")
        self.choice.setToolTip("which reply of an n > 1 request (OpenAI Chat Completions' n)")
        self.choice.valueChanged.connect(self.refresh)
        self.summary = plain_label("", self)
        self.summary.setWordWrap(True)
        self.text_a = readonly_text(self, mono=False)
        self.text_b = readonly_text(self, mono=False)
        self.title_a = plain_label("A", self)
        self.title_b = plain_label("B", self)
        for t in (self.title_a, self.title_b):
            t.setObjectName("paneName")
        self.details = readonly_text(self)
        self.details.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.details.setObjectName("diffDetails")
        self._sync_scrolling()

        pick = QHBoxLayout()
        pick.addWidget(plain_label("A", self))
        pick.addWidget(self.side_a, 1)
        pick.addWidget(plain_label("B", self))
        pick.addWidget(self.side_b, 1)
        pick.addWidget(self.choice)
        sides = QSplitter(Qt.Horizontal, self)
        for title, text in ((self.title_a, self.text_a), (self.title_b, self.text_b)):
            w = QWidget(sides)
            lay = QVBoxLayout(w)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(2)
            lay.addWidget(title)
            lay.addWidget(text, 1)
            sides.addWidget(w)
        split = self.split = QSplitter(Qt.Horizontal, self)
        split.addWidget(sides)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        self._split_set = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(pick)
        lay.addWidget(self.summary)
        lay.addWidget(split, 1)
        self._show_empty("Send a prompt to two or more providers to compare their answers.")

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if not self._split_set and self.width() > 100:   # the details get room for their lines the first time
            self._split_set = True
            w = self.split.width()
            self.split.setSizes([round(w * 0.64), w - round(w * 0.64)])

    # -- sides ------------------------------------------------------------------------------------------------
    def set_runs(self, runs) -> None:
        """The runs to pick from (the window's current ones); keeps the chosen names where they still are."""
        old = (self.side_a.currentText(), self.side_b.currentText())
        self._runs = list(runs)
        labels = side_labels(self._runs)
        for combo, keep, default in ((self.side_a, old[0], 0), (self.side_b, old[1], 1)):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(labels)
            i = labels.index(keep) if keep in labels else min(default, len(labels) - 1)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)
        self.refresh()

    def select(self, a: str, b: str) -> None:
        """Pick the two sides by their labels (names)."""
        self.side_a.blockSignals(True)
        self.side_a.setCurrentText(a)
        self.side_a.blockSignals(False)
        self.side_b.setCurrentText(b)
        self.refresh()

    def picked(self):
        ia, ib = self.side_a.currentIndex(), self.side_b.currentIndex()
        if not (0 <= ia < len(self._runs) and 0 <= ib < len(self._runs)):
            return None
        return self._runs[ia], self._runs[ib]

    # -- the diff ---------------------------------------------------------------------------------------------
    def refresh_if_due(self) -> None:
        """While streaming: the diff again, at most once a second."""
        now = time.monotonic()
        if now - self._last_live >= LIVE_INTERVAL_S:
            self._last_live = now
            self.refresh()

    def refresh(self, *_args) -> None:
        pair = self.picked()
        if pair is None or len(self._runs) < 2:
            self.diff = None
            self._show_empty("Send a prompt to two or more providers to compare their answers.")
            return
        a, b = pair
        choices = max((blk.choice for r in pair for blk in r.reply.blocks.values()), default=0)
        self.choice.blockSignals(True)
        self.choice.setMaximum(choices)
        self.choice.blockSignals(False)
        self.choice.setVisible(choices > 0)
        d = self.diff = diff_replies(a.reply, b.reply, self.choice.value())
        la, lb = self.side_a.currentText(), self.side_b.currentText()
        self.title_a.setText(f"A: {la} ({a.status})")
        self.title_b.setText(f"B: {lb} ({b.status})")
        t = d.text
        if t.same:
            what = "Text: the same" + ("" if any(o.a for o in t.ops) else " (both empty)")
        else:
            changed = sum(1 for o in t.ops if o.op != "equal")
            what = (f"Text: differs in {changed} place{'s' if changed != 1 else ''} (similarity {t.similarity:.2f}"
                    + ("" if t.exact else "; too long to compare word by word: the differing middle is marked "
                                          "whole") + "). Red: only in A; green: only in B.")
        streaming = [x for x in pair if not x.finished]
        if streaming:
            what += " Still streaming: the text so far."
        self.summary.setText(what)
        self._fill(d)
        self.details.setPlainText("\n".join(detail_lines(d)))

    def _show_empty(self, why: str) -> None:
        self.summary.setText(why)
        self.title_a.setText("A")
        self.title_b.setText("B")
        for e in (self.text_a, self.text_b, self.details):
            e.clear()
        self.choice.setVisible(False)

    def _fill(self, d: ReplyDiff) -> None:
        only_a, only_b = COLORS.get(theme_name(), COLORS["light"])
        for edit, side, colour in ((self.text_a, "a", only_a), (self.text_b, "b", only_b)):
            bar = edit.verticalScrollBar().value()
            doc = edit.document()
            doc.setUndoRedoEnabled(False)
            doc.clear()
            cur = QTextCursor(doc)
            cur.beginEditBlock()
            plain = QTextCharFormat()
            for o in d.text.ops:
                piece = o.a if side == "a" else o.b
                if not piece:
                    continue
                if o.op == "equal":
                    cur.insertText(piece, plain)
                else:
                    fmt = QTextCharFormat()
                    fmt.setBackground(colour)
                    fmt.setProperty(DIFF_OP, o.op)
                    if side == "a":
                        fmt.setFontStrikeOut(o.op == "delete")
                    cur.insertText(piece, fmt)
            cur.endEditBlock()
            edit.verticalScrollBar().setValue(bar)

    def marked_pieces(self, side: str) -> list[tuple[str, str]]:
        """(op, text) of every marked piece shown on side "a" or "b", as the document holds them (for tests).

        A line break inside a piece is the separator before a block, which carries the piece's format."""
        edit = self.text_a if side == "a" else self.text_b
        out: list[tuple[str, str]] = []
        prev = None      # the op of the character before (None: not marked)

        def add(op, text):
            nonlocal prev
            if op and op == prev:
                out[-1] = (op, out[-1][1] + text)
            elif op:
                out.append((op, text))
            prev = op or None

        block = edit.document().begin()
        first = True
        while block.isValid():
            if not first:
                add(block.charFormat().property(DIFF_OP), "\n")
            first = False
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                add(frag.charFormat().property(DIFF_OP), frag.text())
                it += 1
            block = block.next()
        return out

    def _sync_scrolling(self) -> None:
        """The two texts scroll together (by proportion: their lengths differ)."""
        bars = (self.text_a.verticalScrollBar(), self.text_b.verticalScrollBar())
        busy = [False]

        def follow(src, dst):
            def moved(_v):
                if busy[0] or src.maximum() <= 0:
                    return
                busy[0] = True
                dst.setValue(round(src.value() / src.maximum() * dst.maximum()))
                busy[0] = False
            return moved

        bars[0].valueChanged.connect(follow(bars[0], bars[1]))
        bars[1].valueChanged.connect(follow(bars[1], bars[0]))
