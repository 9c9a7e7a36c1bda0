"""Anthropic Messages streaming, as api.anthropic.com frames it.

`event: <type>` + `data: {...}` (LF framing, many payloads padded with spaces before their last brace):
`message_start` (the message shell with the input usage and a small output count), a `ping` after the first
`content_block_start`, per block `content_block_start` / `content_block_delta`s / `content_block_stop` with the
block's `index`, then `message_delta` (stop reason and cumulative usage) and `message_stop`. Thinking blocks end
with a `signature_delta`; tool_use blocks open with `input: {}` and stream `input_json_delta.partial_json`,
starting with an empty fragment. An in-band error is `event: error` with `{"type": "error", "error": {...}}`.
"""
from __future__ import annotations

from collections.abc import Iterator

from core.wire.script import ScriptedReply
from core.wire.encoders import WireEvent, dumps, sse_event

STOP_REASON = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}


def start_usage(reply: ScriptedReply) -> dict:
    u = reply.usage
    return {"input_tokens": max(0, u.input_tokens - u.cache_read_tokens - u.cache_write_tokens),
            "cache_creation_input_tokens": u.cache_write_tokens, "cache_read_input_tokens": u.cache_read_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": u.cache_write_tokens, "ephemeral_1h_input_tokens": 0},
            "output_tokens": min(u.output_tokens, 1 + (reply.ids.seed % 4)), "service_tier": "standard"}


def final_usage(reply: ScriptedReply) -> dict:
    u = reply.usage
    return {"input_tokens": max(0, u.input_tokens - u.cache_read_tokens - u.cache_write_tokens),
            "cache_creation_input_tokens": u.cache_write_tokens, "cache_read_input_tokens": u.cache_read_tokens,
            "output_tokens": u.output_tokens}


def error_object(reply: ScriptedReply) -> dict:
    e = reply.error
    return {"type": "error", "error": {"details": None, "type": e.type, "message": e.message}}


def encode_anthropic(reply: ScriptedReply, padding: bool = True) -> Iterator[WireEvent]:
    """The stream's events, one at a time (a generator: a server sends each as soon as it is made)."""
    ids = reply.ids
    n = 0

    def emit(kind: str, obj: dict) -> WireEvent:
        nonlocal n
        text = dumps(obj)
        if padding:
            pad = ids.padding(n)
            if pad:
                text = text[:-1] + pad + "}"
        n += 1
        return sse_event(kind, text, obj["type"])

    def ping() -> WireEvent:
        return sse_event("ping", '{"type": "ping"}', "ping")

    yield emit("head", {"type": "message_start", "message": {
              "model": ids.model, "id": ids.message_id, "type": "message", "role": "assistant", "content": [],
              "stop_reason": None, "stop_sequence": None, "usage": start_usage(reply)}})
    blocks = reply.choice_blocks(0)
    if not blocks:
        yield ping()
    cut = reply.error is not None or not reply.complete
    for i, b in enumerate(blocks):
        if b.kind == "tool_call":
            cb = {"type": "tool_use", "id": b.id, "name": b.name, "input": {}}
        elif b.kind == "thinking":
            cb = {"type": "thinking", "thinking": "", "signature": ""}
        else:  # text (a refusal has no block of its own here: it is text with stop_reason "refusal")
            cb = {"type": "text", "text": ""}
        yield emit("start", {"type": "content_block_start", "index": i, "content_block": cb})
        if i == 0:
            yield ping()
        if b.kind == "tool_call":
            yield emit("start", {"type": "content_block_delta", "index": i,
                                 "delta": {"type": "input_json_delta", "partial_json": ""}})
            for f in b.fragments:
                yield emit("delta", {"type": "content_block_delta", "index": i,
                                     "delta": {"type": "input_json_delta", "partial_json": f}})
        elif b.kind == "thinking":
            for f in b.fragments:
                yield emit("delta", {"type": "content_block_delta", "index": i,
                                     "delta": {"type": "thinking_delta", "thinking": f}})
        else:
            for f in b.fragments:
                yield emit("delta", {"type": "content_block_delta", "index": i,
                                     "delta": {"type": "text_delta", "text": f}})
        if cut and i == len(blocks) - 1:
            break
        if b.kind == "thinking" and b.signature:
            yield emit("delta", {"type": "content_block_delta", "index": i,
                                 "delta": {"type": "signature_delta", "signature": b.signature}})
        yield emit("stop", {"type": "content_block_stop", "index": i})

    if reply.error is not None:
        yield emit("error", error_object(reply))
        return
    if not reply.complete:
        return
    yield emit("finish", {"type": "message_delta", "delta": {"stop_reason": STOP_REASON.get(reply.finish, "end_turn"),
                                                             "stop_sequence": None}, "usage": final_usage(reply)})
    if reply.terminated:
        yield emit("end", {"type": "message_stop"})
