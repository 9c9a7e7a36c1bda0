"""A whole (non-stream) reply, read as the stream of the same reply: the frames that stream would carry.

An application that does not stream gets its reply as one JSON object: Chat Completions' `chat.completion`, the
Responses API's `response`, Anthropic's `message`, Gemini's `GenerateContentResponse` (`:generateContent`, and a
JSON array of them from `:streamGenerateContent` without `alt=sse`). A tap sees these, and so do recordings.
`stream_payloads(format, obj)` gives the (event name, data) of each frame a stream of the same reply would carry,
built from the object's own fields (its ids, its blocks as sent, its usage object), so that the format's own
adapter and the one reducer read it (`core.wire.pipeline.StreamDecoder.whole`): blocks, tool arguments, usage,
finish and findings come from the code that reads streams, not from a second reader of each format.

How each object maps (what a stream of it carries, in the order it carries it):
- openai-chat: one chunk whose `delta` is each choice's `message` (its tool calls numbered by `index`), a chunk
  with the finish reasons and the usage (a stream's finish chunk may carry it), `[DONE]`;
- openai-responses: `response.created`, each output item as `output_item.added` + `output_item.done` (a
  function call's arguments as one `function_call_arguments.delta` between them, as a stream sends them),
  then `response.completed` / `.incomplete` / `.failed` as its `status` says, with the whole response;
- anthropic: `message_start` (the message without its content and usage), each content block whole in its
  `content_block_start` (the adapter reads a block's text, thinking, signature and tool input there, as for the
  blocks a stream sends whole), `content_block_stop`, `message_delta` (stop reason, the usage), `message_stop`;
- gemini: the object itself (a stream's every chunk is one), or each object of the array.

None when the object is not that format's reply (a model list, an error body, another format's reply).
"""
from __future__ import annotations

from typing import Any

#: what a frame holds: its event name ("message" for an unnamed one, as SSE names it) and its data (a JSON value,
#: or the text of a marker)
Payload = tuple[str, Any]


def stream_payloads(format_name: str, obj: Any) -> list[Payload] | None:
    """The frames a stream of the whole reply `obj` (parsed JSON) would carry, or None when it is not one."""
    make = _BY_FORMAT.get(format_name)
    return None if make is None else make(obj)


def whole_format(obj: Any) -> str | None:
    """The wire format whose whole reply `obj` (parsed JSON) is, by its shape, or None: for a body whose path
    names no format (a raw file, a recording without a URL)."""
    for name, make in _BY_FORMAT.items():
        if make(obj) is not None:
            return name
    return None


def _chat(obj: Any) -> list[Payload] | None:
    if type(obj) is not dict or type(obj.get("choices")) is not list:
        return None
    head = {k: v for k, v in obj.items() if k not in ("choices", "usage", "error")}
    if head.get("object") == "chat.completion":
        head["object"] = "chat.completion.chunk"
    deltas, finishes = [], []
    for c in obj["choices"]:
        if type(c) is not dict:
            continue
        message = c.get("message")
        delta = dict(message) if type(message) is dict else {}
        calls = delta.get("tool_calls")
        if type(calls) is list:       # a stream numbers its tool calls; a message lists them
            delta["tool_calls"] = [{"index": i, **call} if type(call) is dict else call
                                   for i, call in enumerate(calls)]
        deltas.append({"index": c.get("index", len(deltas)), "delta": delta, "finish_reason": None})
        if c.get("finish_reason") is not None:
            finishes.append({"index": c.get("index", len(finishes)), "delta": {},
                             "finish_reason": c["finish_reason"]})
    first = {**head, "choices": deltas}
    if "error" in obj:                # (OpenRouter puts an error beside the choices of a 200)
        first["error"] = obj["error"]
    out: list[Payload] = [("message", first)]
    last = {**head, "choices": finishes}
    if obj.get("usage") is not None:
        last["usage"] = obj["usage"]
    if finishes or "usage" in last:
        out.append(("message", last))
    out.append(("message", "[DONE]"))
    return out


_RESPONSES_END = {"completed": "response.completed", "incomplete": "response.incomplete",
                  "failed": "response.failed"}


def _responses(obj: Any) -> list[Payload] | None:
    if type(obj) is not dict or obj.get("object") != "response" or type(obj.get("output")) is not list:
        return None
    out: list[Payload] = [("response.created", {"type": "response.created",
                                                "response": {**obj, "status": "in_progress", "output": []}})]
    for i, item in enumerate(obj["output"]):
        if type(item) is not dict:
            continue
        added = dict(item)
        if added.get("type") == "message":
            added["content"] = []
        elif added.get("type") == "function_call":
            added["arguments"] = ""
        out.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                   "item": added}))
        args = item.get("arguments")
        if item.get("type") == "function_call" and type(args) is str and args:
            out.append(("response.function_call_arguments.delta",
                        {"type": "response.function_call_arguments.delta", "output_index": i,
                         "item_id": item.get("id"), "delta": args}))
        out.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                  "item": item}))
    end = _RESPONSES_END.get(obj.get("status"), "response.completed")
    out.append((end, {"type": end, "response": obj}))
    return out


def _anthropic(obj: Any) -> list[Payload] | None:
    if type(obj) is not dict or obj.get("type") != "message" or type(obj.get("content")) is not list:
        return None
    start = {k: v for k, v in obj.items() if k not in ("usage", "stop_reason", "stop_sequence")}
    start.update(content=[], stop_reason=None, stop_sequence=None)
    out: list[Payload] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(obj["content"]):
        out.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": block}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    delta = {"type": "message_delta", "delta": {"stop_reason": obj.get("stop_reason"),
                                                "stop_sequence": obj.get("stop_sequence")}}
    if type(obj.get("usage")) is dict:
        delta["usage"] = obj["usage"]
    out.append(("message_delta", delta))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def _gemini_response(obj: Any) -> bool:
    return type(obj) is dict and any(k in obj for k in ("candidates", "usageMetadata", "promptFeedback"))


def _gemini(obj: Any) -> list[Payload] | None:
    if _gemini_response(obj):
        return [("message", obj)]
    if type(obj) is list and obj and all(_gemini_response(o) for o in obj):
        return [("message", o) for o in obj]
    return None


_BY_FORMAT = {"openai-chat": _chat, "openai-responses": _responses, "anthropic": _anthropic, "gemini": _gemini}
