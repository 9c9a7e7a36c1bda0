"""The per-run CSV of repeated runs (`bench --csv`): one row per run with every figure, written as runs end.

    with RunsCsv(path) as csv_out:
        csv_out.add(result)                # a `core.live.repeat.RepeatResult`; flushed at once

Columns: `CSV_COLUMNS` (the run's number in finishing order, its provider and repeat, then every field of
`RunMetrics.to_json()`: times in ms, tokens/s and whether it is exact, gap percentiles, counts, usage, finish,
diagnostics, cost in USD with its source, and `timing`: how much timing the run's recording held, `recorded` for
a live run; the times a recording did not hold are empty cells). A text cell that a spreadsheet would run as a
formula (it starts with =, +, -, @, a tab or a carriage return) gets a leading apostrophe: an error message is the
server's text.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

RUN_COLUMNS = ("run", "provider", "repeat")
METRIC_COLUMNS = ("status", "ok", "http_status", "error_type", "error_message", "ttft_ms", "last_token_ms",
                  "total_ms", "tokens_per_s", "tokens_per_s_exact", "gaps", "gap_p50_ms", "gap_p95_ms",
                  "gap_max_ms", "gap_min_ms", "frames", "bytes", "keepalives", "input_tokens", "output_tokens",
                  "cached_tokens", "cache_write_tokens", "reasoning_tokens", "finish", "finish_raw", "diagnostics",
                  "cost_usd", "cost_source", "priced_as", "cost_note", "timing")
CSV_COLUMNS = RUN_COLUMNS + METRIC_COLUMNS
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(v) -> object:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return v
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)   # a finish reason sent as an object
    return "'" + s if s.startswith(_FORMULA_START) else s


def csv_row(result) -> list:
    m = result.metrics.to_json()
    values = {"run": result.number, "provider": result.provider, "repeat": result.repeat, **m}
    return [_cell(values[c]) for c in CSV_COLUMNS]


class RunsCsv:
    """A CSV file that grows by one flushed row per finished run (nothing lost if the bench stops)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "w", encoding="utf-8", newline="")
        self._w = csv.writer(self._f)
        self._w.writerow(CSV_COLUMNS)
        self._f.flush()

    def add(self, result) -> None:
        self._w.writerow(csv_row(result))
        self._f.flush()

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> "RunsCsv":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
