"""The feed: how a tap in a process of its own (`core.servers.tap.child`) tells its parent what goes through it.

    data = frame(CHUNK, exchange_no, t_ns, raw_bytes)        # one message: a 17-byte header, then its payload
    reader = FeedReader(); reader.feed(data) -> [Message(kind, no, t, payload), ...]; reader.end()

The child forwards; the parent records (the recorder's work, decoding, the panes). Each message is one of the
recorder's calls on one exchange, in the order the tap made them, with the tap's own times (ns from the
exchange's start, on the shared monotonic clock), so an exchange recorded through the feed is the exchange the
tap would have recorded itself: the same chunks, the same arrival times.

    READY    payload: JSON {"base_url", "mounts"} (the mounts with the emulator's address, when it was started)
    FAILED   payload: why the tap could not listen (UTF-8)
    NEW      payload: JSON {"name", "method", "url", "headers", "path", "fallback_format"}, a newline, the
             request body as received
    START    t: the exchange's origin (monotonic ns); payload: JSON {"started_at"} (epoch s)
    HEADERS  payload: JSON {"status", "http_version", "reason", "headers"}
    CHUNK    payload: the bytes, as the upstream sent them
    END      payload: JSON, the transport error or null
    SYNCED   no: the number a `sync` command gave; sent after every message the tap had made when it came

The parent's commands, one line each on the child's stdin: `stop N` (end exchange N as a pane's Stop does),
`sync N` (answer SYNCED N), `quit` (stop the tap; end of input means the same).
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from core.servers.tap.upstreams import Mounts, Upstream

READY, FAILED, NEW, START, HEADERS, CHUNK, END, SYNCED = range(8)
KINDS = ("READY", "FAILED", "NEW", "START", "HEADERS", "CHUNK", "END", "SYNCED")
HEADER = struct.Struct(">BIqI")          # kind, exchange number, t (ns), payload length
MAX_PAYLOAD = 80 << 20                   # a request body is at most 64 MiB (core.servers.tap.app)


class FeedError(ValueError):
    """The feed's bytes are not messages (the child broke its side of the feed)."""


@dataclass(frozen=True, slots=True)
class Message:
    kind: int
    no: int
    t: int
    payload: bytes

    def json(self):
        return json.loads(self.payload)


def frame(kind: int, no: int, t: int, payload: bytes) -> bytes:
    return HEADER.pack(kind, no, t, len(payload)) + payload


def json_frame(kind: int, no: int, t: int, value) -> bytes:
    return frame(kind, no, t, json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


class FeedReader:
    """Messages out of the feed's bytes, however they are split."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._error: FeedError | None = None    # met after messages that were still handed out

    def feed(self, data: bytes) -> list[Message]:
        """The messages `data` completes; FeedError at bytes that are no message (the ones before them are
        handed out first: the error comes with the next call)."""
        if self._error is not None:
            raise self._error
        buf = self._buf
        buf += data
        out = []
        pos = 0
        size = HEADER.size
        while len(buf) - pos >= size:
            kind, no, t, n = HEADER.unpack_from(buf, pos)
            if kind >= len(KINDS) or n > MAX_PAYLOAD:
                self._error = FeedError(f"not a feed message: kind {kind}, {n} bytes")
                if out:
                    break
                raise self._error
            if len(buf) - pos - size < n:
                break
            start = pos + size
            out.append(Message(kind, no, t, bytes(buf[start:start + n])))
            pos = start + n
        if pos:
            del buf[:pos]
        return out

    def end(self) -> None:
        """The feed ended: FeedError when it stopped inside a message or at bytes that are no message."""
        if self._error is not None:
            raise self._error
        if self._buf:
            raise FeedError(f"the feed ended inside a message ({len(self._buf)} bytes left)")


def new_payload(name: str, method: str, url: str, headers, body: bytes, path: str | None,
                fallback_format: str | None) -> bytes:
    meta = {"name": name, "method": method, "url": url, "headers": [list(h) for h in headers], "path": path,
            "fallback_format": fallback_format}
    return json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n" + body


def parse_new(payload: bytes) -> tuple[dict, bytes]:
    """(meta, request body) of a NEW message (the JSON holds no raw newline: it is dumped on one line)."""
    meta, _, body = payload.partition(b"\n")
    out = json.loads(meta)
    out["headers"] = [tuple(h) for h in out["headers"]]
    return out, body


def mounts_to_json(mounts: Mounts) -> dict:
    def one(u: Upstream | None):
        return None if u is None else [u.name, u.url, u.fallback_format]

    return {"root": one(mounts.root), "named": {k: one(u) for k, u in mounts.named.items()}}


def mounts_from_json(value: dict) -> Mounts:
    def one(v):
        return None if v is None else Upstream(*v)

    return Mounts(one(value["root"]), {k: one(v) for k, v in value["named"].items()})
