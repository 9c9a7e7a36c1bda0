"""Captures and exports: the native `.jsonl` capture (lossless, replayable), HAR 1.2, a Markdown report, the raw
`.sse` body and a VCR cassette (`.yaml`).

`write_jsonl(runs, path)` / `read_jsonl(path) -> list[ProviderRun]` (runs rebuilt through the same recorder and
decoder, so `run.result()` equals the live one), `CaptureAppender(path)` (a capture written run by run, as a tap
sees them end), `write_har`, `write_markdown`, `write_sse` (one file per run), `write_cassette` (the YAML that
vcrpy replays), and `export(runs, path)` which picks by extension (`EXPORT_TYPES`, the one list of export types).
None of them ever writes a key: the runs hold only redacted requests, and every export is scanned for the keys
the runs were sent with. Reading the other formats (HAR, `.sse`, cassettes) is `core.live.importers`.

The `.jsonl` format (version 2; version 1 files are read too) is documented in `docs/capture-format.md`. A
conversation is one run per exchange (the provider's turns one after another, each with its own request, bytes
and timing); the `.md` report shows each provider's conversation, and HAR has one entry per exchange.
"""
from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from core.live.compare_table import compare_section
from core.live.config import ProviderConfig, mask_bytes, resolve_extras, resolve_key
from core.live.errors import ErrorType, error_dict
from core.live.request import HttpRequest, PromptSpec
from core.live.recorder import (REBUILD_PAUSE, TIMING_NONE, TIMING_NOT_RECORDED, TIMING_RECORDED, TIMINGS,
                                 ProviderRun, output_tokens_now, rebuild_run)
from core.live.summary import (duration, error_line, finish_text, md_code, md_text, plural, tokens_text,
                               usage_figures, visible_controls)
from core.live.tool_loop import conversation_after, exchange_index
from core.wire.jsonfast import JSONTooDeep, loads as parse_json   # a ValueError, never a RecursionError
from core.wire.scrub import holds_secret, mask_text, secret_list

CAPTURE_FORMAT = "streamscope-capture"
CAPTURE_VERSION = 2          # 2: runs carry `turn` (the exchange of their conversation); 1 is still read
GENERATOR = "StreamScope"
GENERATOR_VERSION = "0.1.0"


class CaptureError(ValueError):
    """A capture file that cannot be read."""


def _secrets(runs: Iterable[ProviderRun]) -> list[str]:
    out: list[str] = []
    for r in runs:
        out.extend(s for s in getattr(r, "_secrets", ()) if s)
    return out


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# The last safety net (the runs hold no key already): each secret left in an export is overwritten by `*` of its
# length. In a JSON or YAML document only inside its strings, walked before it is written, never in the written
# text: a match across the syntax (a key that spells `null`, or an alias's `*` at a YAML scalar's start) would
# leave a file that cannot be read back.
def _masked(text: str, secrets: Sequence[str]) -> str:
    return mask_text(text, secrets)[0]


def _masked_doc(obj: Any, secrets: Sequence[str]) -> Any:
    """`obj` (a JSON or YAML document) with every secret masked in every string, keys included."""
    secrets = secret_list(secrets)
    if not secrets:
        return obj

    def walk(o):
        if isinstance(o, str):
            return _masked(o, secrets)
        if isinstance(o, bytes):
            return mask_bytes(o, secrets)[0]
        if isinstance(o, dict):
            return {walk(k): walk(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [walk(x) for x in o]
        return o

    return walk(obj)


def _masked_lines(lines: Iterable[str], secrets: Sequence[str]) -> list[str]:
    """JSON lines with every secret masked inside their strings (a line holding none is kept as it is)."""
    secrets = secret_list(secrets)
    return [_dumps(_masked_doc(json.loads(line), secrets)) if holds_secret(line, secrets) else line
            for line in lines]


def _write_text(path: str | os.PathLike, text: str) -> Path:
    return _write_bytes(path, text.encode("utf-8"), ())


def _write_bytes(path: str | os.PathLike, data: bytes, secrets: Sequence[str]) -> Path:
    if secrets:
        data = mask_bytes(data, secrets)[0]
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".part")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, p)
    except OSError as exc:   # no half-written PATH.part is left, and the error is PATH's (the caller names it)
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise type(exc)(exc.errno, exc.strerror) if exc.errno is not None else exc from None
    return p


# -- native capture ------------------------------------------------------------------------------------------
def _chunk_record(i: int, t: int, data: bytes) -> dict:
    try:
        return {"type": "chunk", "run": i, "t_ns": t, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"type": "chunk", "run": i, "t_ns": t, "b64": base64.b64encode(data).decode("ascii")}


def capture_lines(runs: Sequence[ProviderRun]) -> list[str]:
    secrets = _secrets(runs)
    lines = [header_line(len(runs))]
    for i, r in enumerate(runs):
        lines += run_lines(i, r, secrets)
    return lines


def header_line(runs: int | None) -> str:
    """The capture's first line; `runs` None when the count is not known yet (a tap's capture as it grows)."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return _dumps({"format": CAPTURE_FORMAT, "version": CAPTURE_VERSION, "created": now,
                   "generator": f"{GENERATOR} {GENERATOR_VERSION}", "runs": runs})


def run_lines(i: int, r: ProviderRun, secrets: Sequence[str]) -> list[str]:
    """One run's records (run, response, chunk..., end, summary) as run number `i` of a capture."""
    record = {"type": "run", "run": i, "provider": r.provider.to_json(),
              "turn": exchange_index(r.spec), "spec": None if r.spec is None else r.spec.to_json(),
              "request": None if r.request is None else r.request.to_json(),
              "started_at": r.started_at, "sent": r.sent, "notes": list(r.notes)}
    if r.timing != TIMING_RECORDED:
        record["timing"] = r.timing    # (optional: absent, every chunk's time was recorded, as a live run's are)
    lines = [_dumps(record)]
    if r.http_status is not None:
        lines.append(_dumps({"type": "response", "run": i, "t_ns": r.metrics.t_headers_ns or 0,
                             "status": r.http_status, "http_version": r.http_version,
                             "reason": r.reason_phrase, "headers": [[k, v] for k, v in r.response_headers]}))
    for t, data in r.chunks:
        if secrets:
            data = mask_bytes(data, secrets)[0]
        lines.append(_dumps(_chunk_record(i, t, data)))
    lines.append(_dumps({"type": "end", "run": i, "t_ns": r.metrics.t_total_ns or 0, "status": r.status,
                         "transport_error": r.transport_error}))
    lines.append(_dumps({"type": "summary", "run": i, "result": r.result(), "metrics": r.metrics.to_json()}))
    return lines


class CaptureAppender:
    """A native capture written run by run: every finished run is on disk, flushed, as soon as `add` returns.

    With the number of runs `planned` (`bench --export`, Repeat's export), the file grows as `PATH.part` (a valid
    capture after every `add`, its header counting the runs planned) and `close()` sets the header's count to the
    runs written and moves it to PATH. With `planned=None` (the tap, whose runs are not known ahead), the file is
    PATH from the start and its header's `runs` is null, so a crash loses no run that had ended. A run's keys are
    masked as `write_jsonl` masks them."""

    def __init__(self, path: str | os.PathLike, planned: int | None = None) -> None:
        self.path = Path(path)
        self.part = self.path if planned is None else self.path.with_name(self.path.name + ".part")
        self.planned = planned
        self.count = 0
        self.appended_to: int | None = None     # the runs a capture held that this one goes on after
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        held = _runs_of_growing_capture(self.path) if planned is None else None
        if held is not None:
            # a capture that grew the same way (the tap's, on an earlier day): this one goes on after its runs,
            # numbered on from them, rather than wiping it
            self.count = self.appended_to = held
            self._f = open(self.part, "a", encoding="utf-8")
            if not _ends_with_newline(self.path):
                self._f.write("\n")         # (a line cut by a crash stays a line of its own: the reader skips it)
        else:
            self._f = open(self.part, "w", encoding="utf-8")
            self._f.write(header_line(planned) + "\n")
        self._f.flush()

    def add(self, run: ProviderRun) -> None:
        secrets = _secrets([run])
        self._f.write("\n".join(_masked_lines(run_lines(self.count, run, secrets), secrets)) + "\n")
        self._f.flush()
        self.count += 1

    def close(self) -> Path:
        if self._f.closed:
            return self.path
        self._f.close()
        if self.planned is None:
            return self.path
        if self.count != self.planned:   # stopped early: the header says how many runs the file holds
            import shutil

            fixed = self.path.with_name(self.path.name + ".tmp")
            with open(self.part, encoding="utf-8") as src, open(fixed, "w", encoding="utf-8") as dst:
                src.readline()
                dst.write(header_line(self.count) + "\n")
                shutil.copyfileobj(src, dst)
            os.replace(fixed, self.part)
        os.replace(self.part, self.path)
        return self.path


_RUN_RECORD = '{"type":"run","run":'     # how `run_lines` starts a run's first record


def _runs_of_growing_capture(path: Path) -> int | None:
    """How many runs a capture written as it grows (its header's `runs` null) holds at `path`; None when there is
    no such file there (none, empty, or anything else, which a new capture replaces as every export does)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            try:
                header = parse_json(f.readline())   # (a file anyone may have edited: bounded, ValueError)
            except ValueError:
                return None
            if not (isinstance(header, dict) and header.get("format") == CAPTURE_FORMAT
                    and header.get("version") == CAPTURE_VERSION and header.get("runs", 0) is None):
                return None
            last = -1
            for line in f:
                if line.startswith(_RUN_RECORD):
                    try:
                        last = max(last, int(parse_json(line)["run"]))
                    except (ValueError, KeyError, TypeError):
                        continue
            return last + 1
    except OSError:
        return None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def write_jsonl(runs: Sequence[ProviderRun], path: str | os.PathLike) -> Path:
    """The native capture: a header line, then per run: run, response, chunk..., end, summary records."""
    return _write_text(path, "\n".join(_masked_lines(capture_lines(runs), _secrets(runs))) + "\n")


def read_jsonl(path: str | os.PathLike, problems: list[tuple[str, str]] | None = None) -> list[ProviderRun]:
    """Import a native capture: every run rebuilt by feeding its recorded chunks through a fresh decoder.
    A record that cannot be read is skipped and reported (see `parse_jsonl`); the rest replays."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise CaptureError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return scrub_known_keys(parse_jsonl(raw, str(p), problems))


def scrub_known_keys(runs: list[ProviderRun]) -> list[ProviderRun]:
    """Mask, in imported runs, the keys (and the header and query values read from the environment) this machine
    knows for their providers (from the environment or the keyring): a capture written by an older version, or by another tool, may hold a key the server echoed
    escaped or split across events, which only decoding finds."""
    for r in runs:
        if r.provider.is_demo:
            continue
        known = [resolve_key(r.provider) if r.provider.api_key_env else None]
        known += resolve_extras(r.provider)[0].values()   # its `{ env = "NAME" }` header and query values
        known = [k for k in known if k]
        if known:
            r.scrub_secrets(known)
    return runs


class _Skip(Exception):
    """One capture record that cannot be used (the message says why; the record is skipped)."""


def _record(line: bytes) -> dict:
    try:
        rec = parse_json(line)   # (the wire's parser: a lone surrogate escape reads as U+FFFD, as in a frame)
    except JSONTooDeep:
        raise _Skip("nested too deeply to read") from None
    except ValueError:
        raise _Skip("not JSON") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("run"), int) or isinstance(rec.get("run"), bool):
        raise _Skip("not a capture record (no run number)")
    return rec


def _chunk(rec: dict) -> tuple[int, bytes]:
    t = rec.get("t_ns")
    if not isinstance(t, int) or isinstance(t, bool):
        raise _Skip("a chunk without a t_ns time")
    text, b64 = rec.get("text"), rec.get("b64")
    if isinstance(text, str):
        return t, text.encode("utf-8", "surrogatepass")
    if isinstance(b64, str):
        try:
            return t, base64.b64decode(b64, validate=True)
        except ValueError:
            raise _Skip("a chunk whose b64 is not base64") from None
    raise _Skip("a chunk without text or b64")


def _headers(resp: dict) -> tuple:
    status = resp.get("status")
    if not isinstance(status, int) or isinstance(status, bool):
        raise _Skip("a response record without an integer status")
    t = resp.get("t_ns")
    rows = resp.get("headers") or []
    if not isinstance(rows, list) or not all(isinstance(h, list) and len(h) == 2 and all(isinstance(x, str) for x in h)
                                             for h in rows):
        raise _Skip("a response record whose headers are not [name, value] pairs of strings")
    version, reason = resp.get("http_version"), resp.get("reason")
    return (t if isinstance(t, int) and not isinstance(t, bool) else 0, status,
            version if isinstance(version, str) else None, reason if isinstance(reason, str) else None,
            [tuple(h) for h in rows])


def parse_jsonl(raw: bytes, source: str = "capture",
                problems: list[tuple[str, str]] | None = None) -> list[ProviderRun]:
    """The runs of a native capture. Only a file that is no capture at all (no header line, an unsupported
    version, or not one run that can be read) is a CaptureError. A record that cannot be used (not JSON, nested
    too deeply, of the wrong shape, for a run not yet opened) is skipped: it is reported in `problems` (when
    given) as `("line N", why)` and in the notes of the run it belongs to (or of the run being read), and the
    rest of the file replays. A `run` record without what a run needs (a provider object naming a wire format;
    a request and a spec that are objects or null) claims no run number: a later good record for that run is
    read (the bad one is reported as skipped), and when none comes the run is reported once and left out, as a
    run whose own record cannot be rebuilt is; the others replay."""
    found: list[tuple[str, str]] = []
    lines = [(n, ln) for n, ln in enumerate(raw.split(b"\n"), start=1) if ln.strip()]
    if not lines:
        raise CaptureError(f"{source}: empty file")
    try:
        header = parse_json(lines[0][1])
    except ValueError:
        raise CaptureError(f"{source}: the first line is not JSON (not a StreamScope capture)") from None
    if not isinstance(header, dict) or header.get("format") != CAPTURE_FORMAT:
        raise CaptureError(f"{source}: not a StreamScope capture (no {CAPTURE_FORMAT!r} header line)")
    version = header.get("version")
    if not isinstance(version, int) or version > CAPTURE_VERSION or version < 1:
        raise CaptureError(f"{source}: capture version {version!r} is not supported (this build reads "
                           f"versions 1 to {CAPTURE_VERSION})")
    parts: dict[int, dict] = {}
    order: list[int] = []
    current: dict | None = None   # the run being read: a record that names none is reported with it

    def skip(n: int, why: str, part: dict | None) -> None:
        message = f"line {n}: {why}; the record was skipped"
        found.append((f"line {n}", f"{why}; the record was skipped"))
        target = part if part is not None else current
        if target is not None:
            target["notes"].append(f"capture {message}")
        else:
            orphans.append(f"capture {message}")

    orphans: list[str] = []   # problems met before any run: they go to the first run read
    unread: dict[int, dict] = {}  # runs whose run record cannot be read (it claims no number): their lines
    pause = REBUILD_PAUSE.get()
    for n, line in lines[1:]:
        if pause is not None:
            pause()
        try:
            rec = _record(line)
        except _Skip as exc:
            skip(n, str(exc), None)
            continue
        i = rec["run"]
        typ = rec.get("type")
        part = parts.get(i)
        try:
            if typ == "run":
                try:
                    read = _run_record(rec)
                except _Skip as exc:
                    if part is None and i not in unread:   # (it claims no run number: a good one may follow)
                        unread[i] = {"line": n, "why": str(exc), "later": []}
                        continue
                    raise
                if part is not None:
                    raise _Skip(f"run {i} appears twice")
                stray = unread.pop(i, None)
                current = parts[i] = {"run": rec, "read": read, "response": None, "chunks": [], "end": None,
                                      "notes": orphans + [], "line": n}
                orphans.clear()
                order.append(i)
                if stray is not None:     # a run record that could not be read came first: skipped, named
                    for at, why in [(stray["line"], stray["why"]), *stray["later"]]:
                        skip(at, why, current)
            elif part is None:
                why = f"a {str(typ)[:40]!r} record for run {i} before its 'run' record"
                if i in unread:           # (said once, with its run record, unless a good one follows)
                    unread[i]["later"].append((n, why))
                    continue
                raise _Skip(why)
            elif typ == "response":
                part["response"] = _headers(rec)
            elif typ == "chunk":
                part["chunks"].append(_chunk(rec))
            elif typ == "end":
                part["end"] = rec if isinstance(rec.get("transport_error"), (dict, type(None))) else None
                if part["end"] is None:
                    raise _Skip("an end record whose transport_error is not an object")
            # "summary" and unknown record types are informational: ignored
        except _Skip as exc:
            skip(n, str(exc), part)
    for i, u in unread.items():   # a run whose only run record cannot be read: left out, said once
        more = len(u["later"])
        found.append((f"line {u['line']}", f"run {i} cannot be rebuilt ({u['why']}); it was left out"
                      + (f", and its {plural(more, 'other record')} with it" if more else "")))
    runs = []
    for i in order:
        part = parts[i]
        try:
            runs.append(_rebuilt(part))
        except Exception as exc:  # noqa: BLE001 - one run's bad record must not lose the others
            found.append((f"line {part['line']}", f"run {i} cannot be rebuilt ({type(exc).__name__}: "
                                                  f"{' '.join(str(exc).split())[:200]}); it was left out"))
    if problems is not None:
        problems.extend(found)
    if not runs:
        raise CaptureError(f"{source}: no run could be read" + (f" ({': '.join(found[0])})" if found else ""))
    return runs


def _run_record(rr: dict) -> tuple[ProviderConfig, HttpRequest | None, PromptSpec | None]:
    """What a `run` record holds: its provider (an object naming one of the wire formats: a run cannot be
    decoded without one), its request and spec (each an object, or null); `_Skip` when it lacks them."""
    from core.wire.formats import FORMATS

    provider = rr.get("provider")
    if not isinstance(provider, dict):
        raise _Skip("a run record without a provider object")
    if provider.get("format") not in FORMATS:
        raise _Skip(f"a run record whose provider has no wire format ({str(provider.get('format'))[:40]!r} is not "
                    f"one of {', '.join(FORMATS)})")
    for key in ("request", "spec"):
        if rr.get(key) is not None and not isinstance(rr[key], dict):
            raise _Skip(f"a run record whose {key} is not an object")
    try:
        return (ProviderConfig.from_json(provider),
                None if rr.get("request") is None else HttpRequest.from_json(rr["request"]),
                None if rr.get("spec") is None else PromptSpec.from_json(rr["spec"]))
    except Exception as exc:  # noqa: BLE001 - a record of any shape: skipped, the rest replays
        raise _Skip(f"a run record that cannot be read ({type(exc).__name__}: "
                    f"{' '.join(str(exc).split())[:200]})") from None


def _rebuilt(part: dict) -> ProviderRun:
    rr = part["run"]
    provider, request, spec = part["read"]
    headers = part["response"]
    end = part["end"] or {}
    transport_error = end.get("transport_error")
    if part["end"] is None:
        transport_error = error_dict(ErrorType.CAPTURE_TRUNCATED, "the capture ends before this run ended")
    end_ns = end.get("t_ns")
    if not isinstance(end_ns, int) or isinstance(end_ns, bool):
        end_ns = part["chunks"][-1][0] if part["chunks"] else (headers[0] if headers else 0)
    notes = rr.get("notes") if isinstance(rr.get("notes"), list) else []
    timing = rr.get("timing") if rr.get("timing") in TIMINGS else TIMING_RECORDED   # (absent: recorded)
    return rebuild_run(provider, request=request, spec=spec, started_at=rr.get("started_at"),
                       sent=bool(rr.get("sent", True)), headers=headers, chunks=part["chunks"],
                       end_ns=end_ns, transport_error=transport_error,
                       notes=[str(x) for x in notes] + part["notes"], timing=timing)


# -- HAR 1.2 -------------------------------------------------------------------------------------------------
def _iso(epoch: float | None) -> str:
    dt = datetime.fromtimestamp(epoch if epoch is not None else 0, tz=timezone.utc)
    return dt.isoformat(timespec="milliseconds")


def _ms(ns: int | None) -> float:
    return round((ns or 0) / 1e6, 3)


def _har_entry(r: ProviderRun) -> dict:
    req = r.request
    if req is None:
        req = HttpRequest("POST", r.provider.base_url, {}, {}, [])
    body_text = req.content().decode("utf-8") if req.body else ""
    request = {
        "method": req.method, "url": req.url, "httpVersion": r.http_version or "HTTP/1.1", "cookies": [],
        "headers": [{"name": k, "value": v} for k, v in req.headers.items()],
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(req.url).query,
                                                                      keep_blank_values=True)],
        "headersSize": -1, "bodySize": len(body_text.encode("utf-8")),
    }
    if body_text:
        request["postData"] = {"mimeType": "application/json", "text": body_text}
    body = r.body
    ctype = next((v for k, v in r.response_headers if k.lower() == "content-type"), "")
    content: dict[str, Any] = {"size": len(body), "mimeType": ctype or "text/event-stream"}
    try:
        content["text"] = body.decode("utf-8")
    except UnicodeDecodeError:
        content["text"] = base64.b64encode(body).decode("ascii")
        content["encoding"] = "base64"
    response = {
        "status": r.http_status or 0, "statusText": r.reason_phrase or "",
        "httpVersion": r.http_version or "HTTP/1.1", "cookies": [],
        "headers": [{"name": k, "value": v} for k, v in r.response_headers],
        "content": content, "redirectURL": "", "headersSize": -1, "bodySize": len(body),
    }
    m = r.metrics
    total = m.t_total_ns or 0
    wait = m.t_headers_ns if m.t_headers_ns is not None else total
    timings = {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": _ms(wait),
               "receive": _ms(max(0, total - wait))}
    if r.timing == TIMING_NONE:   # (HAR 1.2: send, wait and receive are not optional, and never negative)
        timings["comment"] = f"{TIMING_NOT_RECORDED}: the recording this run was opened from held none"
    elif r.timing != TIMING_RECORDED:
        timings["comment"] = "per-chunk times not recorded: wait and receive are the recording's own"
    t0 = r.started_at or 0.0
    messages = []
    for item in r.decoder.items if r.body_kind != "json" else ():   # (a whole JSON reply is no event stream)
        if hasattr(item, "event"):
            t = r.frame_times[item.n] if item.n < len(r.frame_times) else total
            messages.append({"time": round(t0 + t / 1e9, 6), "eventName": item.event, "eventId": item.id,
                             "data": item.data})
    entry = {
        "pageref": "streamscope", "startedDateTime": _iso(r.started_at),
        "time": round(timings["send"] + timings["wait"] + timings["receive"], 3),
        "request": request, "response": response, "cache": {}, "timings": timings,
        "_eventSourceMessages": messages,
        "_streamscope": {"provider": r.provider.to_json(), "turn": exchange_index(r.spec),
                         "spec": None if r.spec is None else r.spec.to_json(), "status": r.status,
                         "error": r.error, "transport_error": r.transport_error,
                         "metrics": m.to_json(), "notes": list(r.notes), "timing": r.timing,
                         "chunks": [[_ms(t), len(c)] for t, c in r.chunks]},
    }
    if r.error is not None:
        entry["response"]["_error"] = r.error.get("message")
    return entry


def har_document(runs: Sequence[ProviderRun]) -> dict:
    starts = [r.started_at for r in runs if r.started_at is not None]
    return {"log": {
        "version": "1.2",
        "creator": {"name": GENERATOR, "version": GENERATOR_VERSION},
        "pages": [{"startedDateTime": _iso(min(starts) if starts else None), "id": "streamscope",
                   "title": "StreamScope run", "pageTimings": {"onContentLoad": -1, "onLoad": -1}}],
        "entries": [_har_entry(r) for r in runs],
    }}


def write_har(runs: Sequence[ProviderRun], path: str | os.PathLike) -> Path:
    """HAR 1.2: one entry per exchange (per provider, and per turn of a conversation), the exact SSE body as response
    content, frames in _eventSourceMessages."""
    doc = _masked_doc(har_document(runs), _secrets(runs))
    return _write_text(path, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


# -- Markdown report ------------------------------------------------------------------------------------------
def _cell(v: Any) -> str:
    """A table cell: server text HTML-escaped and its markup escaped (`md_text`), line ends as <br>."""
    return md_text("" if v is None else str(v)).replace("\r", " ").replace("\n", "<br>")


def _fence(text: str, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside (control characters shown as escapes)."""
    text = visible_controls(text)
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}"


def markdown_report(runs: Sequence[ProviderRun]) -> str:
    out = ["# StreamScope report", ""]
    starts = [r.started_at for r in runs if r.started_at]
    if starts:
        out += [f"Sent {_iso(min(starts))} to {plural(len(runs), 'provider')}.", ""]
    spec = next((r.spec for r in runs if r.spec is not None), None)
    if spec is not None:
        if spec.system:
            out += ["**System:**", "", _fence(spec.system), ""]
        out += ["**Prompt:**", "", _fence(spec.user), ""]
        if spec.tools:
            out += ["**Tools:** " + ", ".join(md_code(t.get('name') or t.get('function', {}).get('name'))
                                              for t in spec.tools), ""]
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, fn) -> None:
        rows.append((label, [_cell(fn(r)) for r in runs]))

    def usage(r, attr):
        u = r.reply.usage
        return None if u is None else getattr(u, attr)

    def rate(r):
        m = r.metrics
        if m.tokens_per_s is None:
            return None
        return f"{m.tokens_per_s:.1f}" + ("" if m.tokens_per_s_exact else " (est.)")

    def text_of(r, kind):
        return "".join(b.text or "" for b in r.reply.ordered_blocks() if b.kind == kind)

    def short(s: str, n: int = 160) -> str:
        return s if len(s) <= n else s[:n] + "…"

    row("Format", lambda r: r.provider.format)
    row("Model", lambda r: r.provider.model)
    row("Status", lambda r: r.status)
    row("HTTP", lambda r: r.http_status)
    row("Finish", lambda r: finish_text(r.reply.finish) or None)
    row("Text", lambda r: short(text_of(r, "text")))
    row("Thinking", lambda r: short(text_of(r, "thinking"), 80) or None)
    row("Tool calls", lambda r: ", ".join(f"{b.name}({short(b.arguments or '', 60)})" for b in
                                          r.reply.ordered_blocks() if b.kind == "tool_call") or None)
    if any(not r.timing_recorded for r in runs):   # (opened from a recording that held less: said, not guessed)
        row("Timing", lambda r: {TIMING_NONE: "not recorded", TIMING_RECORDED: "recorded"}.get(
            r.timing, "headers and total only"))
    row("Time to headers", lambda r: duration(r.metrics.t_headers_ns))
    row("Time to first content", lambda r: duration(r.metrics.t_first_content_ns))
    row("Total time", lambda r: duration(r.metrics.t_total_ns))
    row("Frames", lambda r: r.metrics.frames)
    row("Bytes", lambda r: r.metrics.bytes)
    row("Keepalives", lambda r: r.metrics.keepalives)
    row("Largest gap between frames", lambda r: duration(r.metrics.max_gap_ns))
    row("Input tokens", lambda r: usage(r, "input_tokens"))
    def output_tokens(r):   # (the provider's count, else the estimate, marked: one rule for every format)
        n, estimated = output_tokens_now(r)
        return None if n is None else tokens_text(n, estimated)

    row("Output tokens", output_tokens)
    row("Reasoning tokens", lambda r: usage(r, "reasoning_tokens"))
    row("Cached input tokens", lambda r: usage(r, "cache_read_tokens"))
    row("Output tokens / s", rate)
    row("Terminated", lambda r: "yes" if r.reply.terminated else "no")
    row("Diagnostics", lambda r: len(r.reply.diagnostics))
    row("Error", lambda r: error_line(r.error))
    out.append("| | " + " | ".join(_cell(run_label(r, runs)) for r in runs) + " |")
    out.append("|---|" + "---|" * len(runs))
    for label, cells in rows:
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")
    out += conversation_sections(runs)
    out += compare_section(runs)   # the figures side by side, best marked, and how they are measured
    for r in runs:
        out += [f"## {md_text(run_label(r, runs))}", "",
                f"{md_code(r.provider.format)} · model {md_code(r.provider.model)} · "
                + md_code(r.request.method + ' ' + r.request.url if r.request else r.provider.base_url), ""]
        if r.error is not None:
            out += [f"**Error** ({md_text(r.error.get('type'))}): {md_text(r.error.get('message'))}", ""]
            if r.error.get("raw") is not None:
                out += [_fence(json.dumps(r.error["raw"], ensure_ascii=False, indent=2), "json"), ""]
        for b in r.reply.ordered_blocks():
            label = f"choice {b.choice}, " if b.choice else ""
            if b.kind == "tool_call":
                args = b.arguments or ""
                try:
                    args = json.dumps(parse_json(args), ensure_ascii=False, indent=2)
                except (ValueError, RecursionError):
                    pass
                out += [f"### Tool call {md_code(b.name)} ({label}id {md_code(b.id or '–')})", "", _fence(args, "json"), ""]
            elif b.kind in ("text", "thinking", "refusal"):
                title = {"text": "Text", "thinking": "Thinking", "refusal": "Refusal"}[b.kind]
                if b.redacted:
                    out += [f"### {title} ({label}redacted)", ""]
                else:
                    out += [f"### {title}" + (f" ({label.rstrip(', ')})" if label else ""), "",
                            _fence(b.text or ""), ""]
            else:
                out += [f"### Other block ({md_text(b.provider_type or 'unknown')})", ""]
        f = r.reply.finish
        u = r.reply.usage
        out.append(f"- Finish: {'–' if f is None else f'{f.canonical} (raw {md_code(f.raw)})'}")
        if u is not None:
            out.append("- Usage: " + usage_figures(u, r.reply.usage_reporting))
        m = r.metrics
        if r.timing == TIMING_NONE:
            out.append(f"- Timings: {TIMING_NOT_RECORDED} (the recording held none)")
        else:
            out.append(f"- Timings: headers {duration(m.t_headers_ns)}, first content "
                       f"{duration(m.t_first_content_ns)}, total {duration(m.t_total_ns)}, largest gap between "
                       f"frames {duration(m.max_gap_ns)}"
                       + ("" if r.timing_recorded else " (per-chunk times not recorded: first content and gaps "
                                                      "unknown)"))
        out.append(f"- Stream: {plural(m.frames, 'frame')}, {plural(m.bytes, 'byte')} in {plural(m.chunks, 'chunk')}, "
                   f"{plural(m.keepalives, 'keepalive')}, "
                   f"terminated: {'yes' if r.reply.terminated else 'no'}")
        out.append("")
        if r.reply.diagnostics:
            out += ["**Diagnostics**", ""]
            out += [f"- {md_code(d.code)} (frame {d.frame}): {md_text(d.message)}" for d in r.reply.diagnostics]
            out.append("")
        if r.notes:
            out += ["**Notes**", ""] + [f"- {md_text(n)}" for n in r.notes] + [""]
    return "\n".join(out)


def is_conversation(runs: Sequence[ProviderRun]) -> bool:
    """Whether the runs hold more than one exchange of a conversation (a later turn, or a provider twice)."""
    names = [r.name for r in runs]
    return len(set(names)) < len(names) or any(exchange_index(r.spec) for r in runs)


def run_label(r: ProviderRun, runs: Sequence[ProviderRun]) -> str:
    return f"{r.name} (turn {exchange_index(r.spec)})" if is_conversation(runs) else r.name


def conversation_sections(runs: Sequence[ProviderRun]) -> list[str]:
    """Each provider's whole conversation as of its last exchange: every turn, one under another."""
    if not is_conversation(runs):
        return []
    last: dict[str, ProviderRun] = {}
    for r in runs:
        last[r.name] = r
    out: list[str] = []
    for name, r in last.items():
        if r.spec is None:
            continue
        out += [f"## Conversation: {name}", ""]
        for n, turn in enumerate(conversation_after(r.spec, r).turns):
            who = "User" if turn.role == "user" else f"Assistant ({turn.format or r.provider.format})"
            out += [f"### Turn {n + 1}: {who}", ""]
            for p in turn.parts:
                if p.type == "text":
                    out += [_fence(p.text), ""]
                elif p.type in ("thinking", "reasoning"):
                    out += [f"*{'Thinking' if p.type == 'thinking' else 'Reasoning'}*"
                            + (" (signed)" if p.signature or p.data else "") + ":", "", _fence(p.text), ""]
                elif p.type == "redacted_thinking":
                    out += ["*Redacted thinking*", ""]
                elif p.type == "tool_call":
                    out += [f"**Tool call** {md_code(p.name)} (id {md_code(p.id or '–')})", "", _fence(p.arguments or "", "json"), ""]
                elif p.type == "tool_result":
                    label = "Tool error" if p.is_error else "Tool result"
                    out += [f"**{label}** {md_code(p.name or '')} (for {md_code(p.id or '–')})", "", _fence(p.text), ""]
                else:
                    out += [f"*{md_text(p.type)}* ({md_text(p.name or 'provider block')})", ""]
    return out


def write_markdown(runs: Sequence[ProviderRun], path: str | os.PathLike) -> Path:
    """A readable report: providers side by side, then each one's blocks, finish, usage, timings, diagnostics."""
    return _write_text(path, _masked(markdown_report(runs), _secrets(runs)))


# -- raw bodies ------------------------------------------------------------------------------------------------
def sse_paths(runs: Sequence[ProviderRun], path: str | os.PathLike) -> list[Path]:
    """Where `write_sse` puts each run's body: `path` itself for one run, else `STEM.NAME.sse` beside it."""
    p = Path(path)
    if len(runs) == 1:
        return [p]
    out, used = [], set()
    for i, r in enumerate(runs):
        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in r.name)[:64] or f"run{i}"
        if name in used:
            name = f"{name}-{i}"
        used.add(name)
        out.append(p.with_name(f"{p.stem}.{name}{p.suffix}"))
    return out


def write_sse(runs: Sequence[ProviderRun], path: str | os.PathLike) -> Path:
    """Each run's response body exactly as received (keys masked), one file per run (`sse_paths`); returns the
    first file. `decode --format auto FILE`, `replay FILE` and `emulate --serve FILE` read them back."""
    if not runs:
        raise ValueError("nothing to export: no runs")
    paths = sse_paths(runs, path)
    for r, p in zip(runs, paths):
        _write_bytes(p, r.body, _secrets([r]))
    return paths[0]


# -- VCR cassette ----------------------------------------------------------------------------------------------
# Headers a cassette does not replay: the body it holds is the decoded one, and its length is recomputed.
_CASSETTE_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection",
                                       "keep-alive"})


def _cassette_uri(url: str) -> str:
    """The request URL without its secret query values (`?key=[REDACTED]` would never match a replayed request
    that carries the real key; without it, vcrpy's `filter_query_parameters=["key"]` makes them match)."""
    from urllib.parse import urlencode

    from core.live.config import REDACTED, redact_url

    parts = urlsplit(redact_url(url))
    if not parts.query:
        return url
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if v != REDACTED]
    return parts._replace(query=urlencode(kept)).geturl()


def _cassette_body(data: bytes) -> str | bytes:
    try:
        return data.decode("utf-8")      # readable in the file; vcrpy encodes it back to the same bytes
    except UnicodeDecodeError:
        return data                      # YAML !!binary (base64)


def _headers_as_lists(pairs: Iterable[tuple[str, str]], dropped=frozenset()) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in pairs:
        if k.lower() not in dropped:
            out.setdefault(k, []).append(v)
    return out


def cassette_document(runs: Sequence[ProviderRun]) -> dict:
    """A VCR cassette (vcrpy's format version 1): one interaction per run that got a response."""
    interactions = []
    for r in runs:
        if r.http_status is None:
            continue        # no response (refused, unreachable): nothing a cassette could replay
        req = r.request or HttpRequest("POST", r.provider.base_url, {}, {}, [])
        body = r.body
        headers = _headers_as_lists(r.response_headers, _CASSETTE_DROPPED_HEADERS)
        headers["content-length"] = [str(len(body))]
        interactions.append({
            "request": {"method": req.method, "uri": _cassette_uri(req.url),
                        "body": req.content().decode("utf-8") if req.body else None,
                        "headers": _headers_as_lists(req.headers.items())},
            "response": {"status": {"code": r.http_status, "message": r.reason_phrase or ""},
                         "headers": headers, "body": {"string": _cassette_body(body)}},
        })
    return {"version": 1, "interactions": interactions}


def write_cassette(runs: Sequence[ProviderRun], path: str | os.PathLike) -> Path:
    """A VCR cassette that vcrpy (and pytest-recording) replay: the capture becomes a fixture of a test suite.
    The body is the one received (decoded when it came compressed, so `content-encoding` is left out)."""
    import yaml

    doc = _masked_doc(cassette_document(runs), _secrets(runs))
    if not doc["interactions"]:
        raise ValueError("nothing a cassette can hold: no run got a response")
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(doc, Dumper=dumper, allow_unicode=True, sort_keys=False, width=120)
    return _write_text(path, text)


# -- choosing by extension -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportType:
    """One export file type: its extension, its name (the GUI's save dialog lists it) and its writer."""

    extension: str
    label: str
    write: Callable[[Sequence[ProviderRun], str | os.PathLike], Path]


EXPORT_TYPES = (ExportType(".jsonl", "Native capture", write_jsonl), ExportType(".har", "HAR 1.2", write_har),
                ExportType(".md", "Markdown report", write_markdown),
                ExportType(".sse", "Raw SSE bodies", write_sse), ExportType(".yaml", "VCR cassette", write_cassette))
EXPORT_EXTENSIONS = tuple(t.extension for t in EXPORT_TYPES)
_EXTENSION_ALIASES = {".markdown": ".md", ".yml": ".yaml"}


def export_type(path: str | os.PathLike) -> ExportType | None:
    """The export type `path`'s extension names (any case), or None."""
    ext = Path(path).suffix.lower()
    ext = _EXTENSION_ALIASES.get(ext, ext)
    return next((t for t in EXPORT_TYPES if t.extension == ext), None)


def export(runs: Sequence[ProviderRun], path: str | os.PathLike) -> Path:
    """Write `runs` to `path`, the format chosen by its extension (`EXPORT_EXTENSIONS`); returns the file written
    (for `.sse` with several runs, the first of them)."""
    kind = export_type(path)
    if kind is None:
        raise ValueError(f"cannot export to {str(path)!r}: the extension must be one of "
                         f"{', '.join(EXPORT_EXTENSIONS)}")
    return kind.write(runs, path)
