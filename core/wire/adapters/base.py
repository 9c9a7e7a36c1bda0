"""What every wire-format adapter shares: frame-to-JSON with diagnostics, block numbering, end markers.

An adapter turns `SSEFrame`s into normalized events (`core.wire.events`). It is sans-IO and never raises on bad
peer data: a frame that is not JSON, an unknown event or an event after the end marker becomes a
`Diagnostic` (and the frame is otherwise skipped), so a pane keeps everything else. JSON of the wrong type
where a format has a string or a count never reaches an event: token counts go through `token_count`,
text through a `type(...) is str` test, and a field that is off in a way no test foresaw is caught where the
adapter dispatches the frame (`MALFORMED`: a `malformed-event` diagnostic, the frame skipped or partly decoded).
JSON nested deeper than `jsonfast.MAX_DEPTH` never reaches a handler either: `frame_json` bounds it (a
`json-too-deep` diagnostic), so nothing an adapter keeps (usage, errors, raw objects) can make a consumer's
encoder or comparison recurse past the interpreter's limit.

One convention for every adapter: `on_frame` parses the frame's JSON once, then hands it to a handler
`_on_<what>(self, n, obj, out) -> None` (`n` the frame number, `obj` the parsed data), which appends the events
it makes to `out`; helpers take `(n, ..., out)` the same way. Findings that repeat are reported once per stream,
through `first_time(key)`.
"""
from __future__ import annotations

from typing import Any

from core.wire import events as ev
from core.wire.jsonfast import (DEPTH_GATE, MAX_DEPTH, TOO_DEEP_MARKER, JSONTooDeep, arguments_problem, bounded,
                               loads_fast, loads_repaired, may_nest_too_deep)
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


def bad_index(v) -> bool:
    """Whether an index as sent (a block's, a choice's, an output item's) is present but unusable: not an integer
    (a float such as 1e30, a bool, a string) or negative. An absent one (None) is each adapter's own case."""
    return v is not None and (type(v) is not int or v < 0)


_JSON_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}


def json_type(v) -> str:
    """The JSON type name of a parsed value, for diagnostics ("a JSON string", "a JSON array")."""
    return "null" if v is None else _JSON_TYPE_NAMES.get(type(v), type(v).__name__)


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
        self._reported: set = set()   # keys of the findings reported once per stream (see first_time)
        self.last_frame = -1   # the number of the last frame, set by the pipeline before it calls end()

    # -- helpers for subclasses ----------------------------------------------------------------------
    def new_index(self) -> int:
        """The next block index, in order of first appearance across the whole reply."""
        i = self._next_index
        self._next_index = i + 1
        return i

    def first_time(self, key) -> bool:
        """True the first time `key` is met in this stream: the one way adapters report a repeated finding once."""
        if key in self._reported:
            return False
        self._reported.add(key)
        return True

    def parse_json(self, frame: SSEFrame, out: list) -> Any:
        """The frame's data as JSON (depth-bounded), or None after a `data-not-json` or `json-too-deep` diagnostic.

        The slow path (the stdlib's leniency, after orjson refused the text). A lone surrogate escape in a string
        (`"\\ud800"`: no UTF-8 writer can encode what it gives) reads as U+FFFD, with a `lone-surrogate` diagnostic."""
        try:
            value, replaced = loads_repaired(frame.data)
        except JSONTooDeep:
            out.append(ev.Diagnostic(frame.n, "json-too-deep",
                                     f"data is JSON nested too deep to parse ({len(frame.data)} chars); skipped"))
            return None
        except ValueError as exc:
            preview = frame.data[:80]
            out.append(ev.Diagnostic(frame.n, "data-not-json",
                                     f"data is not JSON ({exc.__class__.__name__}): {preview!r}"))
            return None
        if replaced:
            out.append(ev.Diagnostic(frame.n, "lone-surrogate",
                                     f"data holds {replaced} lone surrogate escape{'s' if replaced > 1 else ''} "
                                     "(a \\uD800-\\uDFFF with no partner: not a character, no UTF-8 writer can "
                                     "encode it); read as U+FFFD"))
        return self.shallow(frame.n, value, out)

    def shallow(self, n: int, value, out: list):
        """`value` with its parts nested deeper than MAX_DEPTH replaced (and a `json-too-deep` diagnostic).

        Callers call it only for a frame longer than DEPTH_GATE whose text `may_nest_too_deep` (or from the slow
        path): shorter JSON cannot nest that deep."""
        kept = bounded(value)
        if kept is not value:
            out.append(ev.Diagnostic(n, "json-too-deep", "data is JSON nested deeper than "
                                     f"{MAX_DEPTH} levels; the deeper parts are replaced by {TOO_DEEP_MARKER!r}"))
        return kept

    def frame_json(self, frame: SSEFrame, out: list) -> Any:
        """The frame's data as JSON, depth-bounded, or None after a diagnostic.

        orjson first (bare, no wrapper call: this runs per frame), then the stdlib's leniency in `parse_json`.
        """
        data = frame.data
        try:
            d = loads_fast(data)
        except ValueError:
            return self.parse_json(frame, out)
        if len(data) > DEPTH_GATE and may_nest_too_deep(data):
            return self.shallow(frame.n, d, out)
        return d

    def json_object(self, frame: SSEFrame, out: list) -> dict | None:
        """The frame's data as a JSON object, or None after a `data-not-json`, `json-too-deep` or
        `unexpected-data` diagnostic."""
        d = self.frame_json(frame, out)
        if d is None:
            return None
        if type(d) is not dict:
            out.append(ev.Diagnostic(frame.n, "unexpected-data",
                                     f"{frame.event} data is JSON but not an object: {frame.data[:80]!r}"))
            return None
        return d

    def mark_terminated(self, n: int, marker: str, out: list) -> None:
        if not self.terminated:
            self.terminated = True
            self.terminator_frame = n
            out.append(ev.Terminated(n, marker))

    def check_after_terminator(self, n: int, out: list) -> None:
        """Report the first frame that arrives after the end marker."""
        if self.terminated and self.first_time("event-after-terminator"):
            out.append(ev.Diagnostic(n, "event-after-terminator",
                                     f"an event arrived after the end marker (frame {self.terminator_frame})"))

    def check_tool_arguments(self, n: int, label, arguments: str, out: list) -> None:
        """At a tool call's end: a `tool-arguments-invalid-json` diagnostic when a client could not load them."""
        problem = arguments_problem(arguments)
        if problem is not None:
            out.append(ev.Diagnostic(n, "tool-arguments-invalid-json",
                                     f"the arguments of tool call {label} are {problem}: {len(arguments)} chars, "
                                     f"ending {arguments[-40:]!r} (a truncated call? max_tokens)"))

    def arguments_only_at_end(self, n: int, label, where: str, out: list) -> None:
        """The `arguments-only-at-end` diagnostic: the arguments came whole in a final object, in no delta."""
        out.append(ev.Diagnostic(n, "arguments-only-at-end",
                                 f"the arguments of tool call {label} came only in {where}, never in a delta: "
                                 "a client that assembles them from the deltas gets an empty string"))

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
