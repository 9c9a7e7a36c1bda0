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
#: The shortest string looked for as a secret in bodies, texts and exports. A provider's key is tens of characters;
#: shorter "keys" are the placeholders local servers take (`x`, `EMPTY`, `ollama`), and masking those wherever
#: they occur overwrote ordinary words (a key `e` turned every `e` of an export into `*`, `null` would break its
#: JSON). A secret header's value is redacted whole whatever its length (`core.live.config.redact_headers`).
MIN_SECRET_CHARS = 8


def secret_list(secrets: Iterable[str] | str | None) -> list[str]:
    """The strings of `secrets` to look for (at least MIN_SECRET_CHARS long), longest first, so that a secret
    containing another is replaced whole."""
    if secrets is None:
        return []
    if isinstance(secrets, str):
        secrets = [secrets]
    return sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)



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


def _may_be_escaped(body: bytes, secrets: list[str]) -> bool:
    """Could a JSON string in `body` hold a secret written with escapes? A secret of printable ASCII other than
    `"`, `\\` and `/` (an API key) can be escaped only as `\\uXXXX`, so a body without `\\u` holds none."""
    if any(not (0x20 <= ord(c) < 0x7f) or c in '"\\/' for s in secrets for c in s):
        return True
    return b"\\u" in body


def may_hold_secret(data: bytes, secrets: Iterable[str]) -> bool:
    """Could `data` hold one of `secrets`, plain or JSON-escaped? (False: `mask_secrets` would find nothing in
    it but what deltas split; a recorder asks this of each chunk, with the end of the one before: see
    `overlap`.)"""
    secrets = secret_list(secrets)
    return bool(secrets) and (_may_be_escaped(data, secrets) or any(s.encode("utf-8") in data for s in secrets))


def overlap(secrets: Iterable[str]) -> int:
    """How many bytes of a chunk's end to keep for the next `may_hold_secret`: what straddles two chunks."""
    return max([len(s.encode("utf-8")) for s in secret_list(secrets)] + [2]) - 1


def mask_secrets(format_name: str, body: bytes, secrets: Iterable[str],
                 decoded_texts: Iterable[str] | None = None) -> tuple[bytes, int]:
    """`body` with every secret masked, plain, JSON-escaped or split across deltas; and how many were masked.

    `decoded_texts`: what the stream's deltas joined to, block by block (the reply's texts, thinking and tool
    arguments), when the caller has already decoded the body: a secret split across deltas is then looked for
    only when one of them holds a secret, instead of decoding the body again (a 7 MB stream took half a second
    at the end of every run)."""
    secrets = secret_list(secrets)
    if not secrets or not body:
        return body, 0
    escaped = _may_be_escaped(body, secrets)
    split = decoded_texts is None or any(s in t for t in decoded_texts if t for s in secrets)
    if not split and not may_hold_secret(body, secrets):
        return body, 0          # (the usual case: no copy of a body of megabytes)
    out = bytearray(body)
    count = _mask_plain(out, secrets)
    if not escaped and not split:
        return bytes(out), count
    frames = _frames(bytes(out))
    # 1. escaped inside one literal (only a frame with a backslash has one: the rest were masked as plain bytes)
    for frame in frames.values() if escaped else ():
        if 92 not in frame.raw:
            continue
        for start, end, value in _literals(body, frame):
            if any(s in value for s in secrets):
                _blank(out, start, end)
                count += 1
    if not split:
        return bytes(out), count
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
