"""Starting the GUI: the QApplication, the qasync event loop, the in-process emulator for the demo providers,
and the `--send` / `--screenshot` options (`python main.py [--send TEXT] [--screenshot PATH]`).

`run_gui(args)` returns the process exit status: 0 normally; with `--screenshot`, 0 when the PNG was saved
(after every pane finished), 1 when it could not be. `run_gui_replay(path, speed)` opens the window on a
recording (`main.py replay FILE`: .jsonl, .har, .sse, .yaml; `--format` overrides the wire format); it honours
`--screenshot` too.
"""
from __future__ import annotations

import asyncio
import os
import sys

SCREENSHOT_TIMEOUT_S = 180.0   # --screenshot gives up waiting for the panes after this long (and saves anyway)


ICON = "streamscope.svg"   # in resources/, beside the style sheet


def app_icon():
    from PySide6.QtGui import QIcon

    from gui.theme import RESOURCES

    return QIcon(str(RESOURCES / ICON))


def apply_icon(app) -> None:
    """The window icon, set once on the application: the window and every dialog take it from there."""
    app.setWindowIcon(app_icon())


def _start_or_explain(make):
    """`make()` (which builds the QApplication), or exit 2 with the system-package hint when Qt cannot start.

    Qt ends the process with abort() when no platform plugin loads (a qFatal: no exception reaches Python, and
    the exit status is SIGABRT's). Its message handler is called with that fatal message first, so for the
    duration of `make()` one handler prints each Qt message as Qt's default one would, and on the fatal one
    adds the hint and exits before the abort.
    """
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    from core.cli import qt_system

    def on_message(kind, context, message) -> None:
        category = context.category if context.category not in (None, "", "default") else ""
        sys.stderr.write(f"{category}: {message}\n" if category else f"{message}\n")
        if kind == QtMsgType.QtFatalMsg:
            sys.stderr.write("\n" + qt_system.hint("Qt could not load its platform plugin") + "\n")
            sys.stderr.flush()
            os._exit(2)

    previous = qInstallMessageHandler(on_message)
    try:
        return make()
    finally:
        qInstallMessageHandler(previous)


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
    """Start the window; honour `--send` and `--screenshot` (see the module docstring)."""
    send = getattr(args, "send", None)
    shot = getattr(args, "screenshot", None)
    config = getattr(args, "config", None)
    read_timeout = getattr(args, "read_timeout", None)   # None: the window's own (Run > Timeouts…, persisted)

    async def main(app) -> int:
        from PySide6.QtCore import QTimer

        from core.live.config import demo_providers

        from gui.main_window import MainWindow

        server, base = start_emulator()
        providers, err = load_configured(config)
        window = MainWindow(providers, config_path=config, demo_providers=demo_providers(base) if base else [],
                            read_timeout=read_timeout)
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

    return _run(main)


def run_gui_replay(path, speed: float | None = 1.0, args=None) -> int:
    """`main.py replay FILE` without --headless: open the window and replay the recording into it."""
    config = getattr(args, "config", None)
    shot = getattr(args, "screenshot", None)

    async def main(app) -> int:
        from core.live.capture import CaptureError

        from gui.main_window import MainWindow

        providers, _err = load_configured(config)
        window = MainWindow(providers, config_path=config)
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

    return _run(main)
