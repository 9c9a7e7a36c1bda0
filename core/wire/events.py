"""The normalized event vocabulary every wire-format adapter emits.

Small frozen, slotted dataclasses (h11 style); on hot paths adapters build them with `builder(cls)` (the same
objects, without the frozen `__init__`'s cost, see `core.fastbuild`). Every event carries `frame`: the number
of the SSE frame (dispatched event, counted from 0) that produced it, so the GUI can link a fragment to the
bytes it came from.
`index` is the block's key within one reply: assigned by the adapter in order of first appearance, unique
across choices (the reducer derives the per-choice ordinal that `decode` prints).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from core.wire.fastbuild import builder  # noqa: F401  (re-exported: adapters build their hot-path events with it)

BlockKind = Literal["text", "thinking", "tool_call", "refusal", "other"]
CANONICAL_FINISH = ("stop", "length", "tool_calls", "content_filter", "error", "other")


@dataclass(frozen=True, slots=True)
class Usage:
    """A full usage snapshot: the newest one wins, never summed."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    raw: Any = None
    #: how the counts were read from `raw` (e.g. "output = completion_tokens + reasoning_tokens ..."): the rule
    #: that applied, for the Usage tab; not part of the `decode` shape
    rule: str | None = None

    def to_json(self) -> dict:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "raw": self.raw,
        }


@dataclass(frozen=True, slots=True)
class FinishReason:
    canonical: str | None
    raw: Any = None

    def to_json(self) -> dict:
        return {"canonical": self.canonical, "raw": self.raw}


@dataclass(frozen=True, slots=True)
class ResponseStarted:
    frame: int
    response_id: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class BlockStarted:
    frame: int
    index: int
    kind: BlockKind
    choice: int = 0
    id: str | None = None
    name: str | None = None
    provider_index: Any = None      # chat tool_calls[].index, Anthropic block index, Responses output_index
    provider_type: str | None = None  # e.g. server_tool_use, web_search_call, executableCode
    redacted: bool = False
    raw: Any = None                 # the provider's block object where it sent one


@dataclass(frozen=True, slots=True)
class TextDelta:
    frame: int
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    frame: int
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class SignatureDelta:
    frame: int
    index: int
    signature: str


@dataclass(frozen=True, slots=True)
class ToolArgsDelta:
    """One streamed fragment of a tool call's arguments (concatenated verbatim)."""

    frame: int
    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class ToolArgsReplaced:
    """The whole argument text so far, replacing earlier fragments (Vertex `partialArgs` assembled by path)."""

    frame: int
    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class RefusalDelta:
    frame: int
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class BlockStopped:
    frame: int
    index: int
    raw: Any = None  # final provider object for the block, where one is sent (e.g. output_item.done)


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    frame: int
    usage: Usage
    reporting: str = "final"  # how the provider reports it: "up-front", "cumulative", "final", "usage-chunk"


#: the reportings whose output count counts the output sent so far (final once the stream ends). An "up-front"
#: count (Anthropic's message_start: 1-3 before any output) is not one: until a counting usage arrives, the
#: output is estimated, as in every format that reports nothing while streaming
OUTPUT_COUNTED = frozenset({"cumulative", "final", "usage-chunk"})


@dataclass(frozen=True, slots=True)
class Finished:
    frame: int
    reason: FinishReason
    choice: int = 0


@dataclass(frozen=True, slots=True)
class InBandError:
    """An error carried in the stream itself (often after HTTP 200)."""

    frame: int
    type: str | None
    message: str
    raw: Any = None


@dataclass(frozen=True, slots=True)
class Terminated:
    """The wire format's own end marker was seen ([DONE], message_stop, response.completed, ...)."""

    frame: int
    marker: str


@dataclass(frozen=True, slots=True)
class Keepalive:
    frame: int


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something a borrowed parser would trip on, pointing at its frame (-1 when it concerns no frame)."""

    frame: int
    code: str
    message: str

    def to_json(self) -> dict:
        return {"code": self.code, "message": self.message, "frame": self.frame}


# Diagnostic codes that describe how a provider normally streams (pings, a usage-only last chunk, the same
# cumulative usage sent again, an event type this build does not know yet): every view still lists them, but
# a stream that finished with only these has nothing a strict client would trip on.
ROUTINE_DIAGNOSTICS = frozenset({"keepalive", "usage-only-chunk", "cumulative-usage-repeated", "unknown-event"})


def findings(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that are not routine (what a strict client would trip on), in stream order."""
    return [d for d in diagnostics if d.code not in ROUTINE_DIAGNOSTICS]


Event = (ResponseStarted | BlockStarted | TextDelta | ThinkingDelta | SignatureDelta | ToolArgsDelta
         | ToolArgsReplaced | RefusalDelta | BlockStopped | UsageUpdated | Finished | InBandError | Terminated
         | Keepalive | Diagnostic)
