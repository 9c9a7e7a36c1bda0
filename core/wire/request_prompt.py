"""The prompt a request carries: its system text and its last user message, in each wire format (sans-IO).

A recording made by another tool (a VCR cassette, a browser's HAR, a tap's exchange) keeps the request body and
nothing of the prompt StreamScope would have built it from: `request_prompt(format, body)` reads the two back
from the parsed body, so a replay can show what was asked. Only text is read (images, files and tool results
are left out); a body of another shape gives None.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: at most this many characters of each text are kept (a recording can hold megabytes of prompt)
MAX_PROMPT_CHARS = 1 << 20
_TEXT_PARTS = ("text", "input_text")          # the part types whose `text` is the user's words


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content[:MAX_PROMPT_CHARS]
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return ""
    out: list[str] = []
    size = 0
    for p in content:
        if isinstance(p, str):
            t = p
        elif isinstance(p, Mapping) and isinstance(p.get("text"), str) and p.get("type", "text") in _TEXT_PARTS \
                and not p.get("thought"):
            t = p["text"]
        else:
            continue
        out.append(t)
        size += len(t)
        if size >= MAX_PROMPT_CHARS:
            break
    return "\n".join(out)[:MAX_PROMPT_CHARS]


def _last_user(messages: Any, role_key: str = "role", users=("user",)) -> str | None:
    if not isinstance(messages, list):
        return None
    for m in reversed(messages):
        if isinstance(m, Mapping) and m.get(role_key, "user") in users:
            text = _text(m.get("content") if "content" in m else m.get("parts"))
            if text:
                return text
    return None


def request_prompt(format_name: str, body: Any) -> tuple[str, str] | None:
    """(system text, last user message text) of a request body in `format_name`, or None when it holds no user
    text in that format's shape."""
    if not isinstance(body, Mapping):
        return None
    if format_name == "openai-chat":
        msgs = body.get("messages")
        system = "\n".join(_text(m.get("content")) for m in msgs if isinstance(m, Mapping)
                           and m.get("role") in ("system", "developer")) if isinstance(msgs, list) else ""
        user = _last_user(msgs)
    elif format_name == "openai-responses":
        system = _text(body.get("instructions"))
        inp = body.get("input")
        user = inp[:MAX_PROMPT_CHARS] if isinstance(inp, str) else _last_user(inp)
        if isinstance(inp, list):
            system = "\n".join([system] * bool(system) + [_text(m.get("content")) for m in inp
                               if isinstance(m, Mapping) and m.get("role") in ("system", "developer")])
    elif format_name == "anthropic":
        system = _text(body.get("system"))
        user = _last_user(body.get("messages"))
    elif format_name == "gemini":
        si = body.get("systemInstruction", body.get("system_instruction"))
        system = _text(si.get("parts")) if isinstance(si, Mapping) else _text(si)
        contents = body.get("contents")
        user = _last_user(contents if isinstance(contents, list) else [contents])
    else:
        return None
    return (system, user) if user else None
