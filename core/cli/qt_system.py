"""What the window needs from the operating system, and the hint printed when it cannot start.

The PySide6 wheels bundle Qt itself but not the system libraries Qt links against. On a bare Debian/Ubuntu
machine Qt then fails in one of two ways: importing a Qt module raises ImportError (a shared library such as
libEGL.so.1 is missing), or Qt aborts the process while loading its platform plugin ("Could not load the Qt
platform plugin"). Both print `hint()`. This module imports no Qt, so it can speak exactly when Qt cannot load.

The package lists come from `ldd` on the bundled Qt libraries and on the platform plugins
(PySide6/Qt/plugins/platforms/libqoffscreen.so and libqxcb.so): every library outside the Python packages that
a minimal Debian lacks, named by its Debian package (the README shows the same lists; a test keeps them equal).
"""
from __future__ import annotations

import os
from collections.abc import Mapping

# Qt's core, GUI and widget libraries, and with them the offscreen platform (QT_QPA_PLATFORM=offscreen).
OFFSCREEN_PACKAGES = ("libgl1", "libegl1", "libx11-6", "libxkbcommon0", "libfontconfig1", "libfreetype6",
                      "libdbus-1-3", "libglib2.0-0")
# A real X11 display: the xcb platform plugin's libraries besides those.
XCB_PACKAGES = ("libx11-xcb1", "libxcb1", "libxcb-cursor0", "libxcb-glx0", "libxcb-icccm4", "libxcb-image0",
                "libxcb-keysyms1", "libxcb-randr0", "libxcb-render0", "libxcb-render-util0", "libxcb-shape0",
                "libxcb-shm0", "libxcb-sync1", "libxcb-util1", "libxcb-xfixes0", "libxcb-xkb1",
                "libxkbcommon-x11-0")
DISPLAY_PACKAGES = OFFSCREEN_PACKAGES + XCB_PACKAGES


def apt_line(packages: tuple[str, ...]) -> str:
    return "sudo apt-get install " + " ".join(packages)


def hint(reason: str, env: Mapping[str, str] = os.environ) -> str:
    """One paragraph saying why the window could not start and what to install (Debian/Ubuntu names)."""
    platform = env.get("QT_QPA_PLATFORM", "")
    headless = platform.startswith("offscreen")
    parts = [f"streamscope: the window cannot start: {reason}."]
    if platform and not headless and platform.split(":")[0] not in ("xcb", "wayland", "wayland-egl"):
        parts.append(f"QT_QPA_PLATFORM={platform} names a platform plugin Qt may not have (Qt lists those it "
                     "has above).")
    elif not headless and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        parts.append("There is no display (DISPLAY is not set): on a server, run with QT_QPA_PLATFORM=offscreen "
                     "(for --screenshot).")
    parts.append("Qt needs a few system libraries; on Debian/Ubuntu, for a display: "
                 f"`{apt_line(DISPLAY_PACKAGES)}`; for QT_QPA_PLATFORM=offscreen alone: "
                 f"`{apt_line(OFFSCREEN_PACKAGES)}`.")
    parts.append("The headless commands (decode, emulate, translate, run, replay --headless) need none of this.")
    return " ".join(parts)
