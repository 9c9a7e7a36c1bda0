"""The system packages Qt needs and the hint that names them (core/cli/qt_system.py)."""
from __future__ import annotations

import subprocess
import sys

from core.cli.qt_system import DISPLAY_PACKAGES, OFFSCREEN_PACKAGES, apt_line, hint
from tests.corpus import ROOT


def test_the_readme_and_ci_install_the_same_packages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert apt_line(DISPLAY_PACKAGES) in readme and apt_line(OFFSCREEN_PACKAGES) in readme
    assert "qt_system import OFFSCREEN_PACKAGES" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"} <= set(DISPLAY_PACKAGES)
    assert set(OFFSCREEN_PACKAGES) < set(DISPLAY_PACKAGES)


def test_the_hint_says_what_to_install_and_why():
    no_display = hint("Qt could not load its platform plugin", {})
    assert no_display.startswith("streamscope: the window cannot start: Qt could not load its platform plugin.")
    assert "no display" in no_display and "QT_QPA_PLATFORM=offscreen" in no_display
    assert apt_line(DISPLAY_PACKAGES) in no_display and apt_line(OFFSCREEN_PACKAGES) in no_display
    assert "\n" not in no_display   # one paragraph
    assert "no display" not in hint("x", {"DISPLAY": ":0"})
    assert "no display" not in hint("x", {"QT_QPA_PLATFORM": "offscreen"})
    assert "QT_QPA_PLATFORM=vnc:size=1x1 names a platform plugin" in hint("x", {"QT_QPA_PLATFORM": "vnc:size=1x1"})
    assert "names a platform plugin" not in hint("x", {"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"})


def test_the_hint_imports_no_qt():
    # it is printed exactly when Qt cannot be imported
    code = "import sys, core.cli.qt_system; sys.exit('PySide6' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0
