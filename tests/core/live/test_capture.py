"""Captures and exports of real emulator runs: the lossless .jsonl, HAR 1.2, the Markdown report, replay."""
from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from datetime import datetime
from pathlib import Path

import pytest

from core.live.capture import (CAPTURE_FORMAT, CAPTURE_VERSION, CaptureError, capture_lines, export, har_document,
                          parse_jsonl, read_jsonl, write_har, write_jsonl, write_markdown)
from core.live.config import demo_providers
from core.servers.emulator.recordings import load_capture
from core.servers.emulator.server import EmulatorServer
from core.live.request import PromptSpec
from core.live.recorder import ProviderRun, prepare_runs, rebuild_run
from core.live.transport import Session
from core.live.replay import replay_into, replay_run
from tests.core.live.test_runner import FORMATS, PROMPT, emu_base, sweep  # noqa: F401 - shared session fixtures


def all_runs(sweep):
    return list(sweep["runs"].values())


def same_run(a: ProviderRun, b: ProviderRun) -> None:
    assert a.result() == b.result()
    assert a.status == b.status and a.error == b.error and a.http_status == b.http_status
    assert a.chunks == b.chunks and a.frame_times == b.frame_times and a.metrics == b.metrics
    assert [e for _, e in a.events] == [e for _, e in b.events]
    assert a.response_headers == b.response_headers and a.started_at == b.started_at
    assert a.request.to_json() == b.request.to_json() and a.provider == b.provider
    assert a.spec == b.spec


@pytest.fixture(scope="module")
def capture_file(sweep, tmp_path_factory):
    path = tmp_path_factory.mktemp("cap") / "all.jsonl"
    write_jsonl(all_runs(sweep), path)
    return path


@pytest.mark.slow
def test_jsonl_round_trip_is_lossless_for_every_scenario(sweep, capture_file):
    runs = all_runs(sweep)
    back = read_jsonl(capture_file)
    assert [r.name for r in back] == [r.name for r in runs]
    for live, imported in zip(runs, back, strict=True):
        same_run(live, imported)


@pytest.mark.slow
def test_jsonl_records_are_as_documented(sweep, capture_file):
    lines = capture_file.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["format"] == CAPTURE_FORMAT and header["version"] == CAPTURE_VERSION == 2
    assert header["runs"] == len(sweep["runs"])
    recs = [json.loads(ln) for ln in lines[1:]]
    kinds = {r["type"] for r in recs}
    assert kinds == {"run", "response", "chunk", "end", "summary"}
    b64 = [r for r in recs if r["type"] == "chunk" and "b64" in r]
    assert b64, "split-utf8 chunks cut inside a character must be stored as base64"
    for r in b64:
        with pytest.raises(UnicodeDecodeError):
            base64.b64decode(r["b64"]).decode("utf-8")
    summaries = {r["run"]: r for r in recs if r["type"] == "summary"}
    for i, run in enumerate(all_runs(sweep)):
        assert summaries[i]["result"] == run.result() and summaries[i]["metrics"] == run.metrics.to_json()
    ends = [r for r in recs if r["type"] == "end"]
    assert {e["transport_error"]["type"] for e in ends if e["transport_error"]} == {"connection_dropped", "stalled"}


@pytest.mark.slow
def test_replay_through_the_pipeline_equals_live(sweep, capture_file):
    imported = read_jsonl(capture_file)

    async def go():
        return await asyncio.gather(*(replay_run(r, speed=0) for r in imported))

    replayed = asyncio.run(go())
    live_runs = all_runs(sweep)
    assert len(imported) == len(replayed) == len(live_runs)   # a replay that lost a run must fail here
    for live, again in zip(live_runs, replayed, strict=True):
        same_run(live, again)


@pytest.mark.slow
def test_replay_keeps_the_original_timing(emu_base):
    runs = prepare_runs(demo_providers(emu_base, "text")[:2], PromptSpec(user=PROMPT))
    asyncio.run(Session(runs).run())
    src = runs[0]
    total = src.metrics.t_total_ns / 1e9
    assert total > 0.15   # the emulator's pacing: ~0.2 s to the first token
    seen = []
    run = ProviderRun(src.provider, src.request, src.spec)
    run.on_update = lambda r: seen.append((time.monotonic(), r.metrics.bytes, r.clock()))
    t = time.monotonic()
    asyncio.run(replay_into(run, src, speed=2.0))
    took = time.monotonic() - t
    assert total / 2 * 0.9 <= took <= total / 2 + 0.5
    # each chunk is delivered no earlier than its original time / speed
    first = next(ts for ts, b, _ in seen if b)
    assert first - t >= src.chunks[0][0] / 2e9 * 0.9
    assert all(c >= 0 for _, _, c in seen)
    same_run(src, run)


@pytest.mark.slow
def test_replay_can_be_cancelled(sweep):
    live = sweep["runs"][("long", "openai-chat")]
    # the same bytes re-timed: chunk i arrives at i seconds, so the replay is mid-stream for a long time
    src = rebuild_run(live.provider, request=live.request, spec=live.spec, started_at=live.started_at,
                      headers=(0, 200, "HTTP/1.1", "OK", live.response_headers),
                      chunks=[(i * 1_000_000_000, c) for i, (_, c) in enumerate(live.chunks)],
                      end_ns=len(live.chunks) * 1_000_000_000)
    assert src.result() == live.result()
    slow = ProviderRun(src.provider, src.request, src.spec)

    async def go():
        task = asyncio.ensure_future(replay_into(slow, src, speed=1.0))
        while slow.metrics.bytes == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert slow.status == "cancelled" and 0 < slow.metrics.bytes < src.metrics.bytes


def _check_har_1_2(har: dict, n: int) -> None:
    """The HAR 1.2 required structure (http://www.softwareishard.com/blog/har-12-spec/)."""
    log = har["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] and log["creator"]["version"]
    for page in log.get("pages", []):
        assert {"startedDateTime", "id", "title", "pageTimings"} <= set(page)
    entries = log["entries"]
    assert len(entries) == n
    for e in entries:
        assert {"startedDateTime", "time", "request", "response", "cache", "timings"} <= set(e)
        datetime.fromisoformat(e["startedDateTime"])
        req, resp, t = e["request"], e["response"], e["timings"]
        assert {"method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize",
                "bodySize"} <= set(req)
        assert {"status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL",
                "headersSize", "bodySize"} <= set(resp)
        assert {"size", "mimeType"} <= set(resp["content"])
        for h in req["headers"] + resp["headers"] + req["queryString"]:
            assert set(h) >= {"name", "value"} and all(isinstance(h[k], str) for k in ("name", "value"))
        assert {"send", "wait", "receive"} <= set(t)
        for k, v in t.items():
            assert isinstance(v, (int, float)) and (v >= 0 or v == -1), (k, v)
        assert e["time"] == pytest.approx(sum(v for v in t.values() if v != -1), abs=0.01)
        if "postData" in req:
            assert {"mimeType", "text"} <= set(req["postData"])


@pytest.mark.slow
def test_har_is_valid_1_2_with_raw_bodies_and_frames(sweep, tmp_path):
    runs = all_runs(sweep)
    path = write_har(runs, tmp_path / "all.har")
    har = json.loads(path.read_text(encoding="utf-8"))
    _check_har_1_2(har, len(runs))
    for e, run in zip(har["log"]["entries"], runs, strict=True):
        content = e["response"]["content"]
        body = base64.b64decode(content["text"]) if content.get("encoding") == "base64" else \
            content["text"].encode("utf-8")
        assert body == run.body and content["size"] == len(run.body)
        assert e["response"]["status"] == run.http_status and e["request"]["url"] == run.request.url
        assert json.loads(e["request"]["postData"]["text"]) == run.request.body
        msgs = e["_eventSourceMessages"]
        frames = [i for i in run.decoder.items if hasattr(i, "event")]
        assert len(msgs) == len(frames) == run.metrics.frames
        start = datetime.fromisoformat(e["startedDateTime"]).timestamp()
        for m, f, t in zip(msgs, frames, run.frame_times, strict=True):
            assert (m["eventName"], m["eventId"], m["data"]) == (f.event, f.id, f.data)
            assert m["time"] == pytest.approx(run.started_at + t / 1e9, abs=1e-5) and m["time"] >= start - 0.001
        assert [m["time"] for m in msgs] == sorted(m["time"] for m in msgs)
        if run.http_status == 200:
            assert re.search(r"^(data|event):", content["text"], re.M)
            assert e["timings"]["wait"] == pytest.approx(run.metrics.t_headers_ns / 1e6, abs=0.001)


@pytest.mark.slow
def test_markdown_report_side_by_side(sweep, tmp_path):
    runs = [sweep["runs"][(s, f)] for s in ("thinking", "tool-call", "http-429", "drop") for f in FORMATS]
    text = write_markdown(runs, tmp_path / "r.md").read_text(encoding="utf-8")
    header = next(ln for ln in text.splitlines() if ln.startswith("| |"))
    assert all(r.name in header for r in runs)                # one column per provider
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    assert all(ln.count(" | ") >= len(runs) for ln in rows[2:])
    for label in ("Status", "Finish", "Time to first content", "Total time", "Output tokens", "Keepalives",
                  "Largest gap between frames", "Error", "Tool calls", "Thinking"):
        assert any(ln.startswith(f"| {label} |") for ln in rows), label
    for r in runs:
        assert f"## {r.name}" in text
    assert "### Tool call `get_weather`" in text and "### Thinking" in text
    assert "http_error" in text and "connection_dropped" in text and "`missing-terminator`" in text
    anth = sweep["runs"][("thinking", "anthropic")]
    assert "".join(b.text for b in anth.reply.ordered_blocks() if b.kind == "text") in text


@pytest.mark.slow
def test_export_chooses_by_extension(sweep, tmp_path):
    runs = [sweep["runs"][("text", f)] for f in FORMATS]
    assert read_jsonl(export(runs, tmp_path / "a.JSONL"))[0].result() == runs[0].result()
    _check_har_1_2(json.loads(export(runs, tmp_path / "a.har").read_text()), 4)
    assert export(runs, tmp_path / "a.md").read_text().startswith("# StreamScope report")
    with pytest.raises(ValueError, match="extension"):
        export(runs, tmp_path / "a.txt")


@pytest.mark.slow
def test_capture_is_servable_by_the_emulator(sweep, capture_file):
    """The emulator's --serve reads the same format back: status, chunks and ending survive."""
    recs = load_capture(capture_file)
    served = {r.source.split("(")[-1].rstrip(")"): r for r in recs}
    for run in all_runs(sweep):
        rec = served[run.name]
        assert rec.body == run.body and rec.status == run.http_status
    assert served["anthropic/drop"].after == "drop" and served["gemini/stall"].after == "stall"


@pytest.mark.slow
def test_a_served_capture_streams_back_to_the_same_result(sweep, tmp_path):
    src = sweep["runs"][("split-utf8", "gemini")]
    path = write_jsonl([src], tmp_path / "one.jsonl")
    with EmulatorServer(recordings=load_capture(path)) as base:
        again = prepare_runs(demo_providers(base, "whatever")[3:], PromptSpec(user=PROMPT))
        asyncio.run(Session(again).run())
    assert again[0].body == src.body and again[0].decoder.result() == src.decoder.result()


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"hello\n", "not JSON"),
    (b'{"format": "other"}\n', "not a StreamScope capture"),
    (b'{"format": "streamscope-capture", "version": 99}\n', "version 99"),
    (b'{"format": "streamscope-capture", "version": 1}\n{"type": "chunk", "run": 0, "t_ns": 0, "text": "x"}\n',
     "before its 'run' record"),
])
def test_bad_captures_say_why(content, words):
    with pytest.raises(CaptureError, match=words):
        parse_jsonl(content)


@pytest.mark.slow
def test_truncated_capture_still_imports(sweep, tmp_path):
    run = sweep["runs"][("text", "anthropic")]
    path = write_jsonl([run], tmp_path / "t.jsonl")
    lines = path.read_text().splitlines()
    cut = [ln for ln in lines if json.loads(ln).get("type") not in ("end", "summary")][:-1]
    back = parse_jsonl("\n".join(cut).encode())[0]
    assert back.error["type"] == "capture_truncated" and back.metrics.bytes == run.metrics.bytes - len(
        run.chunks[-1][1])
    assert back.chunks == run.chunks[:-1]


@pytest.mark.slow
def test_demo_capture_has_no_key(sweep, tmp_path):
    from core.live.config import DEMO_KEY

    runs = [sweep["runs"][(s, f)] for s in ("text", "tool-call", "http-429", "drop") for f in FORMATS]
    for ext in ("jsonl", "har", "md"):
        assert DEMO_KEY not in export(runs, tmp_path / f"k.{ext}").read_text(errors="replace")
    assert "REDACTED" in json.dumps(har_document(runs))


# -- one bad record never loses the file (issue 11, item 7) ----------------------------------------------------
_BAD_RECORDS = {
    "not JSON": b"{this is not json",
    "nested too deeply": b"[" * 100_000 + b"]" * 100_000,
    "not a capture record": b'{"type": "chunk", "t_ns": 1, "text": "x"}',
    "not base64": b'{"type": "chunk", "run": 0, "t_ns": 5, "b64": "***"}',
    "without text or b64": b'{"type": "chunk", "run": 0, "t_ns": 5, "text": 7}',
    "without a t_ns": b'{"type": "chunk", "run": 0, "t_ns": "soon", "text": "data: x\\n\\n"}',
    "before its 'run' record": b'{"type": "chunk", "run": 9, "t_ns": 0, "text": "x"}',
    "integer status": b'{"type": "response", "run": 0, "status": "200"}',   # (the real one comes after)
}


def test_a_bad_record_is_reported_and_the_rest_replays(sweep, tmp_path):
    runs = [sweep["runs"][("text", "anthropic")], sweep["runs"][("text", "gemini")]]
    lines = capture_lines(runs)
    # every bad record after the first run's own record (the second one's response record follows it)
    planted = lines[:2] + list(_BAD_RECORDS.values()) + [ln.encode() for ln in lines[2:]]
    problems: list[tuple[str, str]] = []
    back = parse_jsonl(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in planted), "cap", problems)
    assert [r.name for r in back] == [r.name for r in runs]
    for live, imported in zip(runs, back):
        assert imported.result() == live.result()   # the bad records held nothing of theirs
    assert len(problems) == len(_BAD_RECORDS)
    for (why, _), (where, what), n in zip(_BAD_RECORDS.items(), problems, range(3, 3 + len(_BAD_RECORDS))):
        assert where == f"line {n}" and why in what and "\n" not in what
    assert sum("the record was skipped" in note for r in back for note in r.notes) == len(_BAD_RECORDS)


def test_a_run_that_cannot_be_rebuilt_is_left_out_and_the_others_replay(sweep):
    runs = [sweep["runs"][("text", "openai-chat")], sweep["runs"][("text", "gemini")]]
    records = [json.loads(ln) for ln in capture_lines(runs)]
    for rec in records:
        if rec.get("type") == "run" and rec["run"] == 0:
            rec["provider"] = ["not", "an", "object"]
    problems: list[tuple[str, str]] = []
    back = parse_jsonl("\n".join(json.dumps(r) for r in records).encode(), "cap", problems)
    assert [r.name for r in back] == [runs[1].name] and back[0].result() == runs[1].result()
    assert len(problems) == 1 and "run 0 cannot be rebuilt" in problems[0][1] and "left out" in problems[0][1]


def test_headless_replay_reports_a_bad_record_and_replays_the_rest(sweep, tmp_path):
    import subprocess
    import sys

    run = sweep["runs"][("text", "anthropic")]
    lines = capture_lines([run])
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join([lines[0].encode(), lines[1].encode(), b"[" * 100_000 + b"]" * 100_000]
                               + [ln.encode() for ln in lines[2:]]) + b"\n")
    r = subprocess.run([sys.executable, "main.py", "replay", "--headless", str(path)], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parents[3], timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert json.loads(r.stdout) == json.loads(json.dumps(run.result()))
    assert r.stderr.strip() == "replay: skipped line 3: nested too deeply to read; the record was skipped"


def test_rebuilding_calls_the_contexts_pause_before_each_chunk_and_nowhere_else(tmp_path):
    """`REBUILD_PAUSE`: a window reading a recording off its thread waits there between chunks; the hook is the
    context's own, so another context (another reader, the pool thread's next job) rebuilds without it."""
    import contextvars

    from core.live.config import ProviderConfig
    from core.live.recorder import REBUILD_PAUSE

    body = [b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n',
            b'data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n',
            b"data: [DONE]\n\n"]
    provider = ProviderConfig(name="p", format="openai-chat", base_url="", model="m")
    chunks = [(i * 1000, c) for i, c in enumerate(body)]
    calls = []

    def paused():
        REBUILD_PAUSE.set(lambda: calls.append(1))
        return rebuild_run(provider, headers=(0, 200, "HTTP/1.1", "OK", []), chunks=chunks, end_ns=5000)

    run = contextvars.Context().run(paused)
    assert len(calls) == len(chunks)
    plain = rebuild_run(provider, headers=(0, 200, "HTTP/1.1", "OK", []), chunks=chunks, end_ns=5000)
    assert len(calls) == len(chunks) and REBUILD_PAUSE.get() is None      # (not set here)
    assert run.result() == plain.result() and "".join(
        b.text or "" for b in run.reply.ordered_blocks()) == "Hi there"


def test_reading_a_capture_pauses_at_each_record_and_chunk_and_reads_the_same(tmp_path):
    import contextvars

    from core.live.capture import export, read_jsonl
    from core.live.config import ProviderConfig
    from core.live.recorder import REBUILD_PAUSE

    body = [b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n', b"data: [DONE]\n\n"]
    provider = ProviderConfig(name="p", format="openai-chat", base_url="", model="m")
    run = rebuild_run(provider, headers=(0, 200, "HTTP/1.1", "OK", []), chunks=[(0, body[0]), (10, body[1])],
                      end_ns=20)
    path = export([run], tmp_path / "c.jsonl")
    records = len(path.read_text(encoding="utf-8").splitlines()) - 1       # (after the header line)
    calls = []

    def read():
        REBUILD_PAUSE.set(lambda: calls.append(1))
        return read_jsonl(path)

    runs = contextvars.Context().run(read)
    assert len(calls) == records + len(body)           # each record read, then each chunk rebuilt
    assert [r.result() for r in runs] == [r.result() for r in read_jsonl(path)] == [run.result()]


@pytest.mark.parametrize("ext", ["jsonl", "har", "md"])
def test_a_failed_export_leaves_no_part_file_and_names_only_the_path(tmp_path, ext):
    """Writing over a directory failed at the rename, left PATH.part behind, and the error named both files."""
    target = tmp_path / f"x.{ext}"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        export([], target)
    assert not (tmp_path / f"x.{ext}.part").exists() and sorted(p.name for p in tmp_path.iterdir()) == [target.name]
    assert ".part" not in str(info.value) and info.value.strerror == "Is a directory"
    export([], tmp_path / f"y.{ext}")   # (a good path still writes, with no .part left)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, f"y.{ext}"])
