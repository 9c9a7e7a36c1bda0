"""What the window remembers between sessions: one typed accessor per setting over `QSettings`, with its key
and its default in this one place.

The keys are the ones earlier versions wrote (a user's settings carry over). A value that is missing, or that
another version or a hand edit left unreadable, reads as the default: a bad settings file never stops the
window from opening.
"""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from core.cli.tap import DEFAULT_LISTEN
from core.servers.tap.upstreams import EMULATOR

DEFAULT_READ_TIMEOUT = 60.0      # seconds, as `main.py run --read-timeout`
DEFAULT_CONNECT_TIMEOUT = 10.0   # seconds, as `main.py run --connect-timeout`
DEFAULT_THEME = "light"
MAX_RECENT = 8                   # File > Recent files lists at most this many

DEFAULT_TAP_LISTEN = DEFAULT_LISTEN    # as `main.py tap`
DEFAULT_TAP_UPSTREAMS = EMULATOR       # as `main.py tap` with no --upstream

READ_TIMEOUT = "run/read_timeout"
CONNECT_TIMEOUT = "run/connect_timeout"
TAP_LISTEN = "tap/listen"
TAP_UPSTREAMS = "tap/upstreams"
TAP_ALLOW_INSECURE = "tap/allow_insecure"
THEME = "view/theme"
FONT_SIZE = "view/font_size"
RECENT_FILES = "recent_files"
PROMPT_STATE = "prompt/state"
SELECTED_PROVIDERS = "providers/selected"
SCENARIO = "providers/scenario"
GEOMETRY = "window/geometry"
WINDOW_STATE = "window/state"
MAIN_SPLIT = "window/main_split"
PROMPT_COLLAPSED = "window/prompt_collapsed"
# (earlier versions also wrote "window/pane_sizes/{n}": each send now starts with equal pane widths)


class PersistedSettings:
    """Typed reads and writes of the window's settings (`qsettings`: where they are stored)."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.qsettings = qsettings if qsettings is not None else QSettings()

    # -- how values are stored -----------------------------------------------------------------------------
    def _json(self, key: str, default: Any) -> Any:
        try:
            return json.loads(self.qsettings.value(key, "") or "null")
        except (TypeError, ValueError):
            return default

    def _set_json(self, key: str, value: Any) -> None:
        self.qsettings.setValue(key, json.dumps(value))

    def _positive(self, key: str, default: float) -> float:
        try:
            v = float(self.qsettings.value(key, default))
            return v if v > 0 else default
        except (TypeError, ValueError):
            return default

    def _bytes(self, key: str) -> QByteArray | None:
        v = self.qsettings.value(key)
        return v if isinstance(v, QByteArray) and not v.isEmpty() else None

    # -- Run > Timeouts… -----------------------------------------------------------------------------------
    @property
    def read_timeout(self) -> float:
        return self._positive(READ_TIMEOUT, DEFAULT_READ_TIMEOUT)

    @read_timeout.setter
    def read_timeout(self, seconds: float) -> None:
        self.qsettings.setValue(READ_TIMEOUT, float(seconds))

    @property
    def connect_timeout(self) -> float:
        return self._positive(CONNECT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT)

    @connect_timeout.setter
    def connect_timeout(self, seconds: float) -> None:
        self.qsettings.setValue(CONNECT_TIMEOUT, float(seconds))

    # -- Run > Tap… -------------------------------------------------------------------------------------
    @property
    def tap_listen(self) -> str:
        """The tap's listen address as typed (HOST:PORT)."""
        return str(self.qsettings.value(TAP_LISTEN, DEFAULT_TAP_LISTEN) or DEFAULT_TAP_LISTEN)

    @tap_listen.setter
    def tap_listen(self, text: str) -> None:
        self.qsettings.setValue(TAP_LISTEN, text)

    @property
    def tap_upstreams(self) -> str:
        """The tap's upstreams as typed: `--upstream` values separated by spaces."""
        return str(self.qsettings.value(TAP_UPSTREAMS, DEFAULT_TAP_UPSTREAMS) or DEFAULT_TAP_UPSTREAMS)

    @tap_upstreams.setter
    def tap_upstreams(self, text: str) -> None:
        self.qsettings.setValue(TAP_UPSTREAMS, text)

    @property
    def tap_allow_insecure(self) -> bool:
        return str(self.qsettings.value(TAP_ALLOW_INSECURE, "false")).lower() == "true"

    @tap_allow_insecure.setter
    def tap_allow_insecure(self, on: bool) -> None:
        self.qsettings.setValue(TAP_ALLOW_INSECURE, "true" if on else "false")

    # -- View ----------------------------------------------------------------------------------------------
    @property
    def theme(self) -> str:
        return str(self.qsettings.value(THEME, DEFAULT_THEME) or DEFAULT_THEME)

    @theme.setter
    def theme(self, name: str) -> None:
        self.qsettings.setValue(THEME, name)

    @property
    def font_size(self) -> int:
        """Points; 0 for the platform's default size."""
        try:
            return int(self.qsettings.value(FONT_SIZE, 0) or 0)
        except (TypeError, ValueError):
            return 0

    @font_size.setter
    def font_size(self, points: int) -> None:
        self.qsettings.setValue(FONT_SIZE, max(0, int(points)))

    # -- File > Recent files -------------------------------------------------------------------------------
    @property
    def recent_files(self) -> list[str]:
        """The files last opened or exported, newest first."""
        v = self._json(RECENT_FILES, [])
        return [str(x) for x in v] if isinstance(v, list) else []

    def add_recent(self, path: str) -> None:
        """Put `path` first in the recent files (once), keeping at most MAX_RECENT."""
        self._set_json(RECENT_FILES, ([path] + [p for p in self.recent_files if p != path])[:MAX_RECENT])

    # -- the prompt and the provider picker ------------------------------------------------------------------
    @property
    def prompt_state(self) -> dict:
        """What `PromptPanel.state()` gave at the last send or close ({} when none)."""
        v = self._json(PROMPT_STATE, {})
        return v if isinstance(v, dict) else {}

    @prompt_state.setter
    def prompt_state(self, state: dict) -> None:
        self._set_json(PROMPT_STATE, state)

    @property
    def selected_providers(self) -> list[str] | None:
        """The names of the checked providers (None: never saved, so the window's default applies)."""
        v = self._json(SELECTED_PROVIDERS, None)
        return [str(x) for x in v] if isinstance(v, list) else None

    @selected_providers.setter
    def selected_providers(self, names: list[str]) -> None:
        self._set_json(SELECTED_PROVIDERS, list(names))

    @property
    def scenario(self) -> str | None:
        """The demo providers' emulator scenario (None: never chosen)."""
        v = self.qsettings.value(SCENARIO)
        return str(v) if v else None

    @scenario.setter
    def scenario(self, name: str) -> None:
        self.qsettings.setValue(SCENARIO, name)

    # -- the window's layout -----------------------------------------------------------------------------------
    @property
    def geometry(self) -> QByteArray | None:
        return self._bytes(GEOMETRY)

    @geometry.setter
    def geometry(self, data: QByteArray) -> None:
        self.qsettings.setValue(GEOMETRY, data)

    @property
    def window_state(self) -> QByteArray | None:
        return self._bytes(WINDOW_STATE)

    @window_state.setter
    def window_state(self, data: QByteArray) -> None:
        self.qsettings.setValue(WINDOW_STATE, data)

    @property
    def main_split(self) -> QByteArray | None:
        return self._bytes(MAIN_SPLIT)

    @main_split.setter
    def main_split(self, data: QByteArray) -> None:
        self.qsettings.setValue(MAIN_SPLIT, data)

    @property
    def prompt_collapsed(self) -> bool:
        """The prompt area hidden down to its Send / Stop bar (View > Prompt area)."""
        return str(self.qsettings.value(PROMPT_COLLAPSED, "false")).lower() in ("true", "1")

    @prompt_collapsed.setter
    def prompt_collapsed(self, on: bool) -> None:
        self.qsettings.setValue(PROMPT_COLLAPSED, "true" if on else "false")

    def sync(self) -> None:
        self.qsettings.sync()
