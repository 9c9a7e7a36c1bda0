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
