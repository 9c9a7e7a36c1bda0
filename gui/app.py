"""Starting the GUI: the QApplication, the qasync event loop, the in-process emulator for the demo providers,
and the options of a scripted start (`python main.py [--send TEXT] [--screenshot PATH] [--scenario NAME]
[--size WxH] [--theme light|dark]`).

`run_gui(args)` returns the process exit status: 0 normally; with `--screenshot`, 0 when the PNG was saved
(after every pane finished), 1 when it could not be; 2 for a bad option. `run_gui_replay(path, speed)` opens
the window on a recording (`main.py replay FILE`: .jsonl, .har, .sse, .yaml; `--format` overrides the wire
format); it honours `--screenshot` too.

A `--screenshot` run is scripted: it starts from the defaults, not from what the window remembers (the last
scenario, the checked providers, the theme, the prompt), and saves nothing back; `--scenario`, `--theme` and
`--size` say otherwise. Without `--screenshot` the window is the user's: it starts as they left it, and the
options given win for this start. Qt's "This plugin does not support propagateSizeHints()" (the offscreen
platform's, on every resize) is not printed.
"""
from __future__ import annotations

import asyncio
import os
import sys

SCREENSHOT_TIMEOUT_S = 180.0   # --screenshot gives up waiting for the panes after this long (and saves anyway)
# Qt messages that say nothing to the user (the offscreen platform prints this one on every window resize)
QUIET_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)


ICON = "streamscope.svg"   # in resources/, beside the style sheet


def app_icon():
    from PySide6.QtGui import QIcon

    from gui.theme import RESOURCES

    return QIcon(str(RESOURCES / ICON))


def apply_icon(app) -> None:
    """The window icon, set once on the application: the window and every dialog take it from there."""
    app.setWindowIcon(app_icon())


def _message_handler(starting: bool):
    """A Qt message handler that prints each message as Qt's default one would, except `QUIET_QT_MESSAGES`;
    while `starting`, a fatal message (no platform plugin) adds the system-package hint and exits 2."""
    from PySide6.QtCore import QtMsgType

    from core.cli import qt_system

    def on_message(kind, context, message) -> None:
        if message in QUIET_QT_MESSAGES:
            return
        category = context.category if context.category not in (None, "", "default") else ""
        sys.stderr.write(f"{category}: {message}\n" if category else f"{message}\n")
        if kind == QtMsgType.QtFatalMsg and starting:
            sys.stderr.write("\n" + qt_system.hint("Qt could not load its platform plugin") + "\n")
            sys.stderr.flush()
            os._exit(2)

    return on_message


def _start_or_explain(make):
    """`make()` (which builds the QApplication), or exit 2 with the system-package hint when Qt cannot start.

    Qt ends the process with abort() when no platform plugin loads (a qFatal: no exception reaches Python, and
    the exit status is SIGABRT's). Its message handler is called with that fatal message first, so for the
    duration of `make()` one handler prints each Qt message as Qt's default one would, and on the fatal one
    adds the hint and exits before the abort. Afterwards the handler stays, without the hint.
    """
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(_message_handler(starting=True))
    try:
        return make()
    finally:
        qInstallMessageHandler(_message_handler(starting=False))


def _qt_app():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = _start_or_explain(lambda: QApplication(sys.argv[:1]))
    app.setOrganizationName("StreamScope")
    app.setApplicationName("StreamScope")
    app.setApplicationDisplayName("StreamScope")
    apply_icon(app)
    app.setQuitOnLastWindowClosed(False)   # the asyncio main() ends the loop, after its clean-up
    return app


def start_emulator():
    """Start the built-in emulator in-process; (server, base URL), or (None, None) when it is unavailable."""
    try:
        from core.servers.emulator.server import EmulatorServer
    except ImportError:
        return None, None
    server = EmulatorServer()
    base = server.start()   # synchronous: returns once the server's thread accepts connections
    return server, base.rstrip("/")


def stop_emulator(server) -> None:
    if server is not None:
        try:
            server.stop()
        except Exception:  # noqa: BLE001 - shutting down
            pass


def load_configured(config_path):
    """(providers, error message or None) from the providers file."""
    from core.live.config import ConfigError, load_providers

    try:
        return load_providers(config_path), None
    except ConfigError as exc:
        return [], str(exc)


class ScriptedStart:
    """What the command line asks of the window: the scripted defaults (`--screenshot`) and the options."""

    def __init__(self, args) -> None:
        self.shot = getattr(args, "screenshot", None)
        self.scenario = getattr(args, "scenario", None)
        self.size = getattr(args, "size", None)            # (width, height) or None
        self.theme = getattr(args, "theme", None)
        self._tmp = None

    def check(self) -> str | None:
        """What is wrong with the options (None: nothing)."""
        from core.servers.emulator.scenarios import SCENARIOS

        if self.scenario is not None and self.scenario not in SCENARIOS:
            return f"--scenario {self.scenario!r} is not one of: {', '.join(SCENARIOS)}"
        return None

    def settings(self):
        """The QSettings the window uses: the user's, or for a `--screenshot` run a fresh, throwaway file."""
        if not self.shot:
            return None
        import tempfile

        from PySide6.QtCore import QSettings

        self._tmp = tempfile.TemporaryDirectory(prefix="streamscope-scripted-")
        return QSettings(os.path.join(self._tmp.name, "settings.ini"), QSettings.IniFormat)

    def apply(self, window) -> None:
        """The options that win over the window's settings for this start."""
        if self.theme:
            window.set_theme(self.theme)
        if self.scenario:
            window.scenario.setCurrentText(self.scenario)
        if self.size:   # exactly this size, even past the screen (an offscreen screenshot of a larger one)
            window.keep_on_screen = False
            window.resize(*self.size)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


class _Session:
    """One window's life on the loop: shows it, takes the screenshot when asked, and ends when it closes."""

    def __init__(self, app, window, shot=None) -> None:
        self.app = app
        self.window = window
        self.shot = shot
        self.code = 0
        self.closed = asyncio.Event()
        app.lastWindowClosed.connect(self.closed.set)
        window.show()

    def screenshot_when_finished(self, timeout_s: float = SCREENSHOT_TIMEOUT_S) -> None:
        from PySide6.QtCore import QTimer

        self.window.allFinished.connect(lambda: QTimer.singleShot(150, self.save_and_quit))
        QTimer.singleShot(int(timeout_s * 1000), self.save_and_quit)

    def save_and_quit(self) -> None:
        if self.closed.is_set():
            return
        try:
            self.app.processEvents()
            ok = self.window.grab().save(os.fspath(self.shot))
        except Exception as exc:  # noqa: BLE001
            print(f"screenshot: {exc}", file=sys.stderr)
            ok = False
        if not ok:
            print(f"screenshot: cannot write {self.shot}", file=sys.stderr)
        self.code = 0 if ok else 1
        self.window.close()
        self.closed.set()

    async def finish(self) -> int:
        await self.closed.wait()
        await self.window.aclose()
        return self.code


def _run(main_coro_factory) -> int:
    import qasync

    from gui.qtcompat import MainThreadGC

    app = _qt_app()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = MainThreadGC()   # the emulator's thread must never collect Qt objects
    try:
        with loop:
            return loop.run_until_complete(main_coro_factory(app))
    finally:
        collector.stop()


def run_gui(args) -> int:
    """Start the window; honour `--send`, `--screenshot` and the other start options (the module docstring)."""
    send = getattr(args, "send", None)
    shot = getattr(args, "screenshot", None)
    config = getattr(args, "config", None)
    read_timeout = getattr(args, "read_timeout", None)   # None: the window's own (Run > Timeouts…, persisted)
    start = ScriptedStart(args)
    problem = start.check()
    if problem:
        print(f"streamscope: {problem}", file=sys.stderr)
        return 2

    async def main(app) -> int:
        from PySide6.QtCore import QTimer

        from core.live.config import demo_providers

        from gui.main_window import MainWindow

        server, base = start_emulator()
        providers, err = load_configured(config)
        window = MainWindow(providers, config_path=config, demo_providers=demo_providers(base) if base else [],
                            read_timeout=read_timeout, settings=start.settings())
        start.apply(window)
        session = _Session(app, window, shot)
        if err:
            window.statusBar().showMessage(f"Providers file: {err}")
        if shot:
            if send:
                session.screenshot_when_finished()
            else:
                QTimer.singleShot(300, session.save_and_quit)
        if send:
            window.prompt.prompt.setPlainText(send)

            def do_send() -> None:
                if not window.send() and shot:
                    session.save_and_quit()

            QTimer.singleShot(0, do_send)
        try:
            return await session.finish()
        finally:
            stop_emulator(server)

    try:
        return _run(main)
    finally:
        start.close()


def run_gui_replay(path, speed: float | None = 1.0, args=None) -> int:
    """`main.py replay FILE` without --headless: open the window and replay the recording into it."""
    config = getattr(args, "config", None)
    shot = getattr(args, "screenshot", None)
    start = ScriptedStart(args)

    async def main(app) -> int:
        from core.live.capture import CaptureError

        from gui.main_window import MainWindow

        providers, _err = load_configured(config)
        # (no demo providers here: the window keeps their saved checks, see MainWindow._save_prompt_settings)
        window = MainWindow(providers, config_path=config, settings=start.settings())
        start.apply(window)
        session = _Session(app, window, shot)
        try:
            window.open_capture(path, speed=speed, format=getattr(args, "format", None))
        except (OSError, CaptureError, ValueError) as exc:
            print(f"replay: {exc}", file=sys.stderr)
            window.close()
            return 2
        for s in window.last_skipped:
            print(f"replay: skipped {s.entry}: {s.why}", file=sys.stderr)
        if shot:
            session.screenshot_when_finished()
        return await session.finish()

    try:
        return _run(main)
    finally:
        start.close()
