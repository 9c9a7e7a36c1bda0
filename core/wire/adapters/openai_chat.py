"""OpenAI Chat Completions streaming (`data: {chat.completion.chunk}` ... `data: [DONE]`), and the many servers
that speak it (Ollama, vLLM, OpenRouter, Groq, DeepSeek, Mistral, Together, Z.ai, LM Studio, ...).

What the adapter copes with, beyond OpenAI's own chunks:
- `delta.reasoning_content` (DeepSeek, Z.ai, vLLM) and `delta.reasoning` (OpenRouter, Groq) -> a thinking
  block; OpenRouter `reasoning_details[].signature` -> its signature; Mistral's `content` as an array of parts
  (`{type:"thinking", thinking:[{type:"text", text}]}` and `{type:"text", text}`).
- tool calls keyed by `index` (id and name on the first fragment only), an index that starts at 1, a missing
  index, a whole call in one delta, a new id on a known index; the legacy `delta.function_call`.
- `n > 1` choices; usage on a `choices: []` chunk, on the finish chunk, or in Groq's `x_groq.usage`; later
  empty-choices chunks that carry no usage leave it alone.
- in-band errors: a chunk-level `error` object (OpenRouter, possibly beside choices and usage) and
  `event: error` frames (Groq).
"""
from __future__ import annotations

from core.wire import events as ev
from core.wire.jsonfast import DEPTH_GATE, dumps_compact, loads_fast, may_nest_too_deep
from core.wire.sse import SSEFrame
from core.wire.adapters.base import MALFORMED, Adapter, json_type, malformed, text_or_none, token_count

_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter",
           "function_call": "tool_calls"}

_TextDelta = ev.builder(ev.TextDelta)
_ThinkingDelta = ev.builder(ev.ThinkingDelta)
_RefusalDelta = ev.builder(ev.RefusalDelta)
_ToolArgsDelta = ev.builder(ev.ToolArgsDelta)


class _Tool:
    """One streamed tool call of one choice."""

    __slots__ = ("index", "id", "parts", "open", "unindexed")

    def __init__(self, index: int, call_id) -> None:
        self.index = index
        self.id = call_id
        self.parts: list[str] = []
        self.open = True
        self.unindexed = False  # a fragment without `index` was seen (reported once per call)


class _Choice:
    """Per-choice state: at most one text, refusal and thinking block, plus the tool calls."""

    __slots__ = ("n", "text", "refusal", "thinking", "tools", "last_tool", "tool_order", "open", "legacy_fn")

    def __init__(self, n: int) -> None:
        self.n = n
        self.text: int | None = None
        self.refusal: int | None = None
        self.thinking: int | None = None
        self.tools: dict = {}               # provider tool_calls[].index -> _Tool
        self.last_tool: _Tool | None = None
        self.tool_order: list[_Tool] = []   # every call, in order of appearance
        self.open: list[int] = []           # text / refusal / thinking block indices not yet stopped
        self.legacy_fn: _Tool | None = None  # delta.function_call (the pre-tools API)


#: the rules `Usage.rule` names (the Usage tab shows which applied)
RULE_COMPLETION = "output = completion_tokens"
RULE_REASONING_EXCLUDED = "output = completion_tokens + reasoning_tokens (its total counts reasoning apart)"
RULE_RESPONSES = "output = output_tokens"
RULE_RESPONSES_REASONING_EXCLUDED = "output = output_tokens + reasoning_tokens (its total counts reasoning apart)"


def reasoning_excluded(inp, out, total, reasoning) -> bool:
    """Whether a server's output count leaves reasoning out, as xAI's does: its own total says so
    (prompt + completion + reasoning). Anything else keeps the contract's reading (reasoning is a subset)."""
    return (type(reasoning) is int and reasoning > 0 and type(inp) is int and type(out) is int
            and total == inp + out + reasoning)


def reasoning_excluded_diagnostic(adapter: Adapter, n: int, usage: ev.Usage, counted: str, out: list) -> None:
    """The `usage-reasoning-excluded` diagnostic (once per stream), for a usage read by that rule."""
    if adapter.first_time("usage-reasoning-excluded"):
        out.append(ev.Diagnostic(n, "usage-reasoning-excluded",
                                 f"{counted} leaves the {usage.reasoning_tokens} reasoning tokens out (the total "
                                 f"{usage.total_tokens} counts them apart): output is taken as {counted} + "
                                 f"reasoning = {usage.output_tokens}; a client reading {counted} alone "
                                 "under-counts"))


def canonical_usage(u: dict, raw=None) -> ev.Usage:
    """Canonical usage from a Chat Completions usage object (OpenAI, DeepSeek, Together, Groq, xAI field names)."""
    inp = token_count(u.get("prompt_tokens"))
    out = token_count(u.get("completion_tokens"))
    total = token_count(u.get("total_tokens"))
    if total is None and type(inp) is int and type(out) is int:
        total = inp + out
    cache_read = cache_write = reasoning = None
    ptd = u.get("prompt_tokens_details")
    if isinstance(ptd, dict):
        cache_read = ptd.get("cached_tokens")
        cache_write = ptd.get("cache_write_tokens")
        if cache_write is None:
            cache_write = ptd.get("cache_creation_tokens")
    if cache_read is None:
        cache_read = u.get("prompt_cache_hit_tokens")    # DeepSeek
        if cache_read is None:
            cache_read = u.get("cached_tokens")          # Together
    ctd = u.get("completion_tokens_details")
    if isinstance(ctd, dict):
        reasoning = ctd.get("reasoning_tokens")
    if reasoning is None:
        reasoning = u.get("reasoning_tokens")           # servers that send it at the top level
    reasoning = token_count(reasoning)
    rule = RULE_COMPLETION
    if reasoning_excluded(inp, out, total, reasoning):
        out += reasoning
        rule = RULE_REASONING_EXCLUDED
    return ev.Usage(inp, out, total, token_count(cache_read), token_count(cache_write), reasoning,
                    u if raw is None else raw, rule)


def stream_error(err, frame_n: int, out: list) -> None:
    """A InBandError (+ in-band-error diagnostic) from an OpenAI-style error object (or a bare string)."""
    if isinstance(err, dict):
        etype = err.get("type")
        if not isinstance(etype, str):
            code = err.get("code")
            etype = None if code is None else str(code)
        message = err.get("message")
        message = str(message) if message is not None else dumps_compact(err)[:200]
    else:
        etype, message = None, str(err)
    out.append(ev.InBandError(frame_n, etype, message, err))
    out.append(ev.Diagnostic(frame_n, "in-band-error", f"the stream carried an error: {message[:120]}"))


class OpenAIChatAdapter(Adapter):
    format = "openai-chat"
    terminator_description = "data: [DONE]"

    def __init__(self) -> None:
        super().__init__()
        self._choices: dict[int, _Choice] = {}
        self._started = False

    # -- frames ----------------------------------------------------------------------------------------
    def on_frame(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self.terminated:
            self.check_after_terminator(frame.n, out)
        data = frame.data
        if (frame.event != "message" or not data.startswith("{")) and not self._prelude(frame, out):
            return out
        # the frame's JSON (`json_object` inlined: this runs per frame)
        try:
            obj = loads_fast(data)
        except ValueError:
            obj = self.parse_json(frame, out)   # the stdlib's leniency, else a diagnostic
            if obj is None:
                return out
        else:
            if len(data) > DEPTH_GATE and may_nest_too_deep(data):
                obj = self.shallow(frame.n, obj, out)
        if type(obj) is dict:
            self._on_chunk(frame.n, obj, out)
        else:
            out.append(ev.Diagnostic(frame.n, "unexpected-data",
                                     f"{frame.event} data is JSON but not an object: {data[:80]!r}"))
        return out

    def _on_chunk(self, n: int, obj: dict, out: list) -> None:
        """One `chat.completion.chunk` (the format's one kind of frame)."""
        try:
            if not self._started:
                self._response_started(n, obj, out)
            err = obj.get("error")
            if err is not None:
                stream_error(err, n, out)
            choices = obj.get("choices")
            finishing = False
            if choices and type(choices) is list:
                for ch in choices:
                    c = ch.get("index") or 0
                    if type(c) is not int or c < 0:
                        c = self._bad_choice_index(n, c, out)
                    delta = ch.get("delta")
                    if delta:
                        content = delta.get("content")
                        if len(delta) == 1 and type(content) is str:  # the common case: one text fragment
                            if content:
                                # `_block` inlined: this runs for nearly every chunk
                                st = self._choices.get(c)
                                i = None if st is None else st.text
                                if i is None:
                                    i = self._open_now(n, st or self._choice(c), "text", out)
                                out.append(_TextDelta(n, i, content))
                        else:
                            self._delta(n, c, delta, content, out)
                    fr = ch.get("finish_reason")
                    if fr:  # some servers send "" for "not yet"
                        finishing = True
                        self._finish(n, c, fr, out)
            usage = obj.get("usage")
            if usage is None:
                xg = obj.get("x_groq")
                if xg is not None:
                    usage = xg.get("usage")
            if usage is not None:
                self._usage(n, usage, choices, finishing, out)
            elif type(choices) is list and not choices and err is None:
                out.append(ev.Diagnostic(n, "empty-choices",
                                         "a chunk with empty `choices` and no usage (choices[0] fails)"))
            if choices is not None and type(choices) is not list:
                out.append(malformed(n, f"choices is a JSON {json_type(choices)}, not an array; skipped"))
        except MALFORMED as exc:  # a field of an unexpected JSON type
            out.append(ev.Diagnostic(n, "malformed-event",
                                     f"a chunk has a field of an unexpected type ({exc}); partly decoded"))

    def _prelude(self, frame: SSEFrame, out: list) -> bool:
        """Frames off the common path: [DONE], `event: error`, other event names. True: decode as a chunk."""
        data = frame.data
        if data.strip() == "[DONE]":
            self.mark_terminated(frame.n, "[DONE]", out)
            return False
        event = frame.event
        if event == "error":
            obj = self.parse_json(frame, out)
            if obj is None:
                stream_error(data, frame.n, out)
            else:
                err = obj.get("error") if type(obj) is dict else None
                stream_error(obj if err is None else err, frame.n, out)
            return False
        if event != "message" and self.first_time(("unknown-event", event)):
            out.append(ev.Diagnostic(frame.n, "unknown-event",
                                     f"unexpected SSE event name {event!r}; its data is read as a chunk"))
        return True

    def _bad_choice_index(self, n: int, c, out: list) -> int:
        out.append(ev.Diagnostic(n, "malformed-event",
                                 f"choice index {c!r} is not a non-negative integer; taken as 0"))
        return 0

    def _response_started(self, n: int, obj: dict, out: list) -> None:
        rid = obj.get("id")
        model = obj.get("model")
        if rid is not None or model is not None:
            self._started = True
            out.append(ev.ResponseStarted(n, rid, model))

    def _usage(self, n: int, usage, choices, finishing: bool, out: list) -> None:
        if type(usage) is not dict:
            out.append(malformed(n, f"usage is a JSON {json_type(usage)}, not an object; skipped"))
            return
        if not choices:
            reporting = "usage-chunk"
            out.append(ev.Diagnostic(n, "usage-only-chunk",
                                     "usage arrived on a chunk with empty `choices` (choices[0] fails)"))
        else:
            reporting = "final" if finishing else "cumulative"
        u = canonical_usage(usage)
        out.append(ev.UsageUpdated(n, u, reporting))
        if u.rule is RULE_REASONING_EXCLUDED:
            reasoning_excluded_diagnostic(self, n, u, "completion_tokens", out)

    # -- deltas ----------------------------------------------------------------------------------------
    def _choice(self, c: int) -> _Choice:
        st = self._choices.get(c)
        if st is None:
            st = self._choices[c] = _Choice(c)
        return st

    def _delta(self, n: int, c: int, delta: dict, content, out: list) -> None:
        st = self._choices.get(c) or self._choice(c)
        # thinking first: servers that send reasoning and content in one delta mean reasoning to come first
        r = delta.get("reasoning_content")
        if not r:
            r = delta.get("reasoning")
        if r and type(r) is str:
            out.append(_ThinkingDelta(n, self._block(n, st, "thinking", out), r))
        rd = delta.get("reasoning_details")
        if rd:
            self._reasoning_details(n, st, rd, out)
        if content is not None:
            if type(content) is str:
                if content:
                    out.append(_TextDelta(n, self._block(n, st, "text", out), content))
            elif type(content) is list:
                self._content_parts(n, st, content, out)
            else:
                out.append(malformed(n, f"delta.content is a JSON {json_type(content)}, not a string; skipped"))
        refusal = delta.get("refusal")
        if refusal and type(refusal) is str:
            out.append(_RefusalDelta(n, self._block(n, st, "refusal", out), refusal))
        tcs = delta.get("tool_calls")
        if tcs:
            if type(tcs) is not list:
                out.append(malformed(n, f"delta.tool_calls is a JSON {json_type(tcs)}, not an array; skipped"))
                tcs = ()
            for tc in tcs:
                self._tool_fragment(n, st, tc, out)
        fc = delta.get("function_call")
        if fc:
            self._legacy_function_call(n, st, fc, out)

    def _content_parts(self, n: int, st: _Choice, parts: list, out: list) -> None:
        """Mistral: `content` as a list of `{type:"text"}` and `{type:"thinking", thinking:[...]}` parts."""
        for p in parts:
            if type(p) is not dict:
                continue
            t = p.get("type")
            if t == "text":
                text = p.get("text")
                if text and type(text) is str:
                    out.append(_TextDelta(n, self._block(n, st, "text", out), text))
            elif t == "thinking":
                inner = p.get("thinking")
                if type(inner) is str:
                    inner = [{"text": inner}]
                for q in inner or ():
                    text = q.get("text") if type(q) is dict else None
                    if text and type(text) is str:
                        out.append(_ThinkingDelta(n, self._block(n, st, "thinking", out), text))

    def _reasoning_details(self, n: int, st: _Choice, details, out: list) -> None:
        """OpenRouter: the reasoning text is in `delta.reasoning` too; only signatures are taken from here."""
        if type(details) is not list:
            return
        for d in details:
            if type(d) is dict:
                sig = d.get("signature")
                if sig and type(sig) is str:
                    out.append(ev.SignatureDelta(n, self._block(n, st, "thinking", out), sig))

    def _block(self, n: int, st: _Choice, kind: str, out: list) -> int:
        """The choice's open block of `kind` ("text", "thinking" or "refusal", its attribute), opened if need be."""
        i = getattr(st, kind)
        if i is None:
            i = self._open_now(n, st, kind, out)
        return i

    def _open_now(self, n: int, st: _Choice, kind: str, out: list) -> int:
        i = self.new_index()
        setattr(st, kind, i)
        st.open.append(i)
        out.append(ev.BlockStarted(n, i, kind, choice=st.n))
        return i

    def _new_tool(self, n: int, st: _Choice, raw_index, call_id, name, out: list) -> _Tool:
        i = self.new_index()
        tool = _Tool(i, call_id)
        st.tool_order.append(tool)
        st.last_tool = tool
        if raw_index is not None:
            st.tools[raw_index] = tool
        out.append(ev.BlockStarted(n, i, "tool_call", choice=st.n, id=call_id, name=text_or_none(name),
                                   provider_index=raw_index))
        return tool

    def _tool_fragment(self, n: int, st: _Choice, tc, out: list) -> None:
        if type(tc) is not dict:
            out.append(malformed(n, f"a tool call fragment is a JSON {json_type(tc)}, not an object; skipped"))
            return
        raw_index = tc.get("index")
        call_id = text_or_none(tc.get("id")) or None
        fn = tc.get("function")
        if type(fn) is not dict:
            fn = {}
        if raw_index is None:
            last = st.last_tool
            if last is None or (call_id is not None and call_id != last.id):
                tool = self._new_tool(n, st, None, call_id, fn.get("name"), out)
                tool.unindexed = True
                out.append(ev.Diagnostic(n, "tool-call-without-index",
                                         "a tool-call fragment has no `index`; taken as a new call"
                                         + (f" (id {call_id})" if call_id else "")))
            else:
                tool = last
                if not tool.unindexed:
                    tool.unindexed = True
                    out.append(ev.Diagnostic(n, "tool-call-without-index", "a tool-call fragment has no "
                                             "`index`; appended to the most recent call"))
        else:
            tool = st.tools.get(raw_index)
            if tool is None:
                tool = self._new_tool(n, st, raw_index, call_id, fn.get("name"), out)
            elif call_id is not None and tool.id is not None and call_id != tool.id:
                out.append(ev.Diagnostic(n, "tool-call-id-changed",
                                         f"tool call index {raw_index} changed id from {tool.id} to {call_id}; "
                                         "taken as a new call"))
                self._close_tool(n, tool, out)
                tool = self._new_tool(n, st, raw_index, call_id, fn.get("name"), out)
            else:
                st.last_tool = tool
                if tool.id is None and call_id is not None:
                    tool.id = call_id
        args = fn.get("arguments")
        if args:
            if type(args) is not str:  # a server that sends the arguments as an object
                args = dumps_compact(args)
            tool.parts.append(args)
            out.append(_ToolArgsDelta(n, tool.index, args))

    def _legacy_function_call(self, n: int, st: _Choice, fc, out: list) -> None:
        if type(fc) is not dict:
            return
        tool = st.legacy_fn
        if tool is None:
            i = self.new_index()
            tool = st.legacy_fn = _Tool(i, None)
            st.tool_order.append(tool)
            out.append(ev.BlockStarted(n, i, "tool_call", choice=st.n, name=text_or_none(fc.get("name"))))
        args = fc.get("arguments")
        if args and type(args) is str:
            tool.parts.append(args)
            out.append(_ToolArgsDelta(n, tool.index, args))

    # -- closing ---------------------------------------------------------------------------------------
    def _close_tool(self, n: int, tool: _Tool, out: list) -> None:
        if not tool.open:
            return
        tool.open = False
        if tool.parts:
            self.check_tool_arguments(n, tool.id or tool.index, "".join(tool.parts), out)
        out.append(ev.BlockStopped(n, tool.index))

    def _close_choice(self, n: int, st: _Choice, out: list) -> None:
        for i in st.open:
            out.append(ev.BlockStopped(n, i))
        st.open = []
        for tool in st.tool_order:
            self._close_tool(n, tool, out)

    def _finish(self, n: int, c: int, fr, out: list) -> None:
        st = self._choices.get(c) or self._choice(c)
        self._close_choice(n, st, out)
        canonical = _FINISH.get(fr, "other") if type(fr) is str else "other"
        out.append(ev.Finished(n, ev.FinishReason(canonical, fr), c))

    def end(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        n = self.last_frame
        for st in self._choices.values():
            self._close_choice(n, st, out)
        out.extend(super().end())
        return out
