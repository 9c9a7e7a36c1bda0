"""Gemini `streamGenerateContent?alt=sse`, as generativelanguage.googleapis.com frames it.

Unnamed `data:` events with CRLF framing; every chunk is a whole `GenerateContentResponse` (JSON written with
`", "`-less commas and `": "` colons, as Google's serializer does) holding only the newest parts: one chunk per
text or thought fragment (`"thought": true` parts), function calls whole (`args` objects, several calls in one
chunk), `usageMetadata` on every chunk (cumulative counts), `finishReason` on the last chunk only. An in-band
error is a chunk `{"error": {"code", "message", "status"}}`.
"""
from __future__ import annotations

import json
from collections.abc import Iterator

from core.wire.script import ScriptBlock, ScriptedReply
from core.wire.encoders import WireEvent, sse_event
from core.wire.jsonfast import loads

FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_STATUS = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
           504: "DEADLINE_EXCEEDED"}


def gdumps(obj) -> str:
    """Google's JSON spacing: `{"a": 1,"b": [{"c": "d"}]}`."""
    return json.dumps(obj, separators=(",", ": "), ensure_ascii=False)


def tool_args(b: ScriptBlock) -> dict:
    try:
        args = loads(b.arguments or "{}")   # (no lone surrogate: see jsonfast)
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {"value": args}


def usage_metadata(reply: ScriptedReply, cand_done: int, cand_total: int, th_done: int, th_total: int,
                   final: bool) -> dict:
    u = reply.usage
    reasoning = u.reasoning_tokens
    candidates = max(0, u.output_tokens - reasoning)
    c = candidates if final or cand_total == 0 else round(candidates * cand_done / cand_total)
    t = reasoning if final or th_total == 0 else round(reasoning * th_done / th_total)
    out: dict = {"promptTokenCount": u.input_tokens}
    if c or final:
        out["candidatesTokenCount"] = c
    out["totalTokenCount"] = u.input_tokens + c + t
    if u.cache_read_tokens:
        out["cachedContentTokenCount"] = u.cache_read_tokens
    out["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": u.input_tokens}]
    if u.cache_read_tokens:
        out["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": u.cache_read_tokens}]
    if t:
        out["thoughtsTokenCount"] = t
    return out


def error_object(reply: ScriptedReply) -> dict:
    e = reply.error
    code = e.code if isinstance(e.code, int) else 503
    return {"error": {"code": code, "message": e.message, "status": _STATUS.get(code, e.type.upper())}}


def encode_gemini(reply: ScriptedReply) -> Iterator[WireEvent]:
    """The stream's events, one at a time (a generator: a server sends each as soon as it is made)."""
    ids = reply.ids
    blocks = reply.choice_blocks(0)
    # chunks: (kind, parts, candidates fragments so far, thought fragments so far)
    chunks: list[tuple[str, list[dict], int, int]] = []
    cand_total = sum(len(b.fragments) for b in blocks if b.kind != "thinking")
    th_total = sum(len(b.fragments) for b in blocks if b.kind == "thinking")
    cand_done = th_done = 0
    i = 0
    while i < len(blocks):
        b = blocks[i]
        if b.kind == "tool_call":
            parts = []
            while i < len(blocks) and blocks[i].kind == "tool_call":
                part = {"functionCall": {"name": blocks[i].name, "args": tool_args(blocks[i])}}
                if blocks[i].signature:
                    part["thoughtSignature"] = blocks[i].signature
                parts.append(part)
                cand_done += len(blocks[i].fragments)
                i += 1
            chunks.append(("delta", parts, cand_done, th_done))
            continue
        thought = b.kind == "thinking"
        for k, f in enumerate(b.fragments):
            part: dict = {"text": f}
            if thought:
                part["thought"] = True
                th_done += 1
            else:
                cand_done += 1
            if b.signature and k == len(b.fragments) - 1:
                part["thoughtSignature"] = b.signature
            chunks.append(("delta", [part], cand_done, th_done))
        i += 1

    finishing = reply.error is None and reply.complete and reply.terminated
    if reply.error is None and reply.complete and not chunks:
        chunks.append(("finish", [{"text": ""}], 0, 0))
    for n, (kind, parts, cd, td) in enumerate(chunks):
        last = n == len(chunks) - 1
        final = last and reply.error is None and reply.complete
        cand: dict = {"content": {"parts": parts, "role": "model"}}
        if final and finishing:
            cand["finishReason"] = FINISH.get(reply.finish, "STOP")
        cand["index"] = 0
        obj = {"candidates": [cand],
               "usageMetadata": usage_metadata(reply, cd, cand_total, td, th_total, final),
               "modelVersion": ids.model, "responseId": ids.gemini_response_id}
        yield sse_event(kind, gdumps(obj), line_end="\r\n")
    if reply.error is not None:
        yield sse_event("error", gdumps(error_object(reply)), line_end="\r\n")
