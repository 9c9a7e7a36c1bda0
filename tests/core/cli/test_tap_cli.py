"""`python main.py tap` as a process (the first line, a line per exchange, the exports, Ctrl+C, refusals);
`decode --format auto`; `replay` of recordings that are not native captures."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from core.wire.pipeline import decode_bytes
from tests.core.servers.tap.faulty import ANTHROPIC, BODY
from tests.corpus import ROOT

pytestmark = pytest.mark.slow   # subprocesses end to end (the fast loop leaves them out)

KEY = "sk-planted-tap-cli-5c1e"


class TapProcess:
    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen([sys.executable, "main.py", "tap", "--listen", "127.0.0.1:0", *args], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        assert self.wait_lines(1, 20), self.p.stderr.read() if self.p.poll() is not None else "no first line"
        self.first = self.lines[0]
        self.base = self.first.split()[2]

    def _read(self) -> None:
        for line in self.p.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_lines(self, n: int, timeout: float = 15) -> bool:
        end = time.monotonic() + timeout
        while len(self.lines) < n and time.monotonic() < end:
            time.sleep(0.02)
        return len(self.lines) >= n

    def interrupt(self) -> tuple[int, str]:
        self.p.send_signal(signal.SIGINT)
        rc = self.p.wait(15)
        self._reader.join(5)
        return rc, self.p.stderr.read()


def test_the_tap_prints_each_exchange_appends_the_capture_and_writes_the_rest_on_ctrl_c(tmp_path):
    jsonl, har, md = tmp_path / "t.jsonl", tmp_path / "t.har", tmp_path / "t.md"
    tap = TapProcess("--emulator-speed", "0", "--export", str(jsonl), "--export", str(har), "--export", str(md))
    try:
        assert tap.first.startswith("tapping on http://127.0.0.1:") and " -> http://127.0.0.1:" in tap.first
        assert tap.first.endswith("(the built-in emulator)")
        r = httpx.post(tap.base + "/v1/messages", headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
                       json={"model": "tool-call", "max_tokens": 64, "stream": True,
                             "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 200 and b"message_stop" in r.content
        assert tap.wait_lines(2)
        line = tap.lines[1].split()
        assert line[:5] == ["emulator#1", "POST", "/v1/messages", "anthropic", "done"]
        assert "HTTP 200" in tap.lines[1] and "finish tool_calls" in tap.lines[1] and "usage in=" in tap.lines[1]
        # appended and flushed as it ended: readable while the tap still runs
        records = [json.loads(x) for x in jsonl.read_text().splitlines()]
        assert records[0]["format"] == "streamscope-capture" and records[-1]["type"] == "summary"
        httpx.get(tap.base + f"/v1beta/models?key={KEY}")
        assert tap.wait_lines(3)
        assert tap.lines[2].split()[:4] == ["emulator#2", "GET", "/v1beta/models?key=[REDACTED]", "-"]
    finally:
        rc, err = tap.interrupt()
    assert rc == 0, err
    assert f"wrote {har}" in err and f"wrote {md}" in err and "(2 exchanges)" in err
    assert "OPENAI_BASE_URL=" + tap.base + "/v1" in err and "ANTHROPIC_BASE_URL=" + tap.base in err
    for path in (jsonl, har, md):
        assert KEY not in path.read_text()
    assert KEY not in "\n".join(tap.lines) + err
    replay = subprocess.run([sys.executable, "main.py", "replay", "--headless", str(har)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    again = [json.loads(x) for x in replay.stdout.splitlines()]
    assert [x["provider"] for x in again] == ["emulator#1", "emulator#2"] and again[0]["format"] == "anthropic"


@pytest.mark.parametrize("args, message", [
    (["--listen", "0.0.0.0:0"], "--allow-remote"),
    (["--upstream", "http://example.com"], "--allow-insecure"),
    (["--export", "x.csv"], ".yaml"),
    (["--listen", "127.0.0.1:99999"], "port from 0 to 65535"),
    (["--upstream", "nosuch"], "unknown upstream"),
])
def test_what_the_tap_refuses(args, message):
    p = subprocess.run([sys.executable, "main.py", "tap", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and message in p.stderr and not p.stdout


def test_a_tap_on_an_address_in_use_says_why_in_one_line():
    """It printed uvicorn's own log line, then `tap: cannot listen on HOST:PORT` without the reason."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = subprocess.run([sys.executable, "main.py", "tap", "--listen", f"127.0.0.1:{port}", "--upstream",
                            "http://127.0.0.1:9"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and not p.stdout
    assert p.stderr.startswith(f"tap: cannot listen on 127.0.0.1:{port}: ") and p.stderr.count("\n") == 1, p.stderr


def decode(*args, stdin=None):
    return subprocess.run([sys.executable, "main.py", "decode", *args], cwd=ROOT, capture_output=True,
                          input=stdin, timeout=60)


def test_decode_format_auto_says_what_it_chose_and_why():
    p = decode("--format", "auto", "-", stdin=ANTHROPIC)
    assert p.returncode == 0
    assert p.stderr.decode().strip() == 'decode: format anthropic: frame 0 is "event: message_start"'
    assert json.loads(p.stdout) == decode_bytes("anthropic", ANTHROPIC).result()
    p = decode("--format", "auto", "-", stdin=b"data: hello\n\n")
    assert p.returncode == 2 and "give --format" in p.stderr.decode()


def test_decode_with_a_wrong_format_names_the_one_the_frames_look_like():
    p = decode("--format", "gemini", "-", stdin=BODY)
    out = json.loads(p.stdout)
    assert p.returncode == 0
    assert [d["message"] for d in out["diagnostics"] if d["code"] == "format-mismatch"] == [
        'decoded as gemini, but the frames look like openai-chat (frame 0 has "object": "chat.completion.chunk")']


def test_replay_opens_a_raw_body_and_a_cassette_and_lists_what_it_skips(tmp_path):
    sse = tmp_path / "rec.sse"
    sse.write_bytes(ANTHROPIC)
    p = subprocess.run([sys.executable, "main.py", "replay", "--headless", str(sse)], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    out = json.loads(p.stdout)
    assert p.returncode == 0 and out["provider"] == "rec" and out["blocks"][0]["text"] == "Paris"
    forced = subprocess.run([sys.executable, "main.py", "replay", "--headless", "--format", "openai-chat", str(sse)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert json.loads(forced.stdout)["format"] == "openai-chat"
    har = tmp_path / "browser.har"
    har.write_text(json.dumps({"log": {"entries": [
        {"request": {"method": "GET", "url": "https://app.example.com/"},
         "response": {"status": 200, "content": {"mimeType": "text/html", "text": "<html>"}}}]}}))
    p = subprocess.run([sys.executable, "main.py", "replay", "--headless", str(har)], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and p.stdout == ""          # (nothing to replay: said, and a failure)
    assert "replay: skipped entry 1: GET https://app.example.com/: not an LLM exchange" in p.stderr
    assert "no LLM exchange in" in p.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("interactions: [")
    p = subprocess.run([sys.executable, "main.py", "replay", "--headless", str(bad)], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "not a YAML cassette" in p.stderr


def test_the_tap_line_names_a_rejected_history():
    from core.cli.tap import exchange_line
    from core.live.exchange import Exchange
    from tests.core.live.test_exchange import SSE, record
    from tests.core.servers.tap.faulty import BODY

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "tool", "tool_call_id": "x", "content": "1"}]}
    ex = Exchange("t#1", "POST", "https://api.example.com/v1/chat/completions", [], json.dumps(body).encode())
    ex.begin(1.0)
    ex.on_headers(10, 200, "HTTP/1.1", "OK", SSE)
    ex.on_chunk(20, BODY)
    ex.finish(100, None)
    assert "history: 1 error (first at " in exchange_line(ex)
    assert "history:" not in exchange_line(record())
