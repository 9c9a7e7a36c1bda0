"""Providers → Settings…: edit the providers file (name, format, base URL, model, key variable; extra request
headers, query parameters and body fields), store a key in the OS keyring where there is one (where there is
none, nothing offers to), and test a provider's connection. The four built-in demo providers are listed too,
read-only: they run on the built-in emulator.

Keys are never written to the providers file: a provider names the environment variable that holds its key;
the OS keyring, when available, can hold it under that same name instead.
"""
from __future__ import annotations

import asyncio
import dataclasses
import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout,
                               QLineEdit, QListView, QListWidget, QListWidgetItem, QPushButton, QTabWidget,
                               QVBoxLayout, QWidget)

from core.wire.formats import FORMATS
from core.live.config import (ConfigError, ProviderConfig, default_config_path, demo_providers, key_source,
                              keyring_available, parse_providers, dumps_providers, resolve_env_value,
                              save_providers, set_keyring_key)
from core.live.summary import plural

from gui import plaintips
from gui.models import ProviderTableModel
from gui.provider_extras_editor import ExtrasEditor
from gui.theme import set_verdict
from gui.widgets import plain_label

BASE_URL_HINTS = {
    "openai-chat": "https://api.openai.com/v1",
    "openai-responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
KEY_ENV_HINTS = {"openai-chat": "OPENAI_API_KEY", "openai-responses": "OPENAI_API_KEY",
                 "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
KEY_ENV_PLACEHOLDER = "e.g. OPENAI_API_KEY (empty: no key, e.g. a local server)"
DEMO_NOTE = ("Built-in demo provider: it runs on the built-in emulator, started on a loopback port with the app "
             "(no key, no network). Read-only; the Demo scenario picker in the window chooses what it plays.")
DEMO_BASE = "the built-in emulator (loopback, started with the app)"
DEMO_MODEL = "the Demo scenario chosen in the window"
NO_PROVIDERS = ("No providers in the providers file yet. Add a provider (the Add button under the list) to "
                "stream from a real API, or pick a built-in demo provider to see how it is set up.")
NONE_SELECTED = "No provider selected: pick one in the list to edit it, or Add a provider."


class SettingsDialog(QDialog):
    """Edits a list of providers and saves it to the providers file on OK.

    Signals:
        testFinished(str): a connection test ended (argument: the result shown to the user).
    """

    testFinished = Signal(str)

    def __init__(self, providers: list, config_path=None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Providers")
        self.resize(880, 560)
        self.config_path = config_path
        self.model = ProviderTableModel([p for p in providers if not p.is_demo], self)
        self._row = -1
        self._loading = False
        self.test_task: asyncio.Task | None = None

        self.list = QListView(self)
        self.list.setModel(self.model)
        self.list.setModelColumn(0)
        self.list.setMinimumWidth(200)
        # the built-in demo providers: listed so the user sees what the window offers, greyed and read-only
        self.demo_list = QListWidget(self)
        self.demo_list.setObjectName("demo_providers")
        self.demo_providers = demo_providers("http://127.0.0.1")
        grey = self.palette().color(QPalette.Disabled, QPalette.Text)
        for d in self.demo_providers:
            item = QListWidgetItem(f"{d.name}  ·  built-in")
            item.setForeground(grey)
            item.setToolTip(f"{d.format}: runs on the built-in emulator (read-only)")
            self.demo_list.addItem(item)
        rows = self.demo_list.sizeHintForRow(0) if self.demo_list.count() else 18
        self.demo_list.setFixedHeight(rows * len(self.demo_providers) + 2 * self.demo_list.frameWidth() + 4)
        self.demo_list.currentRowChanged.connect(self._load_demo)
        self.list_label = plain_label("Your providers (the providers file)", self)
        self.demo_label = plain_label("Built-in demo providers (the emulator)", self)
        self.demo_label.setObjectName("dim")
        add = QPushButton("Add", self)
        dup = QPushButton("Duplicate", self)
        rem = QPushButton("Remove", self)
        add.clicked.connect(self.add_provider)
        dup.clicked.connect(self.duplicate_provider)
        rem.clicked.connect(self.remove_provider)
        self.dup_button, self.remove_button = dup, rem
        left = QVBoxLayout()
        left.addWidget(self.list_label)
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        for b in (add, dup, rem):
            row.addWidget(b)
        left.addLayout(row)
        left.addWidget(self.demo_label)
        left.addWidget(self.demo_list)

        self.tabs = QTabWidget(self)
        self.form = QWidget(self.tabs)
        fl = QFormLayout(self.form)
        self.demo_note = plain_label(DEMO_NOTE, self.form)
        self.demo_note.setWordWrap(True)
        self.demo_note.hide()
        fl.addRow(self.demo_note)
        self.name = QLineEdit(self.form)
        self.format = QComboBox(self.form)
        self.format.addItems(FORMATS)
        self.base_url = QLineEdit(self.form)
        self.model_name = QLineEdit(self.form)
        self.key_env = QLineEdit(self.form)
        self.key_env.setPlaceholderText(KEY_ENV_PLACEHOLDER)
        self.key_status = plain_label("", self.form)
        self.key_status.setWordWrap(True)
        self.insecure = QCheckBox("Allow sending the key over plain http:// to a non-loopback host", self.form)
        fl.addRow("Name", self.name)
        fl.addRow("Format", self.format)
        fl.addRow("Base URL", self.base_url)
        fl.addRow("Model", self.model_name)
        fl.addRow("Key variable", self.key_env)
        fl.addRow("", self.key_status)
        fl.addRow("", self.insecure)

        self.keyring_ok, why = keyring_available()
        self.keyring_label = plain_label(
            "OS keyring: available; a key stored there is used when the variable is not set." if self.keyring_ok
            else f"OS keyring: {why}", self.form)
        self.keyring_label.setWordWrap(True)
        self.key_input = QLineEdit(self.form)
        self.key_input.setEchoMode(QLineEdit.Password)
        self.key_input.setPlaceholderText("paste a key to store it in the OS keyring")
        self.store_key = QPushButton("Store in keyring", self.form)
        self.store_key.clicked.connect(self.store_in_keyring)
        self.key_row = QWidget(self.form)
        krow = QHBoxLayout(self.key_row)
        krow.setContentsMargins(0, 0, 0, 0)
        krow.addWidget(self.key_input, 1)
        krow.addWidget(self.store_key)
        for w in (self.key_input, self.store_key):
            w.setEnabled(self.keyring_ok)
        fl.addRow("Keyring", self.keyring_label)
        fl.addRow("", self.key_row)
        # where there is no keyring, nothing offers to store a key in one
        self.key_row.setVisible(self.keyring_ok)

        self.test_button = QPushButton("Test connection", self.form)
        self.test_button.clicked.connect(self.test_connection)
        self.test_result = plain_label("", self.form)
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextSelectableByMouse)
        fl.addRow(self.test_button, self.test_result)
        self.error = plain_label("", self)
        set_verdict(self.error, "error")
        self.error.setWordWrap(True)

        self.extras = ExtrasEditor(self.tabs)
        self.extras.edited.connect(self._extras_edited)
        self.tabs.addTab(self.form, "Connection")
        self.tabs.addTab(self.extras, "Headers, query, body")
        # what to do when no provider is shown (none yet, or none selected): the form is disabled then
        self.empty_note = plain_label("", self)
        self.empty_note.setObjectName("emptyNote")
        self.empty_note.setWordWrap(True)
        self.empty_note.hide()
        right = QVBoxLayout()
        right.addWidget(self.empty_note)
        right.addWidget(self.tabs, 1)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addLayout(right, 2)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        path = plain_label(f"Providers file: {config_path or default_config_path()}", self)
        path.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.addLayout(body, 1)
        lay.addWidget(path)
        lay.addWidget(self.error)
        lay.addWidget(buttons)

        for w in (self.name, self.base_url, self.model_name, self.key_env):
            w.textEdited.connect(self._edited)
        self.format.currentIndexChanged.connect(self._edited)
        self.insecure.toggled.connect(self._edited)
        self.list.selectionModel().currentRowChanged.connect(self._row_changed)
        if self.model.rowCount():
            self.list.setCurrentIndex(self.model.index(0, 0))
        else:
            self._load(-1)

    # -- editing ---------------------------------------------------------------------------------------------
    def providers(self) -> list:
        return self.model.providers()

    def _row_changed(self, cur, _prev=None) -> None:
        if cur.isValid():
            self.demo_list.blockSignals(True)
            self.demo_list.setCurrentRow(-1)
            self.demo_list.clearSelection()
            self.demo_list.blockSignals(False)
        self._load(cur.row())

    def _show_demo(self, on: bool) -> None:
        self.demo_note.setVisible(on)
        self.key_env.setPlaceholderText("" if on else KEY_ENV_PLACEHOLDER)
        for w in (self.name, self.format, self.base_url, self.model_name, self.key_env, self.insecure,
                  self.test_button):
            w.setEnabled(not on)
        self.key_row.setVisible(self.keyring_ok and not on)
        self.extras.set_read_only(on)
        self.dup_button.setEnabled(not on)
        self.remove_button.setEnabled(not on)
        if on:
            self.empty_note.hide()

    def _load_demo(self, row: int) -> None:
        """Show a built-in demo provider, read-only."""
        if not 0 <= row < len(self.demo_providers):
            return
        self.list.blockSignals(True)
        self.list.selectionModel().blockSignals(True)
        self.list.clearSelection()
        self.list.setCurrentIndex(self.model.index(-1, 0))
        self.list.selectionModel().blockSignals(False)
        self.list.blockSignals(False)
        d = self.demo_providers[row]
        self._row = -1
        self._loading = True
        self.form.setEnabled(True)
        self.name.setText(d.name)
        self.format.setCurrentText(d.format)
        self.base_url.setText(DEMO_BASE)
        self.model_name.setText(DEMO_MODEL)
        self.key_env.setText("")
        self.insecure.setChecked(False)
        self.extras.load(d)
        self.test_result.clear()
        self._loading = False
        self._show_demo(True)
        self.key_status.setText("built-in demo key (the emulator takes any key)")

    def _load(self, row: int) -> None:
        self._row = row
        self._loading = True
        self._show_demo(False)
        p = self.model.provider(row) if 0 <= row < self.model.rowCount() else None
        self.form.setEnabled(p is not None)
        self.extras.setEnabled(p is not None)
        self.extras.load(p)
        self.name.setText(p.name if p else "")
        self.format.setCurrentText(p.format if p else FORMATS[0])
        self.base_url.setText(p.base_url if p else "")
        self.model_name.setText(p.model if p else "")
        self.key_env.setText(p.api_key_env if p else "")
        self.insecure.setChecked(bool(p and p.allow_insecure))
        # (no provider: no hint in the disabled Base URL box, which read as a URL already set)
        self.base_url.setPlaceholderText(BASE_URL_HINTS.get(self.format.currentText(), "") if p else "")
        self.key_env.setPlaceholderText(KEY_ENV_PLACEHOLDER if p else "")
        self.dup_button.setEnabled(p is not None)
        self.remove_button.setEnabled(p is not None)
        self.empty_note.setText("" if p else NO_PROVIDERS if not self.model.rowCount() else NONE_SELECTED)
        self.empty_note.setVisible(p is None)
        self.test_result.clear()
        self._loading = False
        self._update_key_status()

    def _edited(self, *_a) -> None:
        if self._loading or self._row < 0:
            return
        p = dataclasses.replace(self.model.provider(self._row), name=self.name.text().strip(),
                                format=self.format.currentText(), base_url=self.base_url.text().strip(),
                                model=self.model_name.text().strip(), api_key_env=self.key_env.text().strip(),
                                allow_insecure=self.insecure.isChecked())
        self.model.replace(self._row, p)
        self.base_url.setPlaceholderText(BASE_URL_HINTS.get(p.format, ""))
        self._update_key_status()
        self.error.clear()

    def _extras_edited(self) -> None:
        if self._loading or self._row < 0:
            return
        try:
            tables = self.extras.tables()
        except ValueError:
            return   # (the editor shows what is wrong; the provider keeps its last valid tables)
        self.model.replace(self._row, dataclasses.replace(self.model.provider(self._row), **tables))
        self._update_key_status()
        self.error.clear()

    def _update_key_status(self) -> None:
        if self._row < 0:
            self.key_status.setText("")
            return
        p = self.model.provider(self._row)
        src = key_source(p)
        text = {"env": f"key found in the environment variable {p.api_key_env}",
                "keyring": f"key found in the OS keyring under {p.api_key_env}",
                "none": ("no key variable: the headers or query below carry the credentials" if p.env_refs()
                         else "no key is sent (no variable named)"),
                "demo": "built-in demo key",
                "missing": f"no key yet: set the environment variable {p.api_key_env}"
                           + (" or store the key in the OS keyring below" if self.keyring_ok else "")}[src]
        for kind, name, ref in p.env_refs():   # the `{ env = "NAME" }` header and query values (never shown)
            what = "header" if kind == "headers" else "query parameter"
            found = resolve_env_value(ref.name) is not None
            text += f"\n{what} {name}: " + (f"read from {ref.name}" if found else f"{ref.name} is not set")
        self.key_status.setText(text)

    def add_provider(self) -> None:
        names = {p.name for p in self.model.providers()}
        n = 1
        while f"provider-{n}" in names:
            n += 1
        fmt = "openai-chat"
        row = self.model.append(ProviderConfig(f"provider-{n}", fmt, BASE_URL_HINTS[fmt], "gpt-4o-mini",
                                               KEY_ENV_HINTS[fmt]))
        self.list.setCurrentIndex(self.model.index(row, 0))

    def duplicate_provider(self) -> None:
        if self._row < 0:
            return
        p = self.model.provider(self._row)
        names = {x.name for x in self.model.providers()}
        name, n = f"{p.name}-copy", 2
        while name in names:
            name, n = f"{p.name}-copy{n}", n + 1
        row = self.model.append(dataclasses.replace(p, name=name))
        self.list.setCurrentIndex(self.model.index(row, 0))

    def remove_provider(self) -> None:
        if self._row < 0:
            return
        row = self._row
        self.model.remove(row)
        if self.model.rowCount():
            self.list.setCurrentIndex(self.model.index(min(row, self.model.rowCount() - 1), 0))
        else:
            self._load(-1)

    def store_in_keyring(self) -> None:
        if self._row < 0:
            return
        p = self.model.provider(self._row)
        key = self.key_input.text().strip()
        if not p.api_key_env:
            self.error.setText("Name a key variable first: the keyring stores the key under that name.")
            return
        if not key:
            return
        try:
            set_keyring_key(p.api_key_env, key)
        except Exception as exc:  # noqa: BLE001 - NoKeyringError, locked keyring, D-Bus: say so
            self.error.setText(f"Could not store the key in the OS keyring: {exc}")
            return
        finally:
            self.key_input.clear()
        self._update_key_status()

    # -- validation and saving -------------------------------------------------------------------------------
    def validate(self) -> str | None:
        """None when the providers make a valid file, else what is wrong (the core's own rules)."""
        if self._row >= 0 and self.extras.problem():
            return f"{self.model.provider(self._row).name}: {self.extras.problem()}"
        try:
            parse_providers(dumps_providers(self.model.providers()), "providers")
        except ConfigError as exc:
            return str(exc).replace("providers: ", "", 1)
        return None

    def accept(self) -> None:
        problem = self.validate()
        if problem:
            self.error.setText(problem)
            return
        try:
            save_providers(self.model.providers(), self.config_path)
        except (OSError, ConfigError) as exc:
            plaintips.warn(self, "Providers file", str(exc))
            return
        super().accept()

    # -- test connection -------------------------------------------------------------------------------------
    def test_connection(self):
        """Send a one-token prompt to the selected provider; the result is shown and emitted (testFinished)."""
        if self._row < 0 or (self.test_task is not None and not self.test_task.done()):
            return None
        problem = self.validate()
        if problem:
            self.test_result.setText(problem)
            return None
        p = self.model.provider(self._row)
        self.test_result.setText("testing…")
        self.test_button.setEnabled(False)
        self.test_task = asyncio.ensure_future(self._test(p))
        return self.test_task

    async def _test(self, provider) -> str:
        from core.live.request import PromptSpec
        from core.live.transport import new_client, stream_provider
        from core.live.recorder import prepare_run

        t0 = time.perf_counter()
        run = prepare_run(provider, PromptSpec("Say OK.", max_tokens=16))
        if not run.finished:
            client = new_client(4)
            try:
                await stream_provider(run, client, connect_timeout=10.0, read_timeout=20.0)
            finally:
                await client.aclose()
        ms = (time.perf_counter() - t0) * 1000
        if run.status == "done":
            text = (f"OK: HTTP {run.http_status}, {plural(run.metrics.frames, 'frame')} in {ms:.0f} ms"
                    + ("" if run.decoder.reply.terminated else " (no end marker)"))
        else:
            err = run.error or {}
            text = f"Failed ({run.status}"
            text += f", HTTP {run.http_status}" if run.http_status is not None else ""
            text += f"): {err.get('message') or err.get('type') or 'unknown error'}"
        try:
            self.test_result.setText(text)
            self.test_button.setEnabled(True)
        except RuntimeError:   # the dialog was closed meanwhile
            pass
        self.testFinished.emit(text)
        return text
