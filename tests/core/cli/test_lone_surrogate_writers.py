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


def test_a_har_whose_own_json_holds_a_lone_surrogate_opens(tmp_path):
    """The escape in the HAR document itself (a body stored as text): the whole file was unreadable."""
    entry = {"startedDateTime": "2026-01-01T00:00:00Z", "time": 1,
             "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions", "headers": [],
                         "postData": {"mimeType": "application/json", "text": '{"model": "mX", "stream": true}'}},
             "response": {"status": 200, "statusText": "OK",
                          "headers": [{"name": "content-type", "value": "text/event-stream"}],
                          "content": {"mimeType": "text/event-stream", "text": BODY.decode()}},
             "timings": {"wait": 1, "receive": 1}}
    text = json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [entry]}})
    assert "\\\\ud800" in text
    f = tmp_path / "s.har"
    f.write_text(text.replace("\\\\ud800", "\\ud800").replace("mX", "m\\udfff"))   # (escapes of the HAR's own)
    [out] = replay(f)
    assert out["blocks"][0]["text"] == "a\ufffdb"


def test_replay_headless_prints_standard_json_for_a_peers_nan(tmp_path):
    f = tmp_path / "nan.sse"
    f.write_bytes(b'data: {"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":NaN,'
                  b'"completion_tokens":Infinity}}\n\ndata: [DONE]\n\n')
    p = subprocess.run([sys.executable, str(ROOT / "main.py"), "replay", "--headless", "--format", "openai-chat",
                        str(f)], capture_output=True, cwd=ROOT, timeout=60, text=True)
    assert p.returncode == 0, p.stderr
    bad = []
    [json.loads(line, parse_constant=bad.append) for line in p.stdout.splitlines()]
    assert p.stdout.strip() and not bad
