"""Incremental server-sent-events decoder (WHATWG event-stream rules), sans-IO.

`SSEDecoder.feed(bytes)` returns what the bytes completed: `SSEFrame` (a dispatched event), `SSEComment` (a
comment line, kept for the raw view, never dispatched) and `SSEDiagnostic` (odd but survivable input).
`SSEDecoder.end()` marks the end of input and flushes a pending, unterminated event (browsers drop it; a
debugging tool shows it, with an `unterminated-final-event` diagnostic).

Line ends are LF, CR or CRLF, and a CR at the end of one chunk followed by LF at the start of the next is one
line end. Lines are decoded as UTF-8 only once they are complete, so a character split across chunks is whole
(CR and LF never occur inside a multi-byte sequence). Invalid UTF-8 becomes U+FFFD plus a diagnostic.
Each frame keeps its raw bytes and the byte offset where it started. Work is linear in the input: complete
lines are cut from the newest chunk only, and the unfinished tail is kept as a list of pieces.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ProtocolError

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEFrame:
    """One dispatched event. `n` counts dispatched events from 0 (comments are not counted)."""

    n: int
    offset: int
    event: str
    data: str
    id: str
    retry: int | None
    raw: bytes

    def to_json(self) -> dict:
        return {"n": self.n, "offset": self.offset, "event": self.event, "data": self.data, "id": self.id,
                "retry": self.retry}


@dataclass(frozen=True, slots=True)
class SSEComment:
    """A comment line (`: text`). `n` is the number of the next event to be dispatched."""

    n: int
    offset: int
    text: str
    raw: bytes

    def to_json(self) -> dict:
        return {"n": self.n, "offset": self.offset, "comment": self.text}


@dataclass(frozen=True, slots=True)
class SSEDiagnostic:
    """Framing-level finding; `frame` is the event it concerns (or the next to be dispatched)."""

    frame: int
    offset: int
    code: str
    message: str


SSEItem = SSEFrame | SSEComment | SSEDiagnostic


class SSEDecoder:
    """Feed bytes in any pieces; the items produced never depend on where the pieces were cut."""

    def __init__(self) -> None:
        self._tail: list[bytes] = []      # bytes of an unfinished line
        self._tail_len = 0
        self._skip_lf = False             # the previous chunk ended in CR: a leading LF belongs to it
        self._bom_checked = False
        self._pending_start = b""         # up to 2 bytes that may begin a BOM
        self._offset = 0                  # byte offset of the start of the next line
        self._ended = False
        # the event being built
        self._event_start = -1            # offset of its first line, -1 when none
        self._event_raw: list[bytes] = []
        self._data: list[str] = []
        self._has_data = False
        self._event_type = ""
        self._retry: int | None = None
        self._last_id = ""
        self._n = 0
        self._bad_utf8_reported = False

    @property
    def frames_dispatched(self) -> int:
        return self._n

    def feed(self, chunk: bytes) -> list[SSEItem]:
        if self._ended:
            raise ProtocolError("feed() after end()")
        if not chunk:
            return []
        out: list[SSEItem] = []
        if not self._bom_checked:
            chunk = self._pending_start + chunk
            self._pending_start = b""
            if len(chunk) < 3 and _BOM.startswith(chunk):
                self._pending_start = chunk
                return out
            self._bom_checked = True
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
                self._offset = 3
                if not chunk:
                    return out
        if self._skip_lf:
            self._skip_lf = False
            if chunk[0] == 10:  # LF completing a CR line end from the previous chunk
                chunk = chunk[1:]
                self._offset += 1
                if self._event_raw:
                    self._event_raw.append(b"\n")
                if not chunk:
                    return out
        has_cr = b"\r" in chunk
        last_lf = chunk.rfind(b"\n")
        last_end = max(last_lf, chunk.rfind(b"\r")) if has_cr else last_lf
        if last_end < 0:
            self._tail.append(chunk)
            self._tail_len += len(chunk)
            return out
        complete = chunk[:last_end + 1]
        rest = chunk[last_end + 1:]
        if self._tail:
            self._tail.append(complete)
            complete = b"".join(self._tail)
            self._tail = []
            self._tail_len = 0
        if rest:
            self._tail.append(rest)
            self._tail_len = len(rest)
        if has_cr or b"\r" in complete:
            self._lines_mixed(complete, out)
            if complete[-1] == 13:
                self._skip_lf = True
        else:
            self._lines_lf(complete, out)
        return out

    def end(self) -> list[SSEItem]:
        """End of input: a partial last line is taken as a line, and a pending event is dispatched."""
        if self._ended:
            return []
        out: list[SSEItem] = []
        if self._pending_start:
            tail = self._pending_start
            self._pending_start = b""
            self._tail.insert(0, tail)
        if self._tail:
            line = b"".join(self._tail)
            self._tail = []
            self._line(line, b"", out)
        if self._event_start >= 0:
            if self._has_data:
                out.append(SSEDiagnostic(self._n, self._event_start, "unterminated-final-event",
                                         "the body ended inside an event (no blank line after it); "
                                         "browsers drop such an event, it is shown here"))
            self._dispatch(out)
        self._ended = True
        return out

    # -- lines -----------------------------------------------------------------------------------------
    def _lines_lf(self, complete: bytes, out: list) -> None:
        lines = complete.split(b"\n")
        lines.pop()  # the empty piece after the final LF
        line_fn = self._line
        for line in lines:
            line_fn(line, b"\n", out)

    def _lines_mixed(self, complete: bytes, out: list) -> None:
        pos = 0
        line_fn = self._line
        for m in _LINE_END.finditer(complete):
            s, e = m.span()
            line_fn(complete[pos:s], complete[s:e], out)
            pos = e

    def _line(self, line: bytes, terminator: bytes, out: list) -> None:
        offset = self._offset
        self._offset = offset + len(line) + len(terminator)
        if not line:
            if self._event_start >= 0:
                self._event_raw.append(terminator)
                self._dispatch(out)
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = line.decode("utf-8", "replace")
            out.append(SSEDiagnostic(self._n, offset + exc.start, "invalid-utf8",
                                     f"invalid UTF-8 at byte {offset + exc.start}; replaced with U+FFFD"))
        if text[0] == ":":
            out.append(SSEComment(self._n, offset, text[2:] if text[1:2] == " " else text[1:],
                                  line + terminator))
            return
        if self._event_start < 0:
            self._event_start = offset
        self._event_raw.append(line + terminator)
        field, sep, value = text.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._has_data = True
        elif field == "event":
            self._event_type = value
        elif field == "id":
            if "\0" not in value:
                self._last_id = value
        elif field == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        # other field names are ignored, as the WHATWG rules say

    def _dispatch(self, out: list) -> None:
        raw = b"".join(self._event_raw)
        if self._has_data:
            out.append(SSEFrame(self._n, self._event_start, self._event_type or "message",
                                "\n".join(self._data), self._last_id, self._retry, raw))
            self._n += 1
        else:
            out.append(SSEDiagnostic(self._n, self._event_start, "event-without-data",
                                     "an event block with no data field was not dispatched (WHATWG rules)"))
        self._event_start = -1
        self._event_raw = []
        self._data = []
        self._has_data = False
        self._event_type = ""
        self._retry = None
