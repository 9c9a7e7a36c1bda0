"""Starting the app (gui/app.py): the window icon every window and dialog takes, and the hint printed when Qt
cannot start on this system."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.corpus import ROOT


def painted_pixels(icon, size: int = 32) -> int:
    img = icon.pixmap(size, size).toImage()
    return sum(img.pixelColor(x, y).alpha() > 0 for x in range(size) for y in range(size))


def test_the_window_and_its_dialogs_take_the_app_icon(qapp, qtbot, loop, settings):
    from PySide6.QtWidgets import QMessageBox

    from gui.app import _qt_app
    from gui.main_window import MainWindow
    from gui.settings_dialog import SettingsDialog

    before = (qapp.windowIcon(), qapp.organizationName(), qapp.applicationName(),
              qapp.applicationDisplayName(), qapp.quitOnLastWindowClosed())
    try:
        assert _qt_app() is qapp   # what the app does at start, here on the test's QApplication
        window = MainWindow([], settings=settings)
        qtbot.addWidget(window)
        dialogs = [SettingsDialog([], parent=window), QMessageBox(window)]
        for widget in [window, *dialogs]:
            icon = widget.windowIcon()
            assert not icon.isNull(), type(widget).__name__
            # the SVG was drawn (the icon is a rounded square: most of its pixels are painted)
            assert painted_pixels(icon) > 32 * 32 // 2, type(widget).__name__
        loop.run_until_complete(window.aclose())
    finally:
        icon, org, name, display, quit_last = before
        qapp.setWindowIcon(icon)
        qapp.setOrganizationName(org)
        qapp.setApplicationName(name)
        qapp.setApplicationDisplayName(display)
        qapp.setQuitOnLastWindowClosed(quit_last)


def start_window(tmp_path, env: dict, code: str | None = None) -> subprocess.CompletedProcess:
    """`main.py --screenshot` in a fresh process (or `code`, which calls main.main itself)."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path), **env}
    argv = ["-c", code] if code else ["main.py"]
    return subprocess.run([sys.executable, *argv, "--screenshot", str(tmp_path / "out.png")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def assert_hint(proc: subprocess.CompletedProcess, tmp_path) -> None:
    from core.cli.qt_system import DISPLAY_PACKAGES, OFFSCREEN_PACKAGES, apt_line

    assert proc.returncode == 2, proc.stderr
    assert "streamscope: the window cannot start" in proc.stderr
    assert apt_line(DISPLAY_PACKAGES) in proc.stderr and apt_line(OFFSCREEN_PACKAGES) in proc.stderr
    assert "Traceback" not in proc.stderr and "Aborted" not in proc.stderr
    assert not (tmp_path / "out.png").exists()


def test_a_platform_plugin_that_cannot_load_prints_the_hint_not_an_abort(tmp_path):
    # Qt aborts (SIGABRT, exit 134) when no platform plugin starts; the app says why and exits 2 instead
    proc = start_window(tmp_path, {"QT_QPA_PLATFORM": "nonexistent"})
    assert_hint(proc, tmp_path)
    assert 'Could not find the Qt platform plugin "nonexistent"' in proc.stderr   # Qt's own line is kept
    assert "QT_QPA_PLATFORM=nonexistent" in proc.stderr


def test_a_missing_system_library_prints_the_hint(tmp_path):
    # what importing Qt raises on a machine without libEGL: the same ImportError, from an import hook
    code = ("import sys\n"
            "class NoEGL:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.startswith('PySide6'):\n"
            "            raise ImportError('libEGL.so.1: cannot open shared object file: No such file or directory')\n"
            "sys.meta_path.insert(0, NoEGL())\n"
            "import main\n"
            "sys.exit(main.main(sys.argv[1:]))\n")
    proc = start_window(tmp_path, {"QT_QPA_PLATFORM": "offscreen"}, code)
    assert_hint(proc, tmp_path)
    assert "libEGL.so.1: cannot open shared object file" in proc.stderr
