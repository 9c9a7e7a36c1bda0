"""Incremental server-sent-events decoder (WHATWG event-stream rules), sans-IO.

`SSEDecoder.feed(bytes)` returns what the bytes completed: `SSEFrame` (a dispatched event), `SSEComment` (a
comment line, kept for the raw view, never dispatched) and `SSEDiagnostic` (odd but survivable input).
`SSEDecoder.end()` marks the end of input and flushes a pending, unterminated event (browsers drop it; a
debugging tool shows it, with an `unterminated-final-event` diagnostic).

Line ends are LF, CR or CRLF, and a CR at the end of one chunk followed by LF at the start of the next is one
line end. Lines are decoded as UTF-8 only once they are complete, so a character split across chunks is whole
(CR and LF never occur inside a multi-byte sequence). Invalid UTF-8 becomes U+FFFD plus a diagnostic.
Each frame keeps its raw bytes and the byte offset where it started. Work is linear in the input: only the
unfinished line (and at most a few KiB of held lines, see `_frames`) is carried into the next chunk.

Speed (bench/decode_bench.py measures it against httpx-sse and the openai and anthropic SDKs): a chunk is cut
into lines with one `bytes.split` at LF (CRLF lines keep their CR and are checked with C-level calls); a run of
regular events (`data:` lines, or `event:` + `data:`, each followed by a blank line) becomes frames one event
at a time (such a frame refers to the fed chunk for its raw bytes instead of copying them, see `SSEFrame`);
everything else takes a line loop that keeps its state in locals (`_run`), or, for mixed line ends, the
line-by-line reference path (`_line`), which all give the same items. Once a chunk of an unnamed-event stream
(OpenAI chat, Gemini) was all `data:` / blank pairs, the next chunks take a shorter path while they stay so
(`_steady_frames`: at 1 KiB pieces, most of a chunk's cost is the setup `_frames` needs for every other case).
Frames are built through a plain slotted twin class and then re-classed as the frozen `SSEFrame` (see
`core.fastbuild`). `10 in chunk` (memchr) is used rather than `b"\\n" in chunk`, several times slower on a small
chunk. For many small chunks, `iter_items` gathers them and decodes only where an item can be complete, usually
one whole event at a time (`_one_event`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat

from core.wire.errors import LocalProtocolError
from core.wire.fastbuild import twin_class

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_endswith = bytes.endswith
# Lines held back (see SSEDecoder._frames) are decoded again with each chunk until their event ends: these
# bounds keep that re-reading to a small constant factor, so work stays linear in the input.
_HOLD_LINES = 4
_HOLD_BYTES = 4096
_CRS = repeat(b"\r")


@dataclass(frozen=True, eq=False)
class SSEFrame:
    """One dispatched event. `n` counts dispatched events from 0 (comments are not counted).

    Its raw bytes are not copied when they need not be: when they lie within the chunk that was fed (not split
    across chunks), the `_raw` slot refers to that chunk (a `(chunk, its stream offset)` pair, shared by the
    chunk's frames) and `raw` slices them out when read (which is rare: the raw view's visible rows, exports).
    A decoder made with `compact=True` (for frames kept for long, as a pane's) makes `CompactSSEFrame`s, a
    subclass that keeps no decoded copy of its data either: `isinstance(item, SSEFrame)` is the test for a
    frame of either kind. Equality goes through the fields' values (a compact frame equals the plain frame of
    the same values); the hash leaves `raw` out (see `SSEDecoder`: a frame ended by a CR that ends its chunk
    gets that CR's LF when the next chunk brings it).
    """

    __slots__ = ("n", "offset", "event", "data", "id", "retry", "_raw")

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

    def _key(self) -> tuple:
        return (self.n, self.offset, self.event, self.data, self.id, self.retry, self.raw)

    def __eq__(self, other) -> bool:
        if isinstance(other, SSEFrame):
            return self._key() == other._key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.n, self.offset, self.event, self.data, self.id, self.retry))

    def __reduce__(self):
        return (SSEFrame, self._key())   # (a compact frame pickles as the plain frame it equals)


def _frame_raw(self: SSEFrame) -> bytes:
    r = self._raw
    if r.__class__ is bytes:
        return r
    # (the chunk fed, its stream offset): this frame is a fast-path one: [`event:` line] `data:` line, blank
    # line, all with LF or all with CRLF line ends (and no other CR), so it ends at its first empty line
    src, base = r
    s = self.offset - base
    if src[src.index(10, s) - 1] == 13:
        return src[s:src.index(b"\n\r\n", s) + 3]
    return src[s:src.index(b"\n\n", s) + 2]


def _set_frame_raw(self: SSEFrame, value: bytes) -> None:
    object.__setattr__(self, "_raw", value)   # only reached through object.__setattr__ (the class is frozen)


SSEFrame.raw = property(_frame_raw, _set_frame_raw, doc="the event's bytes as received (comments excluded)")

_data_slot = SSEFrame.__dict__["data"]   # the slot itself, for CompactSSEFrame


class CompactSSEFrame(SSEFrame):
    """An `SSEFrame` that keeps, instead of its decoded data, where its one `data:` line's value begins in its
    raw bytes, and decodes it when read (`SSEDecoder(compact=True)` makes them on its fast paths; frames it makes
    on the line path, several `data:` lines and the like, are plain `SSEFrame`s). It is equal to, hashes and
    reads back as the plain frame of the same values, and pickles as one."""

    __slots__ = ()

    @property
    def data(self) -> str:
        d = _data_slot.__get__(self)
        if d.__class__ is str:
            return d
        r = self._raw
        if r.__class__ is bytes:
            src, s = r, 0
        else:
            src, base = r
            s = self.offset - base
        s += d
        e = src.index(10, s)
        return src[s:e - 1 if src[e - 1] == 13 else e].decode("utf-8", "replace")

    @data.setter
    def data(self, value: str) -> None:   # (dataclasses.replace, unpickling)
        _data_slot.__set__(self, value)



@dataclass(frozen=True, slots=True)
class SSEComment:
    """A comment line (`: text`). `n` is the number of the next event to be dispatched."""

    n: int
    offset: int
    text: str
    raw: bytes

    def to_json(self) -> dict:
        return {"n": self.n, "offset": self.offset, "comment": self.text}

    def __hash__(self) -> int:   # (not `raw`: a comment ended by a CR ending its chunk gets the LF that follows)
        return hash((self.n, self.offset, self.text))


@dataclass(frozen=True, slots=True)
class SSEDiagnostic:
    """Framing-level finding; `frame` is the event it concerns (or the next to be dispatched)."""

    frame: int
    offset: int
    code: str
    message: str


SSEItem = SSEFrame | SSEComment | SSEDiagnostic


_FrameBuilder = twin_class(SSEFrame)
_new = object.__new__
_CommentBuilder = twin_class(SSEComment)


def _frame(n: int, offset: int, event: str, data: str, id: str, retry: int | None, raw: bytes) -> SSEFrame:
    f = _FrameBuilder(n, offset, event, data, id, retry, raw)
    f.__class__ = SSEFrame
    return f


def _comment(n: int, offset: int, text: str, raw: bytes) -> SSEComment:
    c = _CommentBuilder(n, offset, text, raw)
    c.__class__ = SSEComment
    return c


def _quiet(lines: list[bytes], crlf: bool) -> bool:
    """Whether these LF-cut lines are all field lines (not blank, not a comment; with `crlf`, each ending in its
    one CR) of valid UTF-8: lines that produce no item when decoded."""
    for line in lines:
        if not line or line[0] == 58:  # blank, or ':' (a comment)
            return False
        if crlf and (len(line) < 2 or line.find(13) != len(line) - 1):
            return False
        if not line.isascii() and not _utf8(line):
            return False
    return True


def _utf8(b: bytes) -> bool:
    try:
        b.decode()
    except UnicodeDecodeError:
        return False
    return True


def _bad_utf8(n: int, offset: int) -> SSEDiagnostic:
    return SSEDiagnostic(n, offset, "invalid-utf8", f"invalid UTF-8 at byte {offset}; replaced with U+FFFD")


class SSEDecoder:
    """Feed bytes in any pieces; the items produced never depend on where the pieces were cut.

    Nor do their raw bytes, with one thing to know: a frame or comment whose line end is a CR that is the last
    byte of a chunk comes with that chunk (the CR ends the line) while the LF that may follow it, making it a
    CRLF, is in the next chunk; when that chunk starts with the LF, the decoder adds it to that item's `raw`
    (nothing else of the item changes, and its hash leaves `raw` out). Once the next chunk has been fed (or
    `end()` called), every item's `raw` is the bytes it spans in the stream, whatever the split.
    """

    def __init__(self, compact: bool = False) -> None:
        """`compact`: make frames that keep no decoded copy of their data and decode it when read (what a
        pane keeps for long); by default a frame holds its data as text, which reads fastest."""
        self._compact = compact
        self._frame_cls = CompactSSEFrame if compact else SSEFrame   # what the fast paths make
        self._tail: list[bytes] = []      # bytes not decoded yet: held lines (see `_frames`), an unfinished line
        self._held = 0                    # how many bytes of self._tail[0] are held lines
        self._held_lines = 0              # and how many lines
        self._skip_lf = False             # the previous chunk ended in CR: a leading LF belongs to it
        self._lf_owner: SSEFrame | SSEComment | None = None   # ... and goes to this item's raw (see the class)
        self._frame_end = -1              # the stream offset where the line path's last frame ended
        self._bom_checked = False
        self._pending_start = b""         # up to 2 bytes that may begin a BOM
        self._offset = 0                  # byte offset of the start of the next line
        self._ended = False
        self._special = True              # one of: BOM not yet checked, LF to skip, ended
        self._steady: bytes | None = None  # see _steady_frames
        # the event being built
        self._event_start = -1            # offset of its first line, -1 when none
        self._event_raw: list[bytes] = []  # its raw bytes so far (from earlier chunks / before a comment)
        self._data: list[str] = []        # its data lines (non-empty list = it has data)
        self._event_type = ""
        self._retry: int | None = None
        self._last_id = ""
        self._n = 0
        self._event_names: dict[bytes, str] = {}   # `event:` lines seen -> their (shared) event name

    @property
    def frames_dispatched(self) -> int:
        return self._n

    def feed(self, chunk: bytes) -> list[SSEItem]:
        # (`10 in chunk` is a memchr; `b"\n" in chunk` costs several times more on a small chunk)
        if self._special:
            chunk = self._start(chunk)
        if 10 not in chunk and 13 not in chunk:
            if chunk:  # no line end: the common case for small pieces
                self._tail.append(chunk)
            return []
        if self._steady is not None and len(chunk) >= 64 and type(chunk) is bytes:
            # (tiny pieces mostly end a line mid-event, where the steady path would only be tried and refused)
            out: list[SSEItem] = []
            if self._steady_frames(chunk, out):
                if self._skip_lf:
                    self._lf_owner = self._cr_owner(out)
                return out
        self._steady = None   # (set again by _frames when this chunk leaves the steady state)
        fed = chunk
        if self._tail:
            self._tail.append(chunk)
            chunk = b"".join(self._tail)
        if len(chunk) < 512 and self._event_start < 0:
            # The small-chunk case: one line that only begins an event (not blank, no comment, valid UTF-8) is
            # held back as in `_frames`, without splitting anything. (A larger chunk mostly ends lines of
            # several events, and this test would only cost time there.)
            h = self._held
            e = chunk.find(10, h) + 1  # the end of the first line completed; it must be the only one
            if (e > h + 1 and e == chunk.rfind(10) + 1 and e <= _HOLD_BYTES and self._held_lines < _HOLD_LINES
                    and chunk[h] != 58 and 13 not in chunk and (chunk.isascii() or _utf8(chunk[h:e]))):
                self._tail = [chunk]
                self._held = e
                self._held_lines += 1
                return []
        out: list[SSEItem] = []
        self._frames(chunk, out, True, fed if type(fed) is bytes else None)
        if self._skip_lf:   # the chunk ends in a CR: who gets the LF the next chunk may start with
            self._lf_owner = self._cr_owner(out)
        return out

    def _cr_owner(self, out: list) -> SSEFrame | SSEComment | None:
        """The item whose raw bytes end with the CR that ends the chunk just decoded (None: that CR ended a
        field line of the open event, whose raw gets the LF, or a blank line that made no frame)."""
        if out:
            last = out[-1]
            if last.__class__ is SSEComment:
                if last.offset + len(last.raw) == self._offset:
                    return last
            elif last.__class__ is not SSEDiagnostic and self._frame_end == self._offset:
                return last   # (its raw need not span to here: it leaves out the comments inside the event)
        return None

    def iter_items(self, chunks: Iterable[bytes], end: bool = True) -> Iterator[SSEItem]:
        """Feed each chunk of `chunks` in turn, yielding the items; then those of `end()` unless `end` is False.

        The iterator-in form the SDK decoders offer (`iter_bytes`): the same items in the same order as `feed()`
        per chunk and then `end()`, and no later: a frame comes with the chunk holding its blank line, a comment
        with the chunk ending its line. Faster than `feed()` per chunk when chunks are small, because chunks are
        gathered (in `pending`) and handed to `feed()` only when a line end in them can produce an item. A line
        end is passed over when it ends a line that produces nothing: not blank, not a comment (its first byte,
        `head`, is known), a lone LF or CRLF in its chunk. (An invalid-UTF-8 diagnostic of such a line comes
        with its event's frame rather than at the line's end; its place among the items is the same.)
        If the iteration is stopped early, the bytes gathered so far are still fed, so the decoder's state
        covers every chunk taken from `chunks` (the items of that last step are not yielded).
        """
        feed = self.feed
        pending: list[bytes] = []
        gather = pending.append
        # `head`: the first byte of the line being received; None: it is the first byte of pending[mark:] (of
        # this chunk if none); 58 (a colon, as for a comment) sends the line's end to feed(), and stands too for a
        # line begun before this call (unknown here)
        head = 58 if self._tail else None
        mark = 0
        after_cr = False     # the last line end taken was a CR ending its chunk: a leading LF belongs to it
        special = self._special
        clean = not special and not self._tail and self._event_start < 0   # between events, nothing held
        try:
            for chunk in chunks:
                if 10 not in chunk and 13 not in chunk:
                    gather(chunk)
                    continue
                if special and not pending:
                    # the decoder's rare states (a BOM to check, the LF of a CR that ended the last event): its
                    # own first step, so that what follows can take the usual steps
                    chunk = self._start(chunk)
                    special = self._special
                    clean = not special and not self._tail and self._event_start < 0
                    if 10 not in chunk and 13 not in chunk:
                        if chunk:
                            gather(chunk)
                        continue
                o = 1 if after_cr and chunk[0] == 10 and len(pending) == mark else 0
                after_cr = False
                lf = chunk.find(10, o)
                cr = chunk.find(13, o) if 13 in chunk else -1   # (`in` is a memchr; find() parses its args)
                if cr < 0:
                    if lf < 0:   # no line end but the LF of a CRLF split between chunks
                        gather(chunk)
                        if len(chunk) > 1:
                            head = chunk[1]
                        else:
                            mark += 1
                        continue
                    lone = chunk.rfind(10) == lf                      # one LF alone?
                    term = lf
                elif lf < 0:
                    lone = cr == len(chunk) - 1                       # one CR, ending the chunk?
                    term = cr
                else:
                    lone = lf == cr + 1 and chunk.rfind(13) == cr and chunk.rfind(10) == lf   # one CRLF?
                    term = cr
                if lone and not special:
                    if head is None:
                        if len(pending) > mark:
                            first = pending[mark]
                            h = first[0] if first else 58
                        else:
                            h = chunk[o] if term > o else 58   # (a blank line)
                    else:
                        h = head
                    if h != 58:
                        # the line ending here is a field line (not blank, not a comment): nothing to yield yet
                        gather(chunk)
                        if lf < 0:
                            head = None
                            mark = len(pending)
                            after_cr = True
                        elif lf + 1 < len(chunk):
                            head = chunk[lf + 1]
                        else:
                            head = None
                            mark = len(pending)
                        continue
                if len(chunk) >= 256:
                    # a larger chunk mostly ends several lines: feed() it whole (its frames then refer to it,
                    # see `_frames`); its unfinished line stays with the decoder, so the next line end goes to
                    # feed() too
                    if pending:
                        gather(chunk)
                        chunk = b"".join(pending)
                        pending.clear()
                    mark = 0
                    head = 58 if chunk[-1] != 10 and chunk[-1] != 13 else None
                    yield from feed(chunk)
                    special = self._special
                    clean = not special and not self._tail and self._event_start < 0
                    continue
                # feed everything up to the chunk's last line end; keep the unfinished line it leaves
                last = chunk.rfind(10) + 1 if cr < 0 else max(chunk.rfind(10), chunk.rfind(13)) + 1
                if last < len(chunk):
                    gather(chunk[:last])
                    rest = chunk[last:]
                else:
                    gather(chunk)
                    rest = b""
                buf = b"".join(pending) if len(pending) > 1 else pending[0]
                pending.clear()
                mark = 0
                if rest:
                    gather(rest)
                    head = rest[0]
                else:
                    head = None
                if clean:
                    frame = self._one_event(buf)   # the usual case: buf is one whole event
                    if frame is not None:
                        yield frame
                        if cr >= 0 and self._special:   # its blank line's CR ended buf: an LF may follow
                            special = True
                            clean = False
                        continue
                yield from feed(buf)
                special = self._special
                clean = not special and not self._tail and self._event_start < 0
        finally:
            if pending:
                buf = b"".join(pending)
                pending.clear()
                tail_items = feed(buf)
            else:
                tail_items = []
        yield from tail_items
        if end:
            yield from self.end()

    def _one_event(self, buf: bytes) -> SSEFrame | None:
        """The frame of `buf` when it is exactly one regular event ([`event:` line,] `data:` line, blank line; LF
        or CRLF line ends) and the decoder is between events with nothing held; else None, and nothing changed.
        With CRLF, buf may end with the blank line's CR (its LF in the next chunk, where the decoder then skips it).

        What `feed(buf)` would give in that case, for a fraction of its cost (iter_items' usual step).
        """
        lines = buf.split(b"\n")
        k = len(lines)
        if lines[k - 1]:   # the blank line's CR ends buf: the frame is complete; an LF may start the next chunk
            if lines[k - 1] != b"\r":
                return None
            k += 1         # (as if that LF had come)
            cr_end = True
        else:
            cr_end = False
        if k == 3:
            ev = None
            line = lines[0]
        elif k == 4:
            ev = lines[0]
            line = lines[1]
        else:
            return None
        blank = lines[k - 2]
        if not blank:
            if 13 in buf:
                return None
            cut = None
        elif blank == b"\r" and line[-1:] == b"\r":
            cut = -1   # (no other CR in the data line: tested on its text below; in the event line: _event_name)
        else:
            return None
        if line[:6] == b"data: ":
            start = 6
        elif line[:5] == b"data:":
            start = 5
        else:
            return None
        try:
            data = line[start:cut].decode()
        except UnicodeDecodeError:
            return None
        if cut is not None and "\r" in data:
            return None
        if self._compact:
            data = (0 if ev is None else len(ev) + 1) + start
        if ev is None:
            event = "message"
        else:
            event = self._event_names.get(ev) or self._event_name(ev, cut)
            if event is None:
                return None
        f = _new(_FrameBuilder)
        f.n = n = self._n
        f.offset = offset = self._offset
        f.event = event
        f.data = data
        f.id = self._last_id
        f.retry = None
        f._raw = buf
        f.__class__ = self._frame_cls
        self._n = n + 1
        self._offset = offset + len(buf)
        if cr_end:
            self._skip_lf = self._special = True
            self._lf_owner = f
        return f

    def _event_name(self, line: bytes, cut: int | None) -> str | None:
        """The name an `event:` line (with its CR when `cut` is -1) gives, remembered for the next time; None
        when the line is not an `event` field, not valid UTF-8 or, with `cut`, not ended by its one CR (the line
        path then decides). A remembered line gives its name whatever the line ends around it."""
        if line[:7] == b"event: ":
            start = 7
        elif line[:6] == b"event:":
            start = 6
        else:
            return None
        try:
            name = line[start:cut].decode() or "message"
        except UnicodeDecodeError:
            return None
        if cut is not None and (line[-1] != 13 or "\r" in name):   # a CRLF line ends in its one CR
            return None
        if len(self._event_names) < 256:
            self._event_names[line] = name
        return name

    def _start(self, chunk: bytes) -> bytes:
        """The rare states: after end(), BOM not yet checked, an LF to skip. Returns what is left to decode."""
        if self._ended:
            raise LocalProtocolError("feed() after end()")
        if not chunk:
            return chunk
        if not self._bom_checked:
            chunk = self._pending_start + chunk
            self._pending_start = b""
            if len(chunk) < 3 and _BOM.startswith(chunk):
                self._pending_start = chunk
                return b""
            self._bom_checked = True
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
                self._offset = 3
        if self._skip_lf and chunk:
            self._skip_lf = False
            owner = self._lf_owner
            self._lf_owner = None
            if chunk[0] == 10:  # LF completing a CR line end from the previous chunk
                chunk = chunk[1:]
                self._offset += 1
                if owner is not None:   # the frame or comment that CR ended (see the class docstring)
                    if owner.__class__ is SSEComment:
                        object.__setattr__(owner, "raw", owner.raw + b"\n")
                    else:
                        object.__setattr__(owner, "_raw", owner.raw + b"\n")
                elif self._event_raw:
                    self._event_raw.append(b"\n")
        self._special = self._skip_lf or not self._bom_checked
        return chunk

    def _frames(self, buf: bytes, out: list, hold: bool = True, src: bytes | None = None) -> None:
        """Decode the complete lines in `buf` (the unfinished tail included; it holds a line end).

        Fast path for the regular streams providers send: lines that alternate `data: ...` / blank (OpenAI chat,
        Gemini) or go `event: ...` / `data: ...` / blank (Anthropic, OpenAI Responses), with LF or CRLF line
        ends. Such a run (checked with C-level list operations first, then event by event) becomes frames
        directly; an event left open by the previous chunk, and everything from the first irregular line on,
        take the line path (`_run`, or `_lines` for mixed line ends). All give exactly what `_line` would.

        Lines that begin an event but do not finish it (`event: ...` before its `data:` line has come) are held
        back in the tail when `hold` is set and they produce no item (no comment, valid UTF-8): decoding them
        now or with the rest of their event gives the same items from the same `feed()` calls, and a chunk
        that ends inside an event then leaves no open event for the next one to finish on the slow path.
        At most _HOLD_LINES lines and _HOLD_BYTES bytes are held.

        `src`: the chunk that was fed, the end of `buf` (all of it, or after the tail carried over): frames that
        lie within it refer to it (a shared `(src, offset)` pair) instead of copying their raw bytes (see `SSEFrame`).
        """
        self._held = self._held_lines = 0
        lines = buf.split(b"\n")
        last_line = lines.pop()  # what follows the last LF: an unfinished line, in which CRs may end lines
        crlf = 13 in buf
        if crlf:
            r = last_line.rfind(13) + 1
            if r:
                self._tail = [last_line[r:]] if r < len(last_line) else []
                if r == len(last_line):  # a CR at the very end: a LF starting the next chunk belongs to it
                    self._skip_lf = self._special = True
                last_line = last_line[:r]  # complete lines ended by CRs
            else:
                self._tail = [last_line] if last_line else []
                last_line = b""
            blank = b"\r"
            bl = 2                   # bytes of a blank line
            cut = -1
        else:
            self._tail = [last_line] if last_line else []
            last_line = b""
            blank = b""
            bl = 1
            cut = None
        base = self._offset
        whole = len(buf)             # a frame that is all of buf (= src) is given src itself
        src_at = whole if src is None else whole - len(src)   # where src begins in buf
        holder = None
        s = 0                        # index of the first line not yet decoded
        pos = 0                      # its offset in buf
        if self._event_start >= 0:   # the open event ends at the first blank line
            try:
                s = lines.index(blank) + 1
            except ValueError:
                self._tail_lines(buf, lines, 0, last_line, crlf, out)
                return
            head = lines[:s]
            pos = sum(map(len, head)) + s
            if crlf and not (buf.count(13, 0, pos) == s and all(map(_endswith, head, _CRS))):
                self._lines(buf[:pos], out)
            else:
                self._run(buf, head, cut, out)
        elif lines and lines[0] == blank:
            while s < len(lines) and lines[s] == blank:
                s += 1
                pos += bl
        rest = lines[s:] if s else lines
        odd = rest[1::2]
        n = n0 = self._n
        step = 0
        if odd.count(blank) == len(odd):  # data / blank / data / blank ...
            step = 2
            pos = self._data_events(buf, rest[:2 * len(odd):2], pos, base, crlf, src, src_at, out)
            n = self._n
        else:
            third = rest[2::3]
            if third.count(blank) == len(third):  # event / data / blank ...
                step = 3
                last_id = self._last_id
                compact = self._compact
                frame_cls = self._frame_cls
                m = 3 * len(third)
                names = self._event_names
                event_name = self._event_name
                for ev, line in zip(rest[:m:3], rest[1:m:3]):
                    if line[:6] == b"data: ":
                        start = 6
                    elif line[:5] == b"data:":
                        start = 5
                    else:
                        break
                    le = len(ev)
                    ln = len(line)
                    if crlf and (ev.find(13) != le - 1 or line.find(13) != ln - 1):
                        break
                    event = names.get(ev) or event_name(ev, cut)   # (None: not an `event:` line)
                    if event is None:
                        break
                    if compact:
                        if not line.isascii() and not _utf8(line[start:cut]):
                            break
                        data = le + 1 + start
                    else:
                        try:
                            data = line[start:cut].decode()
                        except UnicodeDecodeError:
                            break
                    end = pos + le + ln + 2 + bl
                    f = _new(_FrameBuilder)
                    f.n = n
                    f.offset = base + pos
                    f.event = event
                    f.data = data
                    f.id = last_id
                    f.retry = None
                    if pos < src_at:
                        f._raw = buf[pos:end]
                    elif pos == 0 and end == whole:
                        f._raw = src
                    else:
                        if holder is None:
                            holder = (src, base + src_at)
                        f._raw = holder
                    f.__class__ = frame_cls
                    out.append(f)
                    n += 1
                    pos = end
        self._offset = base + pos
        i = s + (n - n0) * step if n != n0 else s
        self._n = n
        if i == len(lines) and not last_line:
            if step == 2 and not self._special:
                self._steady = blank   # see _steady_frames
            return
        left = lines[i:] if i else lines
        if (hold and not last_line and len(left) <= _HOLD_LINES and self._event_start < 0
                and len(buf) - pos <= _HOLD_BYTES and _quiet(left, crlf)):
            self._held = len(buf) - pos - (len(self._tail[0]) if self._tail else 0)
            self._held_lines = len(left)
            self._tail = [buf[pos:]]
            return
        self._tail_lines(buf, left, pos, last_line, crlf, out)

    def _data_events(self, buf: bytes, data_lines: list[bytes], pos: int, base: int, crlf: bool,
                     src: bytes | None, src_at: int, out: list) -> int:
        """Frames for `data:` lines each followed by a blank line (the caller checked the blank lines), from
        buf[pos] on (`base`: the stream offset of buf[0]), until a line that is not such a one; returns the
        offset in buf after the last frame made, where the decoder now is (`_offset`; `_n` counts the frames).
        See `_frames` for `src`."""
        n = self._n
        last_id = self._last_id
        compact = self._compact
        frame_cls = self._frame_cls
        cut = -1 if crlf else None
        bl = 3 if crlf else 2        # bytes of the line end and the blank line after a data line
        holder = (src, base + src_at)
        # (the named-event loop in `_frames` tests a `data:` line with the same lines: a helper called per frame
        # would cost about a tenth of the framing throughput)
        for line in data_lines:
            ln = len(line)
            if line[:6] == b"data: ":
                start = 6
            elif line[:5] == b"data:":
                start = 5
            else:
                break
            if compact:   # the data is read from the bytes when asked (see CompactSSEFrame)
                if crlf and line.find(13) != ln - 1:
                    break
                if not line.isascii() and not _utf8(line[start:cut]):
                    break
                data = start
            else:
                try:
                    data = line[start:cut].decode()
                except UnicodeDecodeError:
                    break
                # with CRLF the line must end in its one CR (`cut` dropped it): a str test finds others
                if crlf and (line[-1] != 13 or "\r" in data):
                    break
            end = pos + ln + bl
            f = _new(_FrameBuilder)
            f.n = n
            f.offset = base + pos
            f.event = "message"
            f.data = data
            f.id = last_id
            f.retry = None
            if pos < src_at:
                f._raw = buf[pos:end]
            elif pos == 0 and end == len(buf):   # a frame that is all of buf (= src) is given src itself
                f._raw = src
            else:
                f._raw = holder
            f.__class__ = frame_cls
            out.append(f)
            n += 1
            pos = end
        self._n = n
        self._offset = base + pos
        return pos

    def _steady_frames(self, chunk: bytes, out: list) -> bool:
        """The steady state of an unnamed-event stream (OpenAI chat, Gemini): the last chunk was all `data:` /
        blank line pairs, so nothing is held and no event is open; the tail is at most an unfinished line
        (no CR or LF in it). When `chunk` (with that tail) is again only such pairs and an unfinished line, its
        frames are made here, without `_frames`' setup for every other case; else False and nothing changed
        (or, if a line in the run is not a regular one, the frames before it are made here and the rest goes to
        `_frames`). `self._steady` is the blank line of the stream's line ends (b"\r" for CRLF, b"" for LF)."""
        blank = self._steady
        tail = self._tail
        if tail:
            head = tail[0] if len(tail) == 1 else b"".join(tail)
            buf = head + chunk
            src_at = len(head)
        else:
            buf = chunk
            src_at = 0
        lines = buf.split(b"\n")
        last = lines.pop()
        odd = lines[1::2]
        if (len(lines) & 1 or odd.count(blank) != len(odd)
                or (13 in last if blank else 13 in chunk)):   # (an unfinished line holds no CR)
            return False
        self._tail = [last] if last else []
        pos = self._data_events(buf, lines[::2], 0, self._offset, bool(blank), chunk, src_at, out)
        if pos + len(last) < len(buf):   # an irregular line: the general path from there on
            self._steady = None
            self._tail = []
            self._frames(buf[pos:], out)
        return True

    def _tail_lines(self, buf: bytes, lines: list[bytes], pos: int, last_line: bytes, crlf: bool,
                    out: list) -> None:
        """The line path for buf[pos:], whose LF-ended lines are `lines`, followed by `last_line` (see `_frames`)."""
        if not crlf:
            self._run(buf, lines, None, out, pos)
        elif buf.count(13, pos) == len(lines) + (1 if last_line else 0) and all(map(_endswith, lines, _CRS)):
            self._run(buf, lines, -1, out, pos)
            if last_line:
                self._line(last_line[:-1], b"\r", out)
        else:
            end = len(buf) - sum(map(len, self._tail))  # the unfinished line is not decoded
            self._lines(buf[pos:end], out)

    def _lines(self, buf: bytes, out: list) -> None:
        """Decode `buf` (complete lines, starting at a line start) line by line."""
        if 13 not in buf:
            lines = buf.split(b"\n")
            lines.pop()  # the empty piece after the final LF
            self._run(buf, lines, None, out)
            return
        if 10 not in buf:   # CR line ends only: one byte each too, so the same line loop
            lines = buf.split(b"\r")
            lines.pop()
            self._run(buf, lines, None, out)
            return
        # All CRLF? Then every LF-cut piece ends in CR and holds no other CR (`count` and `split` on one byte are
        # several times faster than on b"\r\n").
        lines = buf.split(b"\n")
        last_line = lines.pop()  # empty after a final LF, else the line the trailing CR ends, CR included
        if buf.count(13) == len(lines) + (1 if last_line else 0) and all(map(_endswith, lines, _CRS)):
            self._run(buf, lines, -1, out)
            if last_line:
                self._line(last_line[:-1], b"\r", out)
        else:
            pos = 0
            line_fn = self._line
            for m in _LINE_END.finditer(buf):
                s, e = m.span()
                line_fn(buf[pos:s], buf[s:e], out)
                pos = e

    def _run(self, buf: bytes, lines: list[bytes], cut: int | None, out: list, pos: int = 0) -> None:
        """The line loop: `lines` are `buf` cut at each LF, from buf[pos] on; with `cut` -1 each also ends in CR.

        Equivalent to calling `_line` for each line, with the state kept in locals. `pend` is where the current
        event's raw bytes not yet saved in `self._event_raw` begin in `buf` (-1 when there are none).
        """
        k = 0 if cut is None else 1      # bytes of CR at the end of each line
        base = self._offset - pos        # the stream offset of buf[0]
        pend = -1
        ev_start = self._event_start
        raw_saved = self._event_raw
        data = self._data
        event_type = self._event_type
        n = self._n
        made = -1                        # where the last frame made here ended in buf
        for line in lines:
            ln = len(line)
            if ln > k:
                if line[:6] == b"data: ":
                    try:
                        data.append(line[6:cut].decode())
                    except UnicodeDecodeError as exc:
                        data.append(line[6:cut].decode("utf-8", "replace"))
                        out.append(_bad_utf8(n, base + pos + 6 + exc.start))
                    if pend < 0:
                        pend = pos
                        if ev_start < 0:
                            ev_start = base + pos
                elif line[:7] == b"event: ":
                    try:
                        event_type = line[7:cut].decode()
                    except UnicodeDecodeError as exc:
                        event_type = line[7:cut].decode("utf-8", "replace")
                        out.append(_bad_utf8(n, base + pos + 7 + exc.start))
                    if pend < 0:
                        pend = pos
                        if ev_start < 0:
                            ev_start = base + pos
                else:
                    try:
                        text = line[:cut].decode()
                    except UnicodeDecodeError as exc:
                        text = line[:cut].decode("utf-8", "replace")
                        out.append(_bad_utf8(n, base + pos + exc.start))
                    if text[0] == ":":
                        if pend >= 0:
                            raw_saved.append(buf[pend:pos])
                            pend = -1
                        out.append(_comment(n, base + pos, text[2:] if text[1:2] == " " else text[1:],
                                            buf[pos:pos + ln + 1]))
                    else:
                        if pend < 0:
                            pend = pos
                            if ev_start < 0:
                                ev_start = base + pos
                        field, sep, value = text.partition(":")
                        if sep and value[:1] == " ":
                            value = value[1:]
                        if field == "data":
                            data.append(value)
                        elif field == "event":
                            event_type = value
                        elif field == "id":
                            if "\0" not in value:
                                self._last_id = value
                        elif field == "retry":
                            self._retry = retry_value(value, self._retry)
                        # other field names are ignored, as the WHATWG rules say
            elif ev_start >= 0:  # a blank line ends the event
                end = pos + ln + 1
                raw = buf[pos if pend < 0 else pend:end]
                if raw_saved:
                    raw_saved.append(raw)
                    raw = b"".join(raw_saved)
                    raw_saved = []
                if data:
                    f = _FrameBuilder(n, ev_start, event_type or "message", "\n".join(data), self._last_id,
                                      self._retry, raw)
                    f.__class__ = SSEFrame
                    out.append(f)
                    n += 1
                    data = []
                    made = end
                else:
                    out.append(SSEDiagnostic(n, ev_start, "event-without-data", _NO_DATA))
                ev_start = -1
                pend = -1
                event_type = ""
                self._retry = None
            pos += ln + 1
        if pend >= 0:
            raw_saved.append(buf[pend:pos])
        if made >= 0:
            self._frame_end = base + made
        self._offset = base + pos
        self._event_start = ev_start
        self._event_raw = raw_saved
        self._data = data
        self._event_type = event_type
        self._n = n

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
            if 10 in line or 13 in line:  # lines held back by `_frames` (see there)
                self._frames(line, out, False)
                line = b"".join(self._tail)
                self._tail = []
            if line:
                self._line(line, b"", out)
        if self._event_start >= 0:
            if self._data:
                out.append(SSEDiagnostic(self._n, self._event_start, "unterminated-final-event",
                                         "the body ended inside an event (no blank line after it); "
                                         "browsers drop such an event, it is shown here"))
            self._dispatch(out)
        self._ended = self._special = True
        return out

    # -- the general path: one line at a time --------------------------------------------------------------
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
            out.append(_bad_utf8(self._n, offset + exc.start))
        if text[0] == ":":
            out.append(_comment(self._n, offset, text[2:] if text[1:2] == " " else text[1:], line + terminator))
            return
        if self._event_start < 0:
            self._event_start = offset
        self._event_raw.append(line + terminator)
        field, sep, value = text.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event_type = value
        elif field == "id":
            if "\0" not in value:
                self._last_id = value
        elif field == "retry":
            self._retry = retry_value(value, self._retry)
        # other field names are ignored, as the WHATWG rules say

    def _dispatch(self, out: list) -> None:
        raw = b"".join(self._event_raw)
        if self._data:
            out.append(_frame(self._n, self._event_start, self._event_type or "message", "\n".join(self._data),
                              self._last_id, self._retry, raw))
            self._n += 1
            self._frame_end = self._offset
        else:
            out.append(SSEDiagnostic(self._n, self._event_start, "event-without-data", _NO_DATA))
        self._event_start = -1
        self._event_raw = []
        self._data = []
        self._event_type = ""
        self._retry = None


_NO_DATA = "an event block with no data field was not dispatched (WHATWG rules)"

#: the largest reconnection time a `retry:` field sets (an unsigned 64-bit count of milliseconds, as browsers
#: parse it); a larger value is ignored like one that is not all digits
MAX_RETRY = 2 ** 64 - 1


def retry_value(value: str, current: int | None) -> int | None:
    """The reconnection time after a `retry:` field of `value`: its integer when it is all ASCII digits (the WHATWG
    rule) and at most MAX_RETRY, else `current` (the field is ignored). Bounded work whatever its length: Python
    refuses to convert more than 4300 digits, and a longer value is beyond MAX_RETRY anyway (after its leading
    zeros, which are dropped first)."""
    if not (value.isascii() and value.isdigit()):
        return current
    digits = value.lstrip("0")
    if len(digits) > 20:          # (MAX_RETRY has 20 digits)
        return current
    n = int(digits or "0")
    return n if n <= MAX_RETRY else current
