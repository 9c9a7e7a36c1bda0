"""Recordings the emulator can serve instead of a scenario (`python main.py emulate --serve FILE`).

A `.sse` file is a raw response body: it is served byte for byte on its format's endpoint (the format comes from
`--format`, else from the bytes themselves), cut at event boundaries and paced like a live model. A native
`.jsonl` capture (see core/capture.py) holds each provider's status, headers, raw chunks and their arrival times:
every run is served on its format's endpoint with its own status, its own chunks and its original timing, and
ends the way it ended (a dropped connection is dropped again, a stall stalls).
"""
from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


class RecordingError(ValueError):
    pass


@dataclass
class Recording:
    format: str
    chunks: list[tuple[float | None, bytes]]      # (seconds since the request, or None: pace it), bytes
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    model: str | None = None
    headers_at: float | None = None               # seconds since the request when the headers came
    after: str = "complete"                       # complete | drop | stall
    source: str = ""

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)


def sniff_format(data: bytes) -> str | None:
    head = data[:4096]
    if b"event: message_start" in head or b'"type":"message_start"' in head or b"content_block_" in head:
        return "anthropic"
    if b"event: response." in head or b'"type":"response.' in head:
        return "openai-responses"
    if b"chat.completion.chunk" in head:
        return "openai-chat"
    if b'"candidates"' in head or b'"usageMetadata"' in head:
        return "gemini"
    return None


def split_events(data: bytes) -> list[bytes]:
    """The body cut after each blank line, so the pieces join back to exactly `data`."""
    out = []
    pos = 0
    for m in _EVENT_END.finditer(data):
        out.append(data[pos:m.end()])
        pos = m.end()
    if pos < len(data):
        out.append(data[pos:])
    return out


def load_sse(path: str | Path, fmt: str | None = None) -> Recording:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise RecordingError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if fmt is None:
        fmt = p.parent.name if p.parent.name in FORMATS else sniff_format(data)
    if fmt is None:
        raise RecordingError(f"{p}: cannot tell the wire format from the bytes; give --format")
    if fmt not in FORMATS:
        raise RecordingError(f"unknown format {fmt!r} (expected one of: {', '.join(FORMATS)})")
    return Recording(fmt, [(None, c) for c in split_events(data)], source=str(p))


def load_capture(path: str | Path) -> list[Recording]:
    p = Path(path)
    try:
        lines = [ln for ln in p.read_bytes().split(b"\n") if ln.strip()]
    except OSError as exc:
        raise RecordingError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        header = json.loads(lines[0]) if lines else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != "streamscope-capture":
        raise RecordingError(f"{p}: not a StreamScope capture (no 'streamscope-capture' header line)")
    runs: dict[int, dict] = {}
    order: list[int] = []
    for n, line in enumerate(lines[1:], start=2):
        try:
            rec = json.loads(line)
        except ValueError:
            raise RecordingError(f"{p}: line {n} is not JSON") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("run"), int):
            continue
        i = rec["run"]
        typ = rec.get("type")
        if typ == "run":
            runs[i] = {"run": rec, "response": None, "chunks": [], "end": None}
            order.append(i)
        elif i in runs:
            if typ == "response":
                runs[i]["response"] = rec
            elif typ == "chunk":
                if "text" in rec:
                    data = rec["text"].encode("utf-8")
                elif "b64" in rec:
                    data = base64.b64decode(rec["b64"])
                else:
                    continue
                runs[i]["chunks"].append((int(rec.get("t_ns") or 0) / 1e9, data))
            elif typ == "end":
                runs[i]["end"] = rec
    out = []
    for i in order:
        part = runs[i]
        prov = part["run"].get("provider") or {}
        fmt = prov.get("format")
        if fmt not in FORMATS:
            continue
        resp = part["response"]
        if resp is None:
            continue   # no response was ever received: nothing to serve
        end = part["end"] or {}
        err = (end.get("transport_error") or {}).get("type") if isinstance(end.get("transport_error"), dict) else None
        after = "complete"
        if err in ("connection_dropped", "transport_error", "capture_truncated"):
            after = "drop"
        elif err == "stalled":
            after = "stall"
        headers = [(str(k), str(v)) for k, v in resp.get("headers") or []]
        out.append(Recording(fmt, part["chunks"], int(resp.get("status") or 200), headers,
                             prov.get("model"), int(resp.get("t_ns") or 0) / 1e9, after,
                             f"{p} run {i} ({prov.get('name', '?')})"))
    if not out:
        raise RecordingError(f"{p}: the capture holds no response to serve")
    return out


def load(path: str | Path, fmt: str | None = None) -> list[Recording]:
    """A `.sse` body (with `fmt` or sniffed) or a native `.jsonl` capture."""
    p = Path(path)
    if p.suffix.lower() == ".jsonl":
        if fmt is not None:
            recs = [r for r in load_capture(p) if r.format == fmt]
            if not recs:
                raise RecordingError(f"{p}: the capture holds no {fmt} response")
            return recs
        return load_capture(p)
    return [load_sse(p, fmt)]


# headers that describe the original transfer, not the content: the emulator's server sets its own
_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding", "date"}


def replay_headers(rec: Recording) -> list[tuple[str, str]]:
    return [(k, v) for k, v in rec.headers if k.lower() not in _HOP]
