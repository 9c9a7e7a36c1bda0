"""The shared recorded-stream corpus (`../shared/corpus`), read in place and never copied into the project.

Tests skip the corpus cases when the folder (or the shared check it is compared with) is absent.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]      # the project root (where main.py is)
CORPUS = ROOT.parent / "shared" / "corpus"
CHECKER = CORPUS.parent / "checks" / "corpus_check.py"


def expected(path: Path) -> dict:
    """The ground truth beside a recording."""
    return json.loads(path.with_name(path.name[:-4] + ".expected.json").read_text())


def corpus_files(wire_format: str) -> list[Path]:
    """Every recording whose expected result says it is in `wire_format` (any folder), sorted."""
    if not CORPUS.is_dir():
        return []
    return [f for f in sorted(CORPUS.glob("*/*.sse"))
            if f.with_name(f.name[:-4] + ".expected.json").is_file() and expected(f)["wire_format"] == wire_format]


def load_compare():
    """`compare(fmt, expected, got)` from the shared acceptance check, so tests judge as it does."""
    if not CHECKER.is_file():
        pytest.skip("the shared corpus check is absent")
    spec = importlib.util.spec_from_file_location("corpus_check", CHECKER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.compare


def decode_recording(wire_format: str, path: Path) -> tuple[dict, dict]:
    """(expected, got) for one recording: decoded whole, judged as the shared check judges it, and decoded again
    in 1- and 7-byte pieces, which must give the very same result."""
    from core.wire.pipeline import decode_bytes

    exp = expected(path)
    data = path.read_bytes()
    got = decode_bytes(wire_format, data).result()
    assert load_compare()(wire_format, exp, got) == []
    assert decode_bytes(wire_format, data, 1).result() == got
    assert decode_bytes(wire_format, data, 7).result() == got
    return exp, got
