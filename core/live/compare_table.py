"""The Compare table: one row per provider, one column per figure, the best value per column (Qt-free).

    table = compare_table(metrics)          # a sequence of `core.live.metrics.RunMetrics`, one per provider
    table.columns                           # `Column`s: key, title, better ("low" | "high" | None), help
    table.text(row, column) / .value(row, column)   # what a cell shows / its sort key (None: unknown)
    table.is_best(row, column)              # the best value of that column (ties: every one of them)
    table.is_estimate(row, column)          # the figure is an estimate (tokens/s while streaming)
    table.sorted_by(key, descending=False)  # unknown values last either way
    table.tsv()                             # copy as a table: a header line, then one line per provider
    table.markdown()                        # lines for the `.md` report: best values in bold, then the methods

Best values are judged among runs that completed (a failed run's short total is no achievement), and only
where at least two runs have the figure. Lower is better for times, gaps and cost; higher for tokens/s; the
counts (frames, bytes, tokens, keepalives, diagnostics) and the finish reasons are shown, not judged.
A time that the run's recording did not hold (`RunMetrics.timing`: a cassette holds none, a browser's HAR only
the headers and the total) shows as `n/a` (`NOT_RECORDED`), not as the 0 its chunks were put at.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.live.metrics import METHODS, RunMetrics
from core.live.recorder import TIMING_NONE, TIMING_NOT_RECORDED, TIMING_RECORDED
from core.live.summary import md_text

SECONDS_FROM_NS = 10_000_000_000
MISSING = "–"
NOT_RECORDED = "n/a"      # a time the recording did not hold


def duration_text(ns: int | None) -> str:
    """"8.4 ms" under 100 ms (gaps need the decimal), "212 ms" under 10 s, "12.34 s" from there; "–" unknown."""
    if ns is None:
        return MISSING
    if ns < 100_000_000:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e6:.0f} ms" if ns < SECONDS_FROM_NS else f"{ns / 1e9:.2f} s"


def _count(v: int | None) -> str:
    return MISSING if v is None else str(v)


def _raw_text(v: Any) -> str:
    if v is None:
        return MISSING
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _rate_text(m: RunMetrics) -> str:
    if m.tokens_per_s is None:
        return MISSING
    return f"{m.tokens_per_s:.1f}" + ("" if m.tokens_per_s_exact else " est.")


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    value: Callable[[RunMetrics], Any]    # the sort key; None when unknown
    text: Callable[[RunMetrics], str]
    better: str | None = None             # "low" | "high" | None (not judged)
    help: str = ""


def not_recorded(m: RunMetrics, attr: str) -> bool:
    """Whether the time `attr` of `m` is unknown because the run's recording did not hold it."""
    if m.timing == TIMING_RECORDED or getattr(m, attr) is not None:
        return False
    return m.timing == TIMING_NONE or attr != "total_ns"     # (total-only: the total is the one it holds)


def _time(key: str, title: str, attr: str, help: str) -> Column:
    def text(m: RunMetrics) -> str:
        return NOT_RECORDED if not_recorded(m, attr) else duration_text(getattr(m, attr))

    return Column(key, title, lambda m: getattr(m, attr), text, "low", help)


def _tokens(key: str, title: str, attr: str, help: str = "") -> Column:
    return Column(key, title, lambda m: getattr(m, attr), lambda m: _count(getattr(m, attr)), None, help)


COLUMNS: tuple[Column, ...] = (
    Column("status", "Status", lambda m: m.status, lambda m: m.status + (f" ({m.error_type})" if m.error_type
                                                                          and m.status != m.error_type else "")),
    _time("ttft", "TTFT", "ttft_ns", METHODS[0]),
    _time("last_token", "Last token", "last_token_ns", METHODS[1]),
    _time("total", "Total", "total_ns", METHODS[1]),
    Column("tokens_per_s", "Output tok/s", lambda m: m.tokens_per_s, _rate_text, "high", METHODS[2]),
    _time("gap_p50", "Gap p50", "gap_p50_ns", METHODS[3]),
    _time("gap_p95", "Gap p95", "gap_p95_ns", METHODS[3]),
    _time("gap_max", "Gap max", "gap_max_ns", METHODS[3]),
    _tokens("frames", "Frames", "frames", "SSE events dispatched (comments not counted)"),
    _tokens("bytes", "Bytes", "bytes", "response body bytes received"),
    _tokens("keepalives", "Keepalives", "keepalives", "SSE comments and the format's pings"),
    _tokens("input_tokens", "Input tok", "input_tokens", "every prompt token, cached ones included"),
    _tokens("output_tokens", "Output tok", "output_tokens", "every generated token, reasoning included"),
    _tokens("cached_tokens", "Cached tok", "cached_tokens", "cache reads (part of input)"),
    _tokens("reasoning_tokens", "Reasoning tok", "reasoning_tokens", "part of output"),
    Column("finish", "Finish", lambda m: m.finish, lambda m: m.finish or MISSING),
    Column("finish_raw", "Finish (raw)", lambda m: _raw_text(m.finish_raw) if m.finish_raw is not None else None,
           lambda m: _raw_text(m.finish_raw)),
    _tokens("diagnostics", "Diagnostics", "diagnostics", "what a borrowed parser would trip on"),
    Column("cost", "Cost", lambda m: None if m.cost is None else m.cost.usd,
           lambda m: MISSING if m.cost is None else m.cost.text(), "low", METHODS[4]),
)


def _flat(s: str) -> str:
    """A cell on one line with no tab (TSV and Markdown rows are lines)."""
    return s.replace("\t", " ").replace("\r", " ").replace("\n", " ")


@dataclass(frozen=True, slots=True)
class CompareTable:
    rows: tuple[RunMetrics, ...]
    columns: tuple[Column, ...] = COLUMNS

    def column(self, key: str) -> Column:
        for c in self.columns:
            if c.key == key:
                return c
        raise KeyError(key)

    def value(self, row: int, column: Column | str) -> Any:
        c = self.column(column) if isinstance(column, str) else column
        return c.value(self.rows[row])

    def text(self, row: int, column: Column | str) -> str:
        c = self.column(column) if isinstance(column, str) else column
        return c.text(self.rows[row])

    def best_rows(self, column: Column | str) -> frozenset[int]:
        """The rows holding the column's best value among completed runs (empty when not judged)."""
        c = self.column(column) if isinstance(column, str) else column
        if c.better is None:
            return frozenset()
        known = [(i, c.value(m)) for i, m in enumerate(self.rows) if m.ok and c.value(m) is not None]
        if len(known) < 2:
            return frozenset()
        pick = min if c.better == "low" else max
        best = pick(v for _, v in known)
        return frozenset(i for i, v in known if v == best)

    def is_best(self, row: int, column: Column | str) -> bool:
        return row in self.best_rows(column)

    def is_estimate(self, row: int, column: Column | str) -> bool:
        key = column if isinstance(column, str) else column.key
        return key == "tokens_per_s" and self.rows[row].tokens_per_s is not None \
            and not self.rows[row].tokens_per_s_exact

    def sorted_by(self, key: str, descending: bool = False) -> "CompareTable":
        """Rows ordered by one column's value (stable; rows whose value is unknown stay last)."""
        c = self.column(key)
        known = [m for m in self.rows if c.value(m) is not None]
        unknown = [m for m in self.rows if c.value(m) is None]
        known.sort(key=c.value, reverse=descending)
        return CompareTable(tuple(known + unknown), self.columns)

    def tsv(self) -> str:
        lines = ["\t".join(["Provider"] + [c.title for c in self.columns])]
        for i, m in enumerate(self.rows):
            lines.append("\t".join([_flat(m.provider)] + [_flat(self.text(i, c)) for c in self.columns]))
        return "\n".join(lines) + "\n"

    def markdown(self) -> list[str]:
        """The table for a Markdown report (best values in bold), then the methods."""
        def cell(s: str) -> str:
            return md_text(_flat(s))   # server text: HTML and markup escaped, controls visible

        out = ["| Provider | " + " | ".join(c.title for c in self.columns) + " |",
               "|---|" + "---|" * len(self.columns)]
        best = {c.key: self.best_rows(c) for c in self.columns}
        for i, m in enumerate(self.rows):
            cells = [f"**{cell(self.text(i, c))}**" if i in best[c.key] else cell(self.text(i, c))
                     for c in self.columns]
            out.append(f"| {cell(m.provider)} | " + " | ".join(cells) + " |")
        out += ["", "Best values in bold (among the runs that completed). " + " ".join(METHODS)]
        notes = [f"- {md_text(m.provider)}: {md_text(m.cost.note)}" for m in self.rows if m.cost is not None and m.cost.note]
        if notes:
            out += ["", "Cost:", ""] + notes
        timing = [f"- {md_text(m.provider)}: " + (TIMING_NOT_RECORDED if m.timing == TIMING_NONE else
                                                 "only the time to the headers and the total recorded")
                  for m in self.rows if m.timing != TIMING_RECORDED]
        if timing:
            out += ["", f"Timing ({NOT_RECORDED}: not in the recording the run was opened from):", ""] + timing
        return out


def compare_table(metrics: Sequence[RunMetrics]) -> CompareTable:
    return CompareTable(tuple(metrics))


def compare_section(runs) -> list[str]:
    """The `.md` report's "Compare" section for a sequence of `ProviderRun`s (title, table, methods)."""
    from core.live.metrics import run_metrics

    return ["## Compare", ""] + compare_table([run_metrics(r) for r in runs]).markdown() + [""]
