"""OpenAI Responses streaming: the `response.*` event family (`event: response.x` + `data: {"type": ...}`).

Blocks follow the output items by `output_index`: a message item's content parts (output_text -> text,
refusal -> refusal), a `function_call` (or `custom_tool_call`) -> a tool call with `call_id` as its id, a
`reasoning` item -> a thinking block (summary parts joined with a blank line; raw chain of thought from
`response.reasoning_text.delta` where a server sends it), and every other item (web_search_call,
code_interpreter_call, file_search_call, image_generation_call, mcp_*, ...) -> an `other` block whose raw is the
item from `output_item.done`.

The event name is taken from the JSON `type` (servers such as OpenRouter send `data:` lines without `event:`),
falling back to the SSE event name. `response.completed` / `.incomplete` / `.failed` end the stream; a trailing
`data: [DONE]` (OpenRouter) after them is tolerated.
"""
from __future__ import annotations

from functools import partial

from core.wire import events as ev
from core.wire.sse import SSEFrame
from core.wire.adapters.base import MALFORMED, Adapter, bad_index, json_type, malformed, text_or_none, token_count
from core.wire.adapters.openai_chat import (RULE_RESPONSES, RULE_RESPONSES_REASONING_EXCLUDED, reasoning_excluded,
                                            reasoning_excluded_diagnostic, stream_error)

_TextDelta = ev.builder(ev.TextDelta)
_ThinkingDelta = ev.builder(ev.ThinkingDelta)
_ToolArgsDelta = ev.builder(ev.ToolArgsDelta)
_RefusalDelta = ev.builder(ev.RefusalDelta)
_DELTA_OF_KIND = {"text": _TextDelta, "refusal": _RefusalDelta}

_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}

# events that carry nothing the reply needs (progress of built-in tools, repeats of streamed text)
_IGNORED = (
    "response.output_text.done", "response.refusal.done", "response.output_text.annotation.added",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done", "response.reasoning_text.done",
    "response.reasoning_summary.delta", "response.reasoning_summary.done",
    "response.reasoning.delta", "response.reasoning.done",
    "response.web_search_call.in_progress", "response.web_search_call.searching",
    "response.web_search_call.completed",
    "response.file_search_call.in_progress", "response.file_search_call.searching",
    "response.file_search_call.completed",
    "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
    "response.code_interpreter_call.completed", "response.code_interpreter_call_code.delta",
    "response.code_interpreter_call_code.done",
    "response.image_generation_call.in_progress", "response.image_generation_call.generating",
    "response.image_generation_call.partial_image", "response.image_generation_call.completed",
    "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done", "response.mcp_call.in_progress",
    "response.mcp_call.completed", "response.mcp_call.failed", "response.mcp_list_tools.in_progress",
    "response.mcp_list_tools.completed", "response.mcp_list_tools.failed",
    "response.audio.delta", "response.audio.done", "response.audio.transcript.delta",
    "response.audio.transcript.done",
)
# families of built-in tool progress events, current and future, that need no unknown-event diagnostic
_IGNORED_PREFIXES = ("response.web_search_call.", "response.file_search_call.", "response.code_interpreter_call",
                     "response.image_generation_call.", "response.mcp_", "response.tool_search",
                     "response.audio.", "response.computer_call", "response.local_shell_call",
                     "response.shell_call", "response.apply_patch_call")


class _Item:
    """One output item (by output_index)."""

    __slots__ = ("oi", "type", "id", "block", "parts", "streamed", "open", "summary_index", "summary_block",
                 "cot_block", "summary_streamed", "cot_streamed", "args_only_at_end")

    def __init__(self, oi, item_type, item_id) -> None:
        self.oi = oi
        self.type = item_type
        self.id = item_id
        self.block: int | None = None      # tool call / thinking / other block
        self.parts: dict = {}              # message items: content_index -> _Part
        self.streamed: list[str] = []      # tool-call argument fragments
        self.open = True
        self.summary_index = None          # reasoning: the summary part being streamed
        self.summary_block: int | None = None
        self.cot_block: int | None = None
        self.summary_streamed = False
        self.cot_streamed = False
        self.args_only_at_end = False      # tool call: its arguments came in a final object, in no delta


class _Part:
    __slots__ = ("block", "kind", "streamed", "open")

    def __init__(self, block: int, kind: str) -> None:
        self.block = block
        self.kind = kind
        self.streamed = False
        self.open = True


class OpenAIResponsesAdapter(Adapter):
    format = "openai-responses"
    terminator_description = "response.completed, response.failed or response.incomplete"

    def __init__(self) -> None:
        super().__init__()
        self._items: dict = {}          # output_index -> _Item
        self._started = False
        self._has_calls = False
        self._errors = 0
        self._event = ""                # the name of the event being handled (for diagnostics)
        self._handlers = {
            "response.output_text.delta": partial(self._on_part_delta, "text"),
            "response.reasoning_summary_text.delta": self._on_summary_delta,
            "response.function_call_arguments.delta": self._on_args_delta,
            "response.reasoning_text.delta": self._on_cot_delta,
            "response.refusal.delta": partial(self._on_part_delta, "refusal"),
            "response.custom_tool_call_input.delta": self._on_args_delta,
            "response.created": self._on_started,
            "response.in_progress": self._on_started,
            "response.queued": self._on_started,
            "response.output_item.added": self._on_item_added,
            "response.output_item.done": self._on_item_done,
            "response.content_part.added": self._on_part_added,
            "response.content_part.done": self._on_part_done,
            "response.function_call_arguments.done": self._on_args_done,
            "response.custom_tool_call_input.done": self._on_args_done,
            "response.completed": self._on_completed,
            "response.incomplete": self._on_incomplete,
            "response.failed": self._on_failed,
            "error": self._on_error,
        }
        for name in _IGNORED:
            self._handlers[name] = None

    # -- frames ----------------------------------------------------------------------------------------
    def on_frame(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self.terminated:
            self.check_after_terminator(frame.n, out)
        data = frame.data
        if not data.startswith("{") and data.strip() == "[DONE]":
            if not self.terminated:
                out.append(ev.Diagnostic(frame.n, "unexpected-done-marker",
                                         "data: [DONE] is not part of the Responses format (and no "
                                         "response.completed came before it)"))
            return out
        obj = self.json_object(frame, out)
        if obj is None:
            return out
        name = obj.get("type")
        if type(name) is not str:
            name = frame.event
        try:
            handler = self._handlers[name]
        except KeyError:
            if self.first_time(("unknown-event", name)):
                if not name.startswith(_IGNORED_PREFIXES):
                    out.append(ev.Diagnostic(frame.n, "unknown-event", f"unknown event {name!r} (kept, not decoded)"))
            return out
        if handler is not None:
            if self._unusable(frame.n, name, obj, out):
                return out
            self._event = name
            try:
                handler(frame.n, obj, out)
            except MALFORMED as exc:  # a field of an unexpected JSON type
                out.append(ev.Diagnostic(frame.n, "malformed-event",
                                         f"{name} has a field of an unexpected type ({exc}); partly decoded"))
        return out

    @staticmethod
    def _unusable(n: int, name: str, obj: dict, out: list) -> bool:
        """Whether a frame its handler cannot use (a `malformed-event` diagnostic, the frame skipped): an
        `output_index` or `content_index` that is present but no item or part can have (negative, not an
        integer: -1, 1e30), or a `*.delta` event whose delta is not a string."""
        oi = obj.get("output_index")
        ci = obj.get("content_index")
        if oi is not None or ci is not None:
            for field, v in (("output_index", oi), ("content_index", ci)):
                if bad_index(v):
                    out.append(malformed(n, f"{name} with {field} {v!r}, not a non-negative integer; skipped"))
                    return True
        if name.endswith(".delta"):
            d = obj.get("delta")
            if d is not None and type(d) is not str:
                out.append(malformed(n, f"{name} delta is a JSON {json_type(d)}, not a string; skipped"))
                return True
        return False

    def _object_field(self, n: int, obj: dict, field: str, out: list):
        """`obj[field]` when it is an object, {} when it is absent or null; None, after a `malformed-event`
        diagnostic, when it is of another JSON type."""
        v = obj.get(field)
        if type(v) is dict:
            return v
        if v is None:
            return {}
        out.append(malformed(n, f"{self._event} {field} is a JSON {json_type(v)}, not an object; skipped"))
        return None

    def _item_object(self, n: int, obj: dict, out: list):
        """`output_item.added` / `.done`: the item, {} when none came, or None (after a `malformed-event`
        diagnostic) when it is no object or its `type` is no string."""
        item = self._object_field(n, obj, "item", out)
        if item:
            t = item.get("type")
            if t is not None and type(t) is not str:
                out.append(malformed(n, f"{self._event} item.type is a JSON {json_type(t)}, not a string; "
                                        "skipped"))
                return None
        return item

    # -- blocks ----------------------------------------------------------------------------------------
    def _item(self, oi) -> _Item:
        """The item at an output_index; a message item announced by no output_item.added is made up."""
        it = self._items.get(oi)
        if it is None:
            it = self._items[oi] = _Item(oi, "message", None)
        return it

    def _part(self, n: int, obj: dict, kind: str, out: list) -> _Part:
        oi = obj.get("output_index")
        it = self._items.get(oi) or self._item(oi)
        ci = obj.get("content_index")
        p = it.parts.get(ci)
        if p is None:
            i = self.new_index()
            p = it.parts[ci] = _Part(i, kind)
            out.append(ev.BlockStarted(n, i, kind, provider_index=oi))
        return p

    def _on_part_delta(self, kind: str, n: int, obj: dict, out: list) -> None:
        """`output_text.delta` and `refusal.delta` (`kind` "text" or "refusal", bound in the handler table)."""
        it = self._items.get(obj.get("output_index"))
        p = it.parts.get(obj.get("content_index")) if it is not None else None
        if p is None:
            p = self._part(n, obj, kind, out)
        d = obj.get("delta")
        if d and type(d) is str:
            p.streamed = True
            out.append(_DELTA_OF_KIND[kind](n, p.block, d))

    def _on_part_added(self, n: int, obj: dict, out: list) -> None:
        part = self._object_field(n, obj, "part", out)
        if part is None:
            return
        ptype = part.get("type")
        if ptype == "reasoning_text":  # raw chain of thought inside a reasoning item (OpenRouter, vLLM)
            return
        self._part(n, obj, "refusal" if ptype == "refusal" else "text", out)

    def _on_part_done(self, n: int, obj: dict, out: list) -> None:
        part = self._object_field(n, obj, "part", out)
        if part is None:
            return
        ptype = part.get("type")
        it = self._items.get(obj.get("output_index"))
        if ptype == "reasoning_text":
            if it is not None and it.type == "reasoning" and not it.cot_streamed:
                self._cot_text(n, it, part.get("text"), out)
            return
        p = it.parts.get(obj.get("content_index")) if it is not None else None
        if p is None:
            p = self._part(n, obj, "refusal" if ptype == "refusal" else "text", out)
        self._close_part(n, p, part, out)

    def _close_part(self, n: int, p: _Part, part: dict, out: list) -> None:
        if not p.streamed:
            text = part.get("refusal") if p.kind == "refusal" else part.get("text")
            if text and type(text) is str:
                p.streamed = True
                out.append(_DELTA_OF_KIND[p.kind](n, p.block, text))
        if p.open:
            p.open = False
            out.append(ev.BlockStopped(n, p.block))

    def _on_item_added(self, n: int, obj: dict, out: list) -> None:
        item = self._item_object(n, obj, out)
        if item is None:
            return
        oi = obj.get("output_index")
        self._new_item(n, oi, item, out)

    def _new_item(self, n: int, oi, item: dict, out: list) -> _Item:
        t = item.get("type") or "message"
        old = self._items.get(oi)
        if old is not None and old.open:  # a second item at the same output_index: close the first
            self._close_item(n, old, out, None)
        it = self._items[oi] = _Item(oi, t, item.get("id"))
        if t == "message":
            return it
        i = self.new_index()
        if t == "function_call" or t == "custom_tool_call":
            self._has_calls = True
            it.block = i
            out.append(ev.BlockStarted(n, i, "tool_call", id=text_or_none(item.get("call_id")),
                                       name=text_or_none(item.get("name")),
                                       provider_index=oi))
        elif t == "reasoning":
            it.block = i
            out.append(ev.BlockStarted(n, i, "thinking", provider_index=oi))
        else:
            it.block = i
            out.append(ev.BlockStarted(n, i, "other", provider_index=oi, provider_type=t, raw=item))
        return it

    def _on_item_done(self, n: int, obj: dict, out: list) -> None:
        item = self._item_object(n, obj, out)
        if item is None:
            return
        oi = obj.get("output_index")
        it = self._items.get(oi)
        if it is None:
            it = self._new_item(n, oi, item, out)
        t = it.type
        if t == "message":
            content = item.get("content")
            if type(content) is list:
                for ci, part in enumerate(content):
                    if type(part) is not dict:
                        continue
                    p = it.parts.get(ci)
                    if p is None:
                        p = self._part(n, {"output_index": oi, "content_index": ci},
                                       "refusal" if part.get("type") == "refusal" else "text", out)
                    self._close_part(n, p, part, out)
            for p in it.parts.values():
                if p.open:
                    p.open = False
                    out.append(ev.BlockStopped(n, p.block))
            it.open = False
            return
        if t == "function_call" or t == "custom_tool_call":
            if not it.streamed:
                self._final_arguments(n, it, item.get("arguments") if t == "function_call" else item.get("input"),
                                      "response.output_item.done", out)
            self._close_item(n, it, out, item)
            return
        if t == "reasoning":
            if not it.summary_streamed and not it.cot_streamed:
                summary = item.get("summary")
                texts = [s["text"] for s in summary if type(s) is dict and type(s.get("text")) is str
                         and s["text"]] if type(summary) is list else []
                if texts:
                    self._summary_text(n, it, "\n\n".join(texts), out)
                else:
                    content = item.get("content")
                    if type(content) is list:
                        texts = [s["text"] for s in content if type(s) is dict and type(s.get("text")) is str]
                        if texts:
                            self._cot_text(n, it, "".join(texts), out)
            self._close_item(n, it, out, item)
            return
        self._close_item(n, it, out, item)

    def _close_item(self, n: int, it: _Item, out: list, raw) -> None:
        for p in it.parts.values():
            if p.open:
                p.open = False
                out.append(ev.BlockStopped(n, p.block))
        if not it.open:
            return
        it.open = False
        if it.type == "function_call" and it.streamed:
            self.check_tool_arguments(n, it.id or it.block, "".join(it.streamed), out)
        if it.block is not None:
            out.append(ev.BlockStopped(n, it.block, raw))
        for b in (it.summary_block, it.cot_block):
            if b is not None and b != it.block:
                out.append(ev.BlockStopped(n, b))

    # -- tool calls ------------------------------------------------------------------------------------
    def _on_args_delta(self, n: int, obj: dict, out: list) -> None:
        oi = obj.get("output_index")
        it = self._items.get(oi)
        if it is None:
            it = self._new_item(n, oi, {"type": "function_call", "id": obj.get("item_id")}, out)
        d = obj.get("delta")
        if d and type(d) is str and it.block is not None:
            it.streamed.append(d)
            out.append(_ToolArgsDelta(n, it.block, d))

    def _on_args_done(self, n: int, obj: dict, out: list) -> None:
        """`function_call_arguments.done` (`arguments`) and `custom_tool_call_input.done` (`input`)."""
        oi = obj.get("output_index")
        it = self._items.get(oi)
        if it is None:
            it = self._new_item(n, oi, {"type": "function_call", "id": obj.get("item_id")}, out)
        if not it.streamed and it.block is not None:
            name = obj.get("type")
            self._final_arguments(n, it, obj.get("input") if name == "response.custom_tool_call_input.done"
                                  else obj.get("arguments"), name, out)

    def _final_arguments(self, n: int, it: _Item, args, where, out: list) -> None:
        """Arguments a final object carries for a call whose deltas sent none (LM Studio sends no deltas)."""
        if args and type(args) is str:
            it.streamed.append(args)
            out.append(_ToolArgsDelta(n, it.block, args))
            if not it.args_only_at_end:
                it.args_only_at_end = True
                self.arguments_only_at_end(n, it.id or it.block, where, out)

    # -- reasoning -------------------------------------------------------------------------------------
    def _reasoning_item(self, n: int, obj: dict, out: list) -> _Item:
        oi = obj.get("output_index")
        it = self._items.get(oi)
        if it is None or it.type != "reasoning":
            it = self._new_item(n, oi, {"type": "reasoning", "id": obj.get("item_id")}, out)
        return it

    def _summary_block(self, n: int, it: _Item, out: list) -> int:
        b = it.summary_block
        if b is None:
            if it.cot_block is None or it.cot_block != it.block:
                b = it.block          # the item's block holds the summary unless the raw text took it
            else:
                b = self.new_index()
                out.append(ev.BlockStarted(n, b, "thinking", provider_index=it.oi))
            it.summary_block = b
        return b

    def _cot_block(self, n: int, it: _Item, out: list) -> int:
        b = it.cot_block
        if b is None:
            if it.summary_block is None:
                b = it.block
            else:
                b = self.new_index()
                out.append(ev.BlockStarted(n, b, "thinking", provider_index=it.oi))
            it.cot_block = b
        return b

    def _on_summary_delta(self, n: int, obj: dict, out: list) -> None:
        it = self._items.get(obj.get("output_index"))
        if it is None or it.type != "reasoning":
            it = self._reasoning_item(n, obj, out)
        b = it.summary_block
        if b is None:
            b = self._summary_block(n, it, out)
        si = obj.get("summary_index")
        if si != it.summary_index:
            if it.summary_streamed:
                out.append(_ThinkingDelta(n, b, "\n\n"))
            it.summary_index = si
        d = obj.get("delta")
        if d and type(d) is str:
            it.summary_streamed = True
            out.append(_ThinkingDelta(n, b, d))

    def _summary_text(self, n: int, it: _Item, text: str, out: list) -> None:
        b = self._summary_block(n, it, out)
        it.summary_streamed = True
        out.append(_ThinkingDelta(n, b, text))

    def _on_cot_delta(self, n: int, obj: dict, out: list) -> None:
        it = self._items.get(obj.get("output_index"))
        if it is None or it.type != "reasoning":
            it = self._reasoning_item(n, obj, out)
        d = obj.get("delta")
        if d and type(d) is str:
            b = it.cot_block
            if b is None:
                b = self._cot_block(n, it, out)
            it.cot_streamed = True
            out.append(_ThinkingDelta(n, b, d))

    def _cot_text(self, n: int, it: _Item, text, out: list) -> None:
        if text and type(text) is str:
            b = self._cot_block(n, it, out)
            it.cot_streamed = True
            out.append(_ThinkingDelta(n, b, text))

    # -- response lifecycle ----------------------------------------------------------------------------
    def _on_started(self, n: int, obj: dict, out: list) -> None:
        if self._started:
            return
        resp = self._response(n, obj, out)
        if resp is not None:
            self._started = True
            out.append(ev.ResponseStarted(n, text_or_none(resp.get("id")), text_or_none(resp.get("model"))))

    def _response(self, n: int, obj: dict, out: list) -> dict | None:
        """The event's `response` object, or None (after a `malformed-event` diagnostic when it is there but of
        another JSON type). Its `output`, which the item events already streamed, is not read, only judged."""
        resp = obj.get("response")
        if type(resp) is not dict:
            if resp is not None:
                out.append(malformed(n, f"{self._event} response is a JSON {json_type(resp)}, not an object; "
                                        "skipped"))
            return None
        output = resp.get("output")
        if output is not None and type(output) is not list:
            out.append(malformed(n, f"{self._event} response.output is a JSON {json_type(output)}, not an "
                                    "array; ignored"))
        return resp

    def _terminal(self, n: int, obj: dict, out: list, canonical: str, status: str) -> None:
        resp = self._response(n, obj, out)
        if resp is None:
            resp = {}
        if not self._started:
            self._started = True
            out.append(ev.ResponseStarted(n, text_or_none(resp.get("id")), text_or_none(resp.get("model"))))
        for it in self._items.values():
            if it.open:
                self._close_item(n, it, out, None)
        usage = resp.get("usage")
        if type(usage) is dict:
            u = canonical_usage(usage)
            out.append(ev.UsageUpdated(n, u, "final"))
            if u.rule is RULE_RESPONSES_REASONING_EXCLUDED:
                reasoning_excluded_diagnostic(self, n, u, "output_tokens", out)
        elif usage is not None:
            out.append(malformed(n, f"{self._event} response.usage is a JSON {json_type(usage)}, "
                                    "not an object; skipped"))
        raw = resp.get("status") or status
        out.append(ev.Finished(n, ev.FinishReason(canonical, raw)))
        self.mark_terminated(n, obj.get("type") or status, out)

    def _on_completed(self, n: int, obj: dict, out: list) -> None:
        self._terminal(n, obj, out, "tool_calls" if self._has_calls else "stop", "completed")

    def _on_incomplete(self, n: int, obj: dict, out: list) -> None:
        resp = obj.get("response")
        details = resp.get("incomplete_details") if type(resp) is dict else None
        reason = details.get("reason") if type(details) is dict else None
        self._terminal(n, obj, out, _INCOMPLETE.get(reason, "other"), "incomplete")

    def _on_failed(self, n: int, obj: dict, out: list) -> None:
        resp = obj.get("response")
        err = resp.get("error") if type(resp) is dict else None
        if err is not None and not self._errors:  # an `error` event usually came first and says more
            self._errors += 1
            stream_error(err, n, out)
        self._terminal(n, obj, out, "error", "failed")

    def _on_error(self, n: int, obj: dict, out: list) -> None:
        self._errors += 1
        err = obj.get("error")
        if err is None:  # the older shape: code / message / param at the top level
            err = {k: v for k, v in obj.items() if k not in ("type", "sequence_number")}
        stream_error(err, n, out)

    def end(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        n = self.last_frame
        for it in self._items.values():
            if it.open:
                self._close_item(n, it, out, None)
        out.extend(super().end())
        return out


def canonical_usage(u: dict) -> ev.Usage:
    """Canonical usage from a Responses usage object."""
    inp = token_count(u.get("input_tokens"))
    out = token_count(u.get("output_tokens"))
    total = token_count(u.get("total_tokens"))
    if total is None and type(inp) is int and type(out) is int:
        total = inp + out
    itd = u.get("input_tokens_details")
    otd = u.get("output_tokens_details")
    cache_read = itd.get("cached_tokens") if type(itd) is dict else None
    reasoning = token_count(otd.get("reasoning_tokens")) if type(otd) is dict else None
    rule = RULE_RESPONSES
    if reasoning_excluded(inp, out, total, reasoning):
        out += reasoning
        rule = RULE_RESPONSES_REASONING_EXCLUDED
    return ev.Usage(inp, out, total, token_count(cache_read), None, reasoning, u, rule)
