"""A replay says it is one: the words its badges, window title and status bar use, and the captured prompt shown
read-only where the user's draft was (the draft is kept, untouched, and comes back with "Edit my draft" or the
next live send).

The statuses themselves do not change (a replayed pane is still `streaming`, then `done`, for the models, the
exports and the tests); only the words shown do.
"""
from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from core.live.summary import plural

from gui.theme import set_footnote
from gui.widgets import ElidedLabel

APP_TITLE = "StreamScope"
# a status -> what a replayed pane's badge says instead (the other statuses read the same in a replay)
BADGE_WORDS = {"pending": "replaying", "connecting": "replaying", "streaming": "replaying", "done": "replayed"}


def badge_word(status: str, replay: bool) -> str:
    """The word a pane's status badge shows."""
    return BADGE_WORDS.get(status, status) if replay else status


def window_title(replay_of=None) -> str:
    """"StreamScope", or "StreamScope — replay of NAME" while the panes show a replayed capture."""
    return f"{APP_TITLE} — replay of {Path(replay_of).name}" if replay_of else APP_TITLE


def no_providers_text(replay_of=None) -> str:
    """What an empty provider list says: a replay window lists no demo providers (its panes are the capture's)."""
    where = (f"This window replays {Path(replay_of).name}: its panes are the capture's, and it lists no demo "
             "providers. " if replay_of else "")
    return where + "No providers to send to: Providers → Settings… adds one."


class EmptyListNote(QLabel):
    """A word-wrapped, dim note over an item view's viewport, shown while its model has no rows (an empty
    list said nothing)."""

    def __init__(self, view: QAbstractItemView, text: str) -> None:
        super().__init__(text, view.viewport())
        self.setObjectName("dim")
        self.setTextFormat(Qt.PlainText)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        set_footnote(self)              # (dimmed but readable: the disabled grey was 1.9:1 in the light theme)
        self.view = view
        view.viewport().installEventFilter(self)
        model = view.model()
        for sig in (model.rowsInserted, model.rowsRemoved, model.modelReset, model.layoutChanged):
            sig.connect(self.update_shown)
        self.update_shown()

    def update_shown(self, *_a) -> None:
        model = self.view.model()
        self.setVisible(model is not None and model.rowCount() == 0)
        self._fit()

    def _fit(self) -> None:
        vp = self.view.viewport()
        self.setGeometry(4, 2, max(0, vp.width() - 8), max(0, vp.height() - 4))

    def eventFilter(self, obj: QObject, e) -> bool:
        if e.type() == QEvent.Resize:
            self._fit()
        return False


def note_empty_list(view: QAbstractItemView, text: str) -> EmptyListNote:
    """Say `text` in `view` while its model is empty (the note is made once; later calls set its text)."""
    note = view.viewport().findChild(EmptyListNote)
    if note is None:
        note = EmptyListNote(view, text)
    else:
        note.setText(text)
        note.update_shown()
    return note


def finished_message(statuses, replay: bool) -> str:
    """The status bar once every pane ended: "Finished: 3 done, 1 error" ("Replayed: ..." for a replay)."""
    counts: dict[str, int] = {}
    for s in statuses:
        counts[s] = counts.get(s, 0) + 1
    return ("Replayed: " if replay else "Finished: ") + ", ".join(f"{n} {s}" for s, n in counts.items())


def spec_summary(spec) -> str:
    """The captured request settings in one line: "temperature 0.7 · max tokens 1,024 · thinking (budget ...)"."""
    parts = []
    if spec.temperature is not None:
        parts.append(f"temperature {spec.temperature:g}")
    if spec.max_tokens is not None:
        parts.append(f"max tokens {spec.max_tokens:,}")
    if spec.choices and spec.choices > 1:
        parts.append(f"n {spec.choices}")
    if spec.thinking:
        parts.append(f"thinking (budget {spec.thinking_budget:,})")
    if spec.tools:
        names = ", ".join(str(t.get("name") or t.get("function", {}).get("name") or "?") for t in spec.tools)
        parts.append(f"{plural(len(spec.tools), 'tool')}: {names}"
                     + (f" (tool choice {spec.tool_choice})" if spec.tool_choice else ""))
    return " · ".join(parts) or "default settings"


def draft_from_spec(state: dict, spec) -> dict:
    """The prompt panel's `state()` with the captured `spec`'s prompt and settings in it ("Use this prompt")."""
    out = dict(state)
    out.update(user=spec.user, system=spec.system,
               temperature=-0.1 if spec.temperature is None else spec.temperature,   # -0.1: "default"
               thinking=spec.thinking, thinking_budget=spec.thinking_budget, choices=spec.choices,
               tools=json.dumps([dict(t) for t in spec.tools], indent=2) if spec.tools else "",
               tool_choice=spec.tool_choice or "(default)")
    if spec.max_tokens is not None:
        out["max_tokens"] = spec.max_tokens
    return out


class CapturedPromptView(QWidget):
    """The prompt a replayed capture was sent with, read-only, in the prompt's place.

    Signals:
        draftRequested(): "Edit my draft": show the user's draft again.
        reuseRequested(object): "Use this prompt": the captured `PromptSpec`, to copy into the draft.
    """

    draftRequested = Signal()
    reuseRequested = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        row = QHBoxLayout()
        self.title = ElidedLabel("", self)
        self.title.setObjectName("capturedTitle")
        self.reuse_button = QPushButton("Use this prompt", self)
        self.reuse_button.setToolTip("Copy the captured prompt and its settings into your draft, to send it live")
        self.draft_button = QPushButton("Edit my draft", self)
        self.draft_button.setToolTip("Show your own prompt again (the replayed panes stay)")
        row.addWidget(self.title, 1)
        row.addWidget(self.reuse_button)
        row.addWidget(self.draft_button)
        lay.addLayout(row)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("capturedPrompt")
        self.text.setReadOnly(True)
        lay.addWidget(self.text, 1)
        self.settings_label = ElidedLabel("", self, description="The captured request's settings")
        self.settings_label.setObjectName("dim")
        lay.addWidget(self.settings_label)
        self.spec = None
        self.draft_button.clicked.connect(self.draftRequested.emit)
        self.reuse_button.clicked.connect(lambda: self.reuseRequested.emit(self.spec))

    def show_spec(self, spec, source) -> None:
        """Show `spec` (a `PromptSpec`, or None when the capture kept none) captured in file `source`."""
        self.spec = spec
        self.title.setText(f"Captured prompt (read-only), replayed from {Path(source).name}")
        self.title.set_description(str(source))
        # the window's provider list, empty in a replay window (no demo providers): says why, not a blank box
        providers = getattr(self.window(), "provider_list", None)
        if isinstance(providers, QAbstractItemView) and providers.model() is not None:
            note_empty_list(providers, no_providers_text(source))
        self.reuse_button.setEnabled(spec is not None)
        if spec is None:
            self.text.setPlainText("")
            self.text.setPlaceholderText("(this capture kept no prompt)")
            self.settings_label.setText("")
            return
        text = spec.user
        if spec.system:
            text = f"[system]\n{spec.system}\n\n[user]\n{spec.user}"
        self.text.setPlainText(text)
        self.settings_label.setText(spec_summary(spec))

    def summary(self) -> str:
        """One line for the collapsed prompt area."""
        first = (self.spec.user if self.spec is not None else "").strip().splitlines()
        return "Replayed prompt: " + (first[0] if first else "(none)")
