"""Light and dark themes, and the font size: the Fusion style with a palette, plus the small style sheets in
resources/ (style.qss for both themes, dark.qss added for the dark one).

Font size. With an application style sheet set, Qt does not propagate `QApplication.setFont()` to existing
widgets (the style-sheet style fixed each widget's font when it polished it). So `apply_font_size` sets the
application font and then re-applies the style sheet, which re-polishes every widget against the new font.
Widgets that need another family (the monospace views) get a family-only font (`mono_font()`), so they take the
size from the application like every other widget. Nothing in the GUI sets an explicit point size.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
MIN_FONT_PT, MAX_FONT_PT = 7, 24
_DEFAULT_PT = "streamscope_default_font_pt"   # QApplication dynamic property: the platform's default size
_THEME = "streamscope_theme"


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


def _style_sheet(theme: str = "light", palette: QPalette | None = None) -> str:
    out = []
    for name in ("style.qss", "dark.qss" if theme == "dark" else None):
        qss = RESOURCES / name if name else None
        if qss is not None and qss.is_file():
            out.append(qss.read_text(encoding="utf-8").replace("@RESOURCES@", RESOURCES.as_posix()))
    if palette is not None:   # footnotes (`set_footnote`): dimmed in the theme's own readable shade
        out.append(f'QLabel[footnote="true"] {{ color: {footnote_color(palette).name()}; }}')
    return "\n".join(out)


def _repolish(app: QApplication) -> None:
    # the comment makes the sheet differ from the current one, so Qt re-polishes (and re-fonts) every widget
    theme = str(app.property(_THEME) or "light")
    app.setStyleSheet(_style_sheet(theme, app.palette()) + f"\n/* {theme} {app.font().pointSize()}pt */\n")


def theme_name(app: QApplication | None = None) -> str:
    app = app or QApplication.instance()
    return str(app.property(_THEME) or "light")


def apply_theme(app: QApplication, name: str) -> None:
    """Switch the whole application to the "light" or "dark" theme."""
    fusion = QStyleFactory.create("Fusion")
    if fusion is not None and app.style().name().lower() != "fusion":
        app.setStyle(fusion)
    app.setProperty(_THEME, "dark" if name == "dark" else "light")
    app.setPalette(dark_palette() if name == "dark" else app.style().standardPalette())
    _repolish(app)


def default_font_size(app: QApplication) -> int:
    """The platform's default point size (remembered the first time the size is changed)."""
    v = app.property(_DEFAULT_PT)
    if v is None:
        v = app.font().pointSize()
        app.setProperty(_DEFAULT_PT, v)
    return int(v)


def apply_font_size(app: QApplication, size: int) -> int:
    """Set every widget's font size in points (0: the platform default); returns the size applied."""
    default = default_font_size(app)
    pt = max(MIN_FONT_PT, min(MAX_FONT_PT, size)) if size > 0 else default
    f = app.font()
    f.setPointSize(pt)
    app.setFont(f)
    _repolish(app)
    return pt


def mono_font() -> QFont:
    """A monospace font that sets only the family: its size follows the application's font size."""
    fixed = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    f = QFont()
    f.setFamilies(list(fixed.families()) + ["DejaVu Sans Mono", "Menlo", "Consolas", "monospace"])
    f.setStyleHint(QFont.TypeWriter)
    f.setFixedPitch(True)
    return f


def set_verdict(label, verdict: str | None) -> None:
    """Colour a message label as an error ("error"), a warning ("warning"), a success ("ok") or plain text (None),
    in each theme's own readable shade (the style sheets' `QLabel[verdict=...]`, at least 4.5:1 on the window)."""
    if label.property("verdict") == verdict:
        return
    label.setProperty("verdict", verdict)
    style = label.style()
    style.unpolish(label)      # (a dynamic property's selector applies only once the widget is polished again)
    style.polish(label)


def dim_text_color(palette: QPalette) -> QColor:
    """Text dimmed towards the background, still readable (about 5:1 on white, unlike the disabled grey)."""
    fg, bg = palette.color(QPalette.Active, QPalette.Text), palette.color(QPalette.Active, QPalette.Base)
    t = 0.38
    return QColor(round(fg.red() + (bg.red() - fg.red()) * t), round(fg.green() + (bg.green() - fg.green()) * t),
                  round(fg.blue() + (bg.blue() - fg.blue()) * t))


def footnote_color(palette: QPalette) -> QColor:
    """A footnote's text on the window: its text colour blended towards the window's, still readable (about 5.9:1
    in the light theme, 5:1 in the dark one; the disabled grey a footnote was drawn in was 1.6:1)."""
    fg, bg = palette.color(QPalette.Active, QPalette.WindowText), palette.color(QPalette.Active, QPalette.Window)
    t = 0.38
    return QColor(round(fg.red() + (bg.red() - fg.red()) * t), round(fg.green() + (bg.green() - fg.green()) * t),
                  round(fg.blue() + (bg.blue() - fg.blue()) * t))


def set_footnote(label) -> None:
    """Draw `label` as a footnote: dimmed (`footnote_color`) but enabled and readable, in either theme."""
    label.setProperty("footnote", True)
    style = label.style()
    style.unpolish(label)
    style.polish(label)


def fitted_size(size: tuple[int, int], screen, margin: int = 40) -> tuple[int, int]:
    """`size`, shrunk to the screen's available geometry less `margin` (the window frame, not known before the
    first show); unchanged without a screen."""
    w, h = size
    if screen is None:
        return w, h
    avail = screen.availableGeometry()
    return min(w, max(1, avail.width() - margin)), min(h, max(1, avail.height() - margin))
