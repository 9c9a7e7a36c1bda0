"""The per-run figures (core.live.metrics) and the Compare table (core.live.compare_table), against values
computed by hand from runs rebuilt out of known chunks and arrival times."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from core.live.capture import markdown_report
from core.live.compare_table import COLUMNS, compare_table, duration_text
from core.live.config import ProviderConfig, ProviderPrice
from core.live.metrics import MetricsTracker, percentile, run_metrics
from core.live.recorder import ProviderRun, rebuild_run

MS = 1_000_000
SSE = [("content-type", "text/event-stream")]
OPENAI = ProviderConfig("chat", "openai-chat", "https://api.openai.com/v1", "gpt-4o-mini")
PRICED = ProviderConfig("own", "openai-chat", "http://127.0.0.1:9/v1", "local-model",
                        price=ProviderPrice(Decimal("1"), Decimal("2")))


def chat(delta: dict | None = None, finish: str | None = None, usage: dict | None = None) -> bytes:
    body = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
            "choices": [] if usage else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def text(t: str) -> bytes:
    return chat({"content": t})


END = chat(finish="stop") + chat(usage={"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}) \
    + b"data: [DONE]\n\n"
#: content at 100, 110, 150, 250 ms (a ping at 140 between them), the end at 260 ms
CHUNKS = [(100 * MS, text("Hel")), (110 * MS, text("lo")), (140 * MS, b": ping\n\n"), (150 * MS, text(" wor")),
          (250 * MS, text("ld")), (260 * MS, END)]


def rebuilt(chunks=CHUNKS, provider=OPENAI, end_ns=270 * MS, status=200, transport_error=None) -> ProviderRun:
    return rebuild_run(provider, headers=(50 * MS, status, "HTTP/1.1", "OK", SSE), chunks=chunks, end_ns=end_ns,
                       started_at=1_767_268_800.0, transport_error=transport_error)


def test_figures_of_a_finished_run_match_the_hand_computed_values():
    m = run_metrics(rebuilt())
    assert (m.ttft_ns, m.last_token_ns, m.total_ns) == (100 * MS, 250 * MS, 270 * MS)
    # 20 output tokens (final usage) over 250 - 100 ms
    assert m.tokens_per_s == pytest.approx(20 / 0.150) and m.tokens_per_s_exact
    # gaps between content chunks: 10, 40, 100 ms (the ping at 140 ms is not content)
    assert m.gaps == 3 and (m.gap_min_ns, m.gap_max_ns) == (10 * MS, 100 * MS)
    assert m.gap_p50_ns == 40 * MS and m.gap_p95_ns == 94 * MS   # 40 + (100 - 40) * 0.9
    assert (m.frames, m.keepalives, m.bytes) == (7, 1, sum(len(c) for _, c in CHUNKS))
    assert (m.input_tokens, m.output_tokens, m.cached_tokens, m.reasoning_tokens) == (10, 20, None, None)
    assert (m.finish, m.finish_raw, m.ok, m.status, m.error_type) == ("stop", "stop", True, "done", None)
    assert m.diagnostics == len(rebuilt().reply.diagnostics)
    # gpt-4o-mini at api.openai.com, priced from the database's own rates for it
    import genai_prices

    rates = genai_prices.calc_price(genai_prices.Usage(input_tokens=1, output_tokens=1), "gpt-4o-mini",
                                    provider_id="openai").model_price
    assert m.cost.usd == (10 * rates.input_mtok + 20 * rates.output_mtok) / 1_000_000
    assert m.cost.source == "database" and m.cost.priced_as == "openai/gpt-4o-mini"


def test_thinking_and_cached_tokens_of_an_anthropic_run():
    def ev(obj: dict) -> bytes:
        return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()

    start = ev({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                     "model": "claude", "content": [], "usage": {
                                                         "input_tokens": 5, "cache_read_input_tokens": 100,
                                                         "cache_creation_input_tokens": 20, "output_tokens": 1}}})
    chunks = [(20 * MS, start + ev({"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "thinking", "thinking": ""}})),
              (300 * MS, ev({"type": "content_block_delta", "index": 0,
                             "delta": {"type": "thinking_delta", "thinking": "Hmm."}})),
              (320 * MS, ev({"type": "ping"})),
              (400 * MS, ev({"type": "content_block_stop", "index": 0})
               + ev({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
               + ev({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Yes."}})),
              (700 * MS, ev({"type": "content_block_stop", "index": 1})
               + ev({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 30}})
               + ev({"type": "message_stop"}))]
    provider = ProviderConfig("anth", "anthropic", "https://api.anthropic.com", "claude-haiku-4-5",
                              price=ProviderPrice(Decimal("1"), Decimal("5"), Decimal("0.1")))
    m = run_metrics(rebuilt(chunks, provider, end_ns=710 * MS))
    assert (m.ttft_ns, m.last_token_ns) == (300 * MS, 400 * MS)
    assert m.tokens_per_s == pytest.approx(30 / 0.100) and m.tokens_per_s_exact
    assert m.gaps == 1 and m.gap_p50_ns == m.gap_max_ns == 100 * MS   # the ping at 320 ms is no content
    assert m.keepalives == 1 and (m.finish, m.finish_raw) == ("stop", "end_turn")
    assert (m.input_tokens, m.cached_tokens, m.cache_write_tokens, m.output_tokens) == (125, 100, 20, 30)
    # the override: (125 - 100) uncached at $1, 100 cached at $0.1, 30 output at $5, per million
    assert m.cost.usd == Decimal("0.000185") and m.cost.source == "override"


def test_without_final_usage_the_rate_is_an_estimate_and_there_is_no_price():
    chunks = [(100 * MS, text("abcdefgh")), (300 * MS, text("ijklmnop"))]   # 16 characters: 4 tokens
    m = run_metrics(rebuilt(chunks, end_ns=310 * MS))
    assert m.tokens_per_s == pytest.approx(4 / 0.2) and not m.tokens_per_s_exact
    assert m.output_tokens is None and not m.cost.known and m.cost.text() == "no price"
    assert "no final input and output" in m.cost.note


def test_the_tracker_reads_each_event_once_and_agrees_with_a_fresh_computation():
    run = ProviderRun(PRICED)
    run._begin(0.0)
    run._on_headers(50 * MS, 200, "HTTP/1.1", "OK", SSE)
    tracker = MetricsTracker(run)
    seen = []
    for t, data in CHUNKS:
        run._on_chunk(t, data)
        live = tracker.snapshot()
        assert live == run_metrics(run)     # incremental == from scratch, at every step
        seen.append(live)
    assert [s.ttft_ns for s in seen] == [100 * MS] * 6
    assert [s.gaps for s in seen] == [0, 1, 1, 2, 3, 3]
    assert not seen[3].tokens_per_s_exact and seen[3].total_ns is None and seen[3].cost is None
    run._finish(270 * MS, None)
    final = tracker.snapshot()
    assert final.tokens_per_s_exact and final.total_ns == 270 * MS
    assert final.cost.usd == (10 * 1 + 20 * 2) / Decimal(1_000_000)
    assert list(tracker.gaps()) == [10 * MS, 40 * MS, 100 * MS]


def test_percentile_interpolates_between_ranks():
    assert percentile([], 0.5) is None
    assert percentile([7], 0.95) == 7
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile(list(range(1, 101)), 0.95) == pytest.approx(95.05)
    assert percentile([1, 2, 3, 4], 0) == 1 and percentile([1, 2, 3, 4], 1) == 4


# -- the Compare table --------------------------------------------------------------------------------------------
def three_runs():
    fast = rebuilt()
    slow = rebuilt([(t * 2, c) for t, c in CHUNKS], end_ns=540 * MS)
    failed = rebuilt([(5 * MS, b'{"error": {"message": "over quota", "type": "rate_limit"}}')], end_ns=6 * MS,
                     status=429)
    return [fast, slow, failed]


def test_best_values_are_judged_among_completed_runs_only():
    rows = [run_metrics(r) for r in three_runs()]
    table = compare_table(rows)
    assert table.best_rows("ttft") == {0} and table.best_rows("total") == {0}   # the failed run's 6 ms is not
    assert table.best_rows("tokens_per_s") == {0}                              # higher is better
    assert table.best_rows("frames") == frozenset()                             # counts are not judged
    assert table.text(0, "ttft") == "100 ms" and table.text(1, "ttft") == "200 ms"
    assert table.text(2, "status") == "error (http_error)" and table.text(2, "ttft") == "–"
    tie = compare_table([rows[0], rows[0]])
    assert tie.best_rows("ttft") == {0, 1}
    assert compare_table(rows[:1]).best_rows("ttft") == frozenset()   # one run: nothing to compare with


def test_estimates_are_marked_and_sorting_keeps_unknown_values_last():
    est = run_metrics(rebuilt([(100 * MS, text("abcdefgh")), (300 * MS, text("ijklmnop"))], end_ns=310 * MS))
    rows = [run_metrics(r) for r in three_runs()] + [est]
    table = compare_table(rows)
    assert table.is_estimate(3, "tokens_per_s") and table.text(3, "tokens_per_s") == "20.0 est."
    assert not table.is_estimate(0, "tokens_per_s")
    by_ttft = table.sorted_by("ttft", descending=True)
    assert [m.ttft_ns for m in by_ttft.rows] == [200 * MS, 100 * MS, 100 * MS, None]


def test_tsv_has_a_header_and_one_line_per_provider_with_every_column():
    table = compare_table([run_metrics(r) for r in three_runs()])
    lines = table.tsv().splitlines()
    assert lines[0].split("\t") == ["Provider"] + [c.title for c in COLUMNS]
    assert len(lines) == 4 and all(len(ln.split("\t")) == len(COLUMNS) + 1 for ln in lines)
    assert lines[1].split("\t")[1:3] == ["done", "100 ms"]


def test_the_markdown_report_includes_the_compare_table_with_methods():
    md = markdown_report(three_runs())
    section = md[md.index("## Compare"):]
    assert "| Provider | Status | TTFT |" in section and "**100 ms**" in section
    assert "TTFT: from sending the request" in section and "Output tokens/s" in section


def test_duration_text():
    assert [duration_text(v) for v in (None, 8_400_000, 212_000_000, 12_345_000_000)] == \
        ["–", "8.4 ms", "212 ms", "12.35 s"]


# -- the running output count: one rule for every format (issue 12) -------------------------------------------
ANTHROPIC = ProviderConfig("claude", "anthropic", "https://api.anthropic.com", "claude-haiku-4-5")


def _anthropic(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


START = _anthropic("message_start", {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [], "stop_reason": None,
    "usage": {"input_tokens": 25, "output_tokens": 2}}})
BLOCK = _anthropic("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})


def _delta(t: str) -> bytes:
    return _anthropic("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": t}})


DONE = (_anthropic("content_block_stop", {"type": "content_block_stop", "index": 0})
        + _anthropic("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                       "usage": {"output_tokens": 31}})
        + _anthropic("message_stop", {"type": "message_stop"}))


def test_anthropic_up_front_output_is_estimated_until_message_delta_counts_it():
    from core.live.recorder import output_tokens_now

    run = ProviderRun(ANTHROPIC)
    run._begin(0.0)
    run._on_headers(50 * MS, 200, "HTTP/1.1", "OK", SSE)
    run._on_chunk(60 * MS, START + BLOCK)
    assert output_tokens_now(run) == (None, True)          # not 2: that count came before any output
    run._on_chunk(100 * MS, _delta("x" * 200))
    run._on_chunk(400 * MS, _delta("y" * 200))
    assert output_tokens_now(run) == (100, True)           # 400 characters / 4, as every other format
    assert run_metrics(run).output_tokens is None          # the Compare view shows no count yet
    run._on_chunk(410 * MS, DONE)
    assert output_tokens_now(run) == (31, False)
    run._finish(420 * MS, None)
    assert run.metrics.output_tokens == 31 and run.metrics.tokens_per_s_exact


def test_a_cancelled_anthropic_reply_keeps_its_estimate():
    from core.live.errors import ErrorType, error_dict
    from core.live.recorder import output_tokens_now

    run = rebuild_run(ANTHROPIC, headers=(50 * MS, 200, "HTTP/1.1", "OK", SSE),
                      chunks=[(60 * MS, START + BLOCK), (100 * MS, _delta("z" * 80)), (300 * MS, _delta("z" * 80))],
                      end_ns=310 * MS, transport_error=error_dict(ErrorType.CANCELLED, "you stopped it"))
    assert run.status == "cancelled"
    assert output_tokens_now(run) == (40, True)
    assert run.metrics.output_tokens is None and not run.metrics.tokens_per_s_exact   # not "out 2 tok"
    assert run_metrics(run).output_tokens is None
    report = markdown_report([run])
    assert "| Output tokens | ~40 (est.) |" in report
    assert "reported up front" in report
    # and no cost from that count: the up-front 2 was priced as if it were the reply's output
    cost = run_metrics(run).cost
    assert cost.usd is None and "up front" in cost.note
    finished = rebuild_run(ANTHROPIC, headers=(50 * MS, 200, "HTTP/1.1", "OK", SSE),
                           chunks=[(60 * MS, START + BLOCK), (100 * MS, _delta("z" * 80)), (300 * MS, DONE)],
                           end_ns=310 * MS)
    assert run_metrics(finished).cost.usd is not None           # a final count is priced (haiku is in the database)


def test_counted_usage_is_shown_as_it_streams_in_any_format():
    from core.live.recorder import output_tokens_now

    gemini = ProviderConfig("g", "gemini", "https://generativelanguage.googleapis.com", "gemini-2.5-flash")
    chunk = lambda t, n: (b"data: " + json.dumps({"candidates": [{"content": {"role": "model", "parts": [  # noqa: E731
        {"text": t}]}}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": n}}).encode() + b"\n\n")
    run = rebuild_run(gemini, headers=(0, 200, "HTTP/1.1", "OK", SSE), chunks=[(MS, chunk("Hello", 1))],
                      end_ns=2 * MS, transport_error={"type": "cancelled", "message": "stopped"})
    assert output_tokens_now(run) == (1, False)   # Gemini's running count is a count of the output
    chat_run = rebuild_run(OPENAI, headers=(0, 200, "HTTP/1.1", "OK", SSE), chunks=[(MS, text("Hello there"))],
                           end_ns=2 * MS, transport_error={"type": "cancelled", "message": "stopped"})
    assert output_tokens_now(chat_run) == (3, True)


def test_a_burst_has_no_rate_anywhere():
    """Content that came within MIN_RATE_SPAN_NS (one read of a fast server) gave 87,000 tokens/s in Compare and a
    p95 of 93,735 in Repeat's statistics, while the pane showed none: no rate at all, the same everywhere."""
    from core.live.recorder import MIN_RATE_SPAN_NS

    burst = rebuild_run(OPENAI, headers=(50 * MS, 200, "HTTP/1.1", "OK", SSE),
                        chunks=[(100 * MS, text("Hel") + text("lo") + END)], end_ns=101 * MS)
    spread = rebuild_run(OPENAI, headers=(50 * MS, 200, "HTTP/1.1", "OK", SSE),
                         chunks=[(100 * MS, text("Hel")), (100 * MS + MIN_RATE_SPAN_NS, text("lo") + END)],
                         end_ns=300 * MS)
    assert burst.metrics.tokens_per_s is None and burst.metrics.to_json()["tokens_per_s"] is None
    assert spread.metrics.tokens_per_s == pytest.approx(20 / (MIN_RATE_SPAN_NS / 1e9))
    table = compare_table([run_metrics(burst), run_metrics(spread)])      # (Repeat's statistics read the same)
    assert table.text(0, "tokens_per_s") == "–" and table.text(1, "tokens_per_s") == "200.0"


def test_the_streaming_estimate_never_passes_the_requests_max_tokens():
    """4 characters a token overshoots: 4,468 characters read `~1,117 tok` against Max tokens 1,024."""
    from core.live.recorder import output_tokens_now
    from core.live.request import PromptSpec

    run = ProviderRun(ANTHROPIC, spec=PromptSpec(user="hi", max_tokens=1024))
    run._begin(0.0)
    run._on_headers(50 * MS, 200, "HTTP/1.1", "OK", SSE)
    run._on_chunk(60 * MS, START + BLOCK + _delta("x" * 4468))
    assert output_tokens_now(run) == (1024, True)
    uncapped = ProviderRun(ANTHROPIC, spec=PromptSpec(user="hi", max_tokens=None))
    uncapped._begin(0.0)
    uncapped._on_headers(50 * MS, 200, "HTTP/1.1", "OK", SSE)
    uncapped._on_chunk(60 * MS, START + BLOCK + _delta("x" * 4468))
    assert output_tokens_now(uncapped) == (1117, True)
