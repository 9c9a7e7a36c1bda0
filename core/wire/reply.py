"""The reply snapshot and the one reducer that folds normalized events into it.

`fold(reply, event)` is the only place a reply changes (anthropic-sdk-python's `accumulate_event` idea). It does
no I/O and depends on nothing but the event; it updates the snapshot in place and returns it, because copying a
growing reply on every delta would make a 200,000-event stream quadratic. Block text is kept as a list of
fragments and joined on read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.wire import events as ev


@dataclass(slots=True)
class Block:
    index: int
    kind: str
    choice: int = 0
    id: str | None = None
    name: str | None = None
    provider_index: Any = None
    provider_type: str | None = None
    redacted: bool = False
    raw: Any = None
    parts: list[str] = field(default_factory=list)       # text / thinking / refusal / tool-argument fragments
    signature_parts: list[str] = field(default_factory=list)
    complete: bool = False
    frames: list[int] = field(default_factory=list)      # the frames that built this block, in order
    size: int = 0                                        # characters received so far

    @property
    def text(self) -> str | None:
        if self.kind in ("text", "thinking", "refusal"):
            if self.redacted:
                return None
            return "".join(self.parts)
        if self.kind == "other" and self.parts:   # a block type that carries text (Anthropic `compaction`)
            return "".join(self.parts)
        return None

    @property
    def arguments(self) -> str | None:
        if self.kind == "tool_call":
            return "".join(self.parts)
        return None

    @property
    def signature(self) -> str | None:
        return "".join(self.signature_parts) if self.signature_parts else None

    def _touch(self, frame: int) -> None:
        if not self.frames or self.frames[-1] != frame:
            self.frames.append(frame)


@dataclass(slots=True)
class Reply:
    """Everything known about one reply so far."""

    response_id: str | None = None
    model: str | None = None
    blocks: dict[int, Block] = field(default_factory=dict)   # by event index, in order of first appearance
    usage: ev.Usage | None = None
    usage_frame: int | None = None
    usage_reporting: str | None = None
    usage_updates: int = 0   # snapshots received (each is a UsageUpdated event; the newest is `usage`)
    finish: ev.FinishReason | None = None
    finish_by_choice: dict[int, ev.FinishReason] = field(default_factory=dict)
    error: ev.InBandError | None = None
    terminated: bool = False
    terminator_frame: int | None = None
    keepalives: int = 0
    diagnostics: list[ev.Diagnostic] = field(default_factory=list)
    events: int = 0

    def ordered_blocks(self) -> list[Block]:
        """Blocks in final-message order: by choice, then order of first appearance."""
        return sorted(self.blocks.values(), key=lambda b: (b.choice, b.index))

    def to_json(self) -> dict:
        """The `decode` shape (without `format` and `frames`, which the caller knows)."""
        blocks = []
        ordinal: dict[int, int] = {}
        for b in self.ordered_blocks():
            i = ordinal.get(b.choice, 0)
            ordinal[b.choice] = i + 1
            out = {"choice": b.choice, "index": i, "type": b.kind, "text": b.text, "id": b.id, "name": b.name,
                   "arguments": b.arguments, "signature": b.signature, "redacted": b.redacted}
            if b.provider_type:
                out["provider_type"] = b.provider_type
            if b.kind == "other" and b.raw is not None:
                out["raw"] = b.raw
            if b.redacted and isinstance(b.raw, dict) and "data" in b.raw:
                out["data"] = b.raw["data"]
            blocks.append(out)
        return {
            "blocks": blocks,
            "finish_reason": (self.finish or ev.FinishReason(None, None)).to_json(),
            "usage": (self.usage or ev.Usage()).to_json(),
            "error": None if self.error is None else {"type": self.error.type, "message": self.error.message,
                                                      "raw": self.error.raw},
            "terminated": self.terminated,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _block(reply: Reply, index: int, frame: int) -> Block:
    """The block an event addresses; a delta for a block never started starts one (and says so)."""
    b = reply.blocks.get(index)
    if b is None:
        b = Block(index=index, kind="text")
        reply.blocks[index] = b
        reply.diagnostics.append(ev.Diagnostic(frame, "delta-without-block-start",
                                               f"a delta for block {index} arrived before its start"))
    return b


_TextDelta, _ThinkingDelta = ev.TextDelta, ev.ThinkingDelta
_RefusalDelta, _ToolArgsDelta = ev.RefusalDelta, ev.ToolArgsDelta
_UsageUpdated = ev.UsageUpdated


def fold(reply: Reply, event: ev.Event) -> Reply:
    """Apply one normalized event to the reply snapshot."""
    reply.events += 1
    t = type(event)
    # (the common events first, through module-level names: this runs once per event)
    if t is _TextDelta or t is _ThinkingDelta or t is _ToolArgsDelta or t is _RefusalDelta:
        b = reply.blocks.get(event.index) or _block(reply, event.index, event.frame)
        piece = event.fragment if t is _ToolArgsDelta else event.text
        b.parts.append(piece)
        b.size += len(piece)
        frames = b.frames
        if not frames or frames[-1] != event.frame:
            frames.append(event.frame)
    elif t is _UsageUpdated:  # (checked early: Gemini sends usage with every chunk)
        reply.usage = event.usage
        reply.usage_frame = event.frame
        reply.usage_reporting = event.reporting
        reply.usage_updates += 1
    elif t is ev.BlockStarted:
        existing = reply.blocks.get(event.index)
        b = Block(index=event.index, kind=event.kind, choice=event.choice, id=event.id, name=event.name,
                  provider_index=event.provider_index, provider_type=event.provider_type,
                  redacted=event.redacted, raw=event.raw)
        if existing is not None:  # a delta came first: keep what it carried
            b.parts, b.size, b.frames = existing.parts, existing.size, existing.frames
        b._touch(event.frame)
        reply.blocks[event.index] = b
    elif t is ev.SignatureDelta:
        b = _block(reply, event.index, event.frame)
        b.signature_parts.append(event.signature)
        b._touch(event.frame)
    elif t is ev.ToolArgsReplaced:
        b = _block(reply, event.index, event.frame)
        b.parts = [event.arguments]
        b.size = len(event.arguments)
        b._touch(event.frame)
    elif t is ev.BlockStopped:
        b = _block(reply, event.index, event.frame)
        b.complete = True
        if event.raw is not None:
            b.raw = event.raw
        b._touch(event.frame)
    elif t is ev.Finished:
        reply.finish_by_choice[event.choice] = event.reason
        if event.choice == 0 or reply.finish is None:
            reply.finish = event.reason
    elif t is ev.ResponseStarted:
        reply.response_id = event.response_id or reply.response_id
        reply.model = event.model or reply.model
    elif t is ev.InBandError:
        reply.error = event
    elif t is ev.Terminated:
        reply.terminated = True
        reply.terminator_frame = event.frame
    elif t is ev.Keepalive:
        reply.keepalives += 1
    elif t is ev.Diagnostic:
        reply.diagnostics.append(event)
    return reply

