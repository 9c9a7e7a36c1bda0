"""`python main.py emulate` as a process: the listening line, Ctrl+C, `--serve` for .sse recordings and native
captures; and `main.py decode` staying light (no server imports)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from core.wire.pipeline import decode_bytes
from tests.corpus import ROOT

CORPUS = ROOT.parent / "shared" / "corpus"


class Emulate:
    """`emulate ARGS` as a process, once it has printed its listening line (`command`: how the app is started;
    the wheel test passes the installed `streamscope` command)."""

    def __init__(self, *args: str, command: tuple = (sys.executable, "main.py"), cwd=ROOT, env=None) -> None:
        self.p = subprocess.Popen([*command, "emulate", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        box: dict = {}
        t = threading.Thread(target=lambda: box.setdefault("line", self.p.stdout.readline()), daemon=True)
        t.start()
        t.join(20)
        self.first_line = box.get("line", b"").decode()
        assert self.first_line.startswith("listening on http://127.0.0.1:"), self.first_line
        self.base = self.first_line.split()[-1]

    def interrupt(self) -> tuple[int, bytes, float]:
        t = time.monotonic()
        self.p.send_signal(signal.SIGINT)
        rc = self.p.wait(15)
        return rc, self.p.stderr.read(), time.monotonic() - t

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(5)


@pytest.mark.slow
def test_emulate_prints_listening_first_and_stops_cleanly_on_ctrl_c():
    emu = Emulate("--port", "0")
    try:
        r = httpx.post(emu.base + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                       json={"model": "text", "messages": [{"role": "user", "content": "hi"}], "stream": True})
        assert r.status_code == 200 and r.content.endswith(b"data: [DONE]\n\n")
        # a stalled stream is open while we interrupt: shutdown must still be prompt
        done = threading.Event()

        def stall() -> None:
            try:
                with httpx.stream("POST", emu.base + "/v1/messages", timeout=30,
                                  headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                                  json={"model": "stall", "max_tokens": 99, "stream": True,
                                        "messages": [{"role": "user", "content": "hi"}]}) as resp:
                    for _ in resp.iter_raw():
                        pass
            except httpx.HTTPError:
                pass
            done.set()

        threading.Thread(target=stall, daemon=True).start()
        time.sleep(0.5)
        rc, err, took = emu.interrupt()
        assert rc == 0 and b"Traceback" not in err, err
        assert took < 5
        assert done.wait(5)
    finally:
        emu.kill()


@pytest.mark.slow
@pytest.mark.parametrize("level", [[], ["--log-level", "info"]])
def test_access_log_has_a_line_per_request_with_keys_redacted(level):
    """--access-log logged nothing (uvicorn's access lines are INFO, the server's level warning), and with
    --log-level info it printed Gemini's ?key= in clear."""
    key = "AIzaSyPlanted0123456789abcdefghijkl"
    emu = Emulate("--access-log", "--quiet", "--speed", "0", *level)
    try:
        r = httpx.post(emu.base + f"/v1beta/models/text:streamGenerateContent?alt=sse&key={key}",
                       json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        assert r.status_code == 200
        assert httpx.get(emu.base + "/scenarios").status_code == 200
        time.sleep(0.3)
        rc, err, _ = emu.interrupt()
    finally:
        emu.kill()
    text = err.decode()
    assert rc == 0 and key not in text and key[:12] not in text, text
    assert '"POST /v1beta/models/text:streamGenerateContent?alt=sse&key=[REDACTED] HTTP/1.1" 200' in text, text
    assert '"GET /scenarios HTTP/1.1" 200' in text


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.slow
def test_serve_a_recording_byte_for_byte():
    rec = CORPUS / "anthropic" / "text-then-two-tool-use-sonnet-4.6.sse"
    emu = Emulate("--serve", str(rec), "--format", "anthropic", "--speed", "0")
    try:
        r = httpx.post(emu.base + "/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                       json={"model": "whatever", "max_tokens": 99, "stream": True,
                             "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 200 and r.content == rec.read_bytes()
        # the other endpoints keep emulating
        r = httpx.post(emu.base + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                       json={"model": "text", "messages": [{"role": "user", "content": "hi"}], "stream": True})
        assert r.content.endswith(b"data: [DONE]\n\n")
    finally:
        emu.interrupt()
        emu.kill()
    gem = CORPUS / "gemini" / "text-gemini-2.0-flash-exp.sse"
    emu = Emulate("--serve", str(gem))     # format from the folder / the bytes
    try:
        r = httpx.post(emu.base + "/v1beta/models/x:streamGenerateContent?alt=sse&key=k",
                       json={"contents": [{"parts": [{"text": "hi"}]}]})
        assert r.content == gem.read_bytes()
    finally:
        emu.interrupt()
        emu.kill()


def _capture(path: Path) -> None:
    """A native capture of two runs: an OpenAI chat stream 0.3 s apart per chunk, and a 429."""
    lines = [{"format": "streamscope-capture", "version": 1, "created": "2026-01-01T00:00:00.000Z",
              "generator": "test", "runs": 2},
             {"type": "run", "run": 0, "provider": {"name": "p0", "format": "openai-chat", "model": "gpt-x"}},
             {"type": "response", "run": 0, "t_ns": 100_000_000, "status": 200,
              "headers": [["content-type", "text/event-stream"], ["x-request-id", "req_abc"],
                          ["transfer-encoding", "chunked"]]}]
    chunks = [b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,'
              b'"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n',
              b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,'
              b'"delta":{"content":"Caf\xc3',
              b'\xa9"},"finish_reason":null}]}\n\n',
              b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,'
              b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n']
    import base64

    for i, c in enumerate(chunks):
        t = 200_000_000 + i * 300_000_000
        try:
            lines.append({"type": "chunk", "run": 0, "t_ns": t, "text": c.decode("utf-8")})
        except UnicodeDecodeError:
            lines.append({"type": "chunk", "run": 0, "t_ns": t, "b64": base64.b64encode(c).decode()})
    lines.append({"type": "end", "run": 0, "t_ns": 1_200_000_000, "status": "done", "transport_error": None})
    lines += [{"type": "run", "run": 1, "provider": {"name": "p1", "format": "anthropic", "model": "claude"}},
              {"type": "response", "run": 1, "t_ns": 1000, "status": 429,
               "headers": [["content-type", "application/json"], ["retry-after", "7"]]},
              {"type": "chunk", "run": 1, "t_ns": 2000,
               "text": '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'},
              {"type": "end", "run": 1, "t_ns": 3000, "status": "error", "transport_error": None}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")


@pytest.mark.slow
def test_serve_a_native_capture_with_its_timing(tmp_path):
    cap = tmp_path / "cap.jsonl"
    _capture(cap)
    emu = Emulate("--serve", str(cap))
    try:
        arrivals = []
        t0 = time.monotonic()
        body = b""
        with httpx.stream("POST", emu.base + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                          json={"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}],
                                "stream": True}) as r:
            assert r.headers["x-request-id"] == "req_abc"
            for chunk in r.iter_raw():
                arrivals.append(time.monotonic() - t0)
                body += chunk
        assert decode_bytes("openai-chat", body).result()["blocks"][0]["text"] == "Café"
        assert arrivals[-1] - arrivals[0] >= 0.5      # three chunks 0.3 s apart
        r = httpx.post(emu.base + "/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                       json={"model": "claude", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 429 and r.headers["retry-after"] == "7"
        assert r.json()["error"]["message"] == "slow down"
    finally:
        emu.interrupt()
        emu.kill()


def test_emulate_usage_errors():
    r = subprocess.run([sys.executable, "main.py", "emulate", "--serve", "/nonexistent.sse", "--format", "gemini"],
                       cwd=ROOT, capture_output=True, timeout=30)
    assert r.returncode == 2 and b"cannot read" in r.stderr
    r = subprocess.run([sys.executable, "main.py", "emulate", "--scenario", "bogus"], cwd=ROOT, capture_output=True,
                       timeout=30)
    assert r.returncode == 2 and b"unknown scenario" in r.stderr
    for port in ("99999", "-3", "65536"):   # an OverflowError traceback from the socket before
        r = subprocess.run([sys.executable, "main.py", "emulate", f"--port={port}"], cwd=ROOT, capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 2 and r.stderr == f"emulate: --port {port}: expected a port from 0 to 65535\n", r.stderr


def test_emulate_on_an_address_it_cannot_bind_says_so_in_one_line():
    """It printed only uvicorn's `ERROR uvicorn.error: [Errno 98] ...`: now the tap's wording, with the reason."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([sys.executable, "main.py", "emulate", "--port", str(port)], cwd=ROOT,
                           capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and not r.stdout
    assert r.stderr.startswith(f"emulate: cannot listen on 127.0.0.1:{port}: ") and r.stderr.count("\n") == 1, \
        r.stderr
    assert "uvicorn" not in r.stderr
    r = subprocess.run([sys.executable, "main.py", "emulate", "--host", "192.0.2.1"], cwd=ROOT,   # not this machine's
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("emulate: cannot listen on 192.0.2.1:0: "), r.stderr


def test_decode_does_not_import_the_server():
    code = ("import sys, main; main.build_parser(); "
            "print(sorted(m for m in ('uvicorn', 'starlette', 'httpx', 'core.servers.emulator.server') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr
