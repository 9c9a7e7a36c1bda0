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
* a stream cut from a log may start with deltas for a block never started (error-api-error-midstream-FRAGMENT).
"""
from __future__ import annotations

from core.wire import events as ev
from core.wire.jsonfast import dumps_compact, loads, loads_fast
from core.wire.sse import SSEFrame
from core.wire.adapters.base import MALFORMED, Adapter, malformed, text_or_none, token_count

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
                  "signature_delta": "thinking", "input_json_delta": "tool_call"}


class _Block:
    """What the adapter remembers about an open content block."""

    __slots__ = ("index", "kind", "args", "input", "citations", "provider_index")

    def __init__(self, index: int, kind: str, provider_index, input_=None) -> None:
        self.index = index
        self.kind = kind
        self.provider_index = provider_index
        self.args: list[str] | None = [] if kind == "tool_call" else None  # non-empty partial_json fragments
        self.input = input_            # content_block_start.input (tool blocks)
        self.citations: list | None = None


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
                    cache_write_tokens=cw, reasoning_tokens=reasoning, raw=raw)


class AnthropicAdapter(Adapter):
    format = "anthropic"
    terminator_description = "a message_stop event"

    def __init__(self) -> None:
        super().__init__()
        self._open: dict = {}            # provider block index -> _Block, while the block is open
        self._started = False
        self._usage_raw: dict | None = None
        self._pings = 0
        self._unknown_reported: set = set()
        self._handlers = {
            "content_block_delta": self._on_delta,
            "content_block_start": self._on_block_start,
            "content_block_stop": self._on_block_stop,
            "message_start": self._on_message_start,
            "message_delta": self._on_message_delta,
            "message_stop": self._on_message_stop,
            "ping": self._on_ping,
            "error": self._on_error,
        }

    # -- dispatch ------------------------------------------------------------------------------------
    def on_frame(self, frame: SSEFrame) -> list[ev.Event]:
        handler = self._handlers.get(frame.event)
        if handler is None:
            if frame.event == "message":
                return self._on_unnamed(frame)
            return self._on_unknown(frame, frame.event)
        if self.terminated:
            out: list[ev.Event] = []
            self.check_after_terminator(frame, out)
            return out
        try:
            return handler(frame)
        except MALFORMED as exc:   # a field of an unexpected JSON type (the handlers test the usual ones)
            return [malformed(frame.n, f"{frame.event} has a field of an unexpected type; skipped", exc)]

    def _on_unnamed(self, frame: SSEFrame) -> list[ev.Event]:
        """An event without an `event:` line: some proxies drop it; `data.type` still names the event."""
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is None:
            return out
        name = d.get("type")
        handler = self._handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            return self._on_unknown(frame, f"message (data.type {name!r})")
        if "unnamed" not in self._unknown_reported:
            self._unknown_reported.add("unnamed")
            out.append(ev.Diagnostic(frame.n, "event-name-missing",
                                     f"an event without an `event:` line (data.type {name!r}); Anthropic "
                                     "names every event, so a parser dispatching on the event name drops it"))
        if self.terminated:
            self.check_after_terminator(frame, out)
            return out
        try:
            out.extend(handler(frame))
        except MALFORMED as exc:
            out.append(malformed(frame.n, f"{name} has a field of an unexpected type; skipped", exc))
        return out

    def _on_unknown(self, frame: SSEFrame, name: str) -> list[ev.Event]:
        out: list[ev.Event] = []
        if name not in self._unknown_reported:
            self._unknown_reported.add(name)
            out.append(ev.Diagnostic(frame.n, "unknown-event",
                                     f"unknown event {name!r}; skipped (Anthropic may add event types: "
                                     "a client should ignore the ones it does not know)"))
        return out

    # -- the hot path ----------------------------------------------------------------------------------
    def _on_delta(self, frame: SSEFrame) -> list[ev.Event]:
        try:
            d = loads_fast(frame.data)
        except ValueError:
            try:
                d = loads(frame.data)   # the stdlib's leniency (NaN, integers beyond 64 bits)
            except ValueError:
                return self._bad_delta(frame)
        try:
            delta = d["delta"]
            t = delta["type"]
            st = self._open.get(d.get("index"))
        except (KeyError, TypeError, AttributeError):
            return self._bad_delta(frame)
        if st is None:
            return self._delta_without_start(frame, d, delta, t)
        if t == "text_delta":
            text = delta.get("text")
            if type(text) is str:
                return [_TextDelta(frame.n, st.index, text)] if text else []
            return self._not_text(frame, "text_delta", "text", text)
        if t == "input_json_delta":
            frag = delta.get("partial_json")
            if type(frag) is not str:
                return self._not_text(frame, t, "partial_json", frag)
            if frag and st.args is not None:
                st.args.append(frag)
                return [_ToolArgsDelta(frame.n, st.index, frag)]
            if frag:  # arguments for a block that is not a tool call: not mixed into its text
                return [ev.Diagnostic(frame.n, "delta-kind-mismatch",
                                      f"input_json_delta for block {st.provider_index!r}, a {st.kind} block; "
                                      "skipped")]
            return []
        if t == "thinking_delta":
            text = delta.get("thinking")
            if type(text) is str:
                return [_ThinkingDelta(frame.n, st.index, text)] if text else []
            return self._not_text(frame, t, "thinking", text)
        if t == "signature_delta":
            sig = delta.get("signature")
            if type(sig) is str:
                return [_SignatureDelta(frame.n, st.index, sig)] if sig else []
            return self._not_text(frame, t, "signature", sig)
        if t == "citations_delta":
            if st.citations is None:
                st.citations = []
            st.citations.append(delta.get("citation"))
            return []
        return self._on_unknown(frame, f"content_block_delta type {t!r}")

    def _bad_delta(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is not None:
            out.append(ev.Diagnostic(frame.n, "unexpected-data",
                                     "content_block_delta without a delta object and its type, or with an index "
                                     "that is not a number; skipped"))
        return out

    @staticmethod
    def _not_text(frame: SSEFrame, delta_type, field: str, value) -> list[ev.Event]:
        """A delta whose text field is absent ([]) or not a string (a malformed-event diagnostic)."""
        if value is None:
            return []
        return [malformed(frame.n, f"{delta_type}.{field} is a JSON {type(value).__name__}, not a string; skipped")]

    def _delta_without_start(self, frame: SSEFrame, d: dict, delta: dict, t) -> list[ev.Event]:
        kind = _KIND_OF_DELTA.get(t)
        if kind is None:
            return self._on_unknown(frame, f"content_block_delta type {t!r}")
        pidx = d.get("index")
        st = _Block(self.new_index(), kind, pidx)
        self._open[pidx] = st
        out: list[ev.Event] = [
            ev.BlockStarted(frame.n, st.index, kind, provider_index=pidx),
            ev.Diagnostic(frame.n, "delta-without-block-start",
                          f"a {t} for block {pidx!r} arrived before its content_block_start "
                          f"(the block is taken to be {kind}); a stream cut from a log, or a lost event"),
        ]
        out.extend(self._on_delta(frame))
        return out

    # -- blocks ----------------------------------------------------------------------------------------
    def _on_block_start(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is None:
            return out
        block = d.get("content_block")
        if not isinstance(block, dict):
            out.append(ev.Diagnostic(frame.n, "unexpected-data", "content_block_start without a content_block"))
            return out
        pidx = d.get("index")
        if pidx in self._open:  # the same index started again before its stop: close the old one
            out.append(ev.Diagnostic(frame.n, "block-restarted",
                                     f"content_block_start for block {pidx!r}, which was still open"))
            self._close(self._open.pop(pidx), frame.n, out)
        btype = text_or_none(block.get("type"))
        n = frame.n
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
        else:  # *_tool_result and any block type this adapter does not know: shown whole, as sent
            st = _Block(self.new_index(), "other", pidx)
            out.append(ev.BlockStarted(n, st.index, "other", provider_index=pidx, provider_type=btype, raw=block))
        self._open[pidx] = st
        return out

    def _on_block_stop(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is None:
            return out
        st = self._open.pop(d.get("index"), None)
        if st is None:
            out.append(ev.Diagnostic(frame.n, "stop-without-block-start",
                                     f"content_block_stop for block {d.get('index')!r}, which is not open"))
            return out
        self._close(st, frame.n, out)
        return out

    def _close(self, st: _Block, n: int, out: list) -> None:
        """Finish a block: fill tool arguments from `input` when no fragment came, judge them, stop it."""
        if st.args is not None:
            if st.args:
                arguments = "".join(st.args)
            else:
                arguments = dumps_compact(st.input if st.input is not None else {})
                out.append(_ToolArgsDelta(n, st.index, arguments))
            try:
                loads(arguments)
            except ValueError:
                out.append(ev.Diagnostic(n, "tool-arguments-invalid-json",
                                         f"the arguments of tool call block {st.provider_index!r} are not valid "
                                         f"JSON ({len(arguments)} chars, ending {arguments[-40:]!r}); "
                                         "a truncated call (max_tokens?)"))
        raw = None
        if st.citations is not None:
            raw = {"type": "text", "citations": st.citations}
        out.append(ev.BlockStopped(n, st.index, raw))

    # -- the message -----------------------------------------------------------------------------------
    def _on_message_start(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is None:
            return out
        msg = d.get("message")
        if not isinstance(msg, dict):
            out.append(ev.Diagnostic(frame.n, "unexpected-data", "message_start without a message object"))
            return out
        if not self._started:
            self._started = True
            out.append(ev.ResponseStarted(frame.n, text_or_none(msg.get("id")), text_or_none(msg.get("model"))))
        usage = msg.get("usage")
        if isinstance(usage, dict):
            self._usage_raw = dict(usage)
            out.append(ev.UsageUpdated(frame.n, canonical_usage(self._usage_raw), "up-front"))
        return out

    def _on_message_delta(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is None:
            return out
        delta = d.get("delta")
        if isinstance(delta, dict):
            reason = delta.get("stop_reason")
            if reason is not None:
                canonical = _FINISH.get(reason, "other") if type(reason) is str else "other"
                out.append(ev.Finished(frame.n, ev.FinishReason(canonical, reason)))
        usage = d.get("usage")
        if isinstance(usage, dict):
            # cumulative: every value replaces the one before (message_start's or an earlier delta's)
            merged = dict(self._usage_raw) if self._usage_raw else {}
            for k, v in usage.items():
                if v is not None or k not in merged:
                    merged[k] = v
            self._usage_raw = merged
            out.append(ev.UsageUpdated(frame.n, canonical_usage(merged), "cumulative"))
        return out

    def _on_message_stop(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self._open:
            out.append(ev.Diagnostic(frame.n, "block-not-stopped",
                                     f"message_stop while block(s) {sorted(map(str, self._open))} are open"))
            for st in list(self._open.values()):
                self._close(st, frame.n, out)
            self._open.clear()
        self.mark_terminated(frame, "message_stop", out)
        return out

    def _on_ping(self, frame: SSEFrame) -> list[ev.Event]:
        self._pings += 1
        if self._pings == 1:
            return [ev.Keepalive(frame.n),
                    ev.Diagnostic(frame.n, "keepalive",
                                  "ping event: a keepalive carrying no content (more may follow, reported once); "
                                  "a parser that expects only message/content events must skip it")]
        return [ev.Keepalive(frame.n)]

    def _on_error(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        d = self.json_object(frame, out)
        if d is None:
            out.append(ev.InBandError(frame.n, None, frame.data, frame.data))
            out.append(ev.Diagnostic(frame.n, "in-band-error", "an error event whose data is not JSON"))
            return out
        err = d.get("error")
        if not isinstance(err, dict):
            err = d
        etype = err.get("type")
        message = err.get("message")
        out.append(ev.InBandError(frame.n, etype if isinstance(etype, str) else None,
                                  message if isinstance(message, str) else str(message), err))
        out.append(ev.Diagnostic(frame.n, "in-band-error",
                                 f"error event in the stream after HTTP 200: {etype}: {message}; the HTTP "
                                 "status said success, so a client that only checks it misses this"))
        return out

    # -- end of input ----------------------------------------------------------------------------------
    def end(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        n = self.last_frame
        for st in list(self._open.values()):
            self._close(st, n, out)
        self._open.clear()
        out.extend(super().end())
        return out
