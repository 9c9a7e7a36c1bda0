"""What every wire-format adapter shares: frame-to-JSON with diagnostics, block numbering, end markers.

An adapter turns `SSEFrame`s into normalized events (`core.wire.events`). It is sans-IO and never raises on bad
peer data: a frame that is not JSON, an unknown event or an event after the end marker becomes a
`Diagnostic` (and the frame is otherwise skipped), so a pane keeps everything else. JSON of the wrong type
where a format has a string or a count never reaches an event: token counts go through `token_count`,
text through a `type(...) is str` test, and a field that is off in a way no test foresaw is caught where the
adapter dispatches the frame (`MALFORMED`: a `malformed-event` diagnostic, the frame skipped or partly decoded).
"""
from __future__ import annotations

from typing import Any

from core.wire import events as ev
from core.wire.jsonfast import loads, loads_fast
from core.wire.sse import SSEComment, SSEFrame

#: what a field of an unexpected JSON type raises on its way through an adapter (a list as a dict key, a
#: number where text is added up, `.get` on a string, ...): caught per frame, reported as `malformed-event`
MALFORMED = (AttributeError, TypeError, ValueError, KeyError, IndexError)


def token_count(v):
    """A token count as sent, or None when it is not an integer."""
    return v if type(v) is int else None


def text_or_none(v):
    """An identifier or name as sent, or None when it is not a string."""
    return v if type(v) is str else None


def malformed(n: int, what: str, exc: BaseException | None = None) -> ev.Diagnostic:
    """The `malformed-event` diagnostic for frame `n`: `what` was skipped (with the error met, if any)."""
    return ev.Diagnostic(n, "malformed-event", f"{what} ({exc})" if exc is not None else what)


class Adapter:
    """Base class. Subclasses implement `on_frame`; `on_comment` and `end` have sensible defaults."""

    format: str = ""
    #: a human description of the end marker, used in the missing-terminator diagnostic
    terminator_description: str = "the format's end marker"

    def __init__(self) -> None:
        self.terminated = False
        self.terminator_frame: int | None = None
        self._next_index = 0
        self._after_terminator_reported = False
        self.last_frame = -1   # the number of the last frame, set by the pipeline before it calls end()

    # -- helpers for subclasses ----------------------------------------------------------------------
    def new_index(self) -> int:
        """The next block index, in order of first appearance across the whole reply."""
        i = self._next_index
        self._next_index = i + 1
        return i

    def parse_json(self, frame: SSEFrame, out: list) -> Any:
        """The frame's data as JSON, or None after appending a `data-not-json` diagnostic."""
        try:
            return loads(frame.data)
        except ValueError as exc:
            preview = frame.data[:80]
            out.append(ev.Diagnostic(frame.n, "data-not-json",
                                     f"data is not JSON ({exc.__class__.__name__}): {preview!r}"))
            return None

    def json_object(self, frame: SSEFrame, out: list) -> dict | None:
        """The frame's data as a JSON object, or None after a `data-not-json` or `unexpected-data` diagnostic.

        orjson first (bare, no wrapper call: this runs per frame), then the stdlib's leniency in `parse_json`.
        """
        try:
            d = loads_fast(frame.data)
        except ValueError:
            d = self.parse_json(frame, out)
            if d is None:
                return None
        if type(d) is not dict:
            out.append(ev.Diagnostic(frame.n, "unexpected-data",
                                     f"{frame.event} data is JSON but not an object: {frame.data[:80]!r}"))
            return None
        return d

    def mark_terminated(self, frame: SSEFrame, marker: str, out: list) -> None:
        if not self.terminated:
            self.terminated = True
            self.terminator_frame = frame.n
            out.append(ev.Terminated(frame.n, marker))

    def check_after_terminator(self, frame: SSEFrame, out: list) -> None:
        """Report the first frame that arrives after the end marker."""
        if self.terminated and not self._after_terminator_reported:
            self._after_terminator_reported = True
            out.append(ev.Diagnostic(frame.n, "event-after-terminator",
                                     f"an event arrived after the end marker (frame {self.terminator_frame})"))

    # -- the interface the pipeline calls ------------------------------------------------------------
    def on_frame(self, frame: SSEFrame) -> list[ev.Event]:
        raise NotImplementedError

    def on_comment(self, comment: SSEComment) -> list[ev.Event]:
        """Comment lines are kept by the SSE layer for the raw view; by default they produce no event."""
        return []

    def end(self) -> list[ev.Event]:
        """End of input: close what is open and say what was missing."""
        out: list[ev.Event] = []
        if not self.terminated:
            out.append(ev.Diagnostic(self.last_frame, "missing-terminator",
                                     f"the stream ended without {self.terminator_description}"))
        return out
