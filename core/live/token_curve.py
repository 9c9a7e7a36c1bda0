"""The shape of a stream: output tokens received over time, one curve per run (Qt-free).

    curve = token_curve(run)           # a `core.live.recorder.ProviderRun`, live or finished
    curve.t_ms, curve.tokens           # parallel arrays (float64): ms from sending, tokens received by then

What the statistics view draws as a line per repeated run, so a steady, bursty or stalled stream shows as a
straight, stepped or flat line. Tokens are estimated from the content characters received (text, thinking, tool
arguments, refusals), `CHARS_PER_TOKEN` to a token as the tokens/s estimate counts them: the final usage is one
number for the whole reply and says nothing about when each token arrived. The curve starts at (0, 0), the
request sent, stays at 0 until the first content chunk (so the wait for the first token is a flat stretch, not
a slope), then has one point per network chunk that carried content; it keeps at most `max_points` points
(the chunks evenly spaced, the first and last always kept), so a firehose reply costs a few KB however long.
A run whose recording held no per-chunk time (`ProviderRun.timing`: a cassette, a raw `.sse`, a browser's HAR)
has no curve (no point): its chunks' times are not when they came.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass

from core.live.recorder import _CONTENT_EVENTS, CHARS_PER_TOKEN, ProviderRun
from core.wire import events as ev

MAX_POINTS = 256


@dataclass(frozen=True, slots=True)
class TokenCurve:
    t_ms: array          # 'd': ms from sending the request
    tokens: array        # 'd': estimated output tokens received by then (non-decreasing)

    def __len__(self) -> int:
        return len(self.t_ms)


def token_curve(run: ProviderRun, max_points: int = MAX_POINTS) -> TokenCurve:
    """See the module docstring."""
    if not run.timing_recorded:
        return TokenCurve(array("d"), array("d"))
    log = run.events
    events, times = log.events, log.times
    chunk_t: list[int] = []
    chunk_chars: list[int] = []     # cumulative content characters after each chunk
    chars = 0
    for e, t in zip(events, times):
        te = type(e)
        if te in _CONTENT_EVENTS:
            size = len(e.fragment) if te is ev.ToolArgsDelta else len(e.text)
            if not size:
                continue
        elif te is ev.ToolArgsReplaced:
            size = 0   # the arguments so far, replacing earlier ones: no new characters counted
        else:
            continue
        chars += size
        if chunk_t and chunk_t[-1] == t:
            chunk_chars[-1] = chars
        else:
            chunk_t.append(t)
            chunk_chars.append(chars)
    n = len(chunk_t)
    room = max(max_points - 2, 2)     # (0, 0) and (first chunk, 0) are fixed
    picked = range(n) if n <= room else sorted({round(i * (n - 1) / (room - 1)) for i in range(room)})
    t_ms = array("d", [0.0])
    tokens = array("d", [0.0])
    if n:
        t_ms.append(chunk_t[0] / 1e6)
        tokens.append(0.0)
    for i in picked:
        t_ms.append(chunk_t[i] / 1e6)
        tokens.append(chunk_chars[i] / CHARS_PER_TOKEN)
    return TokenCurve(t_ms, tokens)
