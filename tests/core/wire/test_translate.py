"""Translating recordings between wire formats: decode with the core, re-encode with the emulator's encoders."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.wire.pipeline import decode_bytes
from core.wire.translate import translate_bytes

from core.wire.formats import FORMATS
from tests.corpus import ROOT

CORPUS = ROOT.parent / "shared" / "corpus"


def corpus_files() -> list[tuple[str, Path]]:
    if not CORPUS.is_dir():
        return []
    out = []
    for fmt in FORMATS:
        out += [(fmt, p) for p in sorted((CORPUS / fmt).glob("*.sse"))]
    for p in sorted((CORPUS / "openai-compatible").glob("*.sse")):
        exp = p.with_name(p.name[:-4] + ".expected.json")
        fmt = json.loads(exp.read_text())["wire_format"] if exp.exists() else "openai-chat"
        out.append((fmt, p))
    return out


def summary(result: dict, target: str | None = None) -> dict:
    """What every format can carry: text per kind, tool calls by name and parsed arguments, finish, usage."""
    blocks = [b for b in result["blocks"] if b["choice"] == 0 and b["type"] != "other" and not b["redacted"]]
    per_kind: dict[str, str] = {}
    calls = []
    for b in blocks:
        kind = b["type"]
        if kind == "refusal" and target in ("anthropic", "gemini"):
            kind = "text"
        if kind == "tool_call":
            try:
                args = json.loads(b["arguments"] or "{}")
            except ValueError:
                args = b["arguments"]
            if target == "gemini" and not isinstance(args, dict):
                args = {}
            calls.append((b["name"], args))
        elif b["text"]:
            per_kind[kind] = per_kind.get(kind, "") + b["text"]
    u = result["usage"]
    return {"text": per_kind, "calls": calls, "finish": result["finish_reason"]["canonical"],
            "input": u["input_tokens"] or 0, "output": u["output_tokens"] or 0,
            "error": (result["error"] or {}).get("message")}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("src,path", corpus_files(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_recording_translates_to_every_format(src, path):
    data = path.read_bytes()
    original = decode_bytes(src, data).result()
    for dst in FORMATS:
        out, notes = translate_bytes(src, dst, data)
        got = decode_bytes(dst, out).result()
        want = summary(original, dst)
        have = summary(got, dst)
        if want["finish"] in ("error", "other"):
            want["finish"] = "stop"
        if dst in ("openai-responses", "gemini") and want["finish"] == "stop" and want["calls"]:
            want["finish"] = "tool_calls"       # these formats have no separate stop for tool calls
        if dst in ("openai-responses",) and want["finish"] == "tool_calls" and not want["calls"]:
            want["finish"] = "stop"
        if not original["terminated"] and original["error"] is None and dst in ("openai-responses", "gemini"):
            want["finish"] = None               # their finish reason rides on the end marker itself
        if original["error"] is not None:
            want["finish"] = "error" if dst == "openai-responses" else None   # response.failed; else none
            want["input"], want["output"] = have["input"], have["output"]     # the error ends the stream
        assert have == want, (dst, notes)
        if original["usage"]["cache_write_tokens"] and dst != "anthropic":
            assert any("cache-write" in n for n in notes)
        sigs = [b for b in original["blocks"] if b["signature"]]
        if sigs and dst in ("openai-chat", "openai-responses"):
            assert any("signature" in n for n in notes)
        if dst == "gemini":   # gemini carries every signature where it was
            assert [b["signature"] for b in got["blocks"] if b["signature"]] == [b["signature"] for b in sigs]
        carried = [b for b in got["blocks"] if b["signature"]]
        # a signature carried to another API is said to be that other API's to reject in a history
        assert any("would reject them" in n for n in notes) == bool(carried and dst != src), (dst, notes)


def test_translate_command(tmp_path):
    src = CORPUS / "anthropic" / "thinking-signature-sonnet-4.5.sse"
    if not src.exists():
        pytest.skip("../shared/corpus is absent")
    r = subprocess.run([sys.executable, "main.py", "translate", "--from", "anthropic", "--to", "openai-chat",
                        str(src)], cwd=ROOT, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"note: 1 signature(s): openai-chat cannot carry them: dropped" in r.stderr
    got = decode_bytes("openai-chat", r.stdout).result()
    want = decode_bytes("anthropic", src.read_bytes()).result()
    assert [(b["type"], b["text"]) for b in got["blocks"]] == [(b["type"], b["text"]) for b in want["blocks"]]
    assert r.stdout.endswith(b"data: [DONE]\n\n")
    out = tmp_path / "x.sse"
    r = subprocess.run([sys.executable, "main.py", "translate", "--from", "openai-chat", "--to", "gemini", "-o",
                        str(out), "-"], cwd=ROOT, input=r.stdout, capture_output=True, timeout=60)
    assert r.returncode == 0 and out.read_bytes().startswith(b"data: {\"candidates\": ")
    r = subprocess.run([sys.executable, "main.py", "translate", "--from", "nope", "--to", "gemini", str(src)],
                       cwd=ROOT, capture_output=True, timeout=60)
    assert r.returncode == 2 and b"unknown format" in r.stderr
