"""The run recorder: one provider's exchange, everything that arrived, decoded as it arrives (sans-IO).

The transport (`core.live.transport`) and the replay (`core.live.replay`) feed a `ProviderRun` through the same
three calls (headers, chunk, finish); this module does no I/O of its own.

Decoding goes through `core.wire.pipeline.StreamDecoder`, the one decoding path; metrics are taken as chunks
arrive, from the run's own clock.

API (what the transport, the replay, the GUI and the CLI build on)
---------------------------------------
`prepare_runs(providers, spec, *, key_resolver=resolve_key) -> list[ProviderRun]`
    Builds each provider's request (`core.live.request.build_request`). A provider whose key is missing, whose
    request cannot be built, or that would send its key over plain http:// to a non-loopback host gets a run
    that is already finished (status "error", `error["type"]` `ErrorType.MISSING_KEY` / `BAD_REQUEST` /
    `INSECURE_TRANSPORT`) and is never sent; the others are unaffected.

`ProviderRun` - one provider's exchange and its capture:
    provider          `core.live.config.ProviderConfig` (`.name`, `.format`)
    spec              the `PromptSpec` (or None for imported captures that had none)
    request           `core.live.request.HttpRequest`, redacted (no key in headers, URL or body)
    status            "pending" | "connecting" | "streaming" | "done" | "error" | "cancelled" | "stalled"
    http_status       int | None; `http_version`, `reason_phrase`
    response_headers  list of (name, value) pairs as received (secret values redacted)
    chunks            list of (t_ns, bytes): every received chunk, t_ns = monotonic ns since the request was sent
    decoder           `StreamDecoder`: `.reply` (the snapshot), `.items` (SSE frames and comments), `.result()`
    events            `EventLog`, a sequence of (t_ns, Event): every normalized event with the arrival time of
                      its chunk (`.events` the events alone, `.times` their times: no pair object is stored)
    frame_times       list of int: frame_times[n] = arrival time (ns) of SSE frame n
    error             None | {"type", "message", "raw"}: what ended the exchange outside the stream (its type
                      a `core.live.errors.ErrorType`: http_error, connection_dropped, stalled, client_cancelled
                      (a tap's client hung up), ...), else the in-band stream error (its type the provider's own)
    transport_error   the part of `error` that came from outside the body (what a capture records)
    metrics           `Metrics` (times in ns from send; see the class)
    timing            how much timing the recording held (`TIMINGS`): "recorded" for a live run; a run opened
                      from a recording that held less (a VCR cassette, a raw .sse, a browser's HAR) has the times
                      it did not hold as None in `metrics` once finished (`set_timing`)
    started_at        wall-clock epoch seconds when the request was sent
    t0_ns             0: the origin of every t_ns; `clock()` gives "now" in that clock
    notes             request adaptations and capture notes (strings, never secrets)
    history_findings  what the history check (`core.wire.history`) found in the request before sending; a
                      request the API would reject is not sent (error type "history_rejected")
    on_update         Callable[[ProviderRun], None] | None, and `listeners` (a list of the same): called after
                      every received chunk is processed and on every status change (batch repaints yourself)
    result()          the `decode` JSON object plus "provider" and "http_status" (`replay --headless` shape)
    finished          True once the status is final (done, error, cancelled, stalled)

`rebuild_run(provider, ...)` reconstructs a run from captured parts synchronously (used by `core.live.capture`).
`run.quiet_ns()` / `run.quiet_content_ns()`: ns since the last byte / the last content delta while streaming
(a pane can show "quiet for 12 s (keepalives only)" before the read timeout ends the run as stalled).

Secrets: the key is used only for sending. `request`, `response_headers`, `chunks` (a key echoed by the
server is masked with `*` of the same length, and the run re-decoded), `error` and `notes` never hold it.
"""
from __future__ import annotations

import contextvars
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from core.wire import events as ev
from core.live.config import (ProviderConfig, keyring_hint, redact_headers, redact_json, redact_text, resolve_extras,
                              resolve_key)
from core.live.errors import ErrorType, error_dict, provider_error, size_text
from core.wire.formats import asks_for_stream
from core.wire.history import HistoryRules, check_request, first_error
from core.wire.jsonfast import bounded, loads as parse_json
from core.wire.pipeline import MAX_WHOLE_BODY, StreamDecoder
from core.wire.scrub import mask_secrets, mask_text, may_hold_secret, overlap, secret_list
from core.live.proxy import proxy_note
from core.live.request import HttpRequest, PromptSpec, build_request, insecure_transport
from core.live.summary import plural

STATUSES = ("pending", "connecting", "streaming", "done", "error", "cancelled", "stalled")
FINAL_STATUSES = ("done", "error", "cancelled", "stalled")
#: tokens per second are measured once content has streamed for this long: content that came in one burst (a
#: fast local server, a replay's cut chunks) gave 87,000 "tokens per second" and made every mean and p95 of them
MIN_RATE_SPAN_NS = 100_000_000
#: the note on a run whose 2xx body was one whole JSON reply (see `_finish`)
WHOLE_REPLY_NOTE = ("a whole JSON reply, not a stream: read as the stream of the same reply would be (its "
                    "events are all of the one frame, the body)")
MAX_ERROR_BODY = 1 << 20   # a non-stream body is read up to 1 MiB
_CONTENT_EVENTS = (ev.TextDelta, ev.ThinkingDelta, ev.ToolArgsDelta, ev.RefusalDelta)
CHARS_PER_TOKEN = 4        # the estimate of output tokens from the characters received, until the usage says
#: How much timing a run's recording held (`ProviderRun.timing`; the one place these names are defined):
#: every chunk's arrival time (a live run, the native capture, StreamScope's own HAR, a HAR whose frames carry
#: their times); only the time to the response headers and the total (a browser's HAR: `timings.wait` and
#: `.receive`, no per-chunk time, so no TTFT, gaps or rate); or no time at all (a VCR cassette, a raw `.sse`).
TIMING_RECORDED = "recorded"
TIMING_TOTAL_ONLY = "total-only"
TIMING_NONE = "none"
TIMINGS = (TIMING_RECORDED, TIMING_TOTAL_ONLY, TIMING_NONE)
TIMING_NOT_RECORDED = "timing not recorded"    # what a pane, a report or a printed line says for TIMING_NONE


@dataclass
class Metrics:
    """Times are ns from send; None until known."""

    t_headers_ns: int | None = None          # time to response headers
    t_first_byte_ns: int | None = None
    t_first_content_ns: int | None = None    # first non-empty text / thinking / tool-argument / refusal delta
    t_last_content_ns: int | None = None
    t_last_byte_ns: int | None = None
    t_total_ns: int | None = None            # when the exchange ended
    frames: int = 0
    bytes: int = 0
    chunks: int = 0
    keepalives: int = 0                      # SSE comment lines and the adapters' Keepalive events (pings)
    empty_frames: int = 0                    # frames that produced no normalized event at all
    max_gap_ns: int | None = None            # largest gap between two consecutive frames
    max_gap_after_frame: int | None = None   # the frame after which that gap began
    output_chars: int = 0                    # characters of text, thinking, tool arguments, refusals
    output_tokens: int | None = None         # exact: the final usage's output tokens (`output_tokens_now`)
    output_tokens_estimated: int = 0         # estimated while streaming (characters / 4)
    tokens_per_s: float | None = None        # output tokens / (last content - first content)
    tokens_per_s_exact: bool = False         # True when computed from the final usage

    def to_json(self) -> dict:
        ms = lambda v: None if v is None else round(v / 1e6, 3)  # noqa: E731
        return {"time_to_headers_ms": ms(self.t_headers_ns), "time_to_first_byte_ms": ms(self.t_first_byte_ns),
                "time_to_first_content_ms": ms(self.t_first_content_ns),
                "time_to_last_content_ms": ms(self.t_last_content_ns), "total_ms": ms(self.t_total_ns),
                "frames": self.frames, "bytes": self.bytes, "chunks": self.chunks, "keepalives": self.keepalives,
                "empty_frames": self.empty_frames,
                "max_gap_between_frames_ms": ms(self.max_gap_ns), "max_gap_after_frame": self.max_gap_after_frame,
                "output_chars": self.output_chars, "output_tokens": self.output_tokens,
                "output_tokens_estimated": self.output_tokens_estimated,
                "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 2),
                "tokens_per_s_exact": self.tokens_per_s_exact}


class EventLog(Sequence):
    """`ProviderRun.events`: read as a list of (t_ns, Event) pairs; stored as the events (`.events`, a list) and
    their arrival times (`.times`, an array of int64), so a firehose costs no pair and no int object per event."""

    __slots__ = ("events", "times")

    def __init__(self, pairs: Iterable[tuple[int, ev.Event]] = ()) -> None:
        self.events: list[ev.Event] = []
        self.times = array("q")
        for t, e in pairs:
            self.append((t, e))

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(zip(self.times[i], self.events[i]))
        return self.times[i], self.events[i]

    def __iter__(self):
        return zip(self.times, self.events)

    def __eq__(self, other) -> bool:
        if isinstance(other, EventLog):
            return self.times == other.times and self.events == other.events
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventLog({list(self)!r})"

    def append(self, pair: tuple[int, ev.Event]) -> None:
        t, e = pair
        self.times.append(t)
        self.events.append(e)

    def extend_at(self, t: int, events: Sequence[ev.Event]) -> None:
        """Append `events`, all arrived at `t`."""
        self.events += events
        self.times.extend([t] * len(events))


def _mask_json(obj: Any, secrets: Sequence[str]) -> Any:
    """Every secret in every string of a JSON value overwritten with `*` (same length)."""
    if isinstance(obj, str):
        return mask_text(obj, secrets)[0]
    if isinstance(obj, dict):
        return {k: _mask_json(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_mask_json(v, secrets) for v in obj]
    return obj


def _parse_body(data: bytes) -> Any:
    text = data.decode("utf-8", "replace")
    s = text.strip()
    if not s:
        return None
    try:   # a peer's body: bounded, so redaction and display never recurse past the interpreter's limit
        return bounded(parse_json(s))
    except ValueError:
        return text if len(text) <= 4000 else text[:4000] + "..."


class ProviderRun:
    """One provider's exchange and its capture (see the module docstring)."""

    @property
    def _secrets(self) -> tuple[str, ...]:
        """The keys masked wherever the run shows or keeps what it received (those long enough to be keys:
        `core.wire.scrub.secret_list`; a placeholder such as `x` would mask every `x`), longest first."""
        return self._secret_strings

    @_secrets.setter
    def _secrets(self, secrets) -> None:
        self._secret_strings = tuple(secret_list(secrets))

    def __init__(self, provider: ProviderConfig, request: HttpRequest | None = None,
                 spec: PromptSpec | None = None) -> None:
        self.provider = provider
        self.spec = spec
        self.request = request
        self.status = "pending"
        self.http_status: int | None = None
        self.http_version: str | None = None
        self.reason_phrase: str | None = None
        self.response_headers: list[tuple[str, str]] = []
        self.chunks: list[tuple[int, bytes]] = []
        self.decoder = StreamDecoder(provider.format)
        self.events = EventLog()
        self.frame_times: list[int] = []
        self.error: dict | None = None
        self.transport_error: dict | None = None
        self.metrics = Metrics()
        self.timing = TIMING_RECORDED     # how much timing the recording held (TIMINGS; `set_timing`)
        self.started_at: float | None = None
        self.t0_ns = 0
        self.sent = False                 # the request went out (False: refused before sending)
        self.observed = False             # a tap's exchange: the client's own request, StreamScope only watched it
        self.body_kind: str | None = None  # "event-stream" | "json" | "error-body" | "other"
        self.notes: list[str] = list(request.notes) if request is not None else []
        self.listeners: list[Callable[[ProviderRun], None]] = []
        self.on_update: Callable[[ProviderRun], None] | None = None
        self._send: HttpRequest | None = None     # the request with the key: used to send, never stored
        self._secrets: tuple[str, ...] = ()
        self._body_may_hold_secret = False   # a chunk held a secret or a \\u escape (`_scan_for_secrets`)
        self._scan_tail = b""
        self._clock_origin: int | None = None     # monotonic ns at t=0
        self._clock_speed = 1.0
        self._comments_seen = 0
        self._feeding = True
        self._notify_enabled = True

    def __repr__(self) -> str:
        return f"<ProviderRun {self.provider.name} {self.status} http={self.http_status} bytes={self.metrics.bytes}>"

    # -- read-only views ---------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.provider.name

    @property
    def format(self) -> str:
        return self.provider.format

    @property
    def reply(self):
        return self.decoder.reply

    @property
    def items(self):
        return self.decoder.items

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def ok(self) -> bool:
        return self.status == "done" and self.error is None

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    @property
    def asked_for_stream(self) -> bool:
        """Whether the request asked for an event stream (True when there is no request to tell)."""
        r = self.request
        return r is None or asks_for_stream(urlsplit(r.url).path, r.body)

    def set_format(self, format_name: str) -> None:
        """Decode as `format_name` from now on; only before the first chunk (a tap that cannot tell a stream's
        format from its path holds the first chunks back until their frames tell it)."""
        if self.chunks:
            raise ValueError("a run's format can change only before its first chunk")
        self.provider = replace(self.provider, format=format_name)
        self.decoder = StreamDecoder(format_name)

    def clock(self) -> int:
        """Now, in ns since the request was sent (the clock of `chunks` and `events`)."""
        if self._clock_origin is None:
            return 0
        if self.finished and self.metrics.t_total_ns is not None:
            return self.metrics.t_total_ns
        if self.finished and self.timing != TIMING_RECORDED:
            return 0     # (no end time recorded: the clock of a run whose chunks all carry t=0)
        return int((time.monotonic_ns() - self._clock_origin) * self._clock_speed)

    def quiet_ns(self) -> int | None:
        """How long since the last byte arrived (or since sending, before any byte); None when not streaming."""
        if self.status not in ("connecting", "streaming"):
            return None
        last = self.metrics.t_last_byte_ns or 0
        return max(0, self.clock() - last)

    def quiet_content_ns(self) -> int | None:
        """How long since the last content delta (keepalives do not count); None when not streaming."""
        if self.status not in ("connecting", "streaming"):
            return None
        last = self.metrics.t_last_content_ns or 0
        return max(0, self.clock() - last)

    @property
    def timing_recorded(self) -> bool:
        """Whether the run's recording held every chunk's arrival time (a live run, the native capture)."""
        return self.timing == TIMING_RECORDED

    def set_timing(self, timing: str) -> None:
        """Say how much timing the recording held (`TIMINGS`); on a finished run, the times it did not hold
        become None in `metrics` at once (else when it finishes)."""
        if timing not in TIMINGS:
            raise ValueError(f"unknown timing {timing!r} (expected one of: {', '.join(TIMINGS)})")
        self.timing = timing
        if self.finished:
            self._forget_unrecorded_times()

    def _forget_unrecorded_times(self) -> None:
        """The times a recording did not hold, as None rather than the 0 (or the total) its chunks were put
        at: per-chunk times, so TTFT, the last token, the gaps and the rate, unless TIMING_RECORDED; the time to
        the headers and the total too for TIMING_NONE."""
        if self.timing == TIMING_RECORDED:
            return
        m = self.metrics
        m.t_first_byte_ns = m.t_first_content_ns = m.t_last_content_ns = m.t_last_byte_ns = None
        m.max_gap_ns = m.max_gap_after_frame = None
        m.tokens_per_s = None
        m.tokens_per_s_exact = False
        if self.timing == TIMING_NONE:
            m.t_headers_ns = m.t_total_ns = None

    def result(self) -> dict:
        """The `decode` JSON object with "provider" and "http_status"; "error" includes what ended the exchange."""
        r = self.decoder.result()
        out = {"provider": self.provider.name, "http_status": self.http_status}
        out.update(r)
        if self.transport_error is not None or self._derived_error is not None:
            out["error"] = self.error
        if self._secrets:   # a key the server echoed across several events is whole only once decoded
            out = _mask_json(out, self._secrets)
        return out

    _derived_error: dict | None = None
    history_findings: tuple = ()   # what the history check found in the request (core.wire.history.Finding)

    # -- notification ----------------------------------------------------------------------------------------
    def _notify(self) -> None:
        if not self._notify_enabled:
            return
        cb = self.on_update
        if cb is not None:
            cb(self)
        for fn in list(self.listeners):
            fn(self)

    def _set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self._notify()

    # -- the recorder: live streaming, replay and import all go through these -------------------------------
    def _begin(self, started_at: float | None, sent: bool = True) -> None:
        self.started_at = started_at
        self.sent = sent
        self._clock_origin = time.monotonic_ns()
        self._set_status("connecting")

    def _on_headers(self, t: int, status: int, version: str | None, reason: str | None,
                    headers: Sequence[tuple[str, str]]) -> None:
        self.metrics.t_headers_ns = t
        self.http_status = status
        self.http_version = version
        self.reason_phrase = reason
        self.response_headers = [(k, v) for k, v in redact_headers(list(headers), self._secrets)]
        ctype = ""
        for k, v in self.response_headers:
            if k.lower() == "content-type":
                ctype = v.lower()
        if not 200 <= status < 300:
            self.body_kind = "error-body"
            self._feeding = False
        elif "text/event-stream" in ctype:
            self.body_kind = "event-stream"
        elif "json" in ctype:
            self.body_kind = "json"
            self._feeding = False
        else:
            self.body_kind = "other"   # no or odd content type: decoded as a stream anyway, judged at the end
        if self._feeding:
            self.status = "streaming"
        self._notify()

    def _on_chunk(self, t: int, data: bytes) -> None:
        if not data:
            return
        m = self.metrics
        self.chunks.append((t, data))
        m.chunks += 1
        m.bytes += len(data)
        if m.t_first_byte_ns is None:
            m.t_first_byte_ns = t
        m.t_last_byte_ns = t
        if self._secrets and not self._body_may_hold_secret:
            self._scan_for_secrets(data)
        if self._feeding:
            self._record(t, self.decoder.feed(data))
        self._notify()

    def _scan_for_secrets(self, data: bytes) -> None:
        """Could the body hold a secret, plain or JSON-escaped (`core.wire.scrub.may_hold_secret`)? Looked for chunk
        by chunk (with the end of the last one, for what straddles two), so that a run's end skips the scrub when
        nothing could: done there, over a 7 MB body, the same look held the window's thread 15 ms per run."""
        probe = self._scan_tail + data
        if may_hold_secret(probe, self._secrets):
            self._body_may_hold_secret = True
            self._scan_tail = b""
            return
        self._scan_tail = probe[-overlap(self._secrets):]

    def _record(self, t: int, produced: list) -> None:
        m = self.metrics
        dec = self.decoder
        n_frames = dec.frames
        ft = self.frame_times
        first_new = len(ft)
        while len(ft) < n_frames:
            if ft:
                gap = t - ft[-1]
                if m.max_gap_ns is None or gap > m.max_gap_ns:
                    m.max_gap_ns = gap
                    m.max_gap_after_frame = len(ft) - 1
            ft.append(t)
        m.frames = n_frames
        m.keepalives += dec.comments - self._comments_seen   # (comment lines, kept as items or only counted)
        self._comments_seen = dec.comments
        if n_frames > first_new:
            # frames that produced no event (e.g. Responses' content_part.added): shown in the metrics, but not
            # called keepalives; each adapter says itself what a keepalive is (ev.Keepalive)
            busy = {e.frame for e in produced}
            m.empty_frames += sum(1 for f in range(first_new, n_frames) if f not in busy)
        if not produced:
            return
        self.events.extend_at(t, produced)
        chars = 0
        for e in produced:
            te = type(e)
            if te in _CONTENT_EVENTS:
                n = len(e.fragment) if te is ev.ToolArgsDelta else len(e.text)
                if n:
                    chars += n
                    if m.t_first_content_ns is None:
                        m.t_first_content_ns = t
                    m.t_last_content_ns = t
            elif te is ev.ToolArgsReplaced:
                if m.t_first_content_ns is None:
                    m.t_first_content_ns = t
                m.t_last_content_ns = t
            elif te is ev.Keepalive:
                m.keepalives += 1
            elif te is ev.InBandError and self.error is None:
                self.error = error_dict(e.type, e.message, e.raw)
        if chars:
            m.output_chars += chars
            m.output_tokens_estimated = (m.output_chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
            self._rate(m.output_tokens_estimated, exact=False)

    def _rate(self, tokens: int | None, exact: bool) -> None:
        m = self.metrics
        if tokens is None or m.t_first_content_ns is None or m.t_last_content_ns is None:
            return
        span = m.t_last_content_ns - m.t_first_content_ns
        if span > 0 and span >= MIN_RATE_SPAN_NS:
            m.tokens_per_s = tokens / (span / 1e9)
            m.tokens_per_s_exact = exact
        else:           # a burst: no rate (the pane, Compare, Repeat's statistics and every export agree)
            m.tokens_per_s = None
            m.tokens_per_s_exact = False

    def _finish(self, t: int, transport_error: dict | None) -> None:
        """End of the exchange: flush the decoder, decide the error and the final status."""
        if self.finished:
            return
        m = self.metrics
        m.t_total_ns = t
        if self._feeding and (self.http_status is not None or self.chunks):
            # the end of a body: what it left open or missing (its end marker) is said; a request never
            # answered (not sent, refused, no connection) had no stream to end, so nothing is
            self._record(t, self.decoder.end())
        elif (self.body_kind == "json" and transport_error is None and self.chunks
              and not self.decoder.bytes_received):
            # a whole JSON reply (a tap's client that did not stream, Gemini's generateContent): read as the
            # stream of the same reply would be, so its blocks, usage and finish show as a stream's do
            body = self.body
            produced = self.decoder.whole(body)
            if produced:
                self._note(WHOLE_REPLY_NOTE)
            elif len(body) > MAX_WHOLE_BODY:
                self._note(f"a JSON body of {len(body):,} bytes: too large to be read as a whole reply "
                           f"(at most {size_text(MAX_WHOLE_BODY)}); the Request tab shows its start")
            self._record(t, produced)
        self.transport_error = transport_error
        derived = None
        body = self.body
        if self.http_status is not None and not 200 <= self.http_status < 300:
            parsed = _parse_body(body)
            msg = provider_error(parsed)[1]
            text = f"HTTP {self.http_status}" + (f" {self.reason_phrase}" if self.reason_phrase else "")
            if msg:
                text += f": {msg}"
            if transport_error is not None and transport_error.get("type") not in (ErrorType.CANCELLED,
                                                                                   ErrorType.CLIENT_CANCELLED):
                text += f" (then {transport_error['type']} while reading the error body)"
            derived = error_dict(ErrorType.HTTP_ERROR, redact_text(text, self._secrets),
                                 redact_json(parsed, self._secrets))
        elif self.http_status is not None and transport_error is None:
            derived = self._judge_body(body)
        self._derived_error = derived
        if derived is not None and derived["type"] == ErrorType.HTTP_ERROR:
            error = derived
        elif transport_error is not None:
            error = transport_error
        elif derived is not None:
            error = derived
        else:
            r = self.decoder.reply
            error = None if r.error is None else error_dict(r.error.type, r.error.message, r.error.raw)
        self.error = error
        tokens, estimated = output_tokens_now(self)
        if not estimated:
            m.output_tokens = tokens
            self._rate(tokens, exact=True)
        ttype = None if transport_error is None else transport_error.get("type")
        if ttype in (ErrorType.CANCELLED, ErrorType.CLIENT_CANCELLED):
            status = "cancelled"
        elif ttype == ErrorType.STALLED:
            status = "stalled"
        elif error is not None:
            status = "error"
        else:
            status = "done"
        self.status = status
        self._forget_unrecorded_times()
        self._notify()

    def _note(self, text: str) -> None:
        """Add a note the recorder makes itself, once (a rebuilt run starts from the notes its capture kept)."""
        if text not in self.notes:
            self.notes.append(text)

    def _judge_body(self, body: bytes) -> dict | None:
        """A 2xx body that is not (entirely) an event stream: a JSON body, or bytes outside any SSE event."""
        if not body or body.isspace():   # (isspace stops at the first other byte; strip copies it all)
            return None
        if not self._feeding:   # application/json and the like: never fed to the SSE decoder
            if not self.asked_for_stream:
                return None     # a JSON reply to a request that asked for none (a tap sees these too)
            parsed = _parse_body(body)
            msg = provider_error(parsed)[1]
            return error_dict(ErrorType.NOT_EVENT_STREAM,
                              redact_text(f"HTTP {self.http_status} with a body that is not an event stream"
                                          + (f": {msg}" if msg else ""), self._secrets),
                              redact_json(parsed, self._secrets))
        if not self.decoder.may_hold_bytes_outside_items:
            return None
        outside = self.decoder.bytes_outside_items(body)
        if not outside or outside.isspace():
            return None
        parsed = _parse_body(outside)
        msg = provider_error(parsed)[1]
        frames = self.decoder.frames
        if frames == 0:
            kind, what = ErrorType.NOT_EVENT_STREAM, "a body that is not an event stream"
        elif isinstance(parsed, (dict, list)):
            kind, what = ErrorType.UNFRAMED_ERROR, "JSON outside any SSE event (an unframed error)"
        else:
            self._note(f"{len(outside)} bytes arrived outside any SSE event")
            return None
        return error_dict(kind, redact_text(f"HTTP {self.http_status} with {what}" + (f": {msg}" if msg else ""),
                                            self._secrets), redact_json(parsed, self._secrets))

    def _scrub(self) -> None:
        """Mask any secret the server echoed in the body, plain, JSON-escaped or split across events (same
        length, so offsets hold: `core.wire.scrub`), then re-decode."""
        if not self._secrets or not self.chunks:
            return
        # (what the deltas joined to, block by block, tells whether a secret may be split across them)
        texts = ["".join(b.parts) for b in self.decoder.reply.ordered_blocks()]
        if not self._body_may_hold_secret and not any(x in t for t in texts if t for x in self._secrets if x):
            return      # no chunk held one, plain or escaped, and no two deltas join into one
        body = self.body
        masked, count = mask_secrets(self.format, body, self._secrets, decoded_texts=texts)
        if not count:
            return
        out, pos = [], 0
        for t, c in self.chunks:
            out.append((t, masked[pos:pos + len(c)]))
            pos += len(c)
        fresh = rebuild_run(self.provider, request=self.request, spec=self.spec, started_at=self.started_at,
                            sent=self.sent, headers=self._headers_tuple(), chunks=out,
                            end_ns=self.metrics.t_total_ns or 0, transport_error=self.transport_error,
                            timing=self.timing)
        for name in ("chunks", "decoder", "events", "frame_times", "error", "metrics", "status", "body_kind",
                     "_derived_error", "_comments_seen", "_feeding"):
            setattr(self, name, getattr(fresh, name))
        what = ("a secret (the API key or a header / query value read from the environment)"
                if self.provider.env_refs() else "the API key")
        self.notes.append(f"{what} appeared {plural(count, 'time')} in the response body (plain, escaped or split "
                          f"across events) and was masked with '*'")

    def scrub_secrets(self, secrets: Sequence[str]) -> None:
        """Mask these secrets in an imported run (a capture written before this masking existed, or by another
        tool): its chunks, decoded values and everything derived from them."""
        secrets = tuple(secret_list(secrets))
        if not secrets:
            return
        self._secrets = self._secrets + secrets
        self._body_may_hold_secret = True   # (its chunks were read before these secrets were known)
        self._scrub()

    def _headers_tuple(self):
        if self.http_status is None:
            return None
        return (self.metrics.t_headers_ns or 0, self.http_status, self.http_version, self.reason_phrase,
                list(self.response_headers))


def output_tokens_now(run: "ProviderRun") -> tuple[int | None, bool]:
    """(output tokens, estimated) as a view shows them now, by one rule for every format: the provider's own
    count once its format reports one that counts the output (`core.wire.events.OUTPUT_COUNTED`: Anthropic's
    up-front figure does not), else the estimate from the characters received (4 per token, never more than the
    request's max tokens), None before any."""
    reply = run.decoder.reply
    u = reply.usage
    if u is not None and u.output_tokens is not None and reply.usage_reporting in ev.OUTPUT_COUNTED:
        return u.output_tokens, False
    estimate = run.metrics.output_tokens_estimated or None
    cap = getattr(run.spec, "max_tokens", None)
    if estimate and isinstance(cap, int) and cap > 0:
        estimate = min(estimate, cap)    # (4 characters a token overshoots a reply the provider cut at its limit)
    return estimate, True


# -- building runs -----------------------------------------------------------------------------------------------
def _refused(run: ProviderRun, typ: ErrorType, message: str) -> ProviderRun:
    run._notify_enabled = False
    run._begin(time.time(), sent=False)
    run._finish(0, error_dict(typ, message))
    run._notify_enabled = True
    return run


def _unsendable_header_values(provider: ProviderConfig, key: str | None, env_values: dict) -> str | None:
    """The environment variable whose value (the key, or a `{ env = "NAME" }` header) a header cannot carry: only
    visible ASCII and inner spaces go in one; None when every one can."""
    def bad(v: str) -> bool:
        return any(not (" " <= c <= "~") for c in v) or v != v.strip()

    if key and bad(key):
        return provider.api_key_env or "the API key"
    for kind, name, ref in provider.env_refs():
        v = env_values.get((kind, name))
        if kind == "headers" and v is not None and bad(v):
            return ref.name
    return None


def prepare_run(provider: ProviderConfig, spec: PromptSpec, *,
                key_resolver: Callable[[ProviderConfig], str | None] = resolve_key) -> ProviderRun:
    key = key_resolver(provider)
    env_values, env_missing = resolve_extras(provider)   # `{ env = "NAME" }` header / query values: secrets too
    secrets = tuple(dict.fromkeys(([key] if key else []) + list(env_values.values())))
    if (provider.api_key_env and not key) or env_missing:
        try:   # the request is still shown (without the missing values), just not sent
            shown = build_request(provider, spec, None, env_values).redacted(secrets)
        except ValueError:
            shown = None
        run = ProviderRun(provider, shown, spec)
        if provider.api_key_env and not key:
            why = f"no API key: set the environment variable {provider.api_key_env}{keyring_hint('it')}; not sent"
        else:
            names = ", ".join(env_missing)
            why = (f"not sent: the providers file reads a header or query value from {names}, which is not set "
                   f"(set the environment variable{keyring_hint('the value')})")
        return _refused(run, ErrorType.MISSING_KEY, why)
    unsendable = _unsendable_header_values(provider, key, env_values)
    if unsendable:
        # (httpx would fail with the value quoted in its message, escaped where no redaction finds it)
        run = ProviderRun(provider, None, spec)
        return _refused(run, ErrorType.BAD_REQUEST,
                        f"not sent: the value of {unsendable} holds a character an HTTP header cannot carry (a line "
                        f"end, a control character or a non-ASCII letter: pasted with the line's end?)")
    try:
        req = build_request(provider, spec, key, env_values)
    except ValueError as exc:
        return _refused(ProviderRun(provider, None, spec), ErrorType.BAD_REQUEST, redact_text(str(exc), secrets))
    run = ProviderRun(provider, req.redacted(secrets), spec)
    run._send = req
    run._secrets = secrets
    how = proxy_note(req.url)
    if how:
        run.notes.append(how)
    why = insecure_transport(provider, req.url, key)
    if why:
        run._send = None
        return _refused(run, ErrorType.INSECURE_TRANSPORT, why)
    run.history_findings = tuple(check_request(provider.format, req.body, HistoryRules(model=provider.model)))
    run.notes += [f"history {f.severity} at {f.path}: {f.message}" for f in run.history_findings]
    blocking = first_error(list(run.history_findings))
    if blocking is not None:   # the API would answer 400: not sent, and the reason is the API's own words
        run._send = None
        return _refused(run, ErrorType.HISTORY_REJECTED, f"not sent: {provider.format} would reject this conversation "
                                                 f"({blocking.code} at {blocking.path}): {blocking.message}")
    return run


def prepare_runs(providers: Iterable[ProviderConfig], spec: PromptSpec, *,
                 key_resolver: Callable[[ProviderConfig], str | None] = resolve_key) -> list[ProviderRun]:
    return [prepare_run(p, spec, key_resolver=key_resolver) for p in providers]


# Called before each chunk `rebuild_run` feeds (and each record `core.live.capture.parse_jsonl` reads), when set
# for this thread's context: a window reading a big recording off its own thread sets one that waits while the
# window's thread handles events, as the decode worker waits at its gate (`core.live.decode_worker`), so that the
# two do not take turns at the GIL on every Python call the window's painting makes.
REBUILD_PAUSE: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("rebuild_pause",
                                                                                           default=None)


def rebuild_run(provider: ProviderConfig, *, request: HttpRequest | None = None, spec: PromptSpec | None = None,
                started_at: float | None = None, sent: bool = True, headers=None,
                chunks: Sequence[tuple[int, bytes]] = (), end_ns: int = 0,
                transport_error: dict | None = None, notes: Sequence[str] | None = None,
                timing: str = TIMING_RECORDED) -> ProviderRun:
    """A run reconstructed from captured parts, through the same recorder as a live run (no callbacks).

    headers: None (no response came) or (t_ns, status, http_version, reason, [(name, value), ...]).
    timing: how much timing the parts hold (`TIMINGS`): the times they do not hold end as None."""
    run = ProviderRun(provider, request, spec)
    run.set_timing(timing)
    if notes is not None:
        run.notes = list(notes)
    run._notify_enabled = False
    run._begin(started_at, sent=sent)
    if headers is not None:
        run._on_headers(*headers)
    pause = REBUILD_PAUSE.get()
    for t, data in chunks:
        if pause is not None:
            pause()
        run._on_chunk(t, data)
    run._finish(end_ns, transport_error)
    run._notify_enabled = True
    return run
