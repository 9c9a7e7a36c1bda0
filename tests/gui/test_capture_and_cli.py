"""Export and replay from the window against the headless path; model output shown literally; the CLI's
--send / --screenshot offscreen."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from PySide6.QtCore import Qt

from tests.gui.conftest import run_until
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)
from tests.corpus import ROOT



def same_export(a: Path, b: Path) -> bool:
    """Two exports of the same runs are identical but for the moment they were written."""
    import re

    norm = lambda p: re.sub(rb'"created": ?"[^"]*"', b'"created":""', p.read_bytes())  # noqa: E731
    return norm(a) == norm(b)
HTML = "<b>bold</b><img src=x>"


def test_export_from_the_window_equals_the_headless_export(window, loop, tmp_path):
    from core.live.capture import export

    send(window, loop, "What's the weather in Paris?", scenario="tool-call")
    for ext in (".jsonl", ".har", ".md"):
        mine = window.export_runs(tmp_path / f"window{ext}")
        theirs = export(window.runs(), tmp_path / f"headless{ext}")
        assert same_export(mine, theirs), ext
    # only what File > Open reads is a recent file (a .md report cannot be opened)
    assert str(tmp_path / "window.md") not in window.recent_files()
    assert str(tmp_path / "window.jsonl") in window.recent_files()
    assert str(tmp_path / "window.har") in window.recent_files()


def test_replay_from_the_window_equals_the_headless_replay(window, loop, tmp_path):
    from core.live.capture import export, read_jsonl

    send(window, loop, "Think, then answer", scenario="thinking")
    live = [r.result() for r in window.runs()]
    capture = window.export_runs(tmp_path / "live.jsonl")
    assert window.open_capture(capture, speed=None) == 4
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    replayed = [r.result() for r in window.runs()]
    headless = [r.result() for r in read_jsonl(capture)]
    assert replayed == headless == live
    for pane in window.panes:
        run = pane.controller.run
        assert pane.text_view.answer_text() == "".join(
            b.text or "" for b in run.decoder.reply.ordered_blocks() if b.kind == "text")
    for ext in (".jsonl", ".har", ".md"):
        a = window.export_runs(tmp_path / f"replayed{ext}")
        b = export(read_jsonl(capture), tmp_path / f"headless-replayed{ext}")
        assert same_export(a, b), ext


@pytest.mark.slow
def test_real_time_replay_keeps_the_original_timing(window, loop, tmp_path):
    send(window, loop, "Hello", scenario="text")
    capture = window.export_runs(tmp_path / "live.jsonl")
    span = max(r.metrics.t_total_ns for r in window.runs()) / 1e9
    t0 = loop.time()
    window.open_capture(capture, speed=1.0)
    assert {c.status for c in window.controllers} <= {"connecting", "streaming", "pending"}
    run_until(loop, lambda: window.finished)
    assert loop.time() - t0 >= span * 0.8


def _capture_with(tmp_path, body: bytes, name="html", fmt="openai-chat") -> Path:
    from core.live.capture import write_jsonl
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run

    provider = ProviderConfig(name, fmt, "http://127.0.0.1:9/v1", "m", "")
    chunks = [(1_000_000 * (i + 1), body[i:i + 40]) for i in range(0, len(body), 40)]
    run = rebuild_run(provider, headers=(500_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=chunks, end_ns=chunks[-1][0] + 1, started_at=1_700_000_000.0)
    return write_jsonl([run], tmp_path / f"{name}.jsonl")


def _chunk(delta: dict, finish=None) -> bytes:
    obj = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def test_model_output_is_shown_literally_never_as_html(window, loop, tmp_path):
    body = (_chunk({"role": "assistant", "content": ""}) + _chunk({"content": "<b>bold</b>"})
            + _chunk({"content": "<img src=x>"}) + _chunk({}, "stop") + b"data: [DONE]\n\n")
    window.open_capture(_capture_with(tmp_path, body), speed=None)
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    pane = window.panes[0]
    assert pane.text_view.answer_text() == HTML
    doc = pane.text_view.answer.document()
    assert doc.toPlainText() == HTML
    assert "&lt;b&gt;" in doc.toHtml() and "<img" not in doc.toHtml()
    c = pane.controller
    pane.blocks_tab.table.selectRow(0)
    assert HTML in pane.blocks_tab.detail.toPlainText()
    assert "<b>bold</b>" in pane.raw_tab.detail.toPlainText()   # the block's frames are selected and shown
    previews = [c.frames.index(r, c.frames.COL_DATA).data() for r in range(c.frames.rowCount())]
    assert any("<b>bold</b>" in p for p in previews)


def test_error_messages_are_shown_literally(window, loop, tmp_path):
    err = {"error": {"message": "<b>boom</b><img src=x>", "type": "server_error"}}
    body = (_chunk({"role": "assistant", "content": "partial <i>answer</i>"})
            + b"data: " + json.dumps(err).encode() + b"\n\n")
    window.open_capture(_capture_with(tmp_path, body, "err"), speed=None)
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    pane = window.panes[0]
    assert pane.controller.status == "error"
    assert pane.error_label.textFormat() == Qt.PlainText
    assert "<b>boom</b><img src=x>" in pane.error_label.text()
    assert pane.text_view.answer_text() == "partial <i>answer</i>"
    assert pane.name_label.textFormat() == Qt.PlainText
    assert pane.metrics_label.textFormat() == Qt.PlainText


@pytest.mark.slow
def test_send_and_screenshot_offscreen(tmp_path):
    """`python main.py --send TEXT --screenshot PATH` under QT_QPA_PLATFORM=offscreen writes a PNG and exits 0."""
    shot = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "main.py", "--send", "What is the capital of France?",
                           "--screenshot", str(shot)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    from PySide6.QtGui import QImage

    img = QImage(str(shot))
    assert img.width() > 600 and img.height() > 400
    assert "Fatal Python error" not in proc.stderr


@pytest.mark.slow
def test_replay_command_opens_the_capture_in_the_window(window, loop, tmp_path):
    """`main.py --screenshot PNG replay FILE.jsonl` replays into the window, then saves and exits."""
    send(window, loop, "Hello", scenario="tool-call")
    capture = window.export_runs(tmp_path / "c.jsonl")
    shot = tmp_path / "replay.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "main.py", "--screenshot", str(shot), "replay", str(capture),
                           "--speed", "4"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_replay_of_more_conversations_than_panes_says_how_many_are_not_shown(window, loop, tmp_path):
    """A recording of more conversations than `MAX_PANES` replayed the first eight and said "Replayed: 8 done"
    about the others: the status bar says how many were left out, whose, and where they can be read."""
    from core.live.capture import export

    from gui.main_window import MAX_PANES

    send(window, loop, "Question", scenario="text")
    # three times the four providers' first exchange: twelve conversations in one recording
    capture = export(window.runs() * 3, tmp_path / "twelve.jsonl")
    window.open_capture(capture, speed=None)
    run_until(loop, lambda: window.finished)
    window.scheduler.flush()
    assert len(window.panes) == MAX_PANES
    message = window.statusBar().currentMessage()
    assert "4 conversations not shown (at most 8 panes)" in message, message
    assert f"main.py replay {capture} --headless" in message
    assert "demo-openai-chat" in message
