"""A pane's incremental index over one core run: what the Qt models read, brought up to date once per repaint.

`RunView` never parses anything. It reads what the core already produced for a run (`run.chunks`, the
decoder's SSE items, `run.events`, the reply snapshot) and keeps a few derived, append-only indexes so that the
Qt models and the timeline do O(new data) work per repaint:

- the arrival time of every SSE item: frames from `run.frame_times`, comment lines from the chunk that
  delivered their last byte (SSE items keep their byte offset; chunks keep their arrival time);
- for each frame its "kind" for the timeline's colours (text, thinking, tool arguments, keepalive, usage, error,
  other); what a frame produced is looked up in `run.events` when asked (`frame_events_of`);
- the frames a finding (a diagnostic that is not routine) concerns: the timeline marks them;
- where the usage snapshots are in `run.events` (the Usage tab's history);

and answers, when asked (a row shown, a block selected), which network chunks carried an item (`chunks_of`) and
which frames belong to a block (`frames_of_block`).

The indexes are compact arrays (a few bytes per frame, no Python object per frame): a firehose of frames costs
little memory beyond the core's own records.

It reads a `core.live.recorder.ProviderRun` (live, replayed, or rebuilt from a capture); times are the run's own clock
(ns since the request was sent).
"""
from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import islice, repeat
from operator import attrgetter

from core.wire import events as ev
from core.wire.events import ROUTINE_DIAGNOSTICS
from core.wire.sse import SSEFrame

# frame kinds, in increasing priority (a frame that produced several kinds of events shows the highest)
KIND_OTHER, KIND_KEEPALIVE, KIND_USAGE, KIND_TEXT, KIND_THINKING, KIND_TOOL, KIND_ERROR = range(7)
KIND_NAMES = ("other", "keepalive", "usage", "text", "thinking", "tool arguments", "error")

_EVENT_KIND = {
    ev.TextDelta: KIND_TEXT,
    ev.RefusalDelta: KIND_TEXT,
    ev.ThinkingDelta: KIND_THINKING,
    ev.SignatureDelta: KIND_THINKING,
    ev.ToolArgsDelta: KIND_TOOL,
    ev.ToolArgsReplaced: KIND_TOOL,
    ev.Keepalive: KIND_KEEPALIVE,
    ev.UsageUpdated: KIND_USAGE,
    ev.InBandError: KIND_ERROR,
}

_frame_of = attrgetter("frame")
_UsageUpdated = ev.UsageUpdated
_Diagnostic = ev.Diagnostic
_NO_KIND = -1
# events that say which block they belong to (a frame that produced one of these for another block is not
# this block's frame)
_BLOCK_EVENTS = (ev.BlockStarted, ev.TextDelta, ev.ThinkingDelta, ev.SignatureDelta, ev.ToolArgsDelta,
                 ev.ToolArgsReplaced, ev.RefusalDelta, ev.BlockStopped)


class ChunkSpan(tuple):
    """Where one network chunk carried part of an SSE item: (chunk number, its arrival ns, the part's start and
    end within the chunk, its start within the item)."""

    __slots__ = ()

    chunk = property(lambda self: self[0])
    t_ns = property(lambda self: self[1])
    start = property(lambda self: self[2])
    end = property(lambda self: self[3])
    item_start = property(lambda self: self[4])


class RunView:
    """Derived, append-only indexes over one run; `sync()` brings them up to date."""

    def __init__(self, run) -> None:
        self.run = run
        # chunks
        self._chunks_seen = 0
        self._chunk_ends = array("q")       # cumulative byte count after each chunk
        self._chunk_times = array("q")
        # SSE items
        self.items_seen = 0                 # decoder.items consumed
        self.item_ns = array("q")           # arrival time of each item (same order as decoder.items)
        self.frames_seen = 0                # SSEFrames among them
        self.frame_row = array("q")         # frame n -> its row in decoder.items (-1: counted, not kept)
        self.frames_kept = 0
        self.item_kinds = array("b")        # the timeline kind of each item (same order as decoder.items)
        self.event_names: set[str] = set()
        self.comments = 0
        # events
        self._events_seen = 0
        self._events_ordered = True         # event frames never decreased so far
        self._sorted_upto = 0               # run.events[:_sorted_upto] have non-decreasing frames (bisectable)
        self._last_event_frame = -1
        self.frame_kind = array("b")        # frame n -> the strongest kind its events had (-1: none yet)
        self.warning_frames = array("q")    # frames a finding concerns (a non-routine diagnostic), in event order
        self.revised_frames: list[int] = []  # frames synced before the last sync that got events in it (end-of-
                                            # stream findings): what was shown for them is out of date
        self.usage_events = array("q")      # where each UsageUpdated is in run.events, in order
        self.last_event_ns: int | None = None
        self.new_event_names = False

    # -- the clock: ns since the request was sent (`run.t0_ns` is the origin) --------------------------
    @property
    def t0_ns(self) -> int:
        return self.run.t0_ns

    def ms(self, t_ns: int | None) -> float | None:
        return None if t_ns is None else (t_ns - self.t0_ns) / 1e6

    def now_ns(self) -> int:
        return self.run.clock()

    @property
    def first_content_ns(self) -> int | None:
        return self.run.metrics.t_first_content_ns

    # -- sync --------------------------------------------------------------------------------------
    def sync(self) -> bool:
        """Consume what the run gained since the last call; True when anything changed."""
        run = self.run
        changed = False
        frames_before = self.frames_seen    # events for frames already shown before this sync revise them
        self.revised_frames = []
        chunks = run.chunks
        n = len(chunks)
        if n > self._chunks_seen:
            total = self._chunk_ends[-1] if self._chunk_ends else 0
            for i in range(self._chunks_seen, n):
                t, data = chunks[i]
                total += len(data)
                self._chunk_ends.append(total)
                self._chunk_times.append(t)
            self._chunks_seen = n
            changed = True
        items = run.decoder.items
        n = len(items)
        if n > self.items_seen:
            ends, times = self._chunk_ends, self._chunk_times
            last_t = times[-1] if times else 0
            names = self.event_names
            before = len(names)
            frame_times = run.frame_times
            n_times = len(frame_times)
            # (the hot loop of a firehose: every name it needs is a local)
            item_ns_append = self.item_ns.append
            rows = self.frame_row
            rows_append = rows.append
            add_name = names.add
            kept = self.frames_kept
            for i in range(self.items_seen, n):
                item = items[i]
                if isinstance(item, SSEFrame):   # a frame (CompactSSEFrame is one too)
                    fn = item.n
                    item_ns_append(frame_times[fn] if fn < n_times else last_t)
                    if len(rows) < fn:   # frames the decoder counted but did not keep (a flood of broken ones)
                        rows.extend(array("q", [-1]) * (fn - len(rows)))
                    rows_append(i)
                    kept += 1
                    add_name(item.event)
                else:   # a comment line: the chunk that delivered its last byte
                    j = bisect_left(ends, item.offset + len(item.raw))
                    item_ns_append(times[j] if j < len(times) else last_t)
                    self.comments += 1
            self.frames_kept = kept
            self.frames_seen = kept
            self.items_seen = n
            self.new_event_names = len(names) != before
            changed = True
        events = run.events
        n = len(events)
        if n > self._events_seen:
            kinds = self.frame_kind
            ordered = self._events_ordered
            sorted_upto = self._sorted_upto
            last_f = self._last_event_frame
            kind_of = _EVENT_KIND.get
            usage_events = self.usage_events
            revised = self.revised_frames
            for i, e in enumerate(_event_objects(events, self._events_seen, n), self._events_seen):
                te = type(e)
                if te is _UsageUpdated:
                    usage_events.append(i)
                f = e.frame
                if ordered:
                    if f < last_f:
                        ordered = False
                        sorted_upto = i
                    else:
                        last_f = f
                if f < 0:
                    continue
                if f < frames_before:
                    revised.append(f)
                k = kind_of(te, KIND_OTHER)
                if te is _Diagnostic and e.code not in ROUTINE_DIAGNOSTICS:
                    self.warning_frames.append(f)
                if f >= len(kinds):
                    if f > len(kinds) + 1_000_000:   # not a frame number this run can have
                        continue
                    kinds.extend(repeat(_NO_KIND, f + 1 - len(kinds)))
                if k > kinds[f]:
                    kinds[f] = k
            self._events_ordered = ordered
            self._sorted_upto = n if ordered else sorted_upto
            self._last_event_frame = last_f
            self.last_event_ns = events[-1][0]
            self._events_seen = n
            changed = True
        # kinds of the new items: a frame's events are produced when it is dispatched, so they are known now
        kinds_list = self.item_kinds
        if len(kinds_list) < self.items_seen:
            fk = self.frame_kind      # (kind_of_frame, inlined: this runs once per item)
            n_fk = len(fk)
            other = KIND_OTHER
            kinds_list.extend((other if (k := (fk[item.n] if item.n < n_fk else _NO_KIND)) == _NO_KIND else k)
                              if isinstance(item, SSEFrame) else KIND_KEEPALIVE
                              for item in items[len(kinds_list):self.items_seen])
        return changed

    # -- queries -----------------------------------------------------------------------------------
    def kind_of_frame(self, n: int) -> int:
        kinds = self.frame_kind
        k = kinds[n] if 0 <= n < len(kinds) else _NO_KIND
        return KIND_OTHER if k == _NO_KIND else k

    def item_kind(self, row: int) -> int:
        if row < len(self.item_kinds):
            return self.item_kinds[row]
        item = self.run.decoder.items[row]
        if isinstance(item, SSEFrame):
            return self.kind_of_frame(item.n)
        return KIND_KEEPALIVE

    def frame_events_of(self, frame: int) -> list:
        """The events frame `frame` produced (of those synced), in order: found in `run.events` when asked (a
        bisection over the events in frame order, then a look at the few that came out of order, if any)."""
        n = self._events_seen
        events = self.run.events
        objs = getattr(events, "events", None)   # an EventLog (no copy); else a list of (t, event) pairs
        if objs is None:
            objs = _event_objects(events, 0, n)
        s = self._sorted_upto
        i = bisect_left(objs, frame, 0, s, key=_frame_of)
        out = objs[i:bisect_right(objs, frame, i, s, key=_frame_of)]
        if s < n:
            out += [e for e in islice(objs, s, n) if e.frame == frame]
        return out

    def frames_of_block(self, block) -> list[int]:
        """Every frame that belongs to `block` (a `core.wire.reply.Block`), in order: the frames whose events
        address it (`block.frames`, from the events' block index) and, between its first and last frame, those
        that produced nothing or only findings (an Anthropic `input_json_delta` with an empty `partial_json`,
        a Responses `function_call_arguments.done`: that block's frames, though they added nothing). Frames in
        that span whose events address another block, or carry only keepalives, usage or the like, are not
        its frames."""
        own = block.frames
        if len(own) < 2:
            return list(own)
        mine = set(own)
        kinds = self.frame_kind
        out = []
        for f in range(own[0], own[-1] + 1):
            if f in mine:
                out.append(f)
                continue
            k = kinds[f] if f < len(kinds) else _NO_KIND
            if k == _NO_KIND:
                out.append(f)       # it produced no event
            elif k == KIND_OTHER:   # starts, stops, finishes, findings: look at them
                produced = self.frame_events_of(f)
                if produced and all(type(e) is _Diagnostic and e.code != "keepalive" for e in produced):
                    out.append(f)
        return out

    def chunks_of(self, row: int) -> list[ChunkSpan]:
        """The network chunks that carried SSE item `row` (of `decoder.items`), in order: more than one when
        the item was split across chunks. Items keep their stream offset, chunks their sizes: a bisection."""
        item = self.run.decoder.items[row]
        start = item.offset
        end = start + len(item.raw)
        ends, times = self._chunk_ends, self._chunk_times
        if not ends:
            return []
        first = bisect_right(ends, start)
        last = min(bisect_left(ends, end), len(ends) - 1)
        out = []
        for j in range(first, last + 1):
            base = ends[j - 1] if j else 0
            lo = max(start, base)
            out.append(ChunkSpan((j, times[j], lo - base, min(end, ends[j]) - base, lo - start)))
        return out

    def chunk_range(self, row: int) -> tuple[int, int] | None:
        """(first, last) chunk numbers that carried SSE item `row` (None before its chunks are synced)."""
        item = self.run.decoder.items[row]
        ends = self._chunk_ends
        if not ends:
            return None
        start = item.offset
        first = bisect_right(ends, start)
        last = min(bisect_left(ends, start + len(item.raw)), len(ends) - 1)
        return (first, last) if first < len(ends) else None

    def chunk_size(self, j: int) -> int:
        return self._chunk_ends[j] - (self._chunk_ends[j - 1] if j else 0)

    @property
    def chunks_seen(self) -> int:
        return self._chunks_seen

    def usage_update(self, k: int) -> ev.UsageUpdated:
        """The k-th usage snapshot of the run (of those synced)."""
        events = self.run.events
        i = self.usage_events[k]
        objs = getattr(events, "events", None)   # an EventLog keeps the event objects apart from their times
        return objs[i] if objs is not None else events[i][1]

    def last_chunk_ns(self) -> int | None:
        return self._chunk_times[-1] if self._chunk_times else None


def _event_objects(events, start: int, stop: int) -> list:
    """Events start..stop of `run.events` without their times (`core.live.recorder.EventLog.events`, or from pairs)."""
    objs = getattr(events, "events", None)
    if objs is not None:
        return objs if start == 0 and stop == len(objs) else objs[start:stop]
    return [e for _t, e in events[start:stop]]
