"""Non-streaming answers: the whole reply as each provider's final JSON object (for `stream: false` requests and
Gemini's `:generateContent`)."""
from __future__ import annotations

from dataclasses import replace

from core.wire.encoders.anthropic import STOP_REASON, final_usage
from core.wire.encoders.gemini import FINISH as GEMINI_FINISH, tool_args, usage_metadata
from core.wire.encoders.openai_chat import usage_object as chat_usage
from core.wire.encoders.openai_responses import encode_responses
from core.wire.jsonfast import loads
from core.wire.script import ScriptedReply


def chat_completion(reply: ScriptedReply) -> dict:
    ids = reply.ids
    choices = []
    for c in range(max(1, reply.n_choices)):
        blocks = reply.choice_blocks(c)
        text = "".join(b.text for b in blocks if b.kind == "text")
        reasoning = "".join(b.text for b in blocks if b.kind == "thinking")
        refusal = "".join(b.text for b in blocks if b.kind == "refusal")
        msg: dict = {"role": "assistant", "content": text or None}
        if reasoning:
            msg["reasoning_content"] = reasoning
        msg["refusal"] = refusal or None
        msg["annotations"] = []
        calls = [{"id": b.id, "type": "function", "function": {"name": b.name, "arguments": b.arguments}}
                 for b in blocks if b.kind == "tool_call"]
        if calls:
            msg["tool_calls"] = calls
        choices.append({"index": c, "message": msg, "logprobs": None, "finish_reason": reply.finish_of(c)})
    return {"id": ids.chat_id, "object": "chat.completion", "created": ids.created, "model": ids.model,
            "choices": choices, "usage": chat_usage(reply), "service_tier": "default",
            "system_fingerprint": ids.system_fingerprint}


def response(reply: ScriptedReply) -> dict:
    whole = replace(reply, terminated=True, complete=True, error=None)
    last = list(encode_responses(whole, obfuscation=False))[-1]
    obj = loads(last.data[last.payload_start:last.payload_end])
    return obj["response"]


def message(reply: ScriptedReply) -> dict:
    ids = reply.ids
    content = []
    for b in reply.choice_blocks(0):
        if b.kind == "tool_call":
            try:
                inp = loads(b.arguments or "{}")   # (no lone surrogate: see jsonfast)
            except ValueError:
                inp = {}
            content.append({"type": "tool_use", "id": b.id, "name": b.name, "input": inp})
        elif b.kind == "thinking":
            content.append({"type": "thinking", "thinking": b.text, "signature": b.signature or ""})
        else:
            content.append({"type": "text", "text": b.text})
    usage = final_usage(reply)
    usage["cache_creation"] = {"ephemeral_5m_input_tokens": reply.usage.cache_write_tokens,
                               "ephemeral_1h_input_tokens": 0}
    usage["service_tier"] = "standard"
    return {"model": ids.model, "id": ids.message_id, "type": "message", "role": "assistant", "content": content,
            "stop_reason": STOP_REASON.get(reply.finish, "end_turn"), "stop_sequence": None, "usage": usage}


def generate_content(reply: ScriptedReply) -> dict:
    parts: list[dict] = []
    for b in reply.choice_blocks(0):
        if b.kind == "tool_call":
            part = {"functionCall": {"name": b.name, "args": tool_args(b)}}
            if b.signature:   # Gemini 3 signs the first function call of a step
                part["thoughtSignature"] = b.signature
            parts.append(part)
        elif b.kind == "thinking":
            p = {"text": b.text, "thought": True}
            if b.signature:
                p["thoughtSignature"] = b.signature
            parts.append(p)
        else:
            parts.append({"text": b.text})
    if not parts:
        parts = [{"text": ""}]
    return {"candidates": [{"content": {"parts": parts, "role": "model"},
                            "finishReason": GEMINI_FINISH.get(reply.finish, "STOP"), "index": 0}],
            "usageMetadata": usage_metadata(reply, 1, 1, 1, 1, True), "modelVersion": reply.ids.model,
            "responseId": reply.ids.gemini_response_id}


def assemble(fmt: str, reply: ScriptedReply) -> dict:
    return {"openai-chat": chat_completion, "openai-responses": response, "anthropic": message,
            "gemini": generate_content}[fmt](reply)
