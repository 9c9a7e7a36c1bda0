"""The layer contracts in pyproject.toml ([tool.importlinter]) hold, and they really catch a forbidden import."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import ROOT

pytest.importorskip("importlinter")


def _lint(root: Path) -> subprocess.CompletedProcess:
    # lint-imports reads pyproject.toml from the working directory and imports the packages from sys.path
    cli = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(cli), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_the_layer_contracts_are_kept():
    p = _lint(ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 broken" in p.stdout, p.stdout


@pytest.mark.slow
@pytest.mark.parametrize("module, line, contract", [
    ("core/wire/sse.py", "import httpx", "sans-IO"),
    ("core/wire/reply.py", "from core.live import config", "Layers"),
    ("core/live/capture.py", "import PySide6", "Only gui imports Qt"),
    ("core/servers/emulator/server.py", "from core.cli import run", "Layers"),
    ("core/cli/run.py", "import gui.app", "Layers"),
    ("core/live/request.py", "import httpx", "httpx only in the transport"),
    ("core/servers/tap/app.py", "import httpx", "httpx only in the transport"),
    ("core/live/importers.py", "import httpx", "httpx only in the transport"),
])
def test_a_forbidden_import_breaks_a_contract(tmp_path, module, line, contract):
    tree = tmp_path / "tree"
    for part in ("core", "gui", "pyproject.toml"):
        src = ROOT / part
        (shutil.copytree(src, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
         if src.is_dir() else shutil.copy(src, tree / part))
    target = tree / module
    target.write_text(target.read_text() + f"\n{line}  # planted by the test\n")
    p = _lint(tree)
    assert p.returncode != 0, p.stdout
    broken = p.stdout.split("Broken contracts")[-1]
    assert contract in broken, broken
