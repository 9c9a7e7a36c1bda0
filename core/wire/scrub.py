"""Masking a secret in a response body where it appears only once decoded (sans-IO).

A server can echo the key back in forms a byte search does not find: JSON-escaped (`"\\u0073\\u006b-..."`) or
split across two events' text deltas. `mask_secrets(format, body, secrets)` finds both and overwrites the JSON
string literals that carry them with `*` of the same byte length, so every offset, frame boundary and the JSON
validity of the body survive, and a re-decode of the masked body no longer holds the secret anywhere. Plain
occurrences are masked first, byte for byte.

It decodes the body through the one pipeline to learn which frames carried the secret; it never guesses from
the bytes alone.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

from core.wire import events as ev
from core.wire.pipeline import StreamDecoder
from core.wire.sse import SSEDecoder, SSEFrame

_STRING_LITERAL = re.compile(rb'"(?:[^"\\\r\n]|\\.)*"')
_DELTAS = (ev.TextDelta, ev.ThinkingDelta, ev.ToolArgsDelta, ev.RefusalDelta)
_MIN_SECRET = 4            # shorter strings are not treated as secrets (they would mask ordinary text)


def _secrets(secrets: Iterable[str]) -> list[str]:
    return sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len, reverse=True)


def _mask_plain(body: bytearray, secrets: list[str]) -> int:
    count = 0
    for s in secrets:
        b = s.encode("utf-8")
        start = body.find(b)
        while start >= 0:
            body[start:start + len(b)] = b"*" * len(b)
            count += 1
            start = body.find(b, start + len(b))
    return count


def _literals(body: bytes, frame: SSEFrame):
    """(start, end, decoded value) of each JSON string literal in a frame's bytes (positions in the body)."""
    raw = frame.raw
    for m in _STRING_LITERAL.finditer(raw):
        try:
            value = json.loads(m.group())
        except ValueError:
            continue
        if isinstance(value, str):
            yield frame.offset + m.start(), frame.offset + m.end(), value


def _blank(body: bytearray, start: int, end: int) -> None:
    body[start + 1:end - 1] = b"*" * (end - start - 2)   # keep the quotes: the JSON stays valid


def _frames(body: bytes) -> dict[int, SSEFrame]:
    d = SSEDecoder()
    items = d.feed(body) + d.end()
    return {i.n: i for i in items if isinstance(i, SSEFrame)}


def mask_secrets(format_name: str, body: bytes, secrets: Iterable[str]) -> tuple[bytes, int]:
    """`body` with every secret masked, plain, JSON-escaped or split across deltas; and how many were masked."""
    secrets = _secrets(secrets)
    if not secrets or not body:
        return body, 0
    out = bytearray(body)
    count = _mask_plain(out, secrets)
    frames = _frames(bytes(out))
    # 1. escaped inside one literal (only a frame with a backslash has one: the rest were masked as plain bytes)
    for frame in frames.values():
        if 92 not in frame.raw:
            continue
        for start, end, value in _literals(body, frame):
            if any(s in value for s in secrets):
                _blank(out, start, end)
                count += 1
    # 2. split across the deltas of one block: mask every delta literal that covers a part of an occurrence
    d = StreamDecoder(format_name, keep_items=False)
    pieces: dict[tuple, list[tuple[int, str]]] = {}     # (delta type, block index) -> [(frame, fragment)]
    for e in d.feed(bytes(out)) + d.end():
        if isinstance(e, _DELTAS):
            fragment = e.fragment if type(e) is ev.ToolArgsDelta else e.text
            pieces.setdefault((type(e), e.index), []).append((e.frame, fragment))
    for parts in pieces.values():
        text = "".join(f for _, f in parts)
        spans = [(m.start(), m.start() + len(s)) for s in secrets for m in re.finditer(re.escape(s), text)]
        if not spans:
            continue
        pos = 0
        for frame_no, fragment in parts:
            lo, hi = pos, pos + len(fragment)
            pos = hi
            if not fragment or not any(lo < e and s < hi for s, e in spans):
                continue
            frame = frames.get(frame_no)
            if frame is None:
                continue
            for start, end, value in _literals(body, frame):
                if fragment in value:
                    _blank(out, start, end)
                    count += 1
                    break
    return bytes(out), count
