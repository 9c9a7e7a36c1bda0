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

import re
from collections.abc import Iterable

from core.wire import events as ev
from core.wire.jsonfast import loads
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



#: A run of this many of a secret's characters at its start or its end is taken for the secret: a server's message
#: or a log line can quote a key cut by a few characters (`sk-...` without its last ones), and the rest of it is
#: still a key to guard. 16 characters reach past every provider's fixed prefix (`sk-ant-api03-`, `sk-proj-`,
#: `AIza`) into the key's own random part (3 characters of it after Anthropic's 13: another key of the same
#: account type matches only 1 in 2^18 times, and then is masked too, which loses nothing).
PROBE_CHARS = 16


def _probes(secret):
    """What to look for of `secret` (str or bytes): itself, or its first and last PROBE_CHARS characters."""
    if len(secret) <= PROBE_CHARS + 1:
        return (secret,)
    return (secret[:PROBE_CHARS], secret[-PROBE_CHARS:])


def _encoded(data, secrets):
    return [s.encode("utf-8") for s in secrets] if isinstance(data, (bytes, bytearray)) else list(secrets)


def holds_secret(data, secrets: Iterable[str]) -> bool:
    """Does `data` (str or bytes) hold one of `secrets`, whole or as a run of PROBE_CHARS from its start or end?
    (`secrets` as `secret_list` gives them.)"""
    return any(p in data for s in _encoded(data, secrets) for p in _probes(s))


def secret_spans(data, secrets: Iterable[str]) -> list[tuple[int, int]]:
    """The (start, end) of each secret in `data` (str or bytes), merged, in order: every whole occurrence and
    every run of at least PROBE_CHARS of a secret's characters that begins at its first or ends at its last (the
    secret quoted cut short); a run is extended as far as it goes on matching the secret."""
    spans = []
    for s in _encoded(data, secrets):
        n = len(s)
        for k, probe in enumerate(_probes(s)):
            at = data.find(probe)
            while at >= 0:
                if k == 0:                       # the secret's start: extend forwards
                    end = at + len(probe)
                    while end - at < n and end < len(data) and data[end] == s[end - at]:
                        end += 1
                    spans.append((at, end))
                else:                            # its end: extend backwards
                    start, end = at, at + len(probe)
                    while end - start < n and start > 0 and data[start - 1] == s[n - (end - start) - 1]:
                        start -= 1
                    spans.append((start, end))
                at = data.find(probe, at + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def mask_text(text: str, secrets: Iterable[str], replacement: str | None = None) -> tuple[str, int]:
    """`text` with each span of `secret_spans` replaced (by `replacement`, or `*` of its length); and how many."""
    secrets = secret_list(secrets)
    if not secrets or not holds_secret(text, secrets):
        return text, 0
    spans = secret_spans(text, secrets)
    out, pos = [], 0
    for a, b in spans:
        out += [text[pos:a], "*" * (b - a) if replacement is None else replacement]
        pos = b
    out.append(text[pos:])
    return "".join(out), len(spans)


def mask_plain_bytes(data: bytes, secrets: Iterable[str]) -> tuple[bytes, int]:
    """`data` with each span of `secret_spans` overwritten by `*` of its length (offsets survive); and how many."""
    secrets = secret_list(secrets)
    if not secrets or not holds_secret(data, secrets):
        return data, 0
    out = bytearray(data)
    count = _mask_plain(out, secrets)
    return bytes(out), count


def _mask_plain(body: bytearray, secrets: list[str]) -> int:
    spans = secret_spans(body, secrets)
    for a, b in spans:
        body[a:b] = b"*" * (b - a)
    return len(spans)


def _literals(body: bytes, frame: SSEFrame):
    """(start, end, decoded value) of each JSON string literal in a frame's bytes (positions in the body)."""
    raw = frame.raw
    for m in _STRING_LITERAL.finditer(raw):
        try:
            value = loads(m.group())
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
    return bool(secrets) and (_may_be_escaped(data, secrets) or holds_secret(data, secrets))


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
    split = decoded_texts is None or any(holds_secret(t, secrets) for t in decoded_texts if t)
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
            if holds_secret(value, secrets):
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
        spans = secret_spans(text, secrets)
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
