"""`python main.py diff` and `python main.py bench` end to end, in real subprocesses."""
from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time

import pytest

from core.live.capture import read_jsonl, write_jsonl
from core.live.config import ProviderConfig
from core.live.recorder import rebuild_run
from core.live.runs_csv import CSV_COLUMNS
from tests.core.cli.signalled import signalled
from tests.core.cli.test_run import SECRET, main_py, write_config
from tests.core.live.test_metrics import END, MS, SSE, chat, text
from tests.core.live.test_runner import emu_base  # noqa: F401 - the shared emulator fixture
from tests.corpus import ROOT


def call(name: str, args: str) -> bytes:
    return chat({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                 "function": {"name": name, "arguments": args}}]})


def run_of(name: str, *pieces: bytes):
    p = ProviderConfig(name, "openai-chat", "http://127.0.0.1:9/v1", "m")
    chunks = [(100 * MS + i * 10 * MS, c) for i, c in enumerate(pieces + (END,))]
    return rebuild_run(p, headers=(50 * MS, 200, "HTTP/1.1", "OK", SSE), chunks=chunks, end_ns=400 * MS,
                       started_at=1_767_268_800.0)


@pytest.fixture()
def capture(tmp_path):
    path = tmp_path / "two.jsonl"
    write_jsonl([run_of("alpha", text("The capital of France is Paris."),
                        call("get_weather", '{"city": "Paris", "units": "c"}')),
                 run_of("beta", text("The capital of France is \x1b[31mLyon\x1b[0m."),
                        call("get_weather", '{"city": "Lyon"}')),
                 run_of("beta", text("another"))], path)
    return path


def test_diff_prints_the_word_diff_and_the_differing_argument_paths(capture):
    p = main_py("diff", str(capture), "--a", "alpha", "--b", "beta#1")
    assert p.returncode == 1, p.stderr   # they differ
    out = p.stdout
    assert "A = alpha (openai-chat, model m, done)" in out and "B = beta#1" in out
    # the escape sequence the "model" sent is shown, not obeyed
    assert "[-Paris-]{+\\u001b[31mLyon\\u001b[0m+}" in out and "\x1b" not in out
    assert "#1 same tool get_weather; arguments differ at 2 paths" in out
    assert '$.city: "Paris" -> "Lyon"' in out and '$.units: only in A: "c"' in out
    assert "Finish: the same: stop" in out and "input_tokens" in out


def test_diff_json_and_exit_status(capture):
    p = main_py("diff", str(capture), "--a", "alpha", "--b", "beta#1", "--json")
    d = json.loads(p.stdout)
    assert p.returncode == 1 and d["a"]["provider"] == "alpha" and d["b"]["ref"] == "beta#1"
    assert d["same"] is False and d["text"]["same"] is False
    [call_diff] = d["tool_calls"]
    assert call_diff["same_tool"] and [x["path"] for x in call_diff["differences"]] == ["$.city", "$.units"]
    same = main_py("diff", str(capture), "--a", "beta#2", "--b", "beta#2")
    assert same.returncode == 0 and "Text: the same" in same.stdout


@pytest.mark.parametrize("args, words", [
    (["--a", "alpha", "--b", "beta"], "'beta' has 2 runs in the capture: name one as beta#1 .. beta#2"),
    (["--a", "alpha", "--b", "gamma"], "no run of 'gamma' in the capture (it holds: alpha, beta)"),
    (["--a", "alpha", "--b", "beta#3"], "K must be 1..2"),
    (["--a", "alpha"], "give --a NAME and --b NAME"),
])
def test_diff_usage_errors_exit_2(capture, args, words):
    p = main_py("diff", str(capture), *args)
    assert p.returncode == 2 and words in p.stderr and not p.stdout


def test_diff_of_a_file_that_is_not_a_capture(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text("hello\n")
    p = main_py("diff", str(bad), "--a", "a", "--b", "b")
    assert p.returncode == 2 and "not JSON" in p.stderr


@pytest.mark.slow
def test_bench_on_the_demo_providers_prints_progress_statistics_and_methods(tmp_path):
    out, table = tmp_path / "runs.jsonl", tmp_path / "runs.csv"
    p = main_py("bench", "--prompt", "What is the capital of France?", "--repeat", "2", "--concurrency", "3",
                "--export", str(out), "--csv", str(table), "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    progress = [ln for ln in lines if ln.startswith("run ")]
    assert [ln.split()[1] for ln in progress] == [f"{i}/8" for i in range(1, 9)]
    assert all(" done " in ln and "ttft " in ln and "tok/s" in ln and "(as " in ln for ln in progress)
    header = next(i for i, ln in enumerate(lines) if ln.startswith("Provider "))
    rows = lines[header + 1:header + 5]
    assert sorted(r.split()[0] for r in rows) == ["demo-anthropic", "demo-gemini", "demo-openai-chat",
                                                  "demo-openai-responses"]
    assert all(r.split()[1:3] == ["2", "2"] and r.rstrip().endswith("none") for r in rows)
    assert "TTFT: from sending the request" in p.stdout and "Output tokens/s: the final usage" in p.stdout
    stats = json.loads(lines[-1])
    assert stats["runs"] == 8 and not stats["stopped"]
    assert all(s["ok"] == 2 and s["ttft_ms"]["n"] == 2 for s in stats["providers"])
    runs = read_jsonl(out)
    assert len(runs) == 8 and all(r.ok for r in runs)
    assert json.loads(out.read_text().splitlines()[0])["runs"] == 8
    with open(table, newline="") as f:
        got = list(csv.DictReader(f))
    assert len(got) == 8 and tuple(got[0]) == CSV_COLUMNS
    assert all(float(g["ttft_ms"]) > 0 and g["cost_source"] == "reference" for g in got)


@pytest.mark.slow
def test_bench_with_a_planted_key_never_shows_it(tmp_path, emu_base):  # noqa: F811
    cfg = write_config(tmp_path / "providers.toml", emu_base, "http-429")
    out, table = tmp_path / "k.jsonl", tmp_path / "k.csv"
    p = main_py("bench", "--config", str(cfg), "--provider", "c-anth", "--provider", "c-chat", "--prompt", "hi",
                "--repeat", "2", "--export", str(out), "--csv", str(table), env={"SS_PLANTED_KEY": SECRET})
    assert p.returncode == 1   # every run failed (HTTP 429), each counted under its type
    assert "http_error x2" in p.stdout and "error http_error: HTTP 429" in p.stdout
    for blob in (p.stdout, p.stderr, out.read_text(), table.read_text()):
        assert SECRET not in blob and SECRET[:16] not in blob


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_bench_stopped_with_ctrl_c_keeps_the_runs_in_flight(tmp_path, sig):
    """Ctrl+C, or SIGTERM (`timeout`, a service manager), stops the bench the same way: the capture finalised."""
    out, table = tmp_path / "s.jsonl", tmp_path / "s.csv"
    proc = subprocess.Popen([sys.executable, "main.py", "bench", "--prompt", "hi", "--model", "stall", "--repeat",
                             "3", "--concurrency", "4", "--export", str(out), "--csv", str(table)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (tmp_path / "s.jsonl.part").exists():
        time.sleep(0.1)
    time.sleep(2.0)   # the four stalled streams have sent their first part
    stdout, stderr = signalled(proc, sig)
    assert proc.returncode == 130, stderr
    assert not (tmp_path / "s.jsonl.part").exists()
    assert "stopped after 4 of 12 runs" in stdout and "cancelled x1" in stdout
    runs = read_jsonl(out)
    assert len(runs) == 4 and all(r.status == "cancelled" and r.reply.ordered_blocks() for r in runs)
    assert json.loads(out.read_text().splitlines()[0])["runs"] == 4
    with open(table, newline="") as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["cancelled"] * 4


@pytest.mark.parametrize("args, words", [
    (["--repeat", "0"], "--repeat must be 1 to 100"),
    (["--repeat", "101"], "--repeat must be 1 to 100"),
    (["--repeat", "2", "--concurrency", "0"], "--concurrency must be 1 to 64"),
    (["--repeat", "2", "--export", "x.har"], "PATH.jsonl"),
    (["--repeat", "2", "--price-as", "gpt-4o"], "provider/model"),
    (["--repeat", "2", "--provider", "nope"], "bench: unknown provider 'nope'"),
    (["--repeat", "2", "--temperature", "nan"], "bench: temperature must be a finite number, 0 or more"),
])
def test_bench_usage_errors_exit_2(args, words):
    p = main_py("bench", "--prompt", "x", *args)
    assert p.returncode == 2 and words in p.stderr and not p.stdout


def test_a_finish_neither_run_reported_is_said_so():
    """Not Python's and JSON's empty values ("Finish: the same: None (raw null)"): the CLI and the Diff tab."""
    from core.cli.diff import NO_FINISH, detail_lines
    from core.wire.answer_diff import diff_replies
    from tests.core.wire.test_answer_diff import reply

    lines = detail_lines(diff_replies(reply(("text", "a"), finish=None), reply(("text", "b"), finish=None)))
    assert NO_FINISH in lines and not any("None" in line or "null" in line for line in lines)
    same = detail_lines(diff_replies(reply(("text", "a")), reply(("text", "b"))))
    assert 'Finish: the same: stop (raw "stop")' in same
