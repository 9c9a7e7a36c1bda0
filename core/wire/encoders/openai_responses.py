"""OpenAI Responses streaming, as api.openai.com frames it (the gpt-5 era shape).

`event: <type>` + `data: {...}` events, every payload carrying `sequence_number` (counted from 0):
`response.created`, `response.in_progress`, then per output item `response.output_item.added`, its parts and
deltas (`response.output_text.delta`, `response.reasoning_summary_text.delta`,
`response.function_call_arguments.delta`, `response.refusal.delta`), their `.done` events and
`response.output_item.done`, and finally `response.completed` (or `response.incomplete`) holding the whole
response object with `output` and `usage`. An in-band error is `event: error` followed by `response.failed`.
"""
from __future__ import annotations

from collections.abc import Iterator

from core.wire.script import ScriptedReply
from core.wire.encoders import WireEvent, dumps, sse_event


def usage_object(reply: ScriptedReply) -> dict:
    u = reply.usage
    return {"input_tokens": u.input_tokens, "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
            "output_tokens": u.output_tokens, "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.total_tokens}


def tools_echo(reply: ScriptedReply) -> list[dict]:
    out = []
    for t in reply.input_tools:
        out.append({"type": "function", "description": t.get("description"), "name": t.get("name"),
                    "parameters": t.get("parameters") or {"type": "object", "properties": {}},
                    "strict": bool(t.get("strict", False))})
    return out


def response_object(reply: ScriptedReply, status: str, output: list, usage=None, error=None,
                    incomplete=None) -> dict:
    ids = reply.ids
    thinking = any(b.kind == "thinking" for b in reply.blocks)
    obj = {"id": ids.response_id, "object": "response", "created_at": ids.created, "status": status,
            "background": False, "error": error, "incomplete_details": incomplete, "instructions": None,
            "max_output_tokens": None, "max_tool_calls": None, "model": ids.model, "output": output,
            "parallel_tool_calls": True, "previous_response_id": None, "prompt_cache_key": None,
            "reasoning": {"effort": "medium" if thinking else None, "summary": "detailed" if thinking else None},
            "safety_identifier": None, "service_tier": "default", "store": True, "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": "auto",
            "tools": tools_echo(reply), "top_logprobs": 0, "top_p": 1.0, "truncation": "disabled",
            "usage": usage, "user": None, "metadata": {}}
    for key, value in reply.echo.items():     # what the request set, repeated as the API repeats it
        obj[key] = {**obj["reasoning"], **value} if key == "reasoning" and isinstance(value, dict) else value
    return obj


_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def encode_responses(reply: ScriptedReply, obfuscation: bool = True) -> Iterator[WireEvent]:
    """The stream's events, one at a time (a generator: a server sends each as soon as it is made)."""
    ids = reply.ids
    seq = 0

    def emit(kind: str, type_: str, body: dict) -> WireEvent:
        nonlocal seq
        obj = {"type": type_, "sequence_number": seq}
        obj.update(body)
        if obfuscation and type_.endswith(".delta"):
            obj["obfuscation"] = ids.obfuscation(seq)
        seq += 1
        return sse_event(kind, dumps(obj), type_)

    yield emit("head", "response.created", {"response": response_object(reply, "in_progress", [])})
    yield emit("head", "response.in_progress", {"response": response_object(reply, "in_progress", [])})

    output: list[dict] = []
    blocks = reply.choice_blocks(0)
    cut = reply.error is not None or not reply.complete
    for oi, b in enumerate(blocks):
        last = oi == len(blocks) - 1
        open_only = cut and last   # the stream ends inside this item: no .done events
        if b.kind == "tool_call":
            item_id = ids.item_id("fc", oi)
            item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "",
                    "call_id": b.id, "name": b.name}
            yield emit("start", "response.output_item.added", {"output_index": oi, "item": item})
            for f in b.fragments:
                yield emit("delta", "response.function_call_arguments.delta",
                           {"item_id": item_id, "output_index": oi, "delta": f})
            if open_only:
                break
            args = b.arguments
            yield emit("stop", "response.function_call_arguments.done",
                       {"item_id": item_id, "output_index": oi, "arguments": args})
            done = dict(item, status="completed", arguments=args)
            yield emit("stop", "response.output_item.done", {"output_index": oi, "item": done})
            output.append(done)
        elif b.kind == "thinking":
            item_id = ids.item_id("rs", oi)
            enc = {"encrypted_content": b.signature} if b.signature else {}   # include=reasoning.encrypted_content
            yield emit("start", "response.output_item.added",
                       {"output_index": oi, "item": {"id": item_id, "type": "reasoning", "summary": [], **enc}})
            where = {"item_id": item_id, "output_index": oi, "summary_index": 0}
            yield emit("start", "response.reasoning_summary_part.added",
                       dict(where, part={"type": "summary_text", "text": ""}))
            for f in b.fragments:
                yield emit("delta", "response.reasoning_summary_text.delta", dict(where, delta=f))
            if open_only:
                break
            text = b.text
            yield emit("stop", "response.reasoning_summary_text.done", dict(where, text=text))
            yield emit("stop", "response.reasoning_summary_part.done",
                       dict(where, part={"type": "summary_text", "text": text}))
            done = {"id": item_id, "type": "reasoning", "summary": [{"type": "summary_text", "text": text}], **enc}
            yield emit("stop", "response.output_item.done", {"output_index": oi, "item": done})
            output.append(done)
        else:  # text or refusal: a message item with one content part
            item_id = ids.item_id("msg", oi)
            item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
            yield emit("start", "response.output_item.added", {"output_index": oi, "item": item})
            where = {"item_id": item_id, "output_index": oi, "content_index": 0}
            refusal = b.kind == "refusal"
            empty = ({"type": "refusal", "refusal": ""} if refusal
                     else {"type": "output_text", "annotations": [], "logprobs": [], "text": ""})
            yield emit("start", "response.content_part.added", dict(where, part=empty))
            for f in b.fragments:
                if refusal:
                    yield emit("delta", "response.refusal.delta", dict(where, delta=f))
                else:
                    yield emit("delta", "response.output_text.delta", dict(where, delta=f, logprobs=[]))
            if open_only:
                break
            text = b.text
            if refusal:
                yield emit("stop", "response.refusal.done", dict(where, refusal=text))
                part = {"type": "refusal", "refusal": text}
            else:
                yield emit("stop", "response.output_text.done", dict(where, text=text, logprobs=[]))
                part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
            yield emit("stop", "response.content_part.done", dict(where, part=part))
            done = {"id": item_id, "type": "message", "status": "completed", "content": [part],
                    "role": "assistant"}
            yield emit("stop", "response.output_item.done", {"output_index": oi, "item": done})
            output.append(done)

    if reply.error is not None:
        e = reply.error
        code = e.code if e.code is not None else e.type
        yield emit("error", "error", {"error": {"type": e.type, "code": code, "message": e.message, "param": None}})
        if reply.terminated:
            yield emit("end", "response.failed", {"response": response_object(
                      reply, "failed", [], error={"code": code, "message": e.message})})
        return
    if not reply.complete:
        return
    if not reply.terminated:
        return
    reason = _INCOMPLETE.get(reply.finish)
    if reason:
        yield emit("end", "response.incomplete", {"response": response_object(
                  reply, "incomplete", output, usage_object(reply), incomplete={"reason": reason})})
    else:
        yield emit("end", "response.completed", {"response": response_object(reply, "completed", output,
                                                                               usage_object(reply))})
