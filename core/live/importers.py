"""Opening any recording: the native `.jsonl` capture, HAR 1.2, a raw `.sse` body, or a VCR cassette.

    opened = read_capture("session.har")             # or parse_capture(data, "name", kind=None, format=None)
    opened.kind                                       # "jsonl" | "har" | "sse" | "cassette"
    opened.runs                                       # the ProviderRuns, decoded as `decode` decodes them
    opened.skipped                                    # entries not opened: (entry, why)

The kind comes from the extension (`.jsonl`, `.har`, `.sse`, `.yaml` / `.yml`), else from the content (a `.json`
is a HAR or one of vcrpy's JSON cassettes, told by its first key). Each
HAR entry and cassette interaction becomes a run through `core.live.exchange.Exchange` (the tap's own
recorder), so its wire format comes from the path, else from the frames; `format=` overrides it for every run
(a raw `.sse` body has no path: its frames must tell, or `format=` must). An entry whose path names no format
and whose body shows no frame of one (a web page, `GET /v1/models`) is listed in `skipped`, except in
StreamScope's own HAR, where every entry is a run.

- HAR 1.2 (StreamScope's, browsers' developer tools, HAR-writing proxies): the body is `response.content.text`
  (base64 when `encoding` says so; HAR bodies are stored decoded); when it is empty, the frames are rebuilt from
  `_eventSourceMessages`. StreamScope's own `_streamscope` object gives back the provider, each chunk's time and
  size, and what ended the exchange. An entry the recording says failed (Chrome's `_error`, such as
  `net::ERR_ABORTED`, or status 0 with part of a body) ends `connection_dropped` with what it holds; one that
  never got a response is listed in `skipped` with why.
- VCR cassettes (vcrpy, pytest-recording, and Ruby's VCR, whose `http_interactions` vcrpy's shape copies):
  `interactions[].request` / `.response`, bodies as text, as YAML
  `!!binary` (base64), or as `base64_string`, and still gzip- or deflate-encoded when the response said so
  (vcrpy records them as they came). The YAML is read with a safe loader: no tag builds an object, and a document
  whose aliases would expand it by more than `MAX_ALIASED_NODES` nodes (an alias bomb) is refused before it is
  built. A field that must be a string (method, URL, header names and values, a base64 body) is never made text
  from a list or a mapping: the interaction is skipped, or the header ignored, with a note.

A raw body is an event stream when a line of its first 64 KiB starts like one (`data:`, `event:`, `id:`,
`retry:`, a `:` comment), whatever the length of its first event; with `format=` given, a `data:` line anywhere
is enough. In a HAR (or a JSON cassette) nested deeper than its parser can go, the parts deeper than
`jsonfast.MAX_DEPTH` levels are cut (that entry's notes say so) and the other entries open; a document that is
too deep as a whole is a `CaptureError` saying so.

A file that is not a recording is a `CaptureError` naming it and what is wrong; an entry of one that cannot be
read (a body that says base64 but is not, a URL that does not parse) is listed in `skipped` with why, and the
others open. The size read is bounded (`MAX_CAPTURE_BYTES`). Labels of entries show their URLs with key-like query
values redacted.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

from core.live.capture import CaptureError, parse_jsonl, scrub_known_keys
from core.live.config import ProviderConfig, redact_url
from core.live.errors import ErrorType, error_dict
from core.live.exchange import Exchange
from core.live.recorder import TIMING_NONE, TIMING_RECORDED, TIMING_TOTAL_ONLY, TIMINGS, ProviderRun, rebuild_run
from core.live.request import HttpRequest, PromptSpec
from core.wire.formats import (FORMATS, SNIFF_BYTES, SSE_LINE_START, format_for_path, sniff, sniff_pieces,
                               unknown_format_message)
from core.wire.jsonfast import MAX_DEPTH, TOO_DEEP_MARKER, JSONTooDeep, bounded
from core.wire.jsonfast import loads as parse_json   # (no lone surrogate in its strings: every export can write them)
from core.wire.whole import whole_format

MAX_CAPTURE_BYTES = 1 << 30
KINDS = ("jsonl", "har", "sse", "cassette")
_FIRST_KEY = re.compile(rb'\{\s*"([A-Za-z_]+)"')     # a JSON document's first key
_EXTENSIONS = {".jsonl": "jsonl", ".har": "har", ".sse": "sse", ".yaml": "cassette", ".yml": "cassette"}


@dataclass(frozen=True)
class Skipped:
    """An entry of a recording that is not an LLM exchange, or a capture record that cannot be read (listed,
    not opened)."""

    entry: str          # "entry 3: GET https://example.com/app.js"
    why: str


@dataclass(frozen=True)
class Opened:
    kind: str
    runs: tuple[ProviderRun, ...]
    skipped: tuple[Skipped, ...] = ()


def no_exchange_message(path, opened: Opened) -> str:
    """What is said of a recording that holds no LLM exchange (replay's stderr, the window's message box)."""
    n = len(opened.skipped)
    return f"no LLM exchange in {path} ({n} {'entry' if n == 1 else 'entries'} skipped)"


def read_capture(path: str | os.PathLike, *, format: str | None = None, kind: str | None = None) -> Opened:
    """Open a recording of any kind (see the module docstring); `CaptureError` when it cannot be read."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_CAPTURE_BYTES:
            raise CaptureError(f"{p}: {size} bytes is more than a recording this build opens "
                               f"({MAX_CAPTURE_BYTES >> 20} MiB)")
        data = p.read_bytes()
    except OSError as exc:
        raise CaptureError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return parse_capture(data, str(p), format=format, kind=kind or _EXTENSIONS.get(p.suffix.lower()))


def kind_of(data: bytes) -> str:
    """What a recording is, from its first bytes (for a file whose extension does not say)."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{"):
        first = head.split(b"\n", 1)[0]
        if b'"streamscope-capture"' in first:
            return "jsonl"
        key = _FIRST_KEY.match(head)
        if key is not None and key.group(1) in (b"interactions", b"http_interactions", b"version"):
            return "cassette"         # vcrpy's JSON serializer (`serializer="json"`)
        if b'"log"' in head:
            return "har"
    if head.startswith((b"interactions:", b"http_interactions:", b"version:", b"---", b"- request:")) \
            or b"\ninteractions:" in head or b"\nhttp_interactions:" in head:
        return "cassette"
    return "sse"


def parse_capture(data: bytes, source: str = "recording", *, kind: str | None = None,
                  format: str | None = None) -> Opened:
    if format is not None and format not in FORMATS:
        raise CaptureError(f"{source}: {unknown_format_message(format)}")
    kind = kind or kind_of(data)
    if kind == "jsonl":
        problems: list[tuple[str, str]] = []   # records that could not be read: skipped, the rest replays
        runs = scrub_known_keys(parse_jsonl(data, source, problems))
        if format is not None:
            runs = [_as_format(r, format) for r in runs]
        return Opened("jsonl", tuple(runs), tuple(Skipped(where, why) for where, why in problems))
    if kind == "har":
        return _parse_har(data, source, format)
    if kind == "cassette":
        return _parse_cassette(data, source, format)
    if kind == "sse":
        return Opened("sse", (_sse_run(data, source, format),))
    raise CaptureError(f"{source}: unknown kind of recording {kind!r} (expected one of: {', '.join(KINDS)})")


def _as_format(run: ProviderRun, fmt: str) -> ProviderRun:
    """The same captured exchange decoded as another format (a user's override)."""
    from dataclasses import replace

    return rebuild_run(replace(run.provider, format=fmt), request=run.request, spec=run.spec,
                       started_at=run.started_at, sent=run.sent, headers=run._headers_tuple(), chunks=run.chunks,
                       end_ns=run.metrics.t_total_ns or 0, transport_error=run.transport_error, notes=run.notes,
                       timing=run.timing)


# -- raw .sse ----------------------------------------------------------------------------------------------------
_KIND_NAMES = {"jsonl": ("a StreamScope capture", ".jsonl"), "har": ("a HAR file", ".har"),
               "cassette": ("a VCR cassette", ".yaml")}


#: a line an event stream is made of (a field a frame needs, or a comment), at the start of a line
_SSE_LINE = re.compile(rb"(?:\A(?:\xef\xbb\xbf)?|(?<=[\r\n]))" + SSE_LINE_START)
_DATA_LINE = re.compile(rb"(?:\A(?:\xef\xbb\xbf)?|(?<=[\r\n]))data:")


def is_event_stream(data: bytes) -> bool:
    """Whether a body's first 64 KiB show it is an event stream (any format, or none): a line among them
    starts with `data:`, `event:`, `id:`, `retry:` or `:` (a comment), or they hold a whole frame. The first
    line may be longer than 64 KiB: one event's data (a large first event) is no reason to refuse a stream."""
    head = data[:SNIFF_BYTES]
    if _SSE_LINE.search(head) is not None:
        return True
    from core.wire.sse import SSEComment, SSEDecoder, SSEFrame

    dec = SSEDecoder()
    items = dec.feed(head)
    if len(data) <= SNIFF_BYTES:
        items += dec.end()
    return any(isinstance(i, (SSEFrame, SSEComment)) for i in items)


def has_data_line(data: bytes) -> bool:
    """Whether any line of a body, however far in, starts with `data:` (with a format given, it is decoded)."""
    return _DATA_LINE.search(data) is not None


def what_body_is(data: bytes) -> str | None:
    """What a raw body that is not an event stream is, said so a user knows what to do ("it is
    gzip-compressed: ..."); None when it is an event stream, or nothing more can be said."""
    if not data.strip():
        return "it is empty"
    if data.startswith(b"\x1f\x8b"):
        return "it is gzip-compressed: decompress it (gunzip, or record it with curl --compressed)"
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        return "it is zstd-compressed: decompress it (zstd -d, or record it with curl --compressed)"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(data) >= 4 and (data[1:40:2].count(0) > 15
                                                                         or data[0:40:2].count(0) > 15)):
        return ("it is UTF-16 text: an event stream is UTF-8 (convert it: iconv -f UTF-16 -t UTF-8, or save it "
                "as UTF-8)")
    if is_event_stream(data):
        return None
    kind = kind_of(data)
    if kind in _KIND_NAMES:
        what, ext = _KIND_NAMES[kind]
        return f"it is {what}, not a raw body: name it {ext} (the extension tells the kind)"
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "it is an HTML page"
    if head.startswith((b"http/1", b"http/2")):
        return "it starts with HTTP response headers: keep only the body (curl -N without -i)"
    if head[:1] in (b"{", b"["):
        return "it is JSON, and no whole reply of the four formats"
    if b"\x00" in data[:4096]:
        return "it is binary"
    return "it holds no event-stream frame (no data: line)"


def whole_reply_format(data: bytes, format: str | None) -> str | None:
    """The format of a raw body that is a whole JSON reply (of `format` when given), else None."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] not in (b"{", b"["):
        return None
    from core.wire.whole import stream_payloads

    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None
    if format is not None:
        return format if stream_payloads(format, obj) is not None else None
    return whole_format(obj)


def _sniff_whole(data: bytes):
    """What the first frames of a whole body say of its format (`formats.sniff_pieces`: 64 KiB, and on past them
    inside a longer first event, so a 70 KiB first event tells as well as a short one)."""
    return sniff_pieces(data[i:i + SNIFF_BYTES] for i in range(0, len(data), SNIFF_BYTES))[0]


def _sse_run(data: bytes, source: str, format: str | None) -> ProviderRun:
    name = Path(source).stem or "recording"
    whole = whole_reply_format(data, format)
    if whole is not None:      # a reply that did not stream (the .sse export of one writes its JSON body)
        notes = [f"decoded as {whole}, as asked" if format else "the wire format is told by the reply's shape"]
        # (a raw body keeps no request nor status: an empty request says that none asked for a stream, so the
        # JSON reply is read whole, and the status is taken as 200: the body is a reply, not an error)
        request = HttpRequest("", "", {}, {}, ["a raw body: the recording holds no request"])
        notes.append("a raw body keeps no status: HTTP 200 is assumed for a whole reply")
        return rebuild_run(ProviderConfig(name=name, format=whole, base_url="", model=""), request=request,
                           started_at=None, headers=(0, 200, None, None, [("content-type", "application/json")]),
                           chunks=[(0, data)], end_ns=0, notes=notes, timing=TIMING_NONE)
    why = None if data.strip() and is_event_stream(data) else what_body_is(data)
    if why is not None and format is not None and has_data_line(data):
        why = None          # (the format is given, and a data: line is there: it is decoded as asked)
    if why is not None and (format is None or data.strip()):
        raise CaptureError(f"{source}: not an event stream: {why}")
    if format is None:
        found = _sniff_whole(data)
        if found is None:
            raise CaptureError(f"{source}: no frame tells the wire format (give the format: "
                               f"{', '.join(FORMATS)})")
        format = found.format
        notes = [f"the wire format is told by the frames: {found.reason}"]
    else:
        notes = [f"decoded as {format}, as asked"]
    return rebuild_run(ProviderConfig(name=name, format=format, base_url="", model=""), started_at=None,
                       chunks=[(0, data)] if data else [], end_ns=0, notes=notes, timing=TIMING_NONE)


# -- shared by HAR entries and cassette interactions -------------------------------------------------------------
@dataclass(frozen=True)
class _Recorded:
    """One recorded HTTP exchange, in the terms both recording formats share."""

    label: str
    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    status: int | None
    reason: str | None
    http_version: str | None
    response_headers: list[tuple[str, str]]
    chunks: list[tuple[int, bytes]]
    headers_ns: int = 0
    end_ns: int = 0
    started_at: float | None = None
    body_decoded: bool = False
    provider: ProviderConfig | None = None
    transport_error: dict | None = None
    spec: PromptSpec | None = None          # what StreamScope sent, when it wrote the recording (its HAR)
    notes: tuple[str, ...] = ()
    timing: str = TIMING_RECORDED           # how much of the times above the recording held (recorder.TIMINGS)


def _is_llm_body(body: bytes, ctype: str, format: str | None) -> bool:
    """Whether a body whose path names no format is an LLM exchange's: an event stream whose frames tell a
    format (any event stream when the user gives one), or a whole JSON reply of a format (by its shape)."""
    if sniff(body) is not None or (format is not None and "text/event-stream" in ctype.lower()):
        return True
    return whole_reply_format(body, None) is not None


def _open_entry(rec: _Recorded, name: str, format: str | None) -> ProviderRun | Skipped:
    body = b"".join(c for _, c in rec.chunks)
    if rec.provider is None and format_for_path(urlsplit(rec.url).path) is None:
        # (also when a format is given: it overrides the format of the LLM exchanges, it makes none of a page)
        from core.live.content_coding import decode_body

        coding = None if rec.body_decoded else next(
            (v for k, v in rec.response_headers if k.lower() == "content-encoding"), None)
        ctype = next((v for k, v in rec.response_headers if k.lower() == "content-type"), "")
        if not _is_llm_body(decode_body(coding, body)[0], ctype, format):
            return Skipped(rec.label, f"not an LLM exchange: its path names no wire format and its body "
                                      f"({ctype or 'no content type'}, {len(body)} bytes) shows no frame of one "
                                      f"and is no whole reply of one")
    ex = Exchange(name, rec.method, rec.url, rec.request_headers, rec.request_body, format=format,
                  provider=rec.provider)
    ex.begin(rec.started_at)
    if rec.status is not None:
        ex.on_headers(rec.headers_ns, rec.status, rec.http_version, rec.reason, rec.response_headers,
                      body_decoded=rec.body_decoded)
    for t, data in rec.chunks:
        ex.on_chunk(t, data)
    run = ex.finish(max(rec.end_ns, rec.chunks[-1][0] if rec.chunks else rec.headers_ns), rec.transport_error)
    if rec.spec is not None:     # StreamScope's own HAR: the prompt (and conversation) it sent, as a .jsonl keeps
        run.spec = rec.spec
    run.notes += [n for n in rec.notes if n not in run.notes]
    run.set_timing(rec.timing)       # (the times it did not hold: None in the run's metrics, not 0 or the total)
    return run


def _collect(kind: str, entries: Iterable[tuple[_Recorded | Skipped, str]], format: str | None) -> Opened:
    runs, skipped = [], []
    for rec, name in entries:
        got = rec if isinstance(rec, Skipped) else _open_entry(rec, name, format)
        (skipped if isinstance(got, Skipped) else runs).append(got)
    return Opened(kind, tuple(runs), tuple(skipped))


def _scalar(v) -> str | None:
    """A field that must be a scalar, as text ("" for null); None for a list or a mapping, which is never made text
    (str() of a YAML alias bomb's list would expand it: gigabytes from a kilobyte)."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, (bytes, bytearray)):            # (YAML `!!binary`)
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, (list, tuple, set, frozenset, Mapping)):
        return None
    try:
        return str(v)          # a number, a boolean, a YAML date
    except ValueError:         # (an integer of more than 4,300 digits)
        return None


def _text(v) -> str:
    """A scalar field as text; "" when it is missing or not a scalar (a list or a mapping: ignored)."""
    return _scalar(v) or ""


# -- HAR 1.2 -----------------------------------------------------------------------------------------------------
def _header_pairs(pairs, where: str, notes: list[str]) -> list[tuple[str, str]]:
    """(name, value) pairs whose both sides are scalars; the others are ignored, with a note."""
    out, dropped = [], 0
    for k, v in pairs:
        name, value = _scalar(k), _scalar(v)
        if name is None or value is None:
            dropped += 1
        elif name:
            out.append((name, value))
    if dropped:
        notes.append(f"{dropped} {where} header{'s' if dropped > 1 else ''} whose name or value is not a string "
                     f"(a list or a mapping) {'were' if dropped > 1 else 'was'} ignored")
    return out


def _har_headers(rows, where: str = "", notes: list[str] | None = None) -> list[tuple[str, str]]:
    if not isinstance(rows, list):
        return []
    return _header_pairs(((h.get("name"), h.get("value")) for h in rows if isinstance(h, Mapping) and h.get("name")),
                         where, [] if notes is None else notes)


def _epoch(iso) -> float | None:
    try:
        return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


MAX_TIMING_MS = 1e9       # a timing longer than this (11.6 days), or not finite, is not one: ignored


def _ns(ms) -> int:
    return int(ms * 1e6) if _timing(ms) and ms > 0 else 0


def _timing(ms) -> bool:
    """Whether a HAR timing (ms) is a number a recording can hold: finite and below `MAX_TIMING_MS` (Python's
    writers emit `Infinity` and `NaN`; -1 means "not measured" and reads as 0)."""
    return isinstance(ms, (int, float)) and not isinstance(ms, bool) and abs(ms) <= MAX_TIMING_MS


def _odd_timings(timings: Mapping, own: Mapping | None) -> list[str]:
    """Notes for the timings of an entry that are out of range (and so ignored)."""
    found = [(f"timings.{k}", timings.get(k)) for k in ("wait", "receive")]
    metrics = own.get("metrics") if own and isinstance(own.get("metrics"), Mapping) else {}
    found += [(f"_streamscope.metrics.{k}", metrics.get(k)) for k in ("time_to_headers_ms", "total_ms")]
    chunks = own.get("chunks") if own else None
    if isinstance(chunks, list) and any(isinstance(c, list) and c and isinstance(c[0], (int, float))
                                        and not _timing(c[0]) for c in chunks):
        found.append(("_streamscope.chunks", "a chunk time"))
    return [f"the HAR's {where} ({v!r}) is not a number: ignored" if isinstance(v, str) else
            f"the HAR's {where} ({v!r} ms) is out of range: ignored"
            for where, v in found
            if isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool) and not _timing(v))]


def _har_body(content: Mapping, entry: Mapping) -> bytes | None:
    return _har_body_pieces(content, entry)[0]


def _har_body_pieces(content: Mapping, entry: Mapping) -> tuple[bytes | None, list[bytes] | None]:
    """The body, and when it was rebuilt from `_eventSourceMessages`, the bytes of each message (else None)."""
    text = content.get("text")
    if isinstance(text, str) and text:
        if str(content.get("encoding") or "").lower() == "base64":
            try:
                return base64.b64decode("".join(text.split()), validate=True), None
            except (binascii.Error, ValueError):
                raise CaptureError("content.text says base64 but is not") from None
        return text.encode("utf-8"), None
    messages = entry.get("_eventSourceMessages")
    if isinstance(messages, list) and messages:   # a body the tool did not keep: rebuilt from its frames
        out = []
        for m in messages:
            if not isinstance(m, Mapping):
                out.append("")
                continue
            name = _text(m.get("eventName"))
            lines = [f"event: {name}"] if name and name != "message" else []
            if m.get("eventId"):
                lines.append(f"id: {_text(m.get('eventId'))}")
            lines += [f"data: {line}" for line in _text(m.get("data")).split("\n")]
            out.append("\n".join(lines) + "\n\n")
        pieces = [p.encode("utf-8") for p in out]
        return b"".join(pieces), pieces
    return None, None


def _message_times(entry: Mapping, started_at: float | None) -> list[int] | None:
    """Each `_eventSourceMessages` frame's arrival in ns from the entry's start (`time` in epoch seconds, as
    StreamScope writes them), or None when the recording holds no usable time for every one of them."""
    messages = entry.get("_eventSourceMessages")
    if started_at is None or not isinstance(messages, list) or not messages:
        return None
    out, last = [], 0
    for m in messages:
        t = m.get("time") if isinstance(m, Mapping) else None
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not _timing((t - started_at) * 1e3) \
                or t - started_at < -1:        # (not a time since the entry started: a clock of another origin)
            return None
        last = max(last, int(max(0.0, t - started_at) * 1e9))
        out.append(last)
    return out


def _message_chunks(body: bytes, pieces: list[bytes] | None, times: list[int]) -> list[tuple[int, bytes]] | None:
    """The body cut where each frame of `_eventSourceMessages` starts, each piece at its frame's time (the body
    rebuilt from them, or one whose frames are those messages, one for one); None when they do not match."""
    if pieces is not None:
        return [(t, p) for t, p in zip(times, pieces) if p] if len(pieces) == len(times) else None
    from core.wire.sse import SSEDecoder, SSEFrame

    dec = SSEDecoder()
    frames = [i for i in dec.feed(body) + dec.end() if isinstance(i, SSEFrame)]
    if len(frames) != len(times) or not frames:
        return None
    cuts = [0] + [f.offset for f in frames[1:]] + [len(body)]
    spans = list(pairwise(cuts))
    if any(b <= a for a, b in spans):
        return None
    return [(t, body[a:b]) for t, (a, b) in zip(times, spans)]


def _har_chunks(body: bytes, own: Mapping | None, headers_ns: int, end_ns: int) -> list[tuple[int, bytes]] | None:
    """StreamScope's HAR lists each chunk's [t_ms, size]: the body cut back into them; else None."""
    sizes = own.get("chunks") if own else None
    if isinstance(sizes, list) and all(isinstance(c, list) and len(c) == 2 and isinstance(c[1], int)
                                       and not isinstance(c[1], bool) and c[1] >= 0 for c in sizes) and \
            sum(c[1] for c in sizes) == len(body):
        out, pos = [], 0
        for t_ms, size in sizes:
            out.append((_ns(t_ms), body[pos:pos + size]))
            pos += size
        return out
    return None


def _request_response(what: str, i: int, obj, url_key: str):
    """(request, response, method, url, label) of a recorded exchange, or a Skipped when it has not both."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("request"), Mapping) or \
            not isinstance(obj.get("response"), Mapping):
        return Skipped(f"{what} {i}", f"not {'an' if what[0] in 'aeiou' else 'a'} {what} (no request and response "
                                      f"objects)")
    req, resp = obj["request"], obj["response"]
    method, url = _scalar(req.get("method")), _scalar(req.get(url_key))
    for field, v in (("method", method), (url_key, url)):
        if v is None:            # (a list or a mapping where a string must be: never made text)
            return Skipped(f"{what} {i}", f"its request {field} is not a string "
                                          f"(a {type(req.get(field)).__name__})")
    method = (method or "GET").upper()          # (Ruby's VCR: `post`)
    label = f"{what} {i}: {method} {redact_url(url)}"       # (printed and shown: a ?key= stays out)
    try:
        urlsplit(url)
    except ValueError as exc:         # (`https://[host/...`: an IPv6 bracket never closed)
        return Skipped(label, f"its URL cannot be read ({exc})")
    return req, resp, method, url, label


def _har_entry(i: int, e, cut_before: bool = False) -> _Recorded | Skipped:
    e, deep = _too_deep_note(e, cut_before)
    parts = _request_response("entry", i, e, "url")
    if isinstance(parts, Skipped):
        return parts
    req, resp, method, url, label = parts
    own = e.get("_streamscope") if isinstance(e.get("_streamscope"), Mapping) else None
    content = resp.get("content") if isinstance(resp.get("content"), Mapping) else {}
    try:
        body, pieces = _har_body_pieces(content, e)
    except CaptureError as exc:       # one broken entry: listed, the others still open
        return Skipped(label, str(exc))
    status = resp.get("status")
    status = status if isinstance(status, int) and not isinstance(status, bool) and status > 0 else None
    failed = next((v.strip() for v in (resp.get("_error"), e.get("_error")) if isinstance(v, str) and v.strip()),
                  None)               # Chrome's own word on a request that failed ("net::ERR_ABORTED")
    dropped = None
    if own is None:
        if failed is not None:
            dropped = f"the recording says the request failed: {failed}"
        elif status is None and body:
            dropped = "the recording gives no response status (status 0): the exchange did not complete"
        if status is None and not body:
            return Skipped(label, dropped or "the HAR holds no response for it (status 0: it never got one)")
        if body is None and dropped is None:
            return Skipped(label, "the HAR holds no response body for it")
    timings = e.get("timings") if isinstance(e.get("timings"), Mapping) else {}
    headers_ns = _ns(timings.get("wait"))
    end_ns = headers_ns + _ns(timings.get("receive"))
    # what the entry's timings hold: the time to the headers and the total (a browser's HAR), or nothing
    held = all(_timing(timings.get(k)) and timings.get(k) >= 0 for k in ("wait", "receive"))
    provider, transport_error, spec, notes = None, None, None, ()
    odd = _odd_timings(timings, own)
    if own is not None:
        if isinstance(own.get("spec"), Mapping):
            try:
                spec = PromptSpec.from_json(own["spec"])
                json.dumps(spec.to_json())          # (a spec that reads but cannot be written back is no spec)
                if not isinstance(spec.user, str) or not isinstance(spec.system, str):
                    raise ValueError("prompt texts must be strings")
            except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
                spec = None     # (a spec this version cannot read: the exchange itself still opens)
        if isinstance(own.get("notes"), list):
            notes = tuple(n for n in own["notes"] if isinstance(n, str))
        if isinstance(own.get("provider"), Mapping) and own["provider"].get("format") in FORMATS:
            provider = ProviderConfig.from_json(own["provider"])
        metrics = own.get("metrics") if isinstance(own.get("metrics"), Mapping) else {}
        headers_ns = _ns(metrics.get("time_to_headers_ms")) or headers_ns
        end_ns = _ns(metrics.get("total_ms")) or end_ns
        transport_error = own.get("transport_error") if isinstance(own.get("transport_error"), Mapping) else None
        if transport_error is None and own.get("status") in ("cancelled", "stalled"):
            transport_error = {"type": own["status"], "message": _text((own.get("error") or {}).get("message")),
                               "raw": None}
    if dropped is not None:
        transport_error = error_dict(ErrorType.CONNECTION_DROPPED, dropped)
    notes = (*notes, *odd, *([deep] if deep else []))
    body = body or b""
    started_at = _epoch(e.get("startedDateTime"))
    chunks = _har_chunks(body, own, headers_ns, end_ns)
    if own is not None:      # StreamScope's own HAR says what its run held (before it did: per-chunk times)
        timing = own.get("timing") if own.get("timing") in TIMINGS else \
            TIMING_RECORDED if chunks is not None else TIMING_TOTAL_ONLY
    else:
        timing = TIMING_TOTAL_ONLY if held else TIMING_NONE
    if chunks is None and own is None and body:    # a browser's HAR: its frames' own times, where it kept them
        times = _message_times(e, started_at)
        chunks = None if times is None else _message_chunks(body, pieces, times)
        if chunks is not None:
            timing = TIMING_RECORDED
            end_ns = max(end_ns, chunks[-1][0] if chunks else 0)
    if chunks is None:       # no per-chunk time: the whole body at the end
        chunks = [(end_ns or headers_ns, body)] if body else []
    post = req.get("postData") if isinstance(req.get("postData"), Mapping) else {}
    header_notes: list[str] = []
    resp_headers = _har_headers(resp.get("headers"), "response", header_notes)
    req_headers = _har_headers(req.get("headers"), "request", header_notes)
    notes = (*notes, *header_notes)
    # HAR bodies are stored decoded, but a writer that keeps them as received (Fiddler) stores gzip's bytes: those
    # are decoded as the header says
    coding = next((v.strip().lower() for k, v in resp_headers if k.lower() == "content-encoding"), "")
    decoded = not (body and body.startswith(b"\x1f\x8b") and coding in ("gzip", "x-gzip"))
    return _Recorded(label, method, url, req_headers, _text(post.get("text")).encode("utf-8", "surrogatepass"),
                     status, _text(resp.get("statusText")) or None, _text(resp.get("httpVersion")) or None,
                     resp_headers, chunks, headers_ns, end_ns, started_at, decoded, provider,
                     None if transport_error is None else dict(transport_error), spec, notes, timing)


# a JSON string (skipped whole; one never closed runs to the end, so that a text of escaped quotes without a
# closing one is not scanned again from each of them: quadratic), or a bracket
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)|[\[\]{}]')
#: what stands in for a part of a recording's JSON nested deeper than MAX_DEPTH (a JSON string, so it parses)
_TOO_DEEP = json.dumps(TOO_DEEP_MARKER)


def _cut_too_deep(text: str) -> tuple[str, int]:
    """`text` with every value nested deeper than MAX_DEPTH replaced by the TOO_DEEP_MARKER string, and how many
    were replaced (iterative, one pass: safe on any depth; strings are matched whole, so brackets in them do not
    count)."""
    out, pos, depth, start, cut = [], 0, 0, -1, 0
    for m in _JSON_TOKEN.finditer(text):
        c = text[m.start()]
        if c == '"':
            continue
        if c in "[{":
            depth += 1
            if depth == MAX_DEPTH + 1:
                start = m.start()
        else:
            if depth == MAX_DEPTH + 1 and start >= 0:
                out += [text[pos:start], _TOO_DEEP]
                pos, start, cut = m.end(), -1, cut + 1
            depth -= 1
    if start >= 0:             # (never closed: the text is no JSON anyway; its parser says so)
        return text, cut
    out.append(text[pos:])
    return "".join(out), cut


def _json_document(data: bytes, source: str, what: str) -> tuple[object, bool]:
    """(the JSON document of a recording, whether parts of it were cut): when the parser cannot go as deep as
    the text nests, the parts nested deeper than MAX_DEPTH levels are replaced by TOO_DEEP_MARKER (so one
    entry's deep part affects that entry alone); a CaptureError when it is not JSON, or is nested too deep as a
    whole."""
    try:
        return parse_json(data), False
    except (JSONTooDeep, RecursionError):
        pass
    except ValueError:
        raise CaptureError(f"{source}: not JSON (not {what})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CaptureError(f"{source}: not JSON (not {what}): not UTF-8") from None
    cut_text, cut = _cut_too_deep(text)
    try:
        doc = parse_json(cut_text) if cut else None
    except (ValueError, RecursionError):
        doc = None
    if doc is None:
        raise CaptureError(f"{source}: nested too deep (limit {MAX_DEPTH} levels) to read as {what}")
    return doc, True


def _too_deep_note(value, cut_before: bool) -> tuple[object, str | None]:
    """(`value` with parts deeper than MAX_DEPTH cut, a note when it had some; `cut_before`: whether its
    document had parts cut as it was parsed, which left TOO_DEEP_MARKER where they were)."""
    cut = bounded(value)
    if cut is value and not (cut_before and _holds_marker(value)):
        return value, None
    return cut, f"parts of the recording's entry nested deeper than {MAX_DEPTH} levels were not read"


def _holds_marker(value) -> bool:
    """Whether a (bounded) value holds TOO_DEEP_MARKER (where `_json_document` cut a part)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v == TOO_DEEP_MARKER:
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _parse_har(data: bytes, source: str, format: str | None) -> Opened:
    doc, cut = _json_document(data, source, "a HAR file")
    log = doc.get("log") if isinstance(doc, Mapping) else None
    entries = log.get("entries") if isinstance(log, Mapping) else None
    if not isinstance(entries, list):
        if cut and _holds_marker(doc):
            raise CaptureError(f"{source}: nested too deep (limit {MAX_DEPTH} levels): no log.entries list "
                               f"could be read")
        raise CaptureError(f"{source}: not a HAR file (no log.entries list)")
    stem = Path(source).stem or "har"
    return _collect("har", ((_har_entry(i, e, cut), f"{stem}#{i}") for i, e in enumerate(entries, 1)), format)


# -- VCR cassettes -----------------------------------------------------------------------------------------------
def _cassette_loader():
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):   # the safe loader, plus the two plain-string tags old vcrpy cassettes carry
        pass

    for tag in ("tag:yaml.org,2002:python/str", "tag:yaml.org,2002:python/unicode"):
        Loader.add_constructor(tag, lambda loader, node: loader.construct_scalar(node))
    return Loader


#: how many nodes YAML aliases may add to a cassette, counted as if each alias were written out in full (vcrpy
#: writes none; PyYAML's dumper writes one for an object met twice): past it, an alias bomb, which a kilobyte
#: expands to gigabytes, is refused before anything is built
MAX_ALIASED_NODES = 1_000_000


def _aliased_nodes(root) -> int:
    """How many nodes the aliases of a composed YAML document add when expanded (counted without expanding them);
    a CaptureError when an alias refers to a node that holds it (a loop). Iterative, one
    visit per distinct node."""
    from yaml.nodes import MappingNode, SequenceNode

    def children(node):
        if isinstance(node, SequenceNode):
            return node.value
        if isinstance(node, MappingNode):
            return [n for pair in node.value for n in pair]
        return ()

    size: dict[int, int] = {}      # id(node): its expanded node count, once known
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = min(1 + sum(size[id(c)] for c in children(node)), 1 << 62)
            continue
        if key in size:
            continue
        if key in on_path:
            raise CaptureError("a YAML alias refers to a node that holds it (a loop)")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children(node) if id(c) not in size)
    return size[id(root)] - len(size)


def _load_yaml(data: bytes, limit: int = MAX_ALIASED_NODES):
    """A YAML cassette's document, read with the safe loader; a CaptureError when its aliases would expand it
    by more than `limit` nodes (checked on the composed nodes, before anything is built)."""
    loader = _cassette_loader()(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _aliased_nodes(node) > limit:
            raise CaptureError(f"the cassette is too large once its YAML aliases are expanded (more than {limit:,} "
                               f"nodes more than it writes: an alias bomb?); it was not read")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _cassette_bytes(v) -> bytes:
    """A cassette body: text, bytes (`!!binary`), `{string: text-or-binary}` or `{base64_string: text}`."""
    if isinstance(v, Mapping):
        if "base64_string" in v:
            b64 = v["base64_string"]
            if not isinstance(b64, str):
                raise CaptureError(f"a base64_string body that is not a string (a {type(b64).__name__})")
            try:
                return base64.b64decode("".join(b64.split()), validate=True)
            except (binascii.Error, ValueError):
                raise CaptureError("a base64_string body is not base64") from None
        v = v.get("string")
    if v is None:
        return b""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", "surrogatepass")
    raise CaptureError(f"a body of type {type(v).__name__}")


def _cassette_headers(h, where: str, notes: list[str]) -> list[tuple[str, str]]:
    """A cassette's headers: `{name: [value, ...]}` (or `{name: value}`), or a list of `[name, value]` pairs;
    a name or value that is no scalar is ignored, with a note."""
    pairs: list = []
    if isinstance(h, Mapping):
        for k, vs in h.items():
            pairs += [(k, v) for v in (vs if isinstance(vs, list) else [vs])]
    elif isinstance(h, list):
        pairs = [(p[0], p[1]) for p in h if isinstance(p, (list, tuple)) and len(p) == 2]
    return _header_pairs(pairs, where, notes)


def _interaction(i: int, it) -> _Recorded | Skipped:
    parts = _request_response("interaction", i, it, "uri")
    if isinstance(parts, Skipped):
        return parts
    req, resp, method, url, label = parts
    status_obj = resp.get("status")
    if isinstance(status_obj, Mapping):
        status, reason = status_obj.get("code"), _text(status_obj.get("message")) or None
    else:                      # vcrpy's older httpx cassettes
        status, reason = resp.get("status_code"), None
    if not isinstance(status, int) or isinstance(status, bool):
        return Skipped(label, "the response has no status code")
    try:
        body = _cassette_bytes(resp.get("body", resp.get("content")))
        request_body = _cassette_bytes(req.get("body"))
    except CaptureError as exc:       # one broken interaction: listed, the others still open
        return Skipped(label, str(exc))
    notes: list[str] = []
    request_headers = _cassette_headers(req.get("headers"), "request", notes)
    response_headers = _cassette_headers(resp.get("headers"), "response", notes)
    return _Recorded(label, method, url, request_headers, request_body, status, reason, None, response_headers,
                     [(0, body)] if body else [], notes=tuple(notes),
                     timing=TIMING_NONE)          # (a cassette keeps no time at all)


def _parse_cassette(data: bytes, source: str, format: str | None) -> Opened:
    import yaml

    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):    # vcrpy's JSON serializer
        doc, cut = _json_document(data, source, "a JSON cassette")
        if cut:     # (a part nested too deep for the parser: read as a string that says so)
            doc = bounded(doc)
    else:
        try:
            doc = _load_yaml(data)
        except yaml.YAMLError as exc:
            raise CaptureError(f"{source}: not a YAML cassette: {str(exc).splitlines()[0]}") from None
        except RecursionError:
            raise CaptureError(f"{source}: not a YAML cassette: nested too deep to read") from None
        except CaptureError as exc:
            raise CaptureError(f"{source}: {exc}") from None
    if isinstance(doc, Mapping):    # vcrpy's `interactions`; Ruby's VCR (whose shape vcrpy copied): `http_interactions`
        interactions = doc.get("interactions", doc.get("http_interactions"))
    else:
        interactions = doc
    if not isinstance(interactions, list):
        raise CaptureError(f"{source}: not a VCR cassette (no interactions list)")
    stem = Path(source).stem or "cassette"
    try:
        return _collect("cassette", ((_interaction(i, it), f"{stem}#{i}") for i, it in enumerate(interactions, 1)),
                        format)
    except CaptureError as exc:
        raise CaptureError(f"{source}: {exc}") from None
