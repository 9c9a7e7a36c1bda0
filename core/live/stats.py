"""Statistics of repeated runs per provider: TTFT, total, output tokens/s and inter-chunk gaps as
p50 / p95 / min / max, errors by type, cost (Qt-free; `bench` prints them, the GUI's statistics view shows them).

    stats = provider_stats(results)        # `core.live.repeat.RepeatResult`s -> [ProviderStats], in first-seen order
    stats_table(stats) -> (header, rows)   # the same figures as text cells (ms, tok/s, $)

Methods: the latency and rate figures are taken over the runs that completed (status done, no error); a failed
run is counted under its error type instead (its short "total" says nothing about latency). Percentiles
interpolate linearly between the closest ranks (`core.live.metrics.percentile`). The inter-chunk gap figures pool
every gap of every completed run (a run's gaps are the times between its consecutive content chunks).
Tokens/s is exact for a run whose reply reported its usage; `estimated_rates` counts the runs where it is the
characters/4 estimate.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from core.live.compare_table import MISSING, duration_text
from core.live.cost import format_usd
from core.live.metrics import percentile


@dataclass(frozen=True, slots=True)
class Spread:
    n: int
    p50: float
    p95: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Iterable[float]) -> "Spread | None":
        v = sorted(values)
        if not v:
            return None
        return cls(len(v), percentile(v, 0.5), percentile(v, 0.95), v[0], v[-1])


@dataclass(frozen=True, slots=True)
class ProviderStats:
    provider: str
    runs: int
    ok: int
    ttft_ns: Spread | None
    total_ns: Spread | None
    tokens_per_s: Spread | None
    gap_ns: Spread | None
    estimated_rates: int                 # completed runs whose tokens/s is an estimate
    errors: tuple[tuple[str, int], ...]  # (error type, count), most frequent first
    cost_usd: Decimal | None             # the sum over the runs that have a price
    priced: int                          # how many runs have a price
    cost_label: str                      # "" or e.g. "as openai/gpt-4o-mini" for a demo provider

    def to_json(self) -> dict:
        def spread(s: Spread | None, scale: float = 1.0, digits: int = 3):
            if s is None:
                return None
            return {"n": s.n, "p50": round(s.p50 / scale, digits), "p95": round(s.p95 / scale, digits),
                    "min": round(s.min / scale, digits), "max": round(s.max / scale, digits)}

        return {"provider": self.provider, "runs": self.runs, "ok": self.ok, "ttft_ms": spread(self.ttft_ns, 1e6),
                "total_ms": spread(self.total_ns, 1e6), "tokens_per_s": spread(self.tokens_per_s, 1, 2),
                "gap_ms": spread(self.gap_ns, 1e6), "estimated_rates": self.estimated_rates,
                "errors": dict(self.errors), "cost_usd": None if self.cost_usd is None else format(self.cost_usd, "f"),
                "priced": self.priced, "cost_label": self.cost_label}


def provider_stats(results: Sequence) -> list[ProviderStats]:
    by_provider: dict[str, list] = {}
    for r in results:
        by_provider.setdefault(r.provider, []).append(r)
    return [_one(name, rs) for name, rs in by_provider.items()]


def _one(name: str, results: list) -> ProviderStats:
    ok = [r for r in results if r.metrics.ok]
    errors = Counter(r.metrics.error_type or r.metrics.status for r in results if not r.metrics.ok)
    priced = [r.metrics.cost for r in results if r.metrics.cost is not None and r.metrics.cost.usd is not None]
    refs = {c.priced_as for c in priced if c.source == "reference"}
    gaps: list[int] = []
    for r in ok:
        gaps.extend(r.gaps)
    return ProviderStats(
        provider=name, runs=len(results), ok=len(ok),
        ttft_ns=Spread.of(r.metrics.ttft_ns for r in ok if r.metrics.ttft_ns is not None),
        total_ns=Spread.of(r.metrics.total_ns for r in ok if r.metrics.total_ns is not None),
        tokens_per_s=Spread.of(r.metrics.tokens_per_s for r in ok if r.metrics.tokens_per_s is not None),
        gap_ns=Spread.of(gaps),
        estimated_rates=sum(1 for r in ok if r.metrics.tokens_per_s is not None and not r.metrics.tokens_per_s_exact),
        errors=tuple(errors.most_common()),
        cost_usd=sum((c.usd for c in priced), Decimal(0)) if priced else None, priced=len(priced),
        cost_label=f"as {', '.join(sorted(refs))}" if refs else "")


STATS_HEADER = ("Provider", "Runs", "OK", "TTFT p50", "p95", "min", "max", "Total p50", "p95", "min", "max",
                "Tok/s p50", "p95", "min", "max", "Gap p50", "p95", "min", "max", "Cost (sum)", "Errors")


def stats_table(stats: Sequence[ProviderStats]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The statistics as text cells: one row per provider, under STATS_HEADER."""
    def times(s: Spread | None) -> list[str]:
        return [MISSING] * 4 if s is None else [duration_text(round(x)) for x in (s.p50, s.p95, s.min, s.max)]

    def rates(s: Spread | None, estimated: int) -> list[str]:
        if s is None:
            return [MISSING] * 4
        mark = " est." if estimated else ""
        return [f"{x:.1f}{mark}" for x in (s.p50, s.p95, s.min, s.max)]

    rows = []
    for st in stats:
        cost = "no price" if st.cost_usd is None else format_usd(st.cost_usd) + \
            (f" ({st.priced}/{st.runs} priced)" if st.priced != st.runs else "") + \
            (f" {st.cost_label}" if st.cost_label else "")
        errors = ", ".join(f"{t} x{n}" for t, n in st.errors) or "none"
        rows.append(tuple([st.provider, str(st.runs), str(st.ok)] + times(st.ttft_ns) + times(st.total_ns)
                          + rates(st.tokens_per_s, st.estimated_rates) + times(st.gap_ns) + [cost, errors]))
    return STATS_HEADER, rows
