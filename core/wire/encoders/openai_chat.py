"""OpenAI Chat Completions streaming, as api.openai.com frames it.

`data: {chat.completion.chunk}` events, LF framing, `data: [DONE]` at the end. The first chunk of each choice is
role-only (`content: ""` for a text reply, `null` when the reply opens with a tool call or refusal); a tool call's
first chunk carries `id`, `type`, `function.name` and empty `arguments`, later chunks only `index` and argument
fragments; the finish reason rides on an empty delta; with `stream_options.include_usage` every chunk has
`"usage": null` and a final chunk with `choices: []` carries the usage. Reasoning text (not sent by OpenAI's own
models) uses `delta.reasoning_content`, the field DeepSeek and vLLM use.
"""
from __future__ import annotations

from collections.abc import Iterator

from core.wire.script import ScriptBlock, ScriptedReply
from core.wire.encoders import WireEvent, dumps, sse_event

_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}


def usage_object(reply: ScriptedReply) -> dict:
    u = reply.usage
    return {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
            "total_tokens": u.total_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def error_object(reply: ScriptedReply) -> dict:
    e = reply.error
    return {"error": {"message": e.message, "type": e.type, "param": None, "code": e.code}}


def _choice_deltas(blocks: list[ScriptBlock]) -> list[tuple[str, dict]]:
    """(kind, delta) for one choice, role chunk first."""
    first = blocks[0].kind if blocks else "text"
    role: dict = {"role": "assistant", "content": "" if first == "text" else None}
    if first == "thinking":
        role["reasoning_content"] = ""
    role["refusal"] = "" if first == "refusal" else None
    out: list[tuple[str, dict]] = [("head", role)]
    tool_n = 0
    for b in blocks:
        if b.kind == "text":
            out.extend(("delta", {"content": f}) for f in b.fragments)
        elif b.kind == "thinking":
            out.extend(("delta", {"content": None, "reasoning_content": f}) for f in b.fragments)
        elif b.kind == "refusal":
            out.extend(("delta", {"refusal": f}) for f in b.fragments)
        elif b.kind == "tool_call":
            out.append(("start", {"tool_calls": [{"index": tool_n, "id": b.id, "type": "function",
                                                  "function": {"name": b.name, "arguments": ""}}]}))
            out.extend(("delta", {"tool_calls": [{"index": tool_n, "function": {"arguments": f}}]})
                       for f in b.fragments)
            tool_n += 1
    return out


def encode_chat(reply: ScriptedReply, include_usage: bool = False, obfuscation: bool = True,
                service_tier: str | None = "default") -> Iterator[WireEvent]:
    """The stream's events, one at a time (a generator: a server sends each as soon as it is made)."""
    ids = reply.ids
    head = {"id": ids.chat_id, "object": "chat.completion.chunk", "created": ids.created, "model": ids.model}
    if service_tier:
        head["service_tier"] = service_tier
    head["system_fingerprint"] = ids.system_fingerprint
    n_event = 0

    def chunk(kind: str, choices: list, usage=None) -> WireEvent:
        nonlocal n_event
        obj = dict(head)
        obj["choices"] = choices
        if include_usage:
            obj["usage"] = usage
        if obfuscation:
            obj["obfuscation"] = ids.obfuscation(n_event)
        n_event += 1
        return sse_event(kind, dumps(obj))

    # interleave the choices round-robin, as the API does for n > 1
    n = max(1, reply.n_choices)
    per_choice = [_choice_deltas(reply.choice_blocks(c)) for c in range(n)]
    pos = [0] * n
    remaining = sum(len(p) for p in per_choice)
    while remaining:
        for c in range(n):
            if pos[c] < len(per_choice[c]):
                kind, delta = per_choice[c][pos[c]]
                pos[c] += 1
                remaining -= 1
                yield chunk(kind, [{"index": c, "delta": delta, "logprobs": None, "finish_reason": None}])

    if reply.error is not None:
        yield sse_event("error", dumps(error_object(reply)))
        return
    if not reply.complete:
        return
    for c in range(n):
        finish = _FINISH.get(reply.finish_of(c), reply.finish_of(c))
        yield chunk("finish", [{"index": c, "delta": {}, "logprobs": None, "finish_reason": finish}])
    if include_usage:
        yield chunk("usage", [], usage_object(reply))
    if reply.terminated:
        yield WireEvent("end", b"data: [DONE]\n\n")
