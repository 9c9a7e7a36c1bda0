"""Recordings the emulator can serve instead of a scenario (`python main.py emulate --serve FILE`).

A `.sse` file is a raw response body: it is served byte for byte on its format's endpoint (the format comes from
`--format`, else from the bytes themselves), cut at event boundaries and paced like a live model. A native
`.jsonl` capture (see core/capture.py) holds each provider's status, headers, raw chunks and their arrival times:
every run is served on its format's endpoint with its own status, its own chunks and its original timing, and
ends the way it ended (a dropped connection is dropped again, a stall stalls).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from core.wire.formats import FORMATS, sniff_format

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
    """Every run of a native capture that got a response, read by the capture module itself."""
    from core.live.capture import CaptureError, parse_jsonl
    from core.live.errors import ErrorType

    p = Path(path)
    try:
        runs = parse_jsonl(p.read_bytes(), str(p))
    except OSError as exc:
        raise RecordingError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except CaptureError as exc:
        raise RecordingError(str(exc)) from None
    out = []
    for i, run in enumerate(runs):
        fmt = run.provider.format
        if fmt not in FORMATS or run.http_status is None:
            continue   # no response was ever received: nothing to serve
        err = (run.transport_error or {}).get("type")
        after = "complete"
        if err in (ErrorType.CONNECTION_DROPPED, ErrorType.TRANSPORT_ERROR, ErrorType.CAPTURE_TRUNCATED):
            after = "drop"
        elif err == ErrorType.STALLED:
            after = "stall"
        headers_at = (run.metrics.t_headers_ns or 0) / 1e9
        out.append(Recording(fmt, [(t / 1e9, data) for t, data in run.chunks], run.http_status,
                             [(str(k), str(v)) for k, v in run.response_headers], run.provider.model, headers_at,
                             after, f"{p} run {i} ({run.provider.name})"))
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
