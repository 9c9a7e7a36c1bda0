"""What one SSE frame contributed, in a few words, from the normalized events it produced (never re-parsed).

The Raw view opens on this column: every frame's data starts with the same prefix (`{"id":"chatcmpl-...`), so
a person scanning a stream wants `text +"Paris"`, `tool_call 1 args +"{\\"ci"`, `usage in 20 out 13`,
`keepalive` or `(nothing)` instead. `frame_kinds` gives the same frame's kinds for the kind filter, the same in
every format.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from core.wire import events as ev

# The kind filter's choices, in menu order.
KINDS = ("text", "thinking", "tool_args", "usage", "keepalive", "error", "diagnostic", "nothing")
KIND_LABELS = {"text": "text", "thinking": "thinking", "tool_args": "tool arguments", "usage": "usage",
               "keepalive": "keepalive", "error": "error", "diagnostic": "diagnostics", "nothing": "nothing"}

_FRAGMENT_CHARS = 24


def _quoted(text: str) -> str:
    """A fragment as JSON text (quotes and escapes visible), elided past a few characters."""
    s = json.dumps(text, ensure_ascii=False)
    return s if len(s) <= _FRAGMENT_CHARS + 2 else s[:_FRAGMENT_CHARS + 1] + '…"'


def _usage(u: ev.Usage) -> str:
    parts = []
    if u.input_tokens is not None:
        parts.append(f"in {u.input_tokens}")
    if u.output_tokens is not None:
        parts.append(f"out {u.output_tokens}")
    if u.reasoning_tokens:
        parts.append(f"reasoning {u.reasoning_tokens}")
    if u.cache_read_tokens:
        parts.append(f"cached {u.cache_read_tokens}")
    return "usage " + (" ".join(parts) if parts else "(no counts)")


def _one(e) -> str | None:
    t = type(e)
    if t is ev.TextDelta:
        return f"text +{_quoted(e.text)}"
    if t is ev.ToolArgsDelta:
        return f"tool_call {e.index} args +{_quoted(e.fragment)}"
    if t is ev.ThinkingDelta:
        return f"thinking +{_quoted(e.text)}"
    if t is ev.RefusalDelta:
        return f"refusal +{_quoted(e.text)}"
    if t is ev.SignatureDelta:
        return f"signature +{len(e.signature)} chars"
    if t is ev.BlockStarted:
        what = e.kind + (f" {e.name}" if e.name else "")
        return f"start {what} (block {e.index})"
    if t is ev.BlockStopped:
        return f"stop block {e.index}"
    if t is ev.UsageUpdated:
        return _usage(e.usage)
    if t is ev.Finished:
        return f"finish {e.reason.canonical or e.reason.raw or '?'}"
    if t is ev.InBandError:
        return f"error {e.type or ''}".rstrip() + (f": {e.message}" if e.message else "")
    if t is ev.Keepalive:
        return "keepalive"
    if t is ev.Diagnostic:
        return f"diagnostic {e.code}"
    if t is ev.ResponseStarted:
        return "response start" + (f" {e.model}" if e.model else "")
    if t is ev.Terminated:
        return f"end marker {e.marker}"
    return None


def carries(events: Sequence) -> str:
    """One line for a frame's events ("(nothing)" when it produced none: a role-only chunk, an empty delta)."""
    # (a ping's first occurrence also brings the routine `keepalive` finding: one word says both)
    has_keepalive = any(type(e) is ev.Keepalive for e in events)
    words = [w for w in map(_one, events)
             if w and not (has_keepalive and w == "diagnostic keepalive")]
    return " · ".join(words) if words else "(nothing)"


def frame_kinds(events: Iterable) -> frozenset[str]:
    """The filter kinds a frame belongs to (`nothing` when it produced no content, usage, error or diagnostic)."""
    kinds = set()
    for e in events:
        t = type(e)
        if t is ev.TextDelta or t is ev.RefusalDelta:
            kinds.add("text")
        elif t is ev.ThinkingDelta or t is ev.SignatureDelta:
            kinds.add("thinking")
        elif t is ev.ToolArgsDelta:
            kinds.add("tool_args")
        elif t is ev.UsageUpdated:
            kinds.add("usage")
        elif t is ev.Keepalive:
            kinds.add("keepalive")
        elif t is ev.InBandError:
            kinds.add("error")
        elif t is ev.Diagnostic:
            kinds.add("keepalive" if e.code == "keepalive" else "diagnostic")
    return frozenset(kinds or {"nothing"})


def events_by_frame(events: Iterable) -> dict[int, list]:
    """Events grouped by the frame that produced them (events of no frame, such as end-of-stream findings,
    under their own `frame` value, which may be -1)."""
    out: dict[int, list] = {}
    for e in events:
        out.setdefault(e.frame, []).append(e)
    return out
