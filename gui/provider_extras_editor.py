"""The settings dialog's editor of a provider's extra request headers, query parameters and body fields: one
`name = value` a line in each of three boxes, read and checked by the core (`core.live.provider_extras`,
`core.live.config.parse_extras`), as the providers file is."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QPlainTextEdit, QWidget

from core.live.config import ConfigError, ProviderConfig, parse_extras
from core.live.provider_extras import ExtrasError, parse_table_text, table_text

from gui.theme import mono_font, set_verdict
from gui.widgets import plain_label

HINT = ('One name = value a line. A value written { env = "NAME" } is read from that environment variable when '
        'the request is sent: a secret, masked in every view and export (a key-like header or parameter, such as '
        'api-key or Authorization, must be written so). Extra body fields are merged into the top level of the '
        'JSON body, tables key by key (generationConfig.seed = 7 adds to Gemini\'s generationConfig); values in '
        'TOML or JSON.')
PLACEHOLDERS = {
    "headers": 'api-key = { env = "AZURE_OPENAI_API_KEY" }\nHTTP-Referer = https://example.com/my-app',
    "query": "api-version = 2024-10-21",
    "extra_body": 'seed = 42\nresponse_format = {"type": "json_object"}\ntop_p = 0.9',
}
LABELS = {"headers": "Headers", "query": "Query", "extra_body": "Extra body"}


class ExtrasEditor(QWidget):
    """Three boxes (headers, query, extra_body) for the selected provider.

    Signals:
        edited(): the user changed a box (read `tables()` for the result, `problem()` for what is wrong).
    """

    edited = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        self.hint = plain_label(HINT, self)
        self.hint.setWordWrap(True)
        self.hint.setObjectName("dim")
        form.addRow(self.hint)
        self.boxes: dict[str, QPlainTextEdit] = {}
        for kind in ("headers", "query", "extra_body"):
            box = QPlainTextEdit(self)
            box.setObjectName(kind)
            box.setFont(mono_font())
            box.setPlaceholderText(PLACEHOLDERS[kind])
            box.setTabChangesFocus(True)
            box.setMinimumHeight(56)
            box.textChanged.connect(self._changed)
            self.boxes[kind] = box
            form.addRow(LABELS[kind], box)
        self.error = plain_label("", self)
        self.error.setWordWrap(True)
        set_verdict(self.error, "error")
        form.addRow(self.error)
        self._loading = False

    def load(self, provider: ProviderConfig | None) -> None:
        """Show `provider`'s tables (None: empty boxes)."""
        self._loading = True
        try:
            for kind, box in self.boxes.items():
                box.setPlainText(table_text(getattr(provider, kind)) if provider is not None else "")
            self.error.clear()
        finally:
            self._loading = False

    def set_read_only(self, on: bool) -> None:
        for box in self.boxes.values():
            box.setReadOnly(on)

    def tables(self) -> dict:
        """{"headers": ..., "query": ..., "extra_body": ...} as `ProviderConfig` holds them; raises ValueError
        (ExtrasError or ConfigError) with what is wrong, naming the box and line."""
        out = {kind: parse_table_text(box.toPlainText(), kind) for kind, box in self.boxes.items()}
        probe = ProviderConfig("p", "openai-chat", "https://h", "m", **out)
        parse_extras(probe.to_toml_dict(), "extras")   # the providers file's own rules (keys never literal)
        return out

    def problem(self) -> str | None:
        try:
            self.tables()
        except (ExtrasError, ConfigError) as exc:
            return str(exc).removeprefix("extras: ")
        return None

    def _changed(self) -> None:
        if self._loading:
            return
        self.error.setText(self.problem() or "")
        self.edited.emit()
