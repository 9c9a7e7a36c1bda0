"""The words and figures that the GUI's panes, the `run` lines and the `.md` report share (plain text, no I/O).

    duration(ns)              "850 ms" under 10 s, "12.34 s" from there ("–" when unknown)
    plural(n, word)           "1 tool", "3 tools"
    usage_figures(usage)      "in=12 out=40 total=52"
    finish_text(finish)       "tool_calls (tool_use)": the canonical reason, then the provider's own if it differs
    error_line(error)         "http_error: HTTP 429 Too Many Requests: ...": a run's error in one line
    findings_text(diags)      "data-not-json (frames 3, 7); missing-terminator": the findings worth a look, by code

The wording of each lives here once, so a pane, a terminal line and a report say the same thing the same way.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

from core.wire import events as ev

MISSING = "–"             # an unknown figure
SECONDS_FROM_NS = 10_000_000_000   # durations from 10 s on are shown in seconds
FRAMES_LISTED = 4         # findings_text lists at most this many frames per code


def duration(ns: int | None, missing: str = MISSING) -> str:
    """A duration in ns as text: whole milliseconds under 10 s, seconds with two decimals from there."""
    if ns is None:
        return missing
    return f"{ns / 1e6:.0f} ms" if ns < SECONDS_FROM_NS else f"{ns / 1e9:.2f} s"


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 tool", "2 tools" (`many` for a plural that is not word + "s")."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def usage_figures(usage: ev.Usage) -> str:
    """The canonical input, output and total tokens, "in=12 out=40 total=52" (None where not reported)."""
    return f"in={usage.input_tokens} out={usage.output_tokens} total={usage.total_tokens}"


def finish_text(finish: ev.FinishReason | None) -> str:
    """The canonical finish reason, then the provider's own value in parentheses where it differs ("" when
    the stream sent none)."""
    if finish is None:
        return ""
    canon = finish.canonical or "?"
    raw = finish.raw if isinstance(finish.raw, str) else (None if finish.raw is None else json.dumps(finish.raw))
    return canon + (f" ({raw})" if raw and raw != canon else "")


def error_line(error: dict | None) -> str | None:
    """A run's error as "type: message" (None when there was none)."""
    if error is None:
        return None
    return f"{error.get('type')}: {error.get('message')}"


def findings_text(diagnostics: Iterable[ev.Diagnostic]) -> str:
    """The findings (non-routine diagnostics, `core.wire.events.findings`) grouped by code, each with the
    frames it concerns: "data-not-json (frames 3, 7); missing-terminator" ("" when there are none)."""
    codes: dict[str, list[int]] = {}
    for d in ev.findings(diagnostics):
        codes.setdefault(d.code, []).append(d.frame)
    parts = []
    for code, frames in codes.items():
        where = [str(f) for f in frames if f >= 0]
        if where:
            more = "…" if len(where) > FRAMES_LISTED else ""
            code += f" ({'frames' if len(where) > 1 else 'frame'} {', '.join(where[:FRAMES_LISTED])}{more})"
        parts.append(code)
    return "; ".join(parts)
