"""Encoders: one `ScriptedReply`, four byte-faithful wire formats.

`encode(format, reply, **options)` returns the stream as a list of `WireEvent`s (one SSE event each, with a kind
the server's pacing and fault injection use), `iter_encode(...)` the same events one at a time as they are made
(each format's encoder is a generator); `encode_bytes(...)` joins them into the response body.

Options by format: openai-chat `include_usage` (stream_options.include_usage) and `obfuscation`;
openai-responses `obfuscation`; the others take none.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from core.wire.formats import REGISTRY, unknown_format_message
from core.wire.script import ScriptedReply


# What each kind of event is, for pacing and faults:
#   head    - before the first token (message_start, response.created, the role-only chunk)
#   start   - a block opens (content_block_start, output_item.added, a tool call's first chunk)
#   delta   - one fragment of content (the paced events)
#   stop    - a block closes (content_block_stop, *.done events)
#   ping    - keepalive
#   finish  - finish reason / cumulative usage (message_delta, the finish chunk)
#   usage   - the usage-only chunk
#   end     - the end marker ([DONE], message_stop, response.completed)
#   error   - an in-band error
KINDS = ("head", "start", "delta", "stop", "ping", "finish", "usage", "end", "error")


@dataclass(slots=True)
class WireEvent:
    kind: str
    data: bytes
    payload_start: int = -1   # byte span of the JSON payload inside `data` (-1 when there is none)
    payload_end: int = -1

    def corrupted(self) -> "WireEvent":
        """The same event with its JSON payload cut short (keeps the SSE framing intact)."""
        if self.payload_start < 0:
            return self
        body = self.data[self.payload_start:self.payload_end]
        cut = max(1, int(len(body) * 0.6))
        # never cut inside a UTF-8 sequence: the point of this fault is bad JSON, not bad UTF-8
        while cut < len(body) and (body[cut] & 0xC0) == 0x80:
            cut += 1
        data = self.data[:self.payload_start] + body[:cut] + self.data[self.payload_end:]
        return WireEvent(self.kind, data, self.payload_start, self.payload_start + cut)


def dumps(obj) -> str:
    """Compact JSON, non-ASCII kept (OpenAI and Anthropic put raw UTF-8 on the wire)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def sse_event(kind: str, payload: str, event: str | None = None, line_end: str = "\n") -> WireEvent:
    head = (f"event: {event}{line_end}" if event else "") + "data: "
    hb = head.encode("utf-8")
    pb = payload.encode("utf-8")
    tail = (line_end + line_end).encode("ascii")
    return WireEvent(kind, hb + pb + tail, len(hb), len(hb) + len(pb))


def comment(text: str = "", line_end: str = "\n") -> WireEvent:
    return WireEvent("ping", f":{(' ' + text) if text else ''}{line_end}{line_end}".encode("utf-8"))


def encode(format_name: str, reply: ScriptedReply, **options) -> list[WireEvent]:
    return list(iter_encode(format_name, reply, **options))


def iter_encode(format_name: str, reply: ScriptedReply, **options) -> Iterator[WireEvent]:
    """The events of `encode`, made one at a time as they are taken (a server streams them as it encodes)."""
    try:
        fmt = REGISTRY[format_name]
    except KeyError:
        raise ValueError(unknown_format_message(format_name)) from None
    return fmt.encoder()(reply, **options)


def encode_bytes(format_name: str, reply: ScriptedReply, **options) -> bytes:
    return b"".join(e.data for e in encode(format_name, reply, **options))


def keepalive(format_name: str, ids=None) -> WireEvent:
    """The keepalive each format uses: Anthropic's `ping` event; an SSE comment for the OpenAI formats (as
    OpenAI-compatible servers send); for Gemini, which has no keepalive and whose SDK cannot skip comment lines,
    a chunk holding only an empty text part (the no-content chunk Gemini itself sends)."""
    if format_name == "anthropic":
        return sse_event("ping", '{"type": "ping"}', "ping")
    if format_name == "gemini":
        from core.wire.encoders.gemini import gdumps

        obj: dict = {"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0}]}
        if ids is not None:
            obj["modelVersion"] = ids.model
            obj["responseId"] = ids.gemini_response_id
        return sse_event("ping", gdumps(obj), line_end="\r\n")
    return comment("keepalive")
