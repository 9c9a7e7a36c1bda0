"""Anthropic Messages streaming (`event: <name>` + `data: {...}`), to normalized events.

The stream: `message_start` (id, model, up-front usage), then content blocks addressed by their `index`
(`content_block_start` / `content_block_delta` / `content_block_stop`), `message_delta` (stop_reason and the
cumulative usage, whose values replace the up-front ones), `message_stop` (the end marker), `ping` keepalives
at any point and `error` events in-band after HTTP 200.

Quirks handled here, each with the corpus stream that shows it:
* a tool block whose `partial_json` fragments are all empty (or absent) has its arguments in
  `content_block_start.input` (parallel-tool-use, thinking-then-tool-use): serialized compactly at block end;
* `redacted_thinking` blocks carry opaque `data` and no text;
* server tools (`server_tool_use`, `mcp_tool_use`) are tool calls with a `provider_type`; their
  `*_tool_result` blocks arrive whole in `content_block_start` and become `other` blocks;
* `citations_delta` is metadata for a text block, never text: it is kept on the block's final raw object;
* a block of a type without a kind of its own (`compaction`, and any to come) is `other`; its own deltas
  (`compaction_delta`: `<type>_delta`) fill its text, and their other fields (`encrypted_content`) its final raw;
  only a delta that matches no open block is an unknown event;
* a stream cut from a log may start with deltas for a block never started (error-api-error-midstream-FRAGMENT).
"""
from __future__ import annotations

from core.wire import events as ev
from core.wire.jsonfast import DEPTH_GATE, dumps_compact, loads_fast, may_nest_too_deep
from core.wire.sse import SSEFrame
from core.wire.adapters.base import (MALFORMED, Adapter, bad_index, json_type, malformed, text_or_none,
                                    token_count)

_TextDelta = ev.builder(ev.TextDelta)
_ThinkingDelta = ev.builder(ev.ThinkingDelta)
_ToolArgsDelta = ev.builder(ev.ToolArgsDelta)
_SignatureDelta = ev.builder(ev.SignatureDelta)

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "pause_turn": "other",
}

_TOOL_TYPES = {"tool_use": None, "server_tool_use": "server_tool_use", "mcp_tool_use": "mcp_tool_use"}

# the block kind a delta implies, for a delta whose block was never started
_KIND_OF_DELTA = {"text_delta": "text", "citations_delta": "text", "thinking_delta": "thinking",
                  "signature_delta": "thinking", "input_json_delta": "tool_call", "compaction_delta": "other"}


class _Block:
    """What the adapter remembers about an open content block."""

    __slots__ = ("index", "kind", "args", "input", "citations", "provider_index", "raw", "delta_type", "texts",
                 "latest")

    def __init__(self, index: int, kind: str, provider_index, input_=None, raw=None) -> None:
        self.index = index
        self.kind = kind
        self.provider_index = provider_index
        self.args: list[str] | None = [] if kind == "tool_call" else None  # non-empty partial_json fragments
        self.input = input_            # content_block_start.input (tool blocks)
        self.citations: list | None = None
        # `other` blocks: the block as started, its own delta type (`compaction` -> `compaction_delta`), the
        # text its deltas carried and their latest other fields (opaque ones such as `encrypted_content`)
        self.raw = raw
        btype = raw.get("type") if type(raw) is dict else None
        self.delta_type = f"{btype}_delta" if type(btype) is str else None
        self.texts: list[str] | None = None
        self.latest: dict | None = None


#: the rule `Usage.rule` names (the Usage tab shows it)
RULE = "input = input_tokens + cache_read + cache_creation; output = output_tokens (the last message_delta's)"


def canonical_usage(raw: dict) -> ev.Usage:
    """The contract's usage from Anthropic's (merged) usage object."""
    get = raw.get
    inp = token_count(get("input_tokens"))
    cr = token_count(get("cache_read_input_tokens"))
    cw = token_count(get("cache_creation_input_tokens"))
    total_in = None if inp is None and cr is None and cw is None else (inp or 0) + (cr or 0) + (cw or 0)
    out = token_count(get("output_tokens"))
    details = get("output_tokens_details")
    reasoning = token_count(details.get("thinking_tokens")) if isinstance(details, dict) else None
    total = total_in + out if total_in is not None and out is not None else None
    return ev.Usage(input_tokens=total_in, output_tokens=out, total_tokens=total, cache_read_tokens=cr,
                    cache_write_tokens=cw, reasoning_tokens=reasoning, raw=raw, rule=RULE)


class AnthropicAdapter(Adapter):
    format = "anthropic"
    terminator_description = "a message_stop event"

    def __init__(self) -> None:
        super().__init__()
        self._open: dict = {}            # provider block index -> _Block, while the block is open
        self._started = False
        self._usage_raw: dict | None = None
        self._pings = 0
        self._handlers = {   # events whose data is read
            "content_block_delta": self._on_delta,
            "content_block_start": self._on_block_start,
            "content_block_stop": self._on_block_stop,
            "message_start": self._on_message_start,
            "message_delta": self._on_message_delta,
            "error": self._on_error,
        }
        self._dataless = {"message_stop": self._on_message_stop, "ping": self._on_ping}   # (data not read)

    # -- dispatch ------------------------------------------------------------------------------------
    def on_frame(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        event = frame.event
        handler = self._handlers.get(event)
        if handler is None:
            handler = self._dataless.get(event)
            if handler is not None:   # ping, message_stop: their data says nothing more
                if self.terminated:
                    self.check_after_terminator(frame.n, out)
                else:
                    handler(frame.n, None, out)
                return out
            if event != "message":
                self._unknown(frame.n, event, out)
                return out
        elif self.terminated:
            self.check_after_terminator(frame.n, out)
            return out
        # the frame's JSON (`frame_json` inlined: this runs per frame)
        data = frame.data
        try:
            d = loads_fast(data)
        except ValueError:
            d = self.parse_json(frame, out)   # the stdlib's leniency, else a diagnostic
            if d is None:
                if event == "error":
                    self._error_not_json(frame, out)
                return out
        else:
            if len(data) > DEPTH_GATE and may_nest_too_deep(data):
                d = self.shallow(frame.n, d, out)
        if type(d) is not dict:
            out.append(ev.Diagnostic(frame.n, "unexpected-data",
                                     f"{event} data is JSON but not an object: {data[:80]!r}"))
            return out
        if handler is None:
            handler = self._unnamed(frame.n, d, out)
            if handler is None:
                return out
        try:
            handler(frame.n, d, out)
        except MALFORMED as exc:   # a field of an unexpected JSON type (the handlers test the usual ones)
            name = event if event != "message" else d.get("type")
            out.append(malformed(frame.n, f"{name} has a field of an unexpected type; skipped", exc))
        return out

    def _unnamed(self, n: int, d: dict, out: list):
        """An event without an `event:` line: some proxies drop it; `data.type` still names the event.
        Its handler, or None (after a diagnostic)."""
        name = d.get("type")
        handler = (self._handlers.get(name) or self._dataless.get(name)) if isinstance(name, str) else None
        if handler is None:
            self._unknown(n, f"message (data.type {name!r})", out)
            return None
        if self.first_time("event-name-missing"):
            out.append(ev.Diagnostic(n, "event-name-missing",
                                     f"an event without an `event:` line (data.type {name!r}); Anthropic "
                                     "names every event, so a parser dispatching on the event name drops it"))
        if self.terminated:
            self.check_after_terminator(n, out)
            return None
        return handler

    def _unknown(self, n: int, name: str, out: list) -> None:
        if self.first_time(("unknown-event", name)):
            out.append(ev.Diagnostic(n, "unknown-event",
                                     f"unknown event {name!r}; skipped (Anthropic may add event types: "
                                     "a client should ignore the ones it does not know)"))

    # -- the hot path ----------------------------------------------------------------------------------
    def _on_delta(self, n: int, d: dict, out: list) -> None:
        try:
            delta = d["delta"]
            t = delta["type"]
            st = self._open.get(d.get("index"))
        except (KeyError, TypeError, AttributeError):
            out.append(ev.Diagnostic(n, "unexpected-data",
                                     "content_block_delta without a delta object and its type, or with an index "
                                     "that is not a number; skipped"))
            return
        if st is None:
            self._delta_without_start(n, d, delta, t, out)
            return
        if t == "text_delta":
            text = delta.get("text")
            if type(text) is str:
                if text:
                    out.append(_TextDelta(n, st.index, text))
            else:
                self._not_text(n, "text_delta", "text", text, out)
            return
        if t == "input_json_delta":
            frag = delta.get("partial_json")
            if type(frag) is not str:
                self._not_text(n, t, "partial_json", frag, out)
            elif frag and st.args is not None:
                st.args.append(frag)
                out.append(_ToolArgsDelta(n, st.index, frag))
            elif frag:  # arguments for a block that is not a tool call: not mixed into its text
                out.append(ev.Diagnostic(n, "delta-kind-mismatch",
                                         f"input_json_delta for block {st.provider_index!r}, a {st.kind} block; "
                                         "skipped"))
            return
        if t == "thinking_delta":
            text = delta.get("thinking")
            if type(text) is str:
                if text:
                    out.append(_ThinkingDelta(n, st.index, text))
            else:
                self._not_text(n, t, "thinking", text, out)
            return
        if t == "signature_delta":
            sig = delta.get("signature")
            if type(sig) is str:
                if sig:
                    out.append(_SignatureDelta(n, st.index, sig))
            else:
                self._not_text(n, t, "signature", sig, out)
            return
        if t == "citations_delta":
            if st.citations is None:
                st.citations = []
            st.citations.append(delta.get("citation"))
            return
        if t == st.delta_type:   # an `other` block's own delta (compaction_delta): its text is kept
            self._other_delta(n, st, delta, out)
            return
        self._unknown(n, f"content_block_delta type {t!r}", out)

    @staticmethod
    def _not_text(n: int, delta_type, field: str, value, out: list) -> None:
        """A delta whose text field is not a string (a malformed-event diagnostic; an absent one says nothing)."""
        if value is not None:
            out.append(malformed(n, f"{delta_type}.{field} is a JSON {type(value).__name__}, not a string; "
                                    "skipped"))

    def _other_delta(self, n: int, st: _Block, delta: dict, out: list) -> None:
        """`<type>_delta` for an `other` block of that type (Anthropic's `compaction_delta` and any such delta to
        come): its text field (named after the block type, else `text`, else `content`) is appended to the
        block's text; its other fields replace the ones before (the final raw object carries the latest)."""
        field = _text_field(st.raw, delta)
        for k, v in delta.items():
            if k == "type":
                continue
            if k == field:
                if v:
                    if st.texts is None:
                        st.texts = []
                    st.texts.append(v)
                    out.append(_TextDelta(n, st.index, v))
            else:
                if st.latest is None:
                    st.latest = {}
                st.latest[k] = v

    def _delta_without_start(self, n: int, d: dict, delta: dict, t, out: list) -> None:
        kind = _KIND_OF_DELTA.get(t)
        if kind is None:
            self._unknown(n, f"content_block_delta type {t!r}", out)
            return
        pidx = d.get("index")
        if bad_index(pidx):
            out.append(malformed(n, f"{t} for block index {pidx!r}, not a non-negative integer; skipped"))
            return
        raw = {"type": t[:-len("_delta")]} if kind == "other" else None
        st = _Block(self.new_index(), kind, pidx, raw=raw)
        self._open[pidx] = st
        out.append(ev.BlockStarted(n, st.index, kind, provider_index=pidx,
                                   provider_type=raw["type"] if raw else None))
        out.append(ev.Diagnostic(n, "delta-without-block-start",
                                 f"a {t} for block {pidx!r} arrived before its content_block_start "
                                 f"(the block is taken to be {kind}); a stream cut from a log, or a lost event"))
        self._on_delta(n, d, out)

    # -- blocks ----------------------------------------------------------------------------------------
    def _on_block_start(self, n: int, d: dict, out: list) -> None:
        block = d.get("content_block")
        if not isinstance(block, dict):
            out.append(ev.Diagnostic(n, "unexpected-data", "content_block_start without a content_block"))
            return
        pidx = d.get("index")
        if bad_index(pidx):
            out.append(malformed(n, f"content_block_start with index {pidx!r}, not a non-negative integer; "
                                    "the block is skipped"))
            return
        if pidx in self._open:  # the same index started again before its stop: close the old one
            out.append(ev.Diagnostic(n, "block-restarted",
                                     f"content_block_start for block {pidx!r}, which was still open"))
            self._close(self._open.pop(pidx), n, out)
        btype = text_or_none(block.get("type"))
        if btype == "text":
            st = _Block(self.new_index(), "text", pidx)
            out.append(ev.BlockStarted(n, st.index, "text", provider_index=pidx))
            text = block.get("text")
            if text and type(text) is str:
                out.append(_TextDelta(n, st.index, text))
            citations = block.get("citations")
            if citations and type(citations) is list:
                st.citations = list(citations)
        elif btype == "thinking":
            st = _Block(self.new_index(), "thinking", pidx)
            out.append(ev.BlockStarted(n, st.index, "thinking", provider_index=pidx))
            text = block.get("thinking")
            if text and type(text) is str:
                out.append(_ThinkingDelta(n, st.index, text))
            sig = block.get("signature")
            if sig and type(sig) is str:
                out.append(_SignatureDelta(n, st.index, sig))
        elif btype == "redacted_thinking":
            st = _Block(self.new_index(), "thinking", pidx)
            out.append(ev.BlockStarted(n, st.index, "thinking", provider_index=pidx, redacted=True, raw=block))
        elif btype in _TOOL_TYPES:
            st = _Block(self.new_index(), "tool_call", pidx, block.get("input"))
            out.append(ev.BlockStarted(n, st.index, "tool_call", id=text_or_none(block.get("id")),
                                       name=text_or_none(block.get("name")),
                                       provider_index=pidx, provider_type=_TOOL_TYPES[btype]))
        else:  # *_tool_result, compaction and any block type this adapter does not know: shown whole, as sent
            st = _Block(self.new_index(), "other", pidx, raw=block)
            out.append(ev.BlockStarted(n, st.index, "other", provider_index=pidx, provider_type=btype, raw=block))
            text = block.get(_text_field(block, block))   # text sent whole at the start (a compaction summary)
            if text and type(text) is str:
                st.texts = [text]
                out.append(_TextDelta(n, st.index, text))
        self._open[pidx] = st

    def _on_block_stop(self, n: int, d: dict, out: list) -> None:
        st = self._open.pop(d.get("index"), None)
        if st is None:
            out.append(ev.Diagnostic(n, "stop-without-block-start",
                                     f"content_block_stop for block {d.get('index')!r}, which is not open"))
            return
        self._close(st, n, out)

    def _close(self, st: _Block, n: int, out: list) -> None:
        """Finish a block: fill tool arguments from `input` when no fragment came, judge them, stop it."""
        if st.args is not None:
            if st.args:
                arguments = "".join(st.args)
            else:
                arguments = dumps_compact(st.input if st.input is not None else {})
                out.append(_ToolArgsDelta(n, st.index, arguments))
            self.check_tool_arguments(n, f"block {st.provider_index!r}", arguments, out)
        raw = None
        if st.citations is not None:
            raw = {"type": "text", "citations": st.citations}
        elif st.texts is not None or st.latest is not None:   # an `other` block its deltas filled: as it ends
            raw = dict(st.raw) if type(st.raw) is dict else {}
            if st.latest:
                raw.update(st.latest)
            if st.texts is not None:
                raw[_text_field(raw, raw)] = "".join(st.texts)
        out.append(ev.BlockStopped(n, st.index, raw))

    # -- the message -----------------------------------------------------------------------------------
    def _on_message_start(self, n: int, d: dict, out: list) -> None:
        msg = d.get("message")
        if not isinstance(msg, dict):
            out.append(ev.Diagnostic(n, "unexpected-data", "message_start without a message object"))
            return
        if not self._started:
            self._started = True
            out.append(ev.ResponseStarted(n, text_or_none(msg.get("id")), text_or_none(msg.get("model"))))
        usage = msg.get("usage")
        if isinstance(usage, dict):
            self._usage_raw = dict(usage)
            out.append(ev.UsageUpdated(n, canonical_usage(self._usage_raw), "up-front"))
        elif usage is not None:
            out.append(malformed(n, f"message_start message.usage is a JSON {json_type(usage)}, not an object; "
                                    "skipped"))

    def _on_message_delta(self, n: int, d: dict, out: list) -> None:
        delta = d.get("delta")
        if isinstance(delta, dict):
            reason = delta.get("stop_reason")
            if reason is not None:
                canonical = _FINISH.get(reason, "other") if type(reason) is str else "other"
                out.append(ev.Finished(n, ev.FinishReason(canonical, reason)))
        elif delta is not None:
            out.append(malformed(n, f"message_delta delta is a JSON {json_type(delta)}, not an object; skipped"))
        usage = d.get("usage")
        if isinstance(usage, dict):
            # cumulative: every value replaces the one before (message_start's or an earlier delta's)
            merged = dict(self._usage_raw) if self._usage_raw else {}
            for k, v in usage.items():
                if v is not None or k not in merged:
                    merged[k] = v
            self._usage_raw = merged
            out.append(ev.UsageUpdated(n, canonical_usage(merged), "cumulative"))
        elif usage is not None:
            out.append(malformed(n, f"message_delta usage is a JSON {json_type(usage)}, not an object; skipped"))

    def _on_message_stop(self, n: int, _d, out: list) -> None:
        if self._open:
            out.append(ev.Diagnostic(n, "block-not-stopped",
                                     f"message_stop while block(s) {sorted(map(str, self._open))} are open"))
            for st in list(self._open.values()):
                self._close(st, n, out)
            self._open.clear()
        self.mark_terminated(n, "message_stop", out)

    def _on_ping(self, n: int, _d, out: list) -> None:
        self._pings += 1
        out.append(ev.Keepalive(n))
        if self._pings == 1:
            out.append(ev.Diagnostic(n, "keepalive",
                                     "ping event: a keepalive carrying no content (more may follow, reported "
                                     "once); a parser that expects only message/content events must skip it"))

    def _on_error(self, n: int, d: dict, out: list) -> None:
        err = d.get("error")
        if not isinstance(err, dict):
            err = d
        etype = err.get("type")
        message = err.get("message")
        out.append(ev.InBandError(n, etype if isinstance(etype, str) else None,
                                  message if isinstance(message, str) else str(message), err))
        out.append(ev.Diagnostic(n, "in-band-error",
                                 f"error event in the stream after HTTP 200: {etype}: {message}; the HTTP "
                                 "status said success, so a client that only checks it misses this"))

    @staticmethod
    def _error_not_json(frame: SSEFrame, out: list) -> None:
        out.append(ev.InBandError(frame.n, None, frame.data, frame.data))
        out.append(ev.Diagnostic(frame.n, "in-band-error", "an error event whose data is not JSON"))

    # -- end of input ----------------------------------------------------------------------------------
    def end(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        n = self.last_frame
        for st in list(self._open.values()):
            self._close(st, n, out)
        self._open.clear()
        out.extend(super().end())
        return out


def _text_field(block, delta) -> str:
    """Where an `other` block's text is: the field named after its type, else `text`, else `content`."""
    btype = block.get("type") if type(block) is dict else None
    if type(btype) is str and btype in delta and btype != "type":
        return btype
    return "text" if "text" in delta else "content"
