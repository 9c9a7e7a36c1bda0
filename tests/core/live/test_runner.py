"""Live runs against the real emulator server: every scenario in its catalog, in every wire format.

One session fixture streams all scenarios x formats concurrently (no pacing, except where timing is the point)
and the tests check each run's documented outcome, the exact decoded reply against the emulator's own script,
and that the captured bytes equal what the server sent. test_capture.py reuses the same runs.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from core.wire import events as ev
from core.live.config import ProviderConfig, demo_providers
from core.servers.emulator import history as emulator_history, providers as pv
from core.servers.emulator.recordings import Recording
from core.servers.emulator.scenarios import SCENARIOS, _in_band_error, build_plan, schedule
from core.servers.emulator.server import EmulatorServer
from core.wire.pipeline import decode_bytes
from core.live.request import PromptSpec
from core.live.recorder import MIN_RATE_SPAN_NS, ProviderRun, prepare_run, prepare_runs
from core.live.transport import Session, stream_provider
from core.live.replay import replay_run

PROMPT = "What is the capital of France?"
from core.wire.formats import FORMATS  # noqa: E402
WEATHER = {"name": "get_weather", "description": "Current weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
NO_PACING = {"x-emulator-speed": "0"}
STALL_TIMEOUT = 0.6


def with_headers(runs, headers):
    for r in runs:
        if r._send is not None:
            r._send.headers.update(headers)
            r.request.headers.update(headers)
    return runs


def spec_for(scenario: str) -> PromptSpec:
    tools = (WEATHER,) if scenario in ("tool-call", "parallel-tools") else ()
    # firehose: no output limit, so the emulator sends its tens of thousands of deltas
    return PromptSpec(user=PROMPT, tools=tools, max_tokens=100_000 if scenario in ("firehose", "long") else 1024,
                      thinking=scenario == "thinking", thinking_budget=1024)


@pytest.fixture(scope="session")
def emu_base():
    server = EmulatorServer()
    base = server.start()
    yield base
    server.stop()


@pytest.fixture(scope="session")
def sweep(emu_base):
    """{(scenario, format): finished ProviderRun} for every scenario in the catalog, streamed concurrently."""
    catalog = httpx.get(emu_base + "/scenarios").json()
    names = [s["name"] for s in catalog["scenarios"]]
    assert set(names) >= set(SCENARIOS) and len(names) >= 15
    runs: dict[tuple[str, str], ProviderRun] = {}
    updates: dict[str, int] = {}

    def on_update(run):
        updates[run.name] = updates.get(run.name, 0) + 1

    async def go():
        fast, stall = [], []
        for s in names:
            for p in demo_providers(emu_base, s):
                run = prepare_run(dataclasses.replace(p, name=f"{p.format}/{s}"), spec_for(s))
                with_headers([run], NO_PACING)
                runs[(s, p.format)] = run
                (stall if s == "stall" else fast).append(run)
        async with httpx.AsyncClient() as client:
            await Session(fast, client=client, read_timeout=30, on_update=on_update).run()
            # after the others: the firehose's server-side encoding must not eat the stall's short timeout
            await Session(stall, client=client, read_timeout=STALL_TIMEOUT, on_update=on_update).run()

    asyncio.run(go())
    return {"runs": runs, "updates": updates, "base": emu_base}


def server_plan(run: ProviderRun):
    """What the emulator planned for this exact request (its own parser and scenario builder)."""
    req = run.request
    raw = req.content()
    headers = {k.lower(): v for k, v in req.headers.items()}
    query = dict(parse_qsl(urlsplit(req.url).query))
    fmt = run.format
    model = urlsplit(req.url).path.rsplit("/", 1)[-1].split(":")[0] if fmt == "gemini" else ""
    parsed = pv.parse_request(fmt, headers, query, raw, model)
    emulator_history.annotate(fmt, parsed)   # what the server reads from earlier turns and `include`
    plan = build_plan(fmt, parsed.model, parsed.conversation, None)
    plan.encode_options = dict(parsed.options)
    return plan, parsed


def text_of(run, kind="text"):
    return "".join(b.text or "" for b in run.reply.ordered_blocks() if b.kind == kind)


ALL = [(s, f) for s in SCENARIOS for f in FORMATS]


@pytest.mark.parametrize("scenario, fmt", ALL, ids=[f"{s}-{f}" for s, f in ALL])
@pytest.mark.slow
def test_documented_outcome(sweep, scenario, fmt):
    run = sweep["runs"][(scenario, fmt)]
    r = run.result()
    codes = {d["code"] for d in r["diagnostics"]}
    assert run.finished and run.started_at is not None
    if scenario in ("http-429", "http-500"):
        status = int(scenario[-3:])
        assert run.status == "error" and run.http_status == status == r["http_status"]
        assert run.error["type"] == "http_error" and f"HTTP {status}" in run.error["message"]
        assert run.error["raw"] == json.loads(run.body)            # the provider's error body, parsed
        want = (pv.rate_limited(fmt, "x") if status == 429 else pv.server_error(fmt)).body
        inner = want.get("error", want)
        assert run.error["raw"]["error"]["message"].split(" for ")[0] == inner["message"].split(" for ")[0]
        assert inner["message"].split(" for ")[0] in run.error["message"]
        assert run.metrics.frames == 0 and run.decoder.bytes_received == 0   # never fed as a stream
        return
    assert run.http_status == 200 and run.metrics.frames > 0
    if scenario == "mid-stream-error":
        want = _in_band_error(fmt)
        assert run.status == "error" and run.error["type"] == want.type and want.message in run.error["message"]
        assert r["error"] == run.error and text_of(run)
    elif scenario == "drop":
        assert run.status == "error" and run.error["type"] == "connection_dropped"
        assert text_of(run) and not r["terminated"] and "missing-terminator" in codes
    elif scenario == "stall":
        assert run.status == "stalled" and run.error["type"] == "stalled"
        assert f"{STALL_TIMEOUT:g} s" in run.error["message"]
        assert text_of(run) and not r["terminated"]
        assert run.metrics.t_total_ns - run.metrics.t_last_byte_ns >= STALL_TIMEOUT * 0.9e9
    else:
        assert run.status == "done" and run.error is None and r["error"] is None, run.error
        assert r["terminated"] is (scenario != "no-terminator")
    if scenario == "no-terminator":
        assert "missing-terminator" in codes
    if scenario == "malformed-json":
        assert "data-not-json" in codes
    if scenario == "tool-call":
        calls = [b for b in r["blocks"] if b["type"] == "tool_call"]
        assert len(calls) == 1 and calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"])
        assert r["finish_reason"]["canonical"] == "tool_calls"
    if scenario == "parallel-tools":
        calls = [b for b in r["blocks"] if b["type"] == "tool_call"]
        assert len(calls) == 2 and all(isinstance(json.loads(c["arguments"]), dict) for c in calls)
    if scenario == "thinking":
        assert text_of(run, "thinking") and text_of(run)
    if scenario == "ping-heavy":
        assert run.metrics.keepalives >= 4
        assert run.metrics.keepalives > sweep["runs"][("text", fmt)].metrics.keepalives
    if scenario == "firehose":
        assert run.metrics.frames > 10_000 and len(text_of(run)) > 20_000
    if scenario == "long":
        assert len(text_of(run).split()) > 1000
    if scenario == "split-utf8":
        assert any(not _utf8(c) for _, c in run.chunks), "no chunk boundary inside a character"
        assert "\ufffd" not in text_of(run) and any(ord(ch) > 0x7FF for ch in text_of(run))
    if scenario in ("text", "long", "firehose", "thinking", "split-utf8", "ping-heavy"):
        assert r["finish_reason"]["canonical"] == "stop"
    if scenario == "no-terminator":   # Responses and Gemini carry the finish in the end marker itself
        assert r["finish_reason"]["canonical"] == ("stop" if fmt in ("openai-chat", "anthropic") else None)


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


STREAMED = [(s, f) for s, f in ALL if s not in ("http-429", "http-500")]


@pytest.mark.parametrize("scenario, fmt", STREAMED, ids=[f"{s}-{f}" for s, f in STREAMED])
@pytest.mark.slow
def test_capture_bytes_equal_what_the_server_sent(sweep, scenario, fmt):
    run = sweep["runs"][(scenario, fmt)]
    plan, _ = server_plan(run)
    sent = b"".join(data for _, data in schedule(fmt, plan, 0))
    assert run.body == sent
    assert sum(len(c) for _, c in run.chunks) == run.metrics.bytes == len(sent)
    times = [t for t, _ in run.chunks]
    assert times == sorted(times) and times[0] >= run.metrics.t_headers_ns >= 0
    headers = dict((k.lower(), v) for k, v in run.response_headers)
    assert headers["x-emulator-scenario"] == scenario and "text/event-stream" in headers["content-type"]


@pytest.mark.parametrize("scenario, fmt", STREAMED, ids=[f"{s}-{f}" for s, f in STREAMED])
@pytest.mark.slow
def test_exact_decoded_reply(sweep, scenario, fmt):
    run = sweep["runs"][(scenario, fmt)]
    # the same bytes decoded in one piece give the same result: the arrival chunking changes nothing
    assert run.decoder.result() == decode_bytes(fmt, run.body).result()
    plan, _ = server_plan(run)
    want = [b for b in plan.reply.blocks if b.choice == 0]
    got = [b for b in run.result()["blocks"] if b["choice"] == 0]
    if scenario == "malformed-json":   # one delta's JSON is cut: exactly that fragment is missing
        assert len([d for d in run.reply.diagnostics if d.code == "data-not-json"]) == 1
        full = "".join(b.text for b in want if b.kind == "text")
        assert len(text_of(run)) < len(full) and all(w in full for w in text_of(run).split())
        return
    assert [b["type"] for b in got] == [b.kind for b in want]
    for g, w in zip(got, want):
        if w.kind == "tool_call":
            assert g["name"] == w.name
            if fmt == "gemini":   # Gemini sends whole objects: compact JSON of args
                assert json.loads(g["arguments"]) == json.loads(w.arguments)
            else:
                assert g["arguments"] == w.arguments
                assert g["id"] == w.id
        else:
            assert g["text"] == w.text
    if scenario not in ("drop", "stall", "mid-stream-error", "no-terminator"):
        assert run.result()["finish_reason"]["canonical"] == plan.reply.finish
        u = run.result()["usage"]
        assert (u["input_tokens"], u["output_tokens"]) == (plan.reply.usage.input_tokens,
                                                           plan.reply.usage.output_tokens)


@pytest.mark.slow
def test_events_frames_and_metrics_are_consistent(sweep):
    for (scenario, fmt), run in sweep["runs"].items():
        m = run.metrics
        assert len(run.frame_times) == run.decoder.frames == m.frames, run.name
        assert run.frame_times == sorted(run.frame_times)
        assert [t for t, _ in run.events] == sorted(t for t, _ in run.events)
        assert m.t_headers_ns is not None and m.t_headers_ns <= m.t_total_ns
        assert sweep["updates"][run.name] >= m.chunks   # told after every processed chunk
        if scenario in ("http-429", "http-500"):
            continue
        assert m.t_headers_ns <= m.t_first_byte_ns <= m.t_first_content_ns <= m.t_last_content_ns <= m.t_total_ns
        assert sum(1 for _, e in run.events if isinstance(e, ev.Keepalive)) <= m.keepalives
        if m.frames > 1:
            gaps = [b - a for a, b in zip(run.frame_times, run.frame_times[1:])]
            assert m.max_gap_ns == max(gaps) and gaps[m.max_gap_after_frame] == m.max_gap_ns
        counted = run.reply.usage_reporting in ev.OUTPUT_COUNTED   # (not Anthropic's up-front figure alone)
        if run.reply.usage is not None and run.reply.usage.output_tokens and counted:
            assert m.output_tokens == run.reply.usage.output_tokens
            span = m.t_last_content_ns - m.t_first_content_ns
            if span >= MIN_RATE_SPAN_NS:
                assert m.tokens_per_s_exact and m.tokens_per_s == pytest.approx(m.output_tokens / (span / 1e9))
            else:                               # a burst: no rate
                assert m.tokens_per_s is None
        assert m.output_tokens_estimated == (m.output_chars + 3) // 4
        if not counted:
            assert m.output_tokens is None and not m.tokens_per_s_exact, run.name


@pytest.mark.slow
def test_one_failure_never_disturbs_another(sweep):
    """Every scenario streamed in one session: the failures are exactly the failing scenarios."""
    failing = {"http-429", "http-500", "drop", "stall", "mid-stream-error"}
    for (scenario, fmt), run in sweep["runs"].items():
        assert run.ok is (scenario not in failing), (run.name, run.status, run.error)


@pytest.mark.slow
def test_paced_metrics_and_estimated_rate(emu_base):
    """With the emulator's own pacing: real gaps, a time to first content, and a rate while streaming."""
    seen = []

    def on_update(run):
        if run.metrics.tokens_per_s is not None and not run.finished:
            seen.append((run.metrics.tokens_per_s_exact, run.metrics.output_tokens_estimated))

    run = prepare_run(demo_providers(emu_base, "text")[2], PromptSpec(user=PROMPT))
    run.on_update = on_update

    async def go():
        async with httpx.AsyncClient() as c:
            await stream_provider(run, c, connect_timeout=5, read_timeout=10)

    asyncio.run(go())
    m = run.metrics
    assert run.ok and m.t_first_content_ns > 100e6     # the emulator waits ~0.15-0.3 s for the first token
    assert m.max_gap_ns > 1e6 and seen and not any(exact for exact, _ in seen)
    assert m.tokens_per_s_exact and 10 < m.tokens_per_s < 100_000


@pytest.mark.slow
def test_cancel_one_leaves_the_others_streaming(emu_base):
    provs = demo_providers(emu_base, "long")
    runs = with_headers(prepare_runs(provs, PromptSpec(user=PROMPT, max_tokens=None)), {"x-emulator-speed": "3"})
    session = Session(runs, read_timeout=10)
    victim = "demo-anthropic"
    state = {}

    async def go():
        task = session.start()
        while not all(r.metrics.output_chars > 200 for r in runs):
            await asyncio.sleep(0.01)
        assert session.cancel(victim)
        await asyncio.sleep(0)   # the cancellation lands
        await asyncio.sleep(0.05)
        state["victim_bytes"] = session.by_name[victim].metrics.bytes
        state["others"] = {r.name: r.metrics.bytes for r in runs if r.name != victim}
        state["statuses"] = {r.name: r.status for r in runs}
        await task

    asyncio.run(go())
    v = session.by_name[victim]
    assert state["statuses"][victim] == "cancelled"
    assert all(s == "streaming" for n, s in state["statuses"].items() if n != victim)
    assert v.status == "cancelled" and v.error["type"] == "cancelled" and v.metrics.bytes == state["victim_bytes"]
    assert text_of(v) and not v.reply.terminated          # what arrived before the cancel is kept
    assert session.tasks[victim].cancelled()
    for r in runs:
        if r.name != victim:
            assert r.status == "done" and r.reply.terminated, r.name
            assert r.metrics.bytes > state["others"][r.name]   # they kept streaming after the cancel
            assert len(text_of(r).split()) > 1000
    assert not session.cancel(victim) and not session.cancel("nope")


@pytest.mark.slow
def test_cancel_all(emu_base):
    runs = with_headers(prepare_runs(demo_providers(emu_base, "long"), PromptSpec(user=PROMPT, max_tokens=None)),
                        {"x-emulator-speed": "1"})
    session = Session(runs)

    async def go():
        task = session.start()
        while not any(r.status == "streaming" for r in runs):
            await asyncio.sleep(0.01)
        session.cancel_all()
        await task

    asyncio.run(go())
    assert {r.status for r in runs} == {"cancelled"} and session.done


@pytest.mark.slow
def test_connect_failed_missing_key_and_insecure_do_not_stop_the_others(emu_base, monkeypatch):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed_port = s.getsockname()[1]
    s.close()
    monkeypatch.delenv("SS_UNSET_KEY", raising=False)
    good = demo_providers(emu_base)[0]
    refused = ProviderConfig("refused", "openai-chat", f"http://127.0.0.1:{closed_port}/v1", "text", "")
    nokey = ProviderConfig("nokey", "anthropic", emu_base, "text", "SS_UNSET_KEY")
    insecure = ProviderConfig("insecure", "gemini", "http://203.0.113.9", "text", "", builtin_key="k-123456")
    runs = prepare_runs([good, refused, nokey, insecure], PromptSpec(user=PROMPT))
    assert runs[2].finished and runs[3].finished    # refused before anything is sent
    asyncio.run(Session(runs, connect_timeout=2).run())
    by = {r.name: r for r in runs}
    assert by["demo-openai-chat"].ok
    assert by["refused"].status == "error" and by["refused"].error["type"] == "connect_failed"
    assert by["refused"].http_status is None and by["refused"].result()["http_status"] is None
    assert by["nokey"].error["type"] == "missing_key" and "SS_UNSET_KEY" in by["nokey"].error["message"]
    assert not by["nokey"].sent and by["nokey"].request is not None      # shown, never sent
    assert by["insecure"].error["type"] == "insecure_transport" and not by["insecure"].sent
    assert "k-123456" not in json.dumps(by["insecure"].request.to_json())


def test_a_key_a_header_cannot_carry_is_refused_without_showing_it(monkeypatch, tmp_path):
    """A key pasted with a line end (or any control or non-ASCII character) made httpx fail with the header quoted,
    escaped where no redaction found it: printed and exported in full. Now it is refused before sending, by name."""
    from core.live.capture import export
    from core.live.config import EnvRef

    monkeypatch.setenv("SS_NL_KEY", "sk-qa-SUPERSECRET-12\n3456")
    monkeypatch.setenv("SS_RU_KEY", "sk-qa-SUPERSECRET-ключ")
    monkeypatch.setenv("SS_OK_KEY", "sk-qa-fine-0123456789")
    monkeypatch.setenv("SS_TAB_TOKEN", "tok\tSECRETTAB99")
    base = "http://127.0.0.1:9/v1"
    runs = prepare_runs([ProviderConfig("nl", "openai-chat", base, "m", "SS_NL_KEY"),
                         ProviderConfig("ru", "anthropic", base, "m", "SS_RU_KEY"),
                         ProviderConfig("hdr", "openai-chat", base, "m", "SS_OK_KEY",
                                        headers={"X-Tenant": EnvRef("SS_TAB_TOKEN")})], PromptSpec(user=PROMPT))
    for r, var in zip(runs, ("SS_NL_KEY", "SS_RU_KEY", "SS_TAB_TOKEN")):
        assert r.finished and not r.sent and r.error["type"] == "bad_request", r.name
        assert var in r.error["message"] and "header cannot carry" in r.error["message"]
    written = "".join(export(runs, tmp_path / f"x{ext}").read_text() for ext in (".jsonl", ".md", ".har"))
    assert "SUPERSECRET" not in written and "SECRETTAB99" not in written
    assert "SUPERSECRET" not in repr([r.result() for r in runs])


def _served(recordings):
    return EmulatorServer(recordings=recordings)


@pytest.mark.slow
def test_bodies_that_are_not_event_streams(emu_base):
    """Gemini without alt=sse (a JSON array, 200) and a JSON body with 200 are reported as such; the whole reply
    each holds is still read (its one frame, the body), so the pane shows what came."""
    gem = prepare_run(demo_providers(emu_base)[3], PromptSpec(user=PROMPT))
    gem._send.url = gem._send.url.replace("?alt=sse", "")
    chat = prepare_run(demo_providers(emu_base)[0], PromptSpec(user=PROMPT))
    chat._send.body["stream"] = False
    chat._send.body.pop("stream_options")
    asyncio.run(Session([gem, chat]).run())
    for run in (gem, chat):
        assert run.http_status == 200 and run.status == "error"
        assert run.error["type"] == "not_event_stream" and run.body
        assert run.error["raw"] == json.loads(run.body)
        assert run.metrics.frames == 1 and text_of(run)
    assert isinstance(gem.error["raw"], list) and gem.error["raw"][0]["candidates"]


def test_unframed_json_error_inside_an_event_stream():
    """Gemini can end a 200 event stream with a bare JSON error object: reported, the frames before it kept."""
    frame = (b'data: {"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}, '
             b'"index": 0}], "modelVersion": "gemini-2.5-flash"}\r\n\r\n')
    unframed = b'{\n  "error": {\n    "code": 503,\n    "message": "The model is overloaded.",\n' \
               b'    "status": "UNAVAILABLE"\n  }\n}\n'
    rec = Recording("gemini", [(0.0, frame), (0.01, unframed)], status=200,
                    headers=[("content-type", "text/event-stream")], headers_at=0.0)
    with _served([rec]) as base:
        run = prepare_run(ProviderConfig("g", "gemini", base, "x", "", builtin_key="k"), PromptSpec(user="hi"))
        asyncio.run(Session([run]).run())
    assert run.status == "error" and run.error["type"] == "unframed_error"
    assert run.error["raw"]["error"]["status"] == "UNAVAILABLE" and "overloaded" in run.error["message"]
    assert text_of(run) == "Hello" and run.result()["error"] == run.error


def test_a_key_echoed_by_the_server_is_masked_everywhere(caplog, tmp_path):
    from core.live.capture import export

    key = "sk-echo-5f1e2d3c4b5a6978"
    # the key whole inside one event, but cut across two network writes; then again split across two events
    body = (b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"your key '
            b'is ' + key.encode() + b'"}}]}\n\ndata: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
            b'"delta":{"content":" or ' + key[:9].encode() + b'"}}]}\n\ndata: {"id":"c","object":"chat.completion.'
            b'chunk","choices":[{"index":0,"delta":{"content":"' + key[9:].encode() + b'"},"finish_reason":"stop"}]}'
            b'\n\ndata: [DONE]\n\n')
    cut = body.index(key.encode()) + 7
    rec = Recording("openai-chat", [(0.0, body[:cut]), (0.01, body[cut:])], status=200,
                    headers=[("content-type", "text/event-stream"), ("x-echo", key)], headers_at=0.0)
    caplog.set_level(logging.DEBUG)
    with _served([rec]) as base:
        run = prepare_run(ProviderConfig("e", "openai-chat", base + "/v1", "x", "SS_ECHO_KEY"),
                          PromptSpec(user="hi"), key_resolver=lambda p: key)
        asyncio.run(Session([run]).run())
    assert run.ok and key.encode() not in run.body and len(run.body) == len(body)
    # re-decoded from the masked bytes: the key split across two events is masked in them too (each delta
    # literal that holds a part of it, whole)
    assert text_of(run) == "your key is " + "*" * (len(text_of(run)) - len("your key is "))
    assert key not in json.dumps(run.result())                              # ... and masked once decoded
    assert key not in repr(run.response_headers) and key not in repr(run.request.to_json())
    assert any("masked" in n for n in run.notes)
    assert key not in caplog.text and key[:12] not in caplog.text
    assert run.decoder.result() == decode_bytes("openai-chat", run.body).result()
    for ext in ("jsonl", "har", "md"):
        data = export([run], tmp_path / f"e.{ext}").read_bytes()
        assert key.encode() not in data and key[:12].encode() not in data


@pytest.mark.slow
def test_replay_run_matches_live_and_keeps_timing(sweep):
    src = sweep["runs"][("ping-heavy", "anthropic")]
    calls = []
    t = time.monotonic()
    replayed = asyncio.run(replay_run(src, speed=None, on_update=lambda r: calls.append(r.status)))
    assert time.monotonic() - t < 2
    assert replayed.result() == src.result() and replayed.metrics == src.metrics
    assert replayed.chunks == src.chunks and replayed.frame_times == src.frame_times
    assert [e for _, e in replayed.events] == [e for _, e in src.events]
    assert len(calls) >= len(src.chunks) and calls[-1] == "done"


def test_an_older_capture_holding_an_escaped_key_is_masked_on_replay(tmp_path, monkeypatch):
    """A capture written before decoded-value masking (or by another tool) is masked again when read, with the
    keys this machine knows for its providers: the headless replay and the window never show it."""
    import subprocess
    import sys

    from core.live.capture import read_jsonl, write_jsonl
    from core.live.recorder import rebuild_run
    from tests.corpus import ROOT

    key = "sk-old-0a1b2c3d4e5f6a7b"
    escaped = "".join("\\u%04x" % ord(c) for c in key)
    body = ('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"k '
            + escaped + '"}}]}\n\ndata: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
            '"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n').encode()
    provider = ProviderConfig("old", "openai-chat", "https://api.example/v1", "m", "SS_OLD_KEY")
    old = rebuild_run(provider, headers=(0, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=[(1, body)], end_ns=2)
    assert key in json.dumps(old.result())          # what such a file holds once decoded
    path = write_jsonl([old], tmp_path / "old.jsonl")
    monkeypatch.setenv("SS_OLD_KEY", key)
    (run,) = read_jsonl(path)
    assert key not in json.dumps(run.result()) and key.encode() not in run.body
    assert len(run.body) == len(body) and run.result()["terminated"]
    p = subprocess.run([sys.executable, "main.py", "replay", str(path), "--headless"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60, env={**__import__("os").environ})
    assert p.returncode == 0 and key not in p.stdout and '"provider": "old"' in p.stdout
