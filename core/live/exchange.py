"""One HTTP exchange that StreamScope did not send itself, recorded as a `ProviderRun` (sans-IO).

A tap sees its client's requests go by; an importer reads exchanges another tool recorded (a browser's HAR, a
VCR cassette, a raw `.sse` body). Both feed an `Exchange` through the recorder's three calls (headers, chunk,
finish), so a tapped or imported exchange is decoded, timed, exported and replayed like a run StreamScope sent.

    ex = Exchange("emulator#1", "POST", url, headers, body, path="/v1/messages")
    ex.begin(time.time(), time.monotonic_ns())
    ex.on_headers(t_ns, 200, "HTTP/1.1", "OK", response_headers)
    ex.on_chunk(t_ns, raw_bytes)        # as received: content-encoding is undone here, for this copy only
    ex.finish(t_ns, None)               # or a transport error {"type", "message", "raw"}
    ex.run                              # the ProviderRun (redacted request, chunks, decoder, result())

The wire format: the one given (`format=`: a user's override, or a capture that says), else the path's
(`core.wire.formats.format_for_path`), else the stream's own frames: the first chunks of an event stream are
held back (at most 64 KiB) until a frame tells the format, then fed in order with their own arrival times.
When nothing tells it, `fallback_format` (a tap's upstream may have one), else `openai-chat`, the format most
servers imitate; `format_source` says which of these it was ("given", "path", "frames" or "none"). A whole JSON
reply (not streamed) that nothing else tells is told by its shape (`core.wire.whole.whole_format`: "shape").

The capture is bounded: it keeps at most `max_body` bytes of the response body (`MAX_STREAM_BODY`, 256 MiB, of the
decoded body when it is encoded), so a stream that never ends costs a tap a bounded memory. Past the bound the
chunks are only counted (a tap forwards them to its client untouched all the same); a note says where the capture
stopped and, once the exchange ends, how many bytes came after; the exchange otherwise ends as it would. A tap
whose recording falls too far behind its forwarding stops a capture the same way, wherever it is
(`stop_capture(why)`, then `count_not_kept(n)` for the bytes it forwarded without handing them over).

Secrets: the client's own keys (`core.live.config.request_secrets`: `Authorization`, `x-api-key`,
`x-goog-api-key`, `?key=`, ...) and the credentials in the URL's userinfo part (`https://user:PASSWORD@host`)
are redacted from the stored request and the provider's base URL, and masked wherever the response echoes them,
as for a run StreamScope sent.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from core.live.config import ProviderConfig, redact_headers, redact_json, redact_url, request_secrets
from core.live.content_coding import ContentDecoder, decoder_for
from core.live.errors import MAX_STREAM_BODY, size_text
from core.live.recorder import ProviderRun
from core.live.request import HttpRequest
from core.wire.formats import FormatProbe, format_for_path, model_from_request
from core.wire.history import HistoryRules, check_request
from core.wire.jsonfast import MAX_DEPTH, bounded
from core.wire.jsonfast import loads as parse_json
from core.wire.pipeline import StreamDecoder
from core.wire.sse import SSEDecoder
from core.wire.whole import whole_format

DEFAULT_FORMAT = "openai-chat"
HOLD_BYTES = 65536        # an event stream whose path names no format is held back at most this long


def _json_body(body: bytes):
    if not body.strip():
        return None
    try:
        return parse_json(body)    # (the wire's parser: no lone surrogate reaches the capture's writers)
    except (ValueError, RecursionError):
        return None


def recorded_request(method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes,
                     secrets: Sequence[str]) -> HttpRequest:
    """The request as a capture stores it: secret headers, key-like query values and the keys redacted; a body
    that is not JSON is left out (a note says so)."""
    parsed = _json_body(body)
    notes = []
    if parsed is None and body.strip():
        notes.append(f"the request body ({len(body)} bytes) is not JSON and is not stored")
    kept = bounded(parsed)   # (redacting and every writer recurse per level: a client's body can nest 1000 deep)
    if kept is not parsed:
        notes.append(f"the request body nests deeper than {MAX_DEPTH} levels: the capture keeps it cut there")
    parsed = kept
    return HttpRequest(method, redact_url(url, secrets), dict(redact_headers(list(headers), secrets)),
                       redact_json({} if parsed is None else parsed, secrets), notes)


def userinfo_secrets(url: str) -> list[str]:
    """The credentials in a URL's userinfo part (`https://user:PASSWORD@host`, `https://TOKEN@host`), as secrets
    to mask wherever they show (a password of fewer than 6 characters is only redacted from the URL: masking
    it everywhere would hide common words)."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    out = [password] if password and len(password) >= 6 else []
    if user and not password and len(user) >= 6:
        out.append(user)
    return out


class Exchange:
    """One exchange, recorded as it happens (see the module docstring)."""

    def __init__(self, name: str, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes, *,
                 path: str | None = None, format: str | None = None, fallback_format: str | None = None,
                 provider: ProviderConfig | None = None, max_body: int | None = -1) -> None:
        """`provider`: the run's provider as a recording names it (its name and format are then used).
        `max_body`: the most of the response body the capture keeps (left out: `MAX_STREAM_BODY`, as it is when
        the exchange is made; None: no bound)."""
        if provider is not None:
            name, format = provider.name, provider.format
        self.name = name
        self.method = method
        self.secrets = tuple(dict.fromkeys([*request_secrets(headers, url), *userinfo_secrets(url)]))
        self.url = redact_url(url, self.secrets)
        target_path = urlsplit(url).path
        self.path = redact_url(path if path is not None else target_path, self.secrets)   # as the client sent it
        request = recorded_request(method, url, headers, body, self.secrets)
        fmt = format or format_for_path(target_path) or (path and format_for_path(path))
        self.format_source = "given" if format else ("path" if fmt else "none")
        self._fallback = fallback_format or DEFAULT_FORMAT
        if provider is None:
            parts = urlsplit(url)
            provider = ProviderConfig(name=name, format=fmt or self._fallback,
                                      base_url=redact_url(f"{parts.scheme}://{parts.netloc}", self.secrets),
                                      model=model_from_request(target_path, request.body))
        self.run = ProviderRun(provider, request)
        self.run.observed = True      # (the client sent it: what to do about an error is the client's to do)
        self.run._secrets = self.secrets
        self._request_json = _json_body(body) if method.upper() == "POST" else None
        self._content: ContentDecoder | None = None
        self._coding_note: str | None = None    # what the run's notes say of the body's content-encoding
        self.max_body = MAX_STREAM_BODY if max_body == -1 else max_body
        self.kept = 0                 # body bytes the capture holds (decoded)
        self.not_kept: int | None = None   # once the capture is full: the bytes after it, counted only
        self._full_note = -1          # (where in run.notes the note saying so is)
        self._cut_decoded = False
        self._stopped_why: str | None = None    # why the capture stopped before `max_body` (`stop_capture`)
        # held back until the frames tell the format: (t_ns, bytes) pairs, and what looks at them
        self._held: list[tuple[int, bytes]] | None = None if fmt else []
        self._held_bytes = 0
        self._sse = SSEDecoder() if not fmt else None
        self._probe = FormatProbe() if not fmt else None

    @property
    def format(self) -> str:
        return self.run.provider.format

    @property
    def finished(self) -> bool:
        return self.run.finished

    def begin(self, started_at: float | None, origin_ns: int | None = None) -> None:
        """The request went out: `started_at` wall clock (epoch s), `origin_ns` the monotonic ns of t=0."""
        self.run._begin(started_at)
        if origin_ns is not None:
            self.run._clock_origin = origin_ns

    def on_headers(self, t: int, status: int, http_version: str | None, reason: str | None,
                   headers: Sequence[tuple[str, str]], *, body_decoded: bool = False) -> None:
        """The response's status and headers. `body_decoded`: the chunks that follow are already decoded
        whatever `content-encoding` says (as a HAR stores them)."""
        coding = None if body_decoded else next((v for k, v in headers if k.lower() == "content-encoding"), None)
        self._content = decoder_for(coding)
        if self._content is not None:
            self._coding_note = (f"the response was {self._content.encoding}-encoded: the client got it as sent; "
                                 f"the capture holds the decoded bytes" if self._content.active
                                 else self._content.note)
            self.run.notes.append(self._coding_note)
        self.run._on_headers(t, status, http_version, reason, headers)
        if not self.run._feeding:
            self._settle()          # not an event stream: no frames to tell the format; the label stays

    def on_chunk(self, t: int, data: bytes) -> None:
        if self.not_kept is not None:      # the capture is full: counted, neither decoded nor kept
            self.not_kept += len(data)
            return
        if self._content is not None:
            data = self._content.decode(data)
        self._deliver(t, data)

    def _deliver(self, t: int, data: bytes) -> None:
        if not data or self.not_kept is not None:
            return
        if self.max_body is not None and self.kept + len(data) > self.max_body:
            room = self.max_body - self.kept
            self._capture_full(len(data) - room)
            data = data[:room]
            if not data:
                return
        self.kept += len(data)
        held = self._held
        if held is None:
            self.run._on_chunk(t, data)
            return
        held.append((t, data))
        self._held_bytes += len(data)
        self._probe.see(self._sse.feed(data))
        if not self._probe.open or self._held_bytes >= HOLD_BYTES:
            self._settle()

    def stop_capture(self, why: str) -> None:
        """Keep nothing more of the body from here on (`why`: the reason, as the note gives it); the bytes that
        follow are counted only, given to `on_chunk` or told by `count_not_kept`."""
        if self.not_kept is not None or self.run.finished:
            return
        self._stopped_why = why
        self.not_kept = 0
        self._full_note = len(self.run.notes)
        self.run.notes.append(self._full_text())

    def count_not_kept(self, n: int) -> None:
        """`n` more bytes of the body went by after the capture stopped (a tap forwarded them, unrecorded)."""
        if self.not_kept is not None:
            self.not_kept += n

    def _capture_full(self, cut: int) -> None:
        """The capture reached `max_body`: the last `cut` bytes of this chunk are the first it does not keep."""
        content = self._content
        self._cut_decoded = content is not None and content.active
        # (of a chunk decoded, the bytes not kept are decoded ones: the count is of the chunks after it, as received)
        self.not_kept = 0 if self._cut_decoded else cut
        self._full_note = len(self.run.notes)
        self.run.notes.append(self._full_text())

    def _full_text(self, ended: bool = False) -> str:
        if self._stopped_why is not None:
            where = f"the capture stopped at {size_text(self.kept)} ({self._stopped_why})"
        else:
            where = f"the capture stopped at {size_text(self.max_body)}"
        if self._cut_decoded:
            where += " of decoded body"
        if not ended:
            return f"{where}: the rest is not recorded (a tap forwards it to its client untouched)"
        how = f" as received ({self._content.encoding}-encoded) after the chunk that reached it" \
            if self._cut_decoded else ""
        return (f"{where}: the rest, {self.not_kept:,} more bytes{how}, was not recorded (a tap forwarded it to "
                f"its client untouched)")

    def _settle(self) -> None:
        """Choose the format from what the held frames said (or fall back), then feed the held chunks."""
        held, self._held = self._held, None
        if held is None:
            return
        found = self._probe.found if self._probe is not None else None
        if found is not None:
            self.format_source = "frames"
            if found.format != self.run.provider.format:
                self.run.set_format(found.format)
        elif held and self.run._feeding:
            self.run.notes.append(f"neither the path nor the first frames tell the wire format: decoded as "
                                  f"{self.run.provider.format}")
        for t, data in held:
            self.run._on_chunk(t, data)

    def _whole_shape(self) -> None:
        """A whole JSON reply whose path named no format: its format is told by its shape (`whole_format`)."""
        run = self.run
        if self.format_source != "none" or run.body_kind != "json" or run.decoder.bytes_received:
            return
        found = whole_format(_json_body(run.body))
        if found is None:
            return
        self.format_source = "shape"
        if found != run.provider.format:
            run.provider = replace(run.provider, format=found)
            run.decoder = StreamDecoder(found)     # (never fed: a JSON body is read whole at the end)

    def _check_history(self) -> None:
        """The history check StreamScope runs on its own requests (`core.wire.history`), on the client's: what
        its API would reject or finds suspicious, in `run.history_findings` and the notes."""
        body = self._request_json
        if not isinstance(body, dict):
            return
        findings = tuple(check_request(self.format, body, HistoryRules(model=self.run.provider.model)))
        self.run.history_findings = findings
        self.run.notes += [f"history {f.severity} at {f.path}: {f.message}" for f in findings]

    def finish(self, t: int, transport_error: dict | None) -> ProviderRun:
        """The exchange ended (`transport_error` None: completely); returns the finished run."""
        if self.run.finished:
            return self.run
        if self._content is not None:
            if self.not_kept is None:
                self._deliver(t, self._content.flush())
            if self._content.never_decoded and self._coding_note in self.run.notes:
                self.run.notes.remove(self._coding_note)     # (it decoded nothing: the other note says why)
            if self._content.note and self._content.note not in self.run.notes:
                self.run.notes.append(self._content.note)
        if self._held is not None:
            self._probe.see(self._sse.end())
            self._settle()
        if self.not_kept is not None:
            notes = self.run.notes
            if 0 <= self._full_note < len(notes) and notes[self._full_note] == self._full_text():
                notes[self._full_note] = self._full_text(ended=True)
            else:
                notes.append(self._full_text(ended=True))
        self._whole_shape()
        self._check_history()
        self.run._finish(t, transport_error)
        self.run._scrub()
        return self.run
