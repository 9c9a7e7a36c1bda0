"""The app as a user installs it: a wheel built from the checkout, installed with its dependencies into a fresh
venv, and run as the `streamscope` command from a folder outside the checkout, so nothing comes from the tree.

One test, in steps: building and installing take most of its time, and xdist could hand separate tests to
separate workers, each building again.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import httpx
import pytest

from core.wire.pipeline import decode_bytes
from tests.core.cli.test_emulate import Emulate
from tests.corpus import CORPUS, ROOT, expected

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# what a clean clone does not have: a build in the checkout itself would leave build/ there, and a stale build/
# can carry modules deleted since into the wheel
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis",
                                    ".pytest_cache")
CHAT_BODY = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n'
# run by the installed Python: where the code came from, and whether the resources and the icon are there
PROBE = """
import json, sys
import core, gui, main, resources
from gui.app import _qt_app
from gui.theme import RESOURCES
img = _qt_app().windowIcon().pixmap(32, 32).toImage()
print(json.dumps({"files": [m.__file__ for m in (core, gui, main, resources)],
                  "style": (RESOURCES / "style.qss").is_file(),
                  "icon_pixels": sum(img.pixelColor(x, y).alpha() > 0 for x in range(32) for y in range(32))}))
"""


def run(*argv, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def pip(*args, **kw) -> subprocess.CompletedProcess:
    # the running interpreter's pip, with its usual cache and index settings
    return run(sys.executable, "-m", "pip", "--disable-pip-version-check", *args, **kw)


def build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)
    pip("wheel", "--no-deps", "-q", "-w", tmp / "dist", src)
    (wheel,) = (tmp / "dist").glob("streamscope-*.whl")
    return wheel


def check_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    source = {p.relative_to(ROOT).as_posix() for top in ("core", "gui", "resources") for p in (ROOT / top).rglob("*")
              if p.suffix in (".py", ".qss", ".svg") and "__pycache__" not in p.parts}
    assert {"core/wire/encoders/openai_chat.py", "resources/style.qss", "resources/streamscope.svg"} <= source
    assert not (source | {"main.py"}) - names, sorted((source | {"main.py"}) - names)
    assert not [n for n in names if n.startswith(("tests/", "bench/", "docs/"))]
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "streamscope = main:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()


def install(wheel: Path, tmp: Path) -> Path:
    """A fresh venv with the wheel and its dependencies; its bin/ folder. (No pip of its own: the running pip
    installs into it through --python, which saves bootstrapping one.)"""
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    pip("--python", python, "install", "-q", "--no-compile", wheel)
    return env_dir / "bin"


def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    wheel = build_wheel(tmp_path)
    check_contents(wheel)
    bin_dir = install(wheel, tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(outside), XDG_CONFIG_HOME=str(outside / "config"),
               PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    streamscope = bin_dir / "streamscope"

    # the code, the style sheet and the icon come from the venv
    probe = json.loads(run(bin_dir / "python", "-c", PROBE, cwd=outside, env=env).stdout)
    site = str(bin_dir.parent)
    assert all(f.startswith(site) for f in probe["files"]), probe["files"]
    assert probe["style"] and probe["icon_pixels"] > 32 * 32 // 2, probe

    # decode: a stream on stdin, and a corpus recording when the corpus is there
    out = run(streamscope, "decode", "--format", "openai-chat", "-", input=CHAT_BODY.decode(), cwd=outside, env=env)
    assert json.loads(out.stdout) == decode_bytes("openai-chat", CHAT_BODY).result()
    recordings = sorted(CORPUS.glob("*/*.sse")) if CORPUS.is_dir() else []
    if recordings:
        rec = recordings[0]
        fmt = expected(rec)["wire_format"]
        out = run(streamscope, "decode", "--format", fmt, rec, cwd=outside, env=env)
        assert json.loads(out.stdout) == decode_bytes(fmt, rec.read_bytes()).result()

    # emulate: the listening line first, then a stream through the installed encoders, then a clean Ctrl+C
    emu = Emulate("--port", "0", command=(str(streamscope),), cwd=outside, env=env)
    try:
        r = httpx.post(emu.base + "/v1/chat/completions", headers={"Authorization": "Bearer k"}, timeout=30,
                       json={"model": "text", "messages": [{"role": "user", "content": "hi"}], "stream": True})
        assert r.status_code == 200 and r.content.endswith(b"data: [DONE]\n\n")
        rc, err, _took = emu.interrupt()
        assert rc == 0 and b"Traceback" not in err, err
    finally:
        emu.kill()

    # the window, offscreen, on the demo providers
    shot = outside / "out.png"
    run(streamscope, "--send", "Hello", "--screenshot", shot, cwd=outside, env=env)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
