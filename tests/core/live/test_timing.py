"""Runs opened from recordings that hold no timing (`ProviderRun.timing`): a VCR cassette and a raw `.sse` hold
none, a browser's HAR only the time to the headers and the total. Their unknown times are None (and "n/a", "timing
not recorded") everywhere, never the 0 or the total their chunks were put at; the flag survives the `.jsonl` and
StreamScope's own HAR, and replay; a live run's timing is unchanged."""
from __future__ import annotations

import asyncio
import json

from core.live.capture import export, har_document, markdown_report, run_lines
from core.live.compare_table import NOT_RECORDED, compare_table
from core.live.config import ProviderConfig
from core.live.importers import parse_capture, read_capture
from core.live.metrics import run_metrics
from core.live.recorder import TIMING_NONE, TIMING_RECORDED, TIMING_TOTAL_ONLY, TIMINGS, rebuild_run
from core.live.replay import replay_run
from core.live.runs_csv import CSV_COLUMNS
from core.live.token_curve import token_curve
from tests.core.live.test_importers import browser_har, cassette
from tests.core.servers.tap.faulty import ANTHROPIC, BODY, PIECES

UNKNOWN_WHEN_NONE = ("t_headers_ns", "t_first_byte_ns", "t_first_content_ns", "t_last_content_ns", "t_last_byte_ns",
                     "t_total_ns", "max_gap_ns", "tokens_per_s")


def cassette_run():
    return parse_capture(cassette([("openai-chat", BODY)]), "c.yaml").runs[0]


def har_run():
    return parse_capture(browser_har([("anthropic", ANTHROPIC)]), "session.har").runs[0]


def live_run():
    """A run as the transport records one: every chunk with its own arrival time."""
    provider = ProviderConfig("live", "openai-chat", "http://127.0.0.1:9/v1", "m", "")
    chunks = [(50_000_000 + 200_000_000 * i, p) for i, p in enumerate(PIECES)]
    return rebuild_run(provider, headers=(40_000_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                       chunks=chunks, end_ns=chunks[-1][0] + 1_000_000)


def assert_no_time(run) -> None:
    assert run.timing == TIMING_NONE and run.status == "done"
    m = run.metrics
    assert all(getattr(m, k) is None for k in UNKNOWN_WHEN_NONE), m
    rm = run_metrics(run)
    assert (rm.ttft_ns, rm.last_token_ns, rm.total_ns, rm.tokens_per_s, rm.gaps, rm.gap_max_ns) == \
        (None, None, None, None, 0, None)
    j = rm.to_json()
    assert (j["ttft_ms"], j["total_ms"], j["timing"]) == (None, None, TIMING_NONE)


def test_the_names_are_defined_once():
    assert TIMINGS == ("recorded", "total-only", "none") and CSV_COLUMNS[-1] == "timing"


def test_a_cassette_run_has_no_time_not_zero():
    run = cassette_run()
    assert run.result()["blocks"][0]["text"]          # (it decodes as before)
    assert_no_time(run)
    assert run.clock() == 0 and len(token_curve(run)) == 0
    table = compare_table([run_metrics(run)])
    assert table.text(0, "ttft") == table.text(0, "total") == table.text(0, "gap_max") == NOT_RECORDED
    assert "not recorded" in "\n".join(table.markdown())
    report = markdown_report([run])
    assert "- Timings: timing not recorded" in report and "| Timing | not recorded |" in report
    assert "Time to first content | – |" in report and "0 ms" not in report


def test_a_raw_sse_body_has_no_time(tmp_path):
    p = tmp_path / "rec.sse"
    p.write_bytes(BODY)
    assert_no_time(read_capture(p).runs[0])
    p.write_bytes(b'{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",'
                  b'"content":"hi"},"finish_reason":"stop"}]}')
    assert_no_time(read_capture(p).runs[0])     # (a whole JSON reply: the same)


def test_a_forced_format_keeps_the_flag():
    run = parse_capture(cassette([("openai-chat", BODY)]), "c.yaml", format="anthropic").runs[0]
    assert run.timing == TIMING_NONE and run.metrics.t_total_ns is None


def test_a_browsers_har_has_headers_and_total_but_no_ttft():
    run = har_run()
    assert run.timing == TIMING_TOTAL_ONLY
    m = run.metrics
    assert m.t_headers_ns == 100_500_000 and m.t_total_ns == 120_750_000
    assert m.t_first_content_ns is None and m.t_last_content_ns is None and m.max_gap_ns is None
    rm = run_metrics(run)
    assert rm.ttft_ns is None and rm.total_ns == 120_750_000 and rm.gaps == 0 and rm.tokens_per_s is None
    table = compare_table([rm])
    assert table.text(0, "ttft") == NOT_RECORDED and table.text(0, "total") == "121 ms"
    assert "first content –" in markdown_report([run]) and "per-chunk times not recorded" in markdown_report([run])


def test_a_har_without_timings_has_none():
    doc = json.loads(browser_har([("anthropic", ANTHROPIC)]))
    del doc["log"]["entries"][1]["timings"]
    assert_no_time(parse_capture(json.dumps(doc).encode(), "x.har").runs[0])


def test_a_har_whose_frames_carry_their_times_is_recorded():
    doc = json.loads(browser_har([("openai-chat", BODY)]))
    e = doc["log"]["entries"][1]
    start = 1767268800.0          # the entry's startedDateTime
    frames = [f for f in BODY.decode().split("\n\n") if f]
    e["_eventSourceMessages"] = [{"time": start + 0.5 + 0.25 * i, "eventName": "message", "eventId": "",
                                  "data": f[6:]} for i, f in enumerate(frames)]
    for kept in (True, False):    # the body kept, or rebuilt from the messages
        if not kept:
            e["response"]["content"] = {"size": 0, "mimeType": "text/event-stream"}
        run = parse_capture(json.dumps(doc).encode(), "x.har").runs[0]
        assert run.timing == TIMING_RECORDED and run.body == BODY, kept
        assert run.metrics.t_first_content_ns == 500_000_000 and run.metrics.t_headers_ns == 100_500_000, kept
        assert run.frame_times[:3] == [500_000_000, 750_000_000, 1_000_000_000], kept


def test_the_flag_survives_the_jsonl_and_streamscopes_har(tmp_path):
    for run in (cassette_run(), har_run()):
        rec = json.loads(run_lines(0, run, ())[0])
        assert rec["type"] == "run" and rec["timing"] == run.timing
        back = read_capture(export([run], tmp_path / "back.jsonl")).runs[0]
        assert back.timing == run.timing and back.result() == run.result()
        assert (back.metrics.t_headers_ns, back.metrics.t_total_ns, back.metrics.t_first_content_ns) == \
            (run.metrics.t_headers_ns, run.metrics.t_total_ns, None)
        har = read_capture(export([run], tmp_path / "back.har")).runs[0]
        assert har.timing == run.timing and har.result()["blocks"] == run.result()["blocks"]
        assert (har.metrics.t_headers_ns, har.metrics.t_total_ns, har.metrics.t_first_content_ns) == \
            (run.metrics.t_headers_ns, run.metrics.t_total_ns, None)


def test_the_har_of_a_run_without_time_invents_none():
    entry = har_document([cassette_run()])["log"]["entries"][0]
    t = entry["timings"]
    assert (t["send"], t["wait"], t["receive"], entry["time"]) == (0, 0, 0, 0)   # (required, never negative)
    assert "timing not recorded" in t["comment"] and entry["_streamscope"]["timing"] == TIMING_NONE
    assert entry["_streamscope"]["metrics"]["total_ms"] is None
    entry = har_document([har_run()])["log"]["entries"][0]
    assert (entry["timings"]["wait"], entry["timings"]["receive"]) == (100.5, 20.25)
    assert entry["_streamscope"]["metrics"]["time_to_first_content_ms"] is None


def test_replay_keeps_the_flag_and_plays_a_run_without_time_at_once():
    for source in (cassette_run(), har_run()):
        run = asyncio.run(asyncio.wait_for(replay_run(source, speed=1.0), 5))
        assert run.timing == source.timing and run.result() == source.result()
        assert (run.metrics.t_total_ns, run.metrics.t_first_content_ns) == (source.metrics.t_total_ns, None)


def test_a_key_masked_later_keeps_the_times_unknown():
    doc = cassette([("openai-chat", BODY.replace(b"Paris", b"sk-masked-later-123"))])
    run = parse_capture(doc, "c.yaml").runs[0]
    run.scrub_secrets(["sk-masked-later-123"])
    assert b"sk-masked-later-123" not in run.body
    assert_no_time(run)


def test_a_live_run_is_unchanged(tmp_path):
    run = live_run()
    assert run.timing == TIMING_RECORDED and run.metrics.t_first_content_ns == 50_000_000
    rm = run_metrics(run)
    assert rm.ttft_ns == 50_000_000 and rm.total_ns == run.chunks[-1][0] + 1_000_000 and rm.gaps > 0
    assert rm.timing == TIMING_RECORDED and len(token_curve(run)) > 2
    assert "timing" not in json.loads(run_lines(0, run, ())[0])   # (the optional key: absent means recorded)
    back = read_capture(export([run], tmp_path / "live.jsonl")).runs[0]
    assert back.timing == TIMING_RECORDED and back.metrics == run.metrics
    assert compare_table([rm]).text(0, "ttft") == "50.0 ms" and "| Timing |" not in markdown_report([run])
    har = read_capture(export([run], tmp_path / "live.har")).runs[0]
    assert har.timing == TIMING_RECORDED and har.metrics.t_first_content_ns == 50_000_000


def test_a_run_record_with_an_unknown_timing_reads_as_recorded(tmp_path):
    path = export([live_run()], tmp_path / "x.jsonl")
    lines = path.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["timing"] = "sometimes"
    path.write_text("\n".join([lines[0], json.dumps(rec), *lines[2:]]) + "\n")
    run = read_capture(path).runs[0]
    assert run.timing == TIMING_RECORDED and run.metrics.t_first_content_ns == 50_000_000
