"""Issue 11, item 5: server text never drives a terminal or a Markdown renderer."""
from __future__ import annotations

import pytest

import subprocess
import sys

from core.live.capture import markdown_report
from core.live.config import ProviderConfig
from core.live.recorder import rebuild_run
from core.live.summary import md_code, md_text, visible_controls
from tests.corpus import ROOT

HOSTILE = "clear\x1b[2J\x07bell\x00nul \u202eevil <img src=file:///dev/zero> `tick`"


def test_controls_become_visible_escapes():
    out = visible_controls(HOSTILE)
    assert "\x1b" not in out and "\x07" not in out and "\x00" not in out and "\u202e" not in out
    assert "\\u001b[2J" in out and "\\u202e" in out
    assert visible_controls("line\n\ttab") == "line\n\ttab"


def test_markdown_text_shows_tags_as_text_and_code_spans_cannot_be_broken():
    assert "<img" not in md_text(HOSTILE) and "&lt;img" in md_text(HOSTILE)
    span = md_code("get`weather``x")
    fence = span[:span.index("g")].strip()
    assert set(fence) == {"`"} and len(fence) == 3 and span.endswith(fence)
    assert md_code("`edge") == "`` `edge ``"


def _hostile_run():
    body = ('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
            '"id":"call_`x`","type":"function","function":{"name":"get`weather","arguments":"{}"}}]}}]}\n\n'
            'data: {"error":{"type":"bad\\u001b[2J","message":"<script>alert(1)</script> \\u202eRTL\\u0007"}}\n\n')
    provider = ProviderConfig("h<b>x</b>", "openai-chat", "https://api.example/v1", "m", "")
    return rebuild_run(provider, headers=(0, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                       chunks=[(1, body.encode())], end_ns=2)


def test_the_md_report_is_safe_to_render():
    md = markdown_report([_hostile_run()])
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in md, repr(raw)
    prose = "".join(part for i, part in enumerate(md.split("```")) if i % 2 == 0)   # outside fenced blocks
    for tag in ("<script>", "<b>"):
        assert tag not in prose, tag
    assert "&lt;script&gt;" in md
    assert "``get`weather``" in md, "a backtick in a tool name stays inside its code span"


@pytest.mark.slow
def test_run_lines_escape_what_the_server_sent(tmp_path):
    """`run` prints the provider's error type and message with their controls shown, not obeyed."""
    import os

    from core.servers.emulator.recordings import Recording
    from core.servers.emulator.server import EmulatorServer

    body = ('data: {"error":{"type":"bad\\u001b[2J","message":"gone \\u202eRTL\\u0007 <b>x</b>"}}\n\n').encode()
    server = EmulatorServer(recordings=[Recording("openai-chat", [(0.0, body)], status=200,
                                                  headers=[("content-type", "text/event-stream")], headers_at=0.0)])
    base = server.start()
    try:
        cfg = tmp_path / "providers.toml"
        cfg.write_text(f'[[provider]]\nname="h"\nformat="openai-chat"\nbase_url="{base}/v1"\nmodel="m"\napi_key_env="SS_H_KEY"\n')
        p = subprocess.run([sys.executable, "main.py", "run", "--config", str(cfg), "--provider", "h",
                            "--prompt", "hi"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                           env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "SS_H_KEY": "k-123456"})
    finally:
        server.stop()
    line = p.stdout
    assert "\x1b" not in line and "\u202e" not in line and "\x07" not in line, repr(line)
    assert "\\u001b[2J" in line and "\\u202e" in line, repr(line)


def test_a_deeply_nested_error_body_is_an_error_not_a_crash():
    """An HTTP error body nested past the interpreter's recursion limit: the run ends as http_error, with the
    body kept bounded, and its result, redaction and report all work."""
    deep = ("{\"error\":" * 5000 + "1" + "}" * 5000).encode()
    provider = ProviderConfig("d", "openai-chat", "https://api.example/v1", "m", "")
    run = rebuild_run(provider, headers=(0, 400, "HTTP/1.1", "Bad", [("content-type", "application/json")]),
                      chunks=[(1, deep)], end_ns=2)
    assert run.status == "error" and run.error["type"] == "http_error"
    assert "HTTP 400" in run.error["message"]
    assert markdown_report([run]) and run.result()["http_status"] == 400
