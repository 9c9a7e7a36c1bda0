"""The words and figures that the GUI's panes, the `run` lines and the `.md` report share (plain text, no I/O).

    duration(ns)              "850 ms" under 10 s, "12.34 s" from there ("–" when unknown)
    plural(n, word)           "1 tool", "3 tools"
    usage_figures(usage)      "in=12 out=40 total=52" ("–" where not reported; an up-front count said so)
    tokens_text(n, estimated) "1,234" or "~1,234 (est.)"
    finish_text(finish)       "tool_calls (tool_use)": the canonical reason, then the provider's own if it differs
    error_line(error)         "http_error: HTTP 429 Too Many Requests: ...": a run's error in one line
    findings_text(diags)      "data-not-json (frames 3, 7); missing-terminator": the findings worth a look, by code

The wording of each lives here once, so a pane, a terminal line and a report say the same thing the same way.
"""
from __future__ import annotations

import re

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


def usage_figures(usage: ev.Usage, reporting: str | None = None) -> str:
    """The canonical input, output and total tokens, "in=12 out=40 total=52" ("–" where not reported). With the
    snapshot's `reporting`, a count sent before the output (Anthropic's message_start, when no later one came)
    says so: it is not a count of the output."""
    def n(v):
        return MISSING if v is None else str(v)

    text = f"in={n(usage.input_tokens)} out={n(usage.output_tokens)} total={n(usage.total_tokens)}"
    if reporting is not None and reporting not in ev.OUTPUT_COUNTED:
        text += " (reported up front, before the output: no final count came)"
    return text


def tokens_text(n: int | None, estimated: bool, missing: str = MISSING) -> str:
    """A token count, "1,234", or "~1,234 (est.)" when it is an estimate (characters / 4)."""
    if n is None:
        return missing
    return f"~{n:,} (est.)" if estimated else f"{n:,}"


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
    return f"{error.get('type') or MISSING}: {error.get('message') or MISSING}"


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


# -- text that came from a server, made safe to show --------------------------------------------------------------
# C0 and C1 controls but newline and tab, DEL, line/paragraph separators and the bidi embedding/override/isolate
# marks: an escape sequence must not recolour or retitle a terminal, an override must not reorder what is read.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """`text` with each unsafe character shown as a visible `\\uXXXX` escape (newline and tab kept)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def md_text(text) -> str:
    """Server text for Markdown prose or a table cell: HTML escaped (a renderer shows tags as text, never runs
    them), controls visible, the markup that makes code, links and table cells escaped."""
    s = visible_controls("" if text is None else str(text))
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`\[\]|])", r"\\\1", s)   # code, links and table cells; emphasis is harmless


def md_code(text) -> str:
    """Server text as an inline code span: fenced with a longer backtick run than the text holds, so a backtick
    in a tool name cannot end the span (code spans show HTML as text, so only controls need escaping)."""
    s = visible_controls("" if text is None else str(text)).replace("\n", " ").replace("\r", " ")
    longest = max((len(m) for m in re.findall("`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"

