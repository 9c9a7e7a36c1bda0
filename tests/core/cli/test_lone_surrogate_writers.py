"""A lone surrogate escape (`\\ud800`) in a frame, or in a capture's own records, reaches no writer: replay
--headless prints it, and every export (.jsonl, .har, .md, .yaml, .sse) writes and reads back, where each one
raised UnicodeEncodeError (the wire layer's parser now reads it as U+FFFD: see tests/core/wire/
test_lone_surrogates.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.corpus import ROOT

BODY = (b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a\\ud800b"}}]}\n\n'
        b'data: {"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"\\udfff":"\\udc00"}}\n\n'
        b"data: [DONE]\n\n")


def replay(path) -> list[dict]:
    p = subprocess.run([sys.executable, str(ROOT / "main.py"), "replay", "--headless", "--format", "openai-chat",
                        str(path)], capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")[-400:]
    return [json.loads(line) for line in p.stdout.decode("utf-8").splitlines()]


def test_replay_headless_prints_a_stream_with_a_lone_surrogate(tmp_path):
    f = tmp_path / "s.sse"
    f.write_bytes(BODY)
    [out] = replay(f)
    assert out["blocks"][0]["text"] == "a\ufffdb"
    assert out["usage"]["raw"]["\ufffd"] == "\ufffd"
    assert [d["code"] for d in out["diagnostics"]].count("lone-surrogate") == 2


@pytest.mark.parametrize("ext", [".jsonl", ".har", ".md", ".yaml", ".sse"])
def test_every_export_of_such_a_run_writes_and_reads_back(tmp_path, ext):
    from core.live.capture import export
    from core.live.importers import read_capture

    f = tmp_path / "s.sse"
    f.write_bytes(BODY)
    runs = read_capture(f, format="openai-chat").runs
    for r in runs:
        r.http_status = 200      # (as a live run has: a cassette holds only exchanges that got a response)
    path = export(runs, tmp_path / f"out{ext}")
    text = path.read_bytes().decode("utf-8")
    if ext == ".sse":
        assert path.read_bytes() == BODY           # the raw bytes as received
    if ext == ".md":
        assert "a\ufffdb" in text
        return
    [again] = replay(path)
    assert again["blocks"][0]["text"] == "a\ufffdb"


def test_a_capture_whose_records_hold_a_lone_surrogate_replays(tmp_path):
    from core.live.capture import CaptureAppender
    from core.live.importers import read_capture

    f = tmp_path / "s.sse"
    f.write_bytes(BODY)
    app = CaptureAppender(tmp_path / "tap.jsonl")     # (the tap's appender)
    for r in read_capture(f, format="openai-chat").runs:
        app.add(r)
    path = app.close()
    # an edited (or foreign) capture: escapes in the run record itself
    text = path.read_text("utf-8").replace('"name":"', '"name":"\\ud800', 1)
    assert "\\ud800" in text
    path.write_text(text, "utf-8")
    [out] = replay(path)
    assert out["provider"].startswith("\ufffd")
    assert out["blocks"][0]["text"] == "a\ufffdb"
