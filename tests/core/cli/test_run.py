"""`python main.py run` and `python main.py replay` as the contract gives them, in real subprocesses."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.live.capture import read_jsonl
from tests.core.live.test_runner import emu_base  # noqa: F401 - the shared emulator fixture
from tests.core.cli.signalled import signalled
from tests.corpus import ROOT

SECRET = "sk-planted-4b1d9e0c7a3f-SECRET"


def main_py(*args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=e)


def write_config(path: Path, base: str, model: str, env_name: str = "SS_PLANTED_KEY") -> Path:
    rows = [("c-chat", "openai-chat", base + "/v1"), ("c-resp", "openai-responses", base + "/v1"),
            ("c-anth", "anthropic", base), ("c-gem", "gemini", base)]
    path.write_text("".join(f'[[provider]]\nname = "{n}"\nformat = "{f}"\nbase_url = "{u}"\nmodel = "{model}"\n'
                            f'api_key_env = "{env_name}"\n\n' for n, f, u in rows))
    return path


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo")
    p = main_py("run", "--prompt", "What is the capital of France?", "--json",
                "--export", str(tmp / "d.jsonl"), "--export", str(tmp / "d.har"), "--export", str(tmp / "d.md"))
    return p, tmp


@pytest.mark.slow
def test_demo_run_prints_one_line_per_provider_and_exports(demo):
    p, tmp = demo
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    status_lines = [ln for ln in lines if not ln.startswith("{")]
    assert sorted(ln.split()[0] for ln in status_lines) == ["demo-anthropic", "demo-gemini",
                                                            "demo-openai-chat", "demo-openai-responses"]
    for ln in status_lines:
        assert " done " in ln and "HTTP 200" in ln and "ttft " in ln and "total " in ln and "usage in=" in ln
    for ext in ("jsonl", "har", "md"):
        assert (tmp / f"d.{ext}").stat().st_size > 0
    har = json.loads((tmp / "d.har").read_text())
    assert len(har["log"]["entries"]) == 4 and har["log"]["version"] == "1.2"


@pytest.mark.slow
def test_headless_replay_equals_the_live_result(demo):
    p, tmp = demo
    live = {r["provider"]: r for r in map(json.loads, (ln for ln in p.stdout.splitlines() if ln.startswith("{")))}
    r = main_py("replay", "--headless", str(tmp / "d.jsonl"))
    assert r.returncode == 0, r.stderr
    replayed = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert [x["provider"] for x in replayed] == ["demo-openai-chat", "demo-openai-responses", "demo-anthropic",
                                                 "demo-gemini"]
    for x in replayed:
        assert x == live[x["provider"]]
        assert x["http_status"] == 200 and x["error"] is None and x["terminated"]
        assert set(x) >= {"format", "blocks", "finish_reason", "usage", "error", "terminated", "frames",
                          "diagnostics", "provider", "http_status"}
    timed = main_py("replay", "--headless", "--speed", "4", "--provider", "demo-gemini", str(tmp / "d.jsonl"))
    assert timed.returncode == 0 and [json.loads(ln) for ln in timed.stdout.splitlines()] == [replayed[3]]


@pytest.mark.slow
def test_configured_providers_with_a_planted_key(tmp_path, emu_base):  # noqa: F811
    cfg = write_config(tmp_path / "providers.toml", emu_base, "tool-call")
    outs = [tmp_path / "k.jsonl", tmp_path / "k.har", tmp_path / "k.md"]
    args = ["run", "--config", str(cfg), "--prompt", "Weather in Paris?", "--json"]
    for n in ("c-chat", "c-resp", "c-anth", "c-gem"):
        args += ["--provider", n]
    for o in outs:
        args += ["--export", str(o)]
    p = main_py(*args, env={"SS_PLANTED_KEY": SECRET})
    assert p.returncode == 0, p.stderr
    blobs = [p.stdout, p.stderr] + [o.read_text(errors="replace") for o in outs]
    for b in blobs:
        assert SECRET not in b and SECRET[:16] not in b
    assert "get_weather" in outs[2].read_text() and "Tool call" in outs[2].read_text()
    results = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert all(any(b["type"] == "tool_call" for b in r["blocks"]) for r in results)


@pytest.mark.slow
def test_failures_exit_1_and_are_still_exported(tmp_path, emu_base):  # noqa: F811
    cfg = write_config(tmp_path / "providers.toml", emu_base, "http-429")
    out = tmp_path / "f.jsonl"
    p = main_py("run", "--config", str(cfg), "--prompt", "hi", "--provider", "c-anth", "--provider", "c-gem",
                "--export", str(out), env={"SS_PLANTED_KEY": SECRET})
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and all("  HTTP 429  " in ln and "error http_error: HTTP 429" in ln for ln in lines)
    assert "rate limit" in p.stdout.lower() or "quota" in p.stdout.lower()
    r = main_py("replay", "--headless", str(out))
    got = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert [(g["provider"], g["http_status"], g["error"]["type"]) for g in got] == [
        ("c-anth", 429, "http_error"), ("c-gem", 429, "http_error")]
    assert got[0]["error"]["raw"]["error"]["type"] == "rate_limit_error"


@pytest.mark.slow
def test_missing_key_is_reported_and_not_sent(tmp_path, emu_base):  # noqa: F811
    cfg = write_config(tmp_path / "providers.toml", emu_base, "text", env_name="SS_NOT_SET_ANYWHERE")
    env = {k: v for k, v in os.environ.items() if k != "SS_NOT_SET_ANYWHERE"}
    p = subprocess.run([sys.executable, "main.py", "run", "--config", str(cfg), "--prompt", "hi",
                        "--provider", "c-chat", "--provider", "demo-anthropic"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 1
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("c-chat"))
    assert "missing_key" in line and "SS_NOT_SET_ANYWHERE" in line and "HTTP ---" in line
    assert "findings" not in line and "missing-terminator" not in line   # no stream: none ended without its marker
    assert any(ln.startswith("demo-anthropic") and " done " in ln for ln in p.stdout.splitlines())


@pytest.mark.slow
def test_stall_ends_as_stalled_at_the_read_timeout():
    p = main_py("run", "--prompt", "hi", "--model", "stall", "--provider", "demo-openai-chat",
                "--provider", "demo-anthropic", "--read-timeout", "0.8")
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and all(" stalled " in ln and "no bytes for 0.8 s" in ln for ln in lines)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_by_a_signal_prints_and_exports_what_it_has(tmp_path, sig):
    """SIGTERM (`timeout`, a service manager) stops a run as Ctrl+C does: a cancelled line per provider, every
    export written, exit status 130."""
    jsonl, md = tmp_path / "x.jsonl", tmp_path / "x.md"
    proc = subprocess.Popen([sys.executable, "main.py", "run", "--prompt", "hi", "--model", "stall",
                             "--export", str(jsonl), "--export", str(md)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4.0)   # the emulator has started and the four stalled streams have sent their first part
    stdout, stderr = signalled(proc, sig)
    assert proc.returncode == 130, stderr
    assert stdout.count("cancelled") >= 4, stdout
    assert f"wrote {jsonl}" in stderr and f"wrote {md}" in stderr
    assert len(read_jsonl(jsonl)) == 4 and md.read_text().strip()
    assert not list(tmp_path.glob("*.part"))


@pytest.mark.slow
def test_an_export_that_cannot_be_written_is_one_line_and_leaves_no_part_file(tmp_path):
    (tmp_path / "d.jsonl").mkdir()
    p = main_py("run", "--prompt", "hi", "--provider", "demo-openai-chat", "--export", str(tmp_path / "d.jsonl"),
                "--export", str(tmp_path / "ok.md"))
    assert p.returncode == 1
    assert f"run: cannot write {tmp_path / 'd.jsonl'}: Is a directory\n" in p.stderr and ".part" not in p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["d.jsonl", "ok.md"]   # the other export is written


@pytest.mark.parametrize("args, words", [
    (["run", "--prompt", "x", "--provider", "nope"], "unknown provider 'nope'"),
    (["run", "--prompt", "x", "--export", "out.txt"], "extension"),
    (["run", "--prompt", "x", "--read-timeout", "0"], "positive"),
    (["replay", "--headless", "/nonexistent/x.jsonl"], "cannot read"),
    (["run", "--prompt", "x", "--config", "/nonexistent/p.toml"], "no such file"),
    # NaN was accepted and written into the request as `NaN` (not JSON); inf and negative ones were sent too
    (["run", "--prompt", "x", "--temperature", "nan"], "run: temperature must be a finite number, 0 or more"),
    (["run", "--prompt", "x", "--temperature", "inf"], "run: temperature must be a finite number, 0 or more"),
    (["run", "--prompt", "x", "--temperature=-3"], "run: temperature must be a finite number, 0 or more (got -3.0)"),
])
def test_usage_errors_exit_2(args, words):
    p = main_py(*args)
    assert p.returncode == 2 and words in p.stderr and not p.stdout


@pytest.mark.slow
def test_replay_without_headless_needs_the_gui(tmp_path, monkeypatch, capsys, demo):
    import main

    monkeypatch.setitem(sys.modules, "gui.app", None)     # as if the GUI were not installed
    code = main.main(["replay", str(demo[1] / "d.jsonl")])
    assert code == 2 and "--headless" in capsys.readouterr().err


@pytest.mark.slow
def test_replay_without_headless_hands_over_to_the_gui(monkeypatch, demo):
    import types

    import main

    seen = {}
    fake = types.ModuleType("gui.app")
    fake.run_gui_replay = lambda path, speed=1.0, args=None: seen.update(file=path, speed=speed) or 0
    monkeypatch.setitem(sys.modules, "gui.app", fake)
    assert main.main(["replay", "--speed", "2", str(demo[1] / "d.jsonl")]) == 0
    assert seen == {"file": str(demo[1] / "d.jsonl"), "speed": 2.0}
    assert main.main(["replay", str(demo[1] / "d.jsonl")]) == 0 and seen["speed"] == 1.0   # original timing


def test_cli_module_imports_nothing_heavy():
    code = ("import sys, core.cli; heavy = [m for m in ('httpx', 'uvicorn', 'starlette', 'keyring', 'PySide6') "
            "if m in sys.modules]; print(heavy)")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert p.stdout.strip() == "[]", p.stdout + p.stderr


# -- --tools: checked as the GUI's tools editor checks them ------------------------------------------------------
@pytest.mark.parametrize("content, words", [
    ('[{"name": "get_weather",}]', "not JSON: line 1, column 25"),
    ('[{"description": "no name"}]', 'tool 1: needs a "name"'),
    ('[{"name": "w", "parameters": {"type": "object", "properties": {"city": {"type": "text"}}}}]',
     "tool 'w': parameters.city: unknown type 'text'"),
    ("", "the file is empty"),
    (None, "cannot read"),
    ("[" * 100000 + "]" * 100000, "not JSON: JSON nested too deep to parse"),   # was a RecursionError
    ('[{"name": "f", "parameters": {"type": "object", "properties": {"a": ' + '{"x":' * 900 + "1" + "}" * 900
     + "}}}]", "nested deeper than 250 levels"),   # was a RecursionError in the redaction of the request
])
def test_a_bad_tools_file_is_a_one_line_error_and_nothing_is_sent(tmp_path, content, words):
    path = tmp_path / "tools.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    p = main_py("run", "--prompt", "x", "--tools", str(path), "--export", str(tmp_path / "never.jsonl"))
    assert p.returncode == 2 and not p.stdout, p.stdout + p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"run: --tools {path}: ") and words in p.stderr
    assert not (tmp_path / "never.jsonl").exists()


def test_a_valid_tools_file_is_sent(tmp_path):
    tool = {"type": "function", "function": {"name": "lookup_city", "description": "Find a city",
                                             "parameters": {"type": "object",
                                                            "properties": {"query": {"type": "string"}},
                                                            "required": ["query"]}}}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tool), encoding="utf-8")
    p = main_py("run", "--prompt", "Find Paris", "--tools", str(path), "--model", "tool-call",
                "--provider", "demo-anthropic", "--provider", "demo-openai-chat", "--json")
    assert p.returncode == 0, p.stderr
    results = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert len(results) == 2
    for r in results:
        assert [b["name"] for b in r["blocks"] if b["type"] == "tool_call"] == ["lookup_city"]


# -- the summary line ------------------------------------------------------------------------------------------
def test_summary_line_names_the_findings_a_strict_client_would_trip_on():
    from core.cli.run import summary_line
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run

    body = (b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
            b'data: {"choices":[{"index":0,"delta":{"content":\n\n'         # frame 1: not JSON
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')   # and no [DONE]
    run = rebuild_run(ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m", ""),
                      headers=(1_000_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=[(2_000_000, body)], end_ns=12_345_678_901)
    line = summary_line(run, 4)
    assert line.startswith("p     done       HTTP 200  ttft 2 ms  total 12.35 s  usage -  finish stop  ")
    assert line.endswith("  findings data-not-json (frame 1); missing-terminator (frame 2)")
    clean = rebuild_run(run.provider, headers=(1_000_000, 200, "HTTP/1.1", "OK", [("content-type",
                                                                                   "text/event-stream")]),
                        chunks=[(2_000_000, b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
                                            b'data: [DONE]\n\n')], end_ns=3_000_000)
    assert "findings" not in summary_line(clean) and "total 3 ms" in summary_line(clean)


def test_all_of_a_hundred_thousand_providers_are_selected_in_linear_time(tmp_path):
    # (`--all` tested each name against a list of the names so far: quadratic, 20k providers took 25 s)
    import argparse

    from core.cli.run import _select_providers

    cfg = tmp_path / "providers.toml"
    cfg.write_text("".join(f'[[provider]]\nname = "p{i}"\nformat = "gemini"\nbase_url = "http://127.0.0.1:9"\n'
                           f'model = "m"\n' for i in range(100_000)))
    args = argparse.Namespace(config=str(cfg), provider=["p7"], all=True)
    chosen, needs_emulator = _select_providers(args, lambda msg: pytest.fail(msg))
    assert len(chosen) == 100_000 and chosen[0].name == "p7" and not needs_emulator


def test_replay_of_odd_har_timings_is_one_line_never_a_traceback(tmp_path, monkeypatch, capsys):
    """Python's HAR writers emit `Infinity` for a timing; and should a reader ever fail on odd input, replay says
    so in one line (exit 2), not with a traceback."""
    import main
    from core.live import importers
    from tests.core.servers.tap.faulty import BODY

    e = {"startedDateTime": "2024-05-01T10:00:01Z", "time": float("inf"),
         "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions", "headers": []},
         "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                      "content": {"mimeType": "text/event-stream", "text": BODY.decode()}},
         "timings": {"send": 0, "wait": float("inf"), "receive": 1e300}}
    har = tmp_path / "odd.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [e]}}), encoding="utf-8")
    assert main.main(["replay", "--headless", str(har)]) == 0
    assert json.loads(capsys.readouterr().out)["terminated"] is True

    def broken(*a, **k):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(importers, "read_capture", broken)
    assert main.main(["replay", "--headless", str(har)]) == 2
    err = capsys.readouterr().err
    assert err == f"replay: {har}: cannot be read (OverflowError: cannot convert float infinity to integer)\n"


def test_replay_of_a_recording_with_no_llm_exchange_says_so_and_fails(tmp_path):
    page = {"startedDateTime": "2024-05-01T10:00:01Z", "time": 5,
            "request": {"method": "GET", "url": "https://app.example.com/", "headers": []},
            "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/html"}],
                         "content": {"mimeType": "text/html", "text": "<!doctype html><p>hi</p>"}},
            "timings": {"wait": 1, "receive": 1}}
    for name, entries, n in (("empty.har", [], "0 entries"), ("page.har", [page], "1 entry")):
        f = tmp_path / name
        f.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), encoding="utf-8")
        r = main_py("replay", "--headless", str(f))
        assert r.returncode == 1 and r.stdout == ""
        assert r.stderr.splitlines()[-1] == f"replay: no LLM exchange in {f} ({n} skipped)"
