"""Light and dark themes: the Fusion style with a palette, plus the small style sheet in resources/."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def dark_palette() -> QPalette:
    p = QPalette()
    base, window, text = QColor("#1e1f22"), QColor("#2b2d30"), QColor("#dfe1e5")
    for group in (QPalette.Active, QPalette.Inactive):
        p.setColor(group, QPalette.Window, window)
        p.setColor(group, QPalette.WindowText, text)
        p.setColor(group, QPalette.Base, base)
        p.setColor(group, QPalette.AlternateBase, QColor("#26282b"))
        p.setColor(group, QPalette.ToolTipBase, QColor("#3c3f41"))
        p.setColor(group, QPalette.ToolTipText, text)
        p.setColor(group, QPalette.PlaceholderText, QColor("#7f838a"))
        p.setColor(group, QPalette.Text, text)
        p.setColor(group, QPalette.Button, window)
        p.setColor(group, QPalette.ButtonText, text)
        p.setColor(group, QPalette.BrightText, QColor("#ff6b6b"))
        p.setColor(group, QPalette.Highlight, QColor("#2f65ca"))
        p.setColor(group, QPalette.HighlightedText, QColor("#ffffff"))
        p.setColor(group, QPalette.Link, QColor("#6ea8fe"))
        p.setColor(group, QPalette.Mid, QColor("#3c3f41"))
        p.setColor(group, QPalette.Dark, QColor("#151617"))
        p.setColor(group, QPalette.Light, QColor("#45484c"))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor("#80848b"))
    p.setColor(QPalette.Disabled, QPalette.Base, base)
    p.setColor(QPalette.Disabled, QPalette.Window, window)
    p.setColor(QPalette.Disabled, QPalette.Button, window)
    return p


def apply_theme(app: QApplication, name: str) -> None:
    """Switch the whole application to the "light" or "dark" theme."""
    fusion = QStyleFactory.create("Fusion")
    if fusion is not None and app.style().name().lower() != "fusion":
        app.setStyle(fusion)
    app.setPalette(dark_palette() if name == "dark" else app.style().standardPalette())
    qss = RESOURCES / "style.qss"
    app.setStyleSheet(qss.read_text(encoding="utf-8") if qss.is_file() else "")
