"""Startup benchmark: the time from `python main.py` to the first painted window.

    QT_QPA_PLATFORM=offscreen python bench/startup_bench.py [--runs 5]

Each run starts a fresh interpreter on `main.py` (the GUI on its built-in default: the emulator started
in-process, the demo providers), exactly as a user does, with one addition made from outside the app: a
`sitecustomize` on the child's path installs an application event filter that prints the moment the main
window receives its first paint event, then quits. The parent measures from just before it spawns the child
to the line, so interpreter start, imports, the emulator and the first layout all count. For comparison in
the same run it also times a bare interpreter (`python -c pass`) and one that only imports PySide6's
widgets and shows an empty QMainWindow: the first is the floor no app beats, the second what Qt itself costs.

The last line printed is:

    startup: first_paint_ms p50=X max=Y  bare_python_ms=A  empty_qt_window_ms=B  ratio_to_empty_qt=R

Target (issue 12): first paint under 1.5 s. Exit status 0 when every run painted, else 1.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# installed into the child as sitecustomize: report the first paint of a QMainWindow and leave
HOOK = r'''
import os, sys, time
def _install():
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    class FirstPaint(QObject):
        done = False
        def eventFilter(self, obj, event):
            if not self.done and event.type() == QEvent.Paint and isinstance(obj, QMainWindow):
                self.done = True
                sys.stdout.write("painted\n")
                sys.stdout.flush()
                QTimer.singleShot(0, lambda: os._exit(0))   # (no clean-up: only the first paint is measured)
            return False

    original = QApplication.__init__
    def init(self, *a, **k):
        original(self, *a, **k)
        self._first_paint = FirstPaint()
        self.installEventFilter(self._first_paint)
    QApplication.__init__ = init
_install()
'''

EMPTY_QT = ("from PySide6.QtWidgets import QApplication, QMainWindow\nimport sys\n"
            "app = QApplication(sys.argv[:1]); w = QMainWindow(); w.resize(1280, 800); w.show()\n"
            "from PySide6.QtCore import QTimer\nQTimer.singleShot(0, app.quit)\napp.exec()\n")


def _timed(cmd: list[str], env: dict, expect: str | None) -> float | None:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env)
    if expect is None:
        proc.wait(timeout=120)
        return (time.perf_counter() - t0) * 1000
    line = proc.stdout.readline()
    took = (time.perf_counter() - t0) * 1000
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    return took if line.strip() == expect else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "sitecustomize.py").write_text(HOOK)
        env_app = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")])),
                       XDG_CONFIG_HOME=str(Path(tmp, "config")))   # a new user's settings, not yours
        _timed([sys.executable, str(ROOT / "main.py")], env_app, "painted")   # warm the file cache once
        paints = [_timed([sys.executable, str(ROOT / "main.py")], env_app, "painted") for _ in range(args.runs)]
    bare = statistics.median(_timed([sys.executable, "-c", "pass"], env, None) for _ in range(args.runs))
    empty = statistics.median(_timed([sys.executable, "-c", EMPTY_QT], env, None) for _ in range(args.runs))
    ok = [p for p in paints if p is not None]
    print(f"# startup_bench: Python {sys.version.split()[0]}, {args.runs} runs, QT_QPA_PLATFORM="
          f"{env['QT_QPA_PLATFORM']}; milliseconds from spawning `python main.py` to its window's first paint")
    for i, p in enumerate(paints, 1):
        print(f"run {i}: {'did not paint' if p is None else f'{p:.0f} ms'}")
    if not ok:
        print("startup: no run painted")
        return 1
    p50 = statistics.median(ok)
    print(f"startup: first_paint_ms p50={p50:.0f} max={max(ok):.0f}  bare_python_ms={bare:.0f}  "
          f"empty_qt_window_ms={empty:.0f}  ratio_to_empty_qt={p50 / empty:.2f}")
    return 0 if len(ok) == len(paints) else 1


if __name__ == "__main__":
    sys.exit(main())
