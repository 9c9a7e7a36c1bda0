"""Bytes in, normalized events out: the SSE decoder, one format adapter and the reducer, wired together.

`StreamDecoder(format).feed(chunk)` returns the normalized events the chunk completed and folds them into
`.reply`; it also keeps every SSE item (frames and comments) in `.items` for the raw view and exports.
This is the one decoding path: `decode`, the live runner, replay and the GUI all use it.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from core.wire import events as ev
from core.wire.errors import LocalProtocolError
from core.wire.adapters import adapter_for
from core.wire.formats import FormatProbe
from core.wire.reply import Reply, fold
from core.wire.sse import SSEComment, SSEDecoder, SSEDiagnostic, SSEItem


class StreamDecoder:
    def __init__(self, format_name: str, keep_items: bool = True) -> None:
        self.format = format_name
        self.adapter = adapter_for(format_name)
        self.sse = SSEDecoder(compact=keep_items)   # frames kept for long keep no decoded copy of their data
        self.reply = Reply()
        self.keep_items = keep_items
        self.items: list[SSEItem] = []   # frames and comments in stream order (diagnostics go to the reply)
        self.bytes_received = 0
        self._ended = False
        self._probe = FormatProbe()      # do the first frames look like another format? (a diagnostic at end)
        self._probing = True

    @property
    def frames(self) -> int:
        return self.sse.frames_dispatched

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
        self.adapter.last_frame = self.sse.frames_dispatched - 1   # (only end() reads it)
        tail = self.adapter.end()
        mismatch = self._probe.mismatch(self.format)
        if mismatch is not None:
            tail.append(ev.Diagnostic(mismatch[0], "format-mismatch", mismatch[1]))
        reply = self.reply
        for e in tail:
            fold(reply, e)
        out.extend(tail)
        return out

    def _handle(self, items: Sequence[SSEItem]) -> list[ev.Event]:
        if self._probing:
            self._probing = self._probe.see(items)
        out: list[ev.Event] = []
        adapter = self.adapter
        on_frame = adapter.on_frame
        reply = self.reply
        keep = self.items if self.keep_items else None
        for item in items:
            t = type(item)
            if t is not SSEComment and t is not SSEDiagnostic:   # a frame
                if keep is not None:
                    keep.append(item)
                produced = on_frame(item)
            elif t is SSEComment:
                if keep is not None:
                    keep.append(item)
                produced = adapter.on_comment(item)
            else:  # SSEDiagnostic
                produced = [ev.Diagnostic(item.frame, item.code, item.message)]
            for e in produced:
                fold(reply, e)
            out += produced
        return out

    def result(self) -> dict:
        """The contract's `decode` JSON object."""
        body = self.reply.to_json()
        return {"format": self.format, "blocks": body["blocks"], "finish_reason": body["finish_reason"],
                "usage": body["usage"], "error": body["error"], "terminated": body["terminated"],
                "frames": self.frames, "diagnostics": body["diagnostics"]}


def decode_bytes(format_name: str, data: bytes, chunk_size: int | None = None) -> StreamDecoder:
    """Decode a whole body, fed in pieces of `chunk_size` bytes (all at once when None)."""
    d = StreamDecoder(format_name)
    if not chunk_size or chunk_size >= len(data):
        d.feed(data)
    else:
        for i in range(0, len(data), chunk_size):
            d.feed(data[i:i + chunk_size])
    d.end()
    return d
