"""The figures of one provider's run, as the Compare view, the `.md` report and `bench` show them (Qt-free).

    run_metrics(run) -> RunMetrics              once, e.g. for a finished run
    tracker = MetricsTracker(run)               while streaming: tracker.snapshot() as often as a view repaints
    percentile(sorted_values, q)                linear interpolation between the closest ranks (q in 0..1)

Methods (what the figures measure; `METHODS` says the same in words for the views):
- Times are ns on the run's monotonic clock, from the moment the request was handed to the HTTP client
  (connection set-up included) to the arrival of the network chunk that carried the event.
- TTFT (time to first token): request sent -> the chunk carrying the first content byte (the first non-empty
  text, thinking, tool-argument or refusal delta). Time to last token: the same for the last one. Total: request
  sent -> the end of the exchange. Both come from the recorder (`core.live.recorder.Metrics`).
- Output tokens/s: the final usage's output tokens over the time from the first to the last content chunk,
  exact once the reply reported its usage; until then (or when it never does) an estimate from the characters
  received (4 per token), marked `tokens_per_s_exact=False`; none when the content came within 0.1 s
  (`core.live.recorder.MIN_RATE_SPAN_NS`: a burst's rate means nothing). Output tokens include reasoning, so a
  model that thinks without streaming its thoughts looks faster than what it shows.
- Inter-chunk gaps: the time between consecutive chunks that carried content, from the first to the last one
  (keepalives and bookkeeping frames do not count, so a stream that only pings shows as one long gap).
- Cost: `core.live.cost.price_reply` from the final usage, once the run has ended.
- A run opened from a recording that held less timing (`ProviderRun.timing`: a VCR cassette or a raw `.sse`
  holds none, a browser's HAR only the time to the headers and the total) has the times it did not hold as None
  (TTFT, last token, tokens/s, gaps; and headers and total for none), never the 0 or the total its chunks were
  put at; `timing` says which.

Cost of `snapshot()`: the tracker reads only the events that arrived since its last call (gaps are kept in a
sorted list, so p50 / p95 / max are index look-ups); `bench/metrics_bench.py` measures it on a firehose.
"""
from __future__ import annotations

import math
from array import array
from bisect import insort
from collections.abc import Sequence
from dataclasses import dataclass

from core.live.cost import Cost, price_reply
from core.live.recorder import _CONTENT_EVENTS, TIMING_RECORDED, ProviderRun, output_tokens_now
from core.wire import events as ev


METHODS = (
    "TTFT: from sending the request (connection set-up included) to the arrival of the first content byte "
    "(text, thinking, tool arguments or refusal).",
    "Time to last token: the same, to the last content byte. Total: until the exchange ended.",
    "Output tokens/s: the final usage's output tokens over the time from the first to the last content chunk; "
    "marked est. while streaming or when the reply reported no usage (characters / 4); – when the content came "
    "within 0.1 s (a burst has no meaningful rate).",
    "Inter-chunk gaps: time between consecutive chunks that carried content (keepalives do not count).",
    "Cost: from the final usage, priced by [provider.price] or the genai-prices database; a demo provider's "
    "cost is what the real model it is priced as would have cost.",
)


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The q-quantile (0 <= q <= 1) of values sorted ascending, interpolated linearly between the two closest
    ranks (numpy's default, `statistics.quantiles(method="inclusive")`); None for no values."""
    n = len(sorted_values)
    if n == 0:
        return None
    pos = (n - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """One run's figures (times in ns from sending; None while unknown)."""

    provider: str
    status: str                      # the run's status ("streaming", "done", "error", ...)
    ok: bool                         # done without an error
    http_status: int | None
    error_type: str | None
    error_message: str | None        # what ended the run badly, in one line (secrets already redacted)
    ttft_ns: int | None
    last_token_ns: int | None
    total_ns: int | None             # None until the exchange ended
    tokens_per_s: float | None
    tokens_per_s_exact: bool         # False: an estimate (while streaming, or no final usage)
    gaps: int                        # inter-chunk gaps measured
    gap_p50_ns: int | None
    gap_p95_ns: int | None
    gap_max_ns: int | None
    gap_min_ns: int | None
    frames: int
    bytes: int
    keepalives: int
    input_tokens: int | None
    output_tokens: int | None        # the provider's count of the output (None while it has given none)
    cached_tokens: int | None        # cache reads (part of input)
    cache_write_tokens: int | None   # cache writes (part of input)
    reasoning_tokens: int | None     # part of output
    finish: str | None               # canonical finish reason
    finish_raw: object               # the provider's own value
    diagnostics: int
    cost: Cost | None                # None until the run has ended
    timing: str = TIMING_RECORDED    # how much timing the run's recording held (core.live.recorder.TIMINGS)

    def to_json(self) -> dict:
        """Plain JSON values (ms for times, cost in USD as a string) for `--json` and the CSV."""
        ms = lambda v: None if v is None else round(v / 1e6, 3)  # noqa: E731
        c = self.cost
        return {"provider": self.provider, "status": self.status, "ok": self.ok, "http_status": self.http_status,
                "error_type": self.error_type, "error_message": self.error_message, "ttft_ms": ms(self.ttft_ns), "last_token_ms": ms(self.last_token_ns),
                "total_ms": ms(self.total_ns),
                "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 2),
                "tokens_per_s_exact": self.tokens_per_s_exact, "gaps": self.gaps,
                "gap_p50_ms": ms(self.gap_p50_ns), "gap_p95_ms": ms(self.gap_p95_ns),
                "gap_max_ms": ms(self.gap_max_ns), "gap_min_ms": ms(self.gap_min_ns), "frames": self.frames,
                "bytes": self.bytes, "keepalives": self.keepalives, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cached_tokens": self.cached_tokens,
                "cache_write_tokens": self.cache_write_tokens, "reasoning_tokens": self.reasoning_tokens,
                "finish": self.finish, "finish_raw": self.finish_raw, "diagnostics": self.diagnostics,
                "cost_usd": None if c is None or c.usd is None else format(c.usd, "f"),
                "cost_source": None if c is None else c.source, "priced_as": None if c is None else c.priced_as,
                "cost_note": None if c is None else c.note, "timing": self.timing}


class MetricsTracker:
    """Keeps one run's figures up to date cheaply: each `snapshot()` reads only the events since the last."""

    __slots__ = ("run", "_log", "_seen", "_last_t", "_gaps", "_cost")

    def __init__(self, run: ProviderRun) -> None:
        self.run = run
        self._log = None
        self._cost: Cost | None = None
        self._reset()

    def _reset(self) -> None:
        self._log = self.run.events
        self._seen = 0
        self._last_t: int | None = None
        self._gaps: list[int] = []    # sorted ascending

    def _consume(self) -> None:
        if self.run.events is not self._log:   # the recorder re-decoded the run (a masked key): start over
            self._reset()
        log = self._log
        events, times = log.events, log.times
        n = len(events)
        last, gaps = self._last_t, self._gaps
        text_like = _CONTENT_EVENTS
        for i in range(self._seen, n):
            e = events[i]
            te = type(e)
            if te in text_like:
                if not (e.fragment if te is ev.ToolArgsDelta else e.text):
                    continue
            elif te is not ev.ToolArgsReplaced:
                continue
            t = times[i]
            if t != last:
                if last is not None:
                    insort(gaps, t - last)
                last = t
        self._seen = n
        self._last_t = last

    def gaps(self) -> array:
        """Every inter-chunk gap so far, in ns, sorted ascending (int64: what a repeated run keeps of them); none
        for a run whose recording held no per-chunk time."""
        self._consume()
        return array("q", self._gaps if self.run.timing == TIMING_RECORDED else ())

    def snapshot(self) -> RunMetrics:
        self._consume()
        run = self.run
        m = run.metrics
        reply = run.reply
        u = reply.usage or ev.Usage()
        f = reply.finish
        recorded = run.timing == TIMING_RECORDED
        gaps = self._gaps if recorded else []   # (chunks put at one time by a recording without their times)
        finished = run.finished
        if finished and self._cost is None:
            self._cost = price_reply(run.provider, reply.usage, run.started_at, reply.usage_reporting)
        p = lambda q: None if not gaps else round(percentile(gaps, q))  # noqa: E731
        out_tokens, out_estimated = output_tokens_now(run)   # (an up-front count is no count of the output)
        return RunMetrics(
            provider=run.name, status=run.status, ok=run.ok, http_status=run.http_status,
            error_type=None if run.error is None else run.error.get("type"),
            error_message=None if run.error is None else str(run.error.get("message")),
            ttft_ns=m.t_first_content_ns if recorded else None,
            last_token_ns=m.t_last_content_ns if recorded else None,
            total_ns=m.t_total_ns if finished else None,
            tokens_per_s=m.tokens_per_s if recorded else None, tokens_per_s_exact=m.tokens_per_s_exact and recorded,
            gaps=len(gaps), gap_p50_ns=p(0.5), gap_p95_ns=p(0.95), gap_max_ns=gaps[-1] if gaps else None,
            gap_min_ns=gaps[0] if gaps else None,
            frames=m.frames, bytes=m.bytes, keepalives=m.keepalives,
            input_tokens=u.input_tokens, output_tokens=None if out_estimated else out_tokens,
            cached_tokens=u.cache_read_tokens,
            cache_write_tokens=u.cache_write_tokens, reasoning_tokens=u.reasoning_tokens,
            finish=None if f is None else f.canonical, finish_raw=None if f is None else f.raw,
            diagnostics=len(reply.diagnostics), cost=self._cost if finished else None, timing=run.timing)


def run_metrics(run: ProviderRun) -> RunMetrics:
    """One run's figures, computed once."""
    return MetricsTracker(run).snapshot()
