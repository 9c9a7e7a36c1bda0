"""Providers → Settings…: editing, saving, keyring availability, test connection."""
from __future__ import annotations

from core.live.config import ProviderConfig, load_providers
from tests.gui.test_window import emulator  # noqa: F401  (fixture)


def test_edit_add_remove_and_save(qtbot, tmp_path):
    from gui.settings_dialog import SettingsDialog

    path = tmp_path / "providers.toml"
    start = [ProviderConfig("one", "anthropic", "https://api.anthropic.com", "claude", "ANTHROPIC_API_KEY")]
    dlg = SettingsDialog(start, config_path=path)
    qtbot.addWidget(dlg)
    assert dlg.name.text() == "one"
    dlg.model_name.setText("claude-sonnet")
    dlg.model_name.textEdited.emit("claude-sonnet")
    dlg.add_provider()
    assert dlg.model.rowCount() == 2 and dlg.name.text() == "provider-1"
    dlg.duplicate_provider()
    assert dlg.model.rowCount() == 3
    dlg.remove_provider()
    assert dlg.model.rowCount() == 2
    dlg.accept()
    assert dlg.result() == dlg.DialogCode.Accepted
    saved = load_providers(path)
    assert [p.name for p in saved] == ["one", "provider-1"]
    assert saved[0].model == "claude-sonnet"
    assert "api_key =" not in path.read_text()


def test_invalid_providers_are_refused_with_a_message(qtbot, tmp_path):
    from gui.settings_dialog import SettingsDialog

    path = tmp_path / "providers.toml"
    dlg = SettingsDialog([], config_path=path)
    qtbot.addWidget(dlg)
    dlg.add_provider()
    dlg.base_url.setText("not a url")
    dlg.base_url.textEdited.emit("not a url")
    dlg.accept()
    assert "base_url" in dlg.error.text()
    assert not path.exists()


def test_keyring_unavailable_is_said_not_failed(qtbot, monkeypatch, tmp_path):
    import gui.settings_dialog as sd

    monkeypatch.setattr(sd, "keyring_available", lambda: (False, "no OS keyring is available here"))
    dlg = sd.SettingsDialog([ProviderConfig("x", "gemini", "https://g", "m", "STREAMSCOPE_NOPE_KEY")],
                            config_path=tmp_path / "p.toml")
    qtbot.addWidget(dlg)
    assert "no OS keyring is available here" in dlg.keyring_label.text()
    assert not dlg.store_key.isEnabled() and not dlg.key_input.isEnabled()
    assert "STREAMSCOPE_NOPE_KEY" in dlg.key_status.text()


def test_test_connection_reports_the_result(qtbot, loop, emulator, tmp_path, monkeypatch):  # noqa: F811
    from gui.settings_dialog import SettingsDialog

    monkeypatch.setenv("STREAMSCOPE_EMU_KEY", "any-key-will-do")
    good = ProviderConfig("emu", "openai-chat", emulator + "/v1", "text", "STREAMSCOPE_EMU_KEY")
    bad = ProviderConfig("emu-500", "anthropic", emulator, "http-500", "STREAMSCOPE_EMU_KEY")
    dlg = SettingsDialog([good, bad], config_path=tmp_path / "p.toml")
    qtbot.addWidget(dlg)
    task = dlg.test_connection()
    assert loop.run_until_complete(task).startswith("OK: HTTP 200")
    assert dlg.test_result.text().startswith("OK: HTTP 200")
    dlg.list.setCurrentIndex(dlg.model.index(1, 0))
    text = loop.run_until_complete(dlg.test_connection())
    assert "HTTP 500" in text and text.startswith("Failed")


def test_headers_query_and_body_are_edited_and_written_to_the_file(qtbot, tmp_path, monkeypatch):
    from core.live.config import EnvRef
    from gui.settings_dialog import SettingsDialog

    monkeypatch.setenv("SS_DLG_AZURE", "dialog-secret-value")
    path = tmp_path / "providers.toml"
    dlg = SettingsDialog([ProviderConfig("azure", "openai-chat", "https://r.openai.azure.com/openai/v1", "gpt-4o")],
                         config_path=path)
    qtbot.addWidget(dlg)
    dlg.extras.boxes["headers"].setPlainText('api-key = { env = "SS_DLG_AZURE" }\nHTTP-Referer = https://me.example')
    dlg.extras.boxes["query"].setPlainText("api-version = 2024-10-21")
    dlg.extras.boxes["extra_body"].setPlainText('seed = 42\nresponse_format = {"type": "json_object"}')
    assert dlg.extras.error.text() == ""
    assert "header api-key: read from SS_DLG_AZURE" in dlg.key_status.text()
    assert "dialog-secret-value" not in dlg.key_status.text()
    dlg.accept()
    assert dlg.result() == dlg.DialogCode.Accepted
    (saved,) = load_providers(path)
    assert saved.headers == {"api-key": EnvRef("SS_DLG_AZURE"), "HTTP-Referer": "https://me.example"}
    assert saved.query == {"api-version": "2024-10-21"}
    assert saved.extra_body == {"seed": 42, "response_format": {"type": "json_object"}}
    text = path.read_text()
    assert "[provider.headers]" in text and "dialog-secret-value" not in text
    # reopened, the boxes show what the file holds
    again = SettingsDialog(load_providers(path), config_path=path)
    qtbot.addWidget(again)
    assert 'api-key = {env = "SS_DLG_AZURE"}' in again.extras.boxes["headers"].toPlainText()


def test_a_key_written_in_a_header_is_refused_with_a_message(qtbot, tmp_path):
    from gui.settings_dialog import SettingsDialog

    path = tmp_path / "providers.toml"
    dlg = SettingsDialog([ProviderConfig("azure", "openai-chat", "https://r/v1", "gpt-4o")], config_path=path)
    qtbot.addWidget(dlg)
    dlg.extras.boxes["headers"].setPlainText("api-key = sk-pasted-by-mistake")
    assert "keys never go in the providers file" in dlg.extras.error.text()
    dlg.extras.boxes["extra_body"].setPlainText("seed = 42\nnot a line")
    assert "line 2" in dlg.extras.error.text()
    dlg.accept()
    assert dlg.result() != dlg.DialogCode.Accepted and not path.exists()
    assert "line 2" in dlg.error.text()


def test_the_demo_providers_are_listed_read_only(qtbot, tmp_path):
    from core.live.config import DEMO_NAMES
    from gui.settings_dialog import SettingsDialog

    path = tmp_path / "providers.toml"
    dlg = SettingsDialog([ProviderConfig("mine", "gemini", "https://g", "m", "K")], config_path=path)
    qtbot.addWidget(dlg)
    names = [dlg.demo_list.item(i).text().split()[0] for i in range(dlg.demo_list.count())]
    assert names == list(DEMO_NAMES)
    dlg.demo_list.setCurrentRow(1)
    assert dlg.name.text() == "demo-openai-responses" and not dlg.name.isEnabled()
    assert "built-in emulator" in dlg.demo_note.text() and dlg.demo_note.isVisibleTo(dlg)
    assert not dlg.remove_button.isEnabled() and not dlg.test_button.isEnabled()
    assert dlg.extras.boxes["headers"].isReadOnly()
    dlg.list.setCurrentIndex(dlg.model.index(0, 0))   # back to an editable provider
    assert dlg.name.text() == "mine" and dlg.name.isEnabled() and not dlg.demo_note.isVisibleTo(dlg)
    dlg.accept()
    assert [p.name for p in load_providers(path)] == ["mine"]   # the demo providers are never written


def test_no_keyring_means_no_offer_to_store_a_key_in_one(qtbot, monkeypatch, tmp_path):
    import gui.settings_dialog as sd

    monkeypatch.setattr(sd, "keyring_available", lambda: (False, "no OS keyring is available here"))
    dlg = sd.SettingsDialog([ProviderConfig("x", "gemini", "https://g", "m", "STREAMSCOPE_NOPE_KEY")],
                            config_path=tmp_path / "p.toml")
    qtbot.addWidget(dlg)
    dlg.show()
    assert not dlg.key_input.isVisible() and not dlg.store_key.isVisible()
    from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit

    shown = [w.text() for w in dlg.findChildren(QLabel) + dlg.findChildren(QAbstractButton) if w.isVisible()]
    shown += [w.placeholderText() for w in dlg.findChildren(QLineEdit) if w.isVisible()]
    assert not any("store" in t.lower() and "keyring" in t.lower() for t in shown), shown
    assert "STREAMSCOPE_NOPE_KEY" in dlg.key_status.text()


def test_a_providers_file_that_does_not_read_is_never_replaced_unasked(qtbot, tmp_path, monkeypatch, settings):
    """One mistake in the file (made in an editor) gave the window no providers, and the dialog's OK replaced the
    file with an empty one. Now the dialog does not open unless the user starts over, the file kept as .bak."""
    from PySide6.QtWidgets import QMessageBox

    from gui.main_window import MainWindow
    from gui.settings_dialog import SettingsDialog

    path = tmp_path / "providers.toml"
    good = ('[[provider]]\nname = "mine"\nformat = "gemini"\nbase_url = "https://g"\nmodel = "m"\n'
            'api_key_env = "K"\n')
    path.write_text(good + '\n[[provider]]\nname = "typo"\nformat = "openai"\nbase_url = "https://o"\nmodel = "m"\n')
    w = MainWindow([], settings=settings, config_path=path)
    qtbot.addWidget(w)
    said, opened = [], []
    monkeypatch.setattr(SettingsDialog, "exec", lambda self: opened.append(self) or 0)

    def answer(label):
        def exec_(box):
            said.append(box.text())
            next(b for b in box.buttons() if label in b.text()).click()
        return exec_

    monkeypatch.setattr(QMessageBox, "exec", answer("Cancel"))
    w.open_settings()
    assert not opened and path.read_text().startswith(good) and "openai" in said[0] and "replace" in said[0]
    monkeypatch.setattr(QMessageBox, "exec", answer("Start over"))
    w.open_settings()
    assert len(opened) == 1 and (tmp_path / "providers.toml.bak").read_text() == path.read_text()
    path.write_text(good)                                   # a file that reads: straight to the dialog
    w.open_settings()
    assert len(opened) == 2 and len(said) == 2


def test_a_provider_renamed_in_the_dialog_stays_checked(qtbot, tmp_path, monkeypatch, settings):
    """Renaming `gem` to `gem2` unchecked it in the window (the checks are kept by name)."""
    from gui.main_window import MainWindow
    from gui.settings_dialog import SettingsDialog

    path = tmp_path / "providers.toml"
    path.write_text('[[provider]]\nname = "gem"\nformat = "gemini"\nbase_url = "https://g"\nmodel = "m"\n'
                    '[[provider]]\nname = "other"\nformat = "gemini"\nbase_url = "https://g"\nmodel = "m"\n')
    w = MainWindow(load_providers(path), settings=settings, config_path=path)
    qtbot.addWidget(w)
    w.provider_model.set_checked(["gem"])

    def edit(dlg):
        row = next(i for i in range(dlg.model.rowCount()) if dlg.model.provider(i).name == "gem")
        dlg.list.setCurrentIndex(dlg.model.index(row, 0))
        dlg.name.setText("gem2")
        dlg.name.textEdited.emit("gem2")
        dlg.accept()
        return dlg.result()

    monkeypatch.setattr(SettingsDialog, "exec", edit)
    w.open_settings()
    assert [p.name for p in load_providers(path)] == ["gem2", "other"]
    assert w.provider_model.checked_names() == ["gem2"]
