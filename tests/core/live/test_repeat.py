"""Repeated runs (core.live.repeat) on the emulator, their statistics (core.live.stats) and the CSV."""
from __future__ import annotations

import asyncio
import csv
import dataclasses

import pytest

from core.live.config import demo_providers
from core.live.metrics import run_metrics
from core.live.repeat import CapturedRun, RepeatLoop, RepeatResult
from core.live.request import PromptSpec
from core.live.runs_csv import CSV_COLUMNS, RunsCsv
from core.live.stats import provider_stats, stats_table
from core.servers.emulator.server import EmulatorServer
from tests.core.live.test_metrics import CHUNKS, MS, rebuilt

SPEC = PromptSpec(user="What is the capital of France?", max_tokens=256)


@pytest.fixture(scope="module")
def fast_base():
    with EmulatorServer(speed=0) as base:
        yield base


def providers(base, *names, model="text"):
    demos = {p.name: p for p in demo_providers(base, model)}
    return [demos[n] for n in names]


def test_progress_counts_every_run_in_rounds_and_keeps_each_capture(fast_base):
    seen: list[tuple[str, str, int]] = []
    loop = RepeatLoop(providers(fast_base, "demo-openai-chat", "demo-anthropic"), SPEC, repeat=3,
                      on_progress=lambda p, run: seen.append((p.text(), run.name, p.result.repeat)))
    results = asyncio.run(loop.run())
    assert [s[0] for s in seen] == [f"run {i}/6" for i in range(1, 7)]
    # one after another, in rounds: each provider's 1st run, then each one's 2nd, ...
    assert [(s[1], s[2]) for s in seen] == [("demo-openai-chat", 1), ("demo-anthropic", 1), ("demo-openai-chat", 2),
                                            ("demo-anthropic", 2), ("demo-openai-chat", 3), ("demo-anthropic", 3)]
    assert [r.number for r in results] == [1, 2, 3, 4, 5, 6] and not loop.cancelled
    for r in results:
        assert r.metrics.ok and r.metrics.ttft_ns is not None and r.metrics.cost.source == "reference"
        again = r.capture.to_run()            # the capture rebuilds the run: the same figures
        assert run_metrics(again) == r.metrics and again.result()["terminated"]
        assert list(r.gaps) == sorted(r.gaps) and len(r.gaps) == r.metrics.gaps


def test_concurrency_is_limited_and_reached(fast_base):
    in_flight, peak = 0, 0

    def started(run):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)

    def ended(progress, run):
        nonlocal in_flight
        in_flight -= 1

    ps = providers(fast_base, "demo-openai-chat", "demo-openai-responses", "demo-anthropic", "demo-gemini")
    results = asyncio.run(RepeatLoop(ps, SPEC, repeat=4, concurrency=3, on_started=started,
                                     on_progress=ended).run())
    assert len(results) == 16 and peak == 3 and in_flight == 0
    assert sorted((r.provider, r.repeat) for r in results) == sorted((p.name, k) for p in ps for k in range(1, 5))


def test_cancel_halfway_keeps_the_finished_runs_and_the_one_in_flight(fast_base):
    quick = providers(fast_base, "demo-openai-chat")[0]
    stalled = providers(fast_base, "demo-anthropic", model="stall")[0]
    texts = []

    def on_progress(progress, run):
        texts.append(progress.text())
        if progress.done == 2:
            loop.cancel()

    loop = RepeatLoop([quick, stalled], SPEC, repeat=5, concurrency=2, on_progress=on_progress, read_timeout=30)
    results = asyncio.run(asyncio.wait_for(loop.run(), 20))
    assert loop.cancelled and texts == ["run 1/10", "run 2/10", "run 3/10"]
    assert [(r.provider, r.repeat, r.metrics.status) for r in results] == [
        ("demo-openai-chat", 1, "done"), ("demo-openai-chat", 2, "done"), ("demo-anthropic", 1, "cancelled")]
    cut = results[2]
    assert cut.metrics.error_type == "cancelled" and cut.capture.body_bytes > 0   # what it had received
    assert cut.capture.to_run().status == "cancelled" and cut.capture.to_run().reply.ordered_blocks()


def test_a_provider_without_a_key_is_counted_as_errors_and_never_sent(fast_base):
    p = dataclasses.replace(providers(fast_base, "demo-openai-chat")[0], name="keyless", builtin_key=None,
                            api_key_env="SS_TEST_NO_SUCH_KEY_9F2")
    results = asyncio.run(RepeatLoop([p], SPEC, repeat=3).run())
    assert [r.metrics.error_type for r in results] == ["missing_key"] * 3
    [st] = provider_stats(results)
    assert (st.runs, st.ok, st.errors, st.ttft_ns) == (3, 0, (("missing_key", 3),), None)


def test_a_failing_callback_stops_the_loop_and_is_raised(fast_base):
    def broken(progress, run):
        raise OSError(28, "No space left on device")

    loop = RepeatLoop(providers(fast_base, "demo-gemini"), SPEC, repeat=5, on_progress=broken)
    with pytest.raises(OSError, match="No space"):
        asyncio.run(loop.run())
    assert len(loop.results) == 1 and loop.cancelled


def test_bad_plans_are_refused():
    p = demo_providers("http://127.0.0.1:1")
    for kw in ({"repeat": 0}, {"repeat": 101}, {"repeat": 2, "concurrency": 0}):
        with pytest.raises(ValueError):
            RepeatLoop(p, SPEC, **kw)
    with pytest.raises(ValueError):
        RepeatLoop([], SPEC, repeat=1)


# -- statistics and CSV from hand-built runs ----------------------------------------------------------------------------
def result_of(run, number: int, repeat: int) -> RepeatResult:
    from core.live.metrics import MetricsTracker

    t = MetricsTracker(run)
    return RepeatResult(number, run.name, repeat, t.snapshot(), t.gaps(), CapturedRun.of(run))


def scaled(factor: int):
    """The hand-made run of test_metrics with every time multiplied: TTFT 100 ms * factor, gaps 10/40/100 * f."""
    return rebuilt([(t * factor, c) for t, c in CHUNKS], end_ns=270 * MS * factor)


def test_statistics_over_completed_runs_with_errors_by_type():
    failed = rebuilt([(5 * MS, b'{"error": {"message": "slow down"}}')], end_ns=6 * MS, status=429)
    results = [result_of(scaled(f), i, i) for i, f in enumerate((1, 2, 3), start=1)]
    results.append(result_of(failed, 4, 4))
    [st] = provider_stats(results)
    assert (st.runs, st.ok, st.errors) == (4, 3, (("http_error", 1),))
    assert (st.ttft_ns.p50, st.ttft_ns.p95, st.ttft_ns.min, st.ttft_ns.max) == (200 * MS, 290 * MS, 100 * MS, 300 * MS)
    assert (st.total_ns.min, st.total_ns.max) == (270 * MS, 810 * MS)
    # tok/s: 20 tokens over 150, 300, 450 ms
    assert st.tokens_per_s.p50 == pytest.approx(20 / 0.3) and st.tokens_per_s.max == pytest.approx(20 / 0.15)
    # gaps pooled over the three runs: 10, 40, 100 ms times 1, 2, 3 (nine gaps)
    assert st.gap_ns.n == 9 and st.gap_ns.min == 10 * MS and st.gap_ns.max == 300 * MS and st.gap_ns.p50 == 80 * MS
    assert st.estimated_rates == 0 and st.priced == 3 and st.cost_usd == sum(r.metrics.cost.usd for r in results[:3])
    header, rows = stats_table([st])
    assert len(rows[0]) == len(header) and rows[0][3] == "200 ms" and rows[0][-1] == "http_error x1"


def test_the_csv_has_one_row_per_run_with_every_metric(tmp_path):
    results = [result_of(scaled(f), i, 1) for i, f in enumerate((1, 2), start=1)]
    bad = dataclasses.replace(results[1], metrics=dataclasses.replace(results[1].metrics,
                                                                      error_message="=HYPERLINK(\"x\")"))
    with RunsCsv(tmp_path / "runs.csv") as out:
        for r in results + [bad]:
            out.add(r)
    with open(tmp_path / "runs.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 3
    assert CSV_COLUMNS[3:] == tuple(k for k in results[0].metrics.to_json() if k != "provider")
    assert [float(r["ttft_ms"]) for r in rows[:2]] == [100.0, 200.0]
    assert rows[0]["tokens_per_s_exact"] == "true" and rows[0]["finish"] == "stop" and rows[0]["error_type"] == ""
    assert rows[2]["error_message"] == "'=HYPERLINK(\"x\")"   # not a formula when a spreadsheet opens it
