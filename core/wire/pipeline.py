"""Bytes in, normalized events out: the SSE decoder, one format adapter and the reducer, wired together.

`StreamDecoder(format).feed(chunk)` returns the normalized events the chunk completed and folds them into
`.reply`; it also keeps the SSE items (frames and comments) in `.items` for the raw view and exports.
This is the one decoding path: `decode`, the live runner, replay and the GUI all use it.

Hostile input stays bounded here, whatever a server sends (memory a small multiple of the bytes received):
- comment lines: the first `COMMENTS_KEPT` are kept in `.items`; past that they are counted (`.comments`), and
  where they lay is kept as merged byte ranges (`bytes_outside_items` still accounts for them), with one
  `comments-not-kept` diagnostic when it starts;
- diagnostics: the first `DIAGNOSTICS_PER_CODE` of each code are listed (and returned as events); past that
  they are counted, with one `diagnostics-not-listed` diagnostic when it starts and one at `end()` with the count;
- frames that contributed nothing but such counted findings (a flood of broken frames, each a repeated
  `data-not-json`): the first `FRAMES_OF_COUNTED_FINDINGS_KEPT` are kept in `.items`; past that they are counted
  (`.frames_not_kept`) and their byte ranges kept as the comments' are, with one `frames-not-kept` diagnostic.
  Their bytes are still in the capture (the run keeps every chunk), so an export or a replay loses nothing;
  only the raw view lists them no more. A frame that contributed anything (text, usage, a listed finding) is
  always kept.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence

from core.wire import events as ev
from core.wire.errors import LocalProtocolError
from core.wire.adapters import adapter_for
from core.wire.formats import FormatProbe
from core.wire.reply import Reply, fold
from core.wire.jsonfast import JSONTooDeep, bounded, dumps_compact, loads
from core.wire.sse import SSEComment, SSEDecoder, SSEDiagnostic, SSEFrame, SSEItem
from core.wire.whole import stream_payloads

#: comment lines kept as items (for the raw view); a real stream sends a few (keepalives), a hostile one millions
COMMENTS_KEPT = 10_000
#: diagnostics of one code listed in the reply; past that they are counted (one finding per frame can repeat
#: for every frame of a broken stream)
DIAGNOSTICS_PER_CODE = 100
#: frames kept that contributed only findings past DIAGNOSTICS_PER_CODE; past that they are counted (one Python
#: object per 9-byte broken frame was 35-50 bytes of memory per byte received)
FRAMES_OF_COUNTED_FINDINGS_KEPT = 10_000

#: the event name of the one frame that stands for a whole JSON reply in `.items` (see `StreamDecoder.whole`)
WHOLE_BODY_EVENT = "(whole JSON body)"
#: the largest whole JSON reply read (parsed whole, its objects take several times its bytes; a real reply, images
#: inline included, is far smaller)
MAX_WHOLE_BODY = 64 << 20

_Diagnostic = ev.Diagnostic


class StreamDecoder:
    def __init__(self, format_name: str, keep_items: bool = True, compact_frames: bool | None = None) -> None:
        """`keep_items`: keep the frames and comments in `.items` (the raw view, exports, the capture's checks).
        `compact_frames`: make frames that keep no decoded copy of their data and read it from their raw bytes
        when asked (`core.wire.sse.CompactSSEFrame`: less memory for frames kept for long, a little slower to
        make); None (the default) means: compact when the items are kept, plain when they are not (plain frames
        read fastest, and nothing holds on to them)."""
        self.format = format_name
        self.adapter = adapter_for(format_name)
        self.compact_frames = keep_items if compact_frames is None else compact_frames
        self.sse = SSEDecoder(compact=self.compact_frames)
        self.reply = Reply()
        self.keep_items = keep_items
        self.items: list[SSEItem] = []   # frames and comments in stream order (diagnostics go to the reply)
        self.bytes_received = 0
        self.comments = 0                # comment lines seen, kept or not
        self.comments_not_kept = 0
        self.frames_of_counted_findings = 0   # frames that contributed only counted findings, kept or not
        self.frames_not_kept = 0
        self._unkept_spans = array("q")  # (start, end) byte ranges of the comments not kept, merged when adjacent
        self._last_unkept: SSEComment | None = None
        self._diagnostic_counts: dict[str, int] = {}
        self._ended = False
        self._probe = FormatProbe()      # do the first frames look like another format? (a diagnostic at end)
        self._probing = True
        self._whole_frames = 0           # 1 once a whole JSON reply was read (`whole`): its one frame

    @property
    def frames(self) -> int:
        return self.sse.frames_dispatched + self._whole_frames

    def feed(self, chunk: bytes) -> list[ev.Event]:
        if self._ended:
            raise LocalProtocolError("feed() after end()")
        self.bytes_received += len(chunk)
        sse = self.sse
        if 10 not in chunk and 13 not in chunk and not sse._special:
            # SSEDecoder.feed's own first step, inlined: a chunk with no line end only extends the unfinished
            # line (for small chunks this call is most of the cost)
            if chunk:
                sse._tail.append(chunk)
            return []
        items = sse.feed(chunk)
        return self._handle(items) if items else []

    def iter_events(self, chunks: Iterable[bytes], end: bool = True) -> Iterator[ev.Event]:
        """Feed each chunk of `chunks` in turn, yielding the normalized events; then those of `end()` unless
        `end` is False. The iterator-in form (as the SDKs' `iter_bytes`), built on `SSEDecoder.iter_items`: the
        same events as `feed()` per chunk, each folded into `.reply` before it is yielded, and faster when
        chunks are small. `bytes_received` counts the chunks taken so far.
        """
        if self._ended:
            raise LocalProtocolError("feed() after end()")
        handle = self._handle
        for item in self.sse.iter_items(self._counted(chunks), end=False):
            yield from handle((item,))
        if end:
            yield from self.end()

    def _counted(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            self.bytes_received += len(chunk)
            yield chunk

    def end(self) -> list[ev.Event]:
        """End of input: flush the SSE layer, then let the adapter report what never arrived."""
        if self._ended:
            return []
        self._ended = True
        out = self._handle(self.sse.end())
        self.adapter.last_frame = last = self.sse.frames_dispatched - 1   # (only end() reads it)
        tail = self._bounded(self.adapter.end())
        for code, count in self._diagnostic_counts.items():
            if count > DIAGNOSTICS_PER_CODE:
                tail.append(_Diagnostic(last, "diagnostics-not-listed",
                                        f"{count - DIAGNOSTICS_PER_CODE:,} more `{code}` findings (of {count:,}) "
                                        f"were counted, not listed"))
        mismatch = self._probe.mismatch(self.format)
        if mismatch is not None:
            tail.append(ev.Diagnostic(mismatch[0], "format-mismatch", mismatch[1]))
        reply = self.reply
        for e in tail:
            fold(reply, e)
        out.extend(tail)
        return out

    def whole(self, body: bytes) -> list[ev.Event]:
        """A whole JSON reply (a request that did not stream, Gemini's `:generateContent`) in place of a stream,
        and its end: read as the frames a stream of the same reply would carry (`core.wire.whole`), through the
        same adapter and reducer. Every event is of frame 0, the body, which `.items` keeps as one frame for the
        raw view (its event name `WHOLE_BODY_EVENT`, which no stream sends). When the body is not this format's
        reply (a model list, an error body, not JSON) or is larger than `MAX_WHOLE_BODY`, nothing is read or kept
        and the decoder is left as it was: []."""
        if self._ended or self.bytes_received:
            raise LocalProtocolError("whole() on a decoder that was fed or ended")
        if len(body) > MAX_WHOLE_BODY:
            return []
        try:
            text = body.decode("utf-8")
            payloads = stream_payloads(self.format, bounded(loads(text)))
        except (UnicodeDecodeError, JSONTooDeep, ValueError):
            payloads = None
        if payloads is None:
            return []
        self.bytes_received = len(body)
        self._whole_frames = 1
        adapter = self.adapter
        produced: list[ev.Event] = []
        for event, data in payloads:
            # (each payload goes through the adapter as its frame's text, as a stream's would)
            data = data if type(data) is str else dumps_compact(data)
            produced += adapter.on_frame(SSEFrame(0, 0, event, data, "", None, b""))
        if self.keep_items:
            self.items.append(SSEFrame(0, 0, WHOLE_BODY_EVENT, text, "", None, body))
        self._ended = True
        adapter.last_frame = 0
        produced += adapter.end()
        out = self._bounded(produced)
        reply = self.reply
        for e in out:
            fold(reply, e)
        return out

    @property
    def may_hold_bytes_outside_items(self) -> bool:
        """False when `bytes_outside_items` can hold nothing but white space: every non-blank line the SSE
        layer reads belongs to a frame or a comment unless it ends up in an event without data or an event the
        stream never ended, and each of those is reported (`event-without-data`, `unterminated-final-event`).
        The recorder asks this first at every run's end: the exact answer walks every item (about 45 ms for a
        7 MB stream, on the window's thread)."""
        counts = self._diagnostic_counts
        return "event-without-data" in counts or "unterminated-final-event" in counts

    def bytes_outside_items(self, body: bytes) -> bytes:
        """The bytes of `body` (the whole body received) that no frame or comment accounts for: what a server
        sent outside the event stream (an unframed error, stray text). Comments not kept count as accounted for."""
        spans = [(i.offset, i.offset + len(i.raw)) for i in self.items if i.__class__ is not SSEDiagnostic]
        if self._last_unkept is not None:
            self._add_span(self._last_unkept)
            self._last_unkept = None
        u = self._unkept_spans
        if u:
            spans += zip(u[::2], u[1::2])
        # (always sorted: an event is listed when its blank line ends it, after a comment between its lines)
        spans.sort()
        gaps: list[bytes] = []
        pos = 3 if body.startswith(b"\xef\xbb\xbf") else 0
        for start, end in spans:
            if start > pos:
                gaps.append(body[pos:start])
            if end > pos:
                pos = end
        gaps.append(body[pos:])
        return b"".join(gaps)

    def _bounded(self, produced: list[ev.Event]) -> list[ev.Event]:
        """`produced` with the diagnostics past `DIAGNOSTICS_PER_CODE` of their code counted instead."""
        counts = self._diagnostic_counts
        out = []
        for e in produced:
            if e.__class__ is _Diagnostic:
                c = counts.get(e.code, 0) + 1
                counts[e.code] = c
                if c > DIAGNOSTICS_PER_CODE:
                    if c == DIAGNOSTICS_PER_CODE + 1:
                        out.append(_Diagnostic(e.frame, "diagnostics-not-listed",
                                               f"more than {DIAGNOSTICS_PER_CODE} `{e.code}` findings: the rest "
                                               f"are counted, not listed (the count comes when the stream ends)"))
                    continue
            out.append(e)
        return out

    def _comment_not_kept(self, item: SSEComment) -> list[ev.Event]:
        self.comments_not_kept += 1
        self._not_kept(item)
        if self.comments_not_kept == 1:
            return [_Diagnostic(item.n, "comments-not-kept",
                                f"more than {COMMENTS_KEPT:,} comment lines: the rest are counted (keepalives), "
                                f"not kept for the raw view")]
        return []

    def _frame_not_kept(self, item) -> list[ev.Event]:
        self.frames_not_kept += 1
        self._not_kept(item)
        if self.frames_not_kept == 1:
            return [_Diagnostic(item.n, "frames-not-kept",
                                f"more than {FRAMES_OF_COUNTED_FINDINGS_KEPT:,} frames carried nothing but "
                                f"findings already counted: the rest are counted, not listed in the raw view "
                                f"(their bytes are in the capture)")]
        return []

    def _not_kept(self, item) -> None:
        last = self._last_unkept
        self._last_unkept = item   # (its span is taken at the next one: a CR's LF may yet be added to its raw)
        if last is not None:
            self._add_span(last)

    def _add_span(self, item: SSEComment) -> None:
        u = self._unkept_spans
        start = item.offset
        end = start + len(item.raw)
        if u and u[-1] == start:   # right after the last range: one range
            u[-1] = end
        else:
            u.append(start)
            u.append(end)

    def _handle(self, items: Sequence[SSEItem]) -> list[ev.Event]:
        if self._probing:
            self._probing = self._probe.see(items)
        out: list[ev.Event] = []
        adapter = self.adapter
        on_frame = adapter.on_frame
        reply = self.reply
        keep = self.items if self.keep_items else None
        bounded = self._bounded
        for item in items:
            t = type(item)
            if t is SSEComment:
                self.comments += 1
                produced = adapter.on_comment(item)
                if keep is not None:
                    if self.comments <= COMMENTS_KEPT:
                        keep.append(item)
                    else:
                        produced = self._comment_not_kept(item) + produced
            elif t is SSEDiagnostic:
                produced = [_Diagnostic(item.frame, item.code, item.message)]
            else:   # a frame (SSEFrame or CompactSSEFrame)
                produced = on_frame(item)
                if keep is not None:
                    keep.append(item)     # (taken back below if it carried only counted findings)
            # (one loop: folding stops at the first diagnostic, which the rest of the list goes through the cap)
            k = 0
            for e in produced:
                if e.__class__ is _Diagnostic:
                    break
                fold(reply, e)
                k += 1
            else:
                out += produced
                continue
            rest = bounded(produced[k:])
            if not k and not rest and keep is not None and t is not SSEComment and t is not SSEDiagnostic:
                self.frames_of_counted_findings += 1
                if self.frames_of_counted_findings > FRAMES_OF_COUNTED_FINDINGS_KEPT:
                    keep.pop()
                    rest = self._frame_not_kept(item)
            for e in rest:
                fold(reply, e)
            out += produced[:k]
            out += rest
        return out

    def result(self) -> dict:
        """The contract's `decode` JSON object."""
        body = self.reply.to_json()
        return {"format": self.format, "blocks": body["blocks"], "finish_reason": body["finish_reason"],
                "usage": body["usage"], "error": body["error"], "terminated": body["terminated"],
                "frames": self.frames, "diagnostics": body["diagnostics"]}


def decode_bytes(format_name: str, data: bytes, chunk_size: int | None = None) -> StreamDecoder:
    """Decode a whole body, fed in pieces of `chunk_size` bytes (all at once when None); its items are kept."""
    d = StreamDecoder(format_name)
    if not chunk_size or chunk_size >= len(data):
        d.feed(data)
    else:
        for i in range(0, len(data), chunk_size):
            d.feed(data[i:i + chunk_size])
    d.end()
    return d
