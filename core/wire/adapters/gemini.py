"""Gemini / Vertex `streamGenerateContent?alt=sse` (unnamed `data:` events, CRLF framing), to normalized events.

Every chunk is a whole `GenerateContentResponse` holding only its newest parts in
`candidates[i].content.parts`; there is no block start or stop on the wire, so blocks are inferred:
* consecutive text parts of one kind (thought vs answer) make one block; a new block starts when the kind
  changes or any other part comes between (function call, executable code, ...);
* an empty text part creates no block; its `thoughtSignature`, if any, belongs to the current block;
  a signature on a non-empty part belongs to the block that part belongs to;
* `functionCall` parts carry whole `args` objects (compact JSON), except Vertex's streamed calls, whose
  `partialArgs` are applied by `jsonPath` (strings appended, other values set) while `willContinue` holds;
  a part without `willContinue`, or an empty `functionCall {}`, closes the call. Bounded: a path deeper than
  `MAX_DEPTH` or an index more than `MAX_INDEX_GAP` past its list's end is not applied (a diagnostic), and the
  assembled object is re-serialized only while small or once it grew by half since the last time (linear in the
  frames, not quadratic; the call's end always carries the exact final text);
* `usageMetadata` rides on every chunk and is cumulative: the last one wins, it must never be summed;
* the chunk carrying `finishReason` is the end marker; `promptFeedback.blockReason` ends a blocked prompt.
"""
from __future__ import annotations

import re

from core.wire import events as ev
from core.wire.jsonfast import DEPTH_GATE, MAX_DEPTH, dumps_compact, loads_fast, may_nest_too_deep
from core.wire.sse import SSEFrame
from core.wire.adapters.base import MALFORMED, Adapter, bad_index, json_type, malformed, text_or_none, token_count

_TextDelta = ev.builder(ev.TextDelta)
_ThinkingDelta = ev.builder(ev.ThinkingDelta)
_Usage = ev.builder(ev.Usage)
_UsageUpdated = ev.builder(ev.UsageUpdated)
_Diagnostic = ev.Diagnostic
_Keepalive = ev.builder(ev.Keepalive)

_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
}

_PATH_TOKEN = re.compile(r"""\.([^.\[\]]+)|\[(\d+)\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]""")
_path_cache: dict[str, tuple | None] = {}
_CACHED_PATH_CHARS = 256   # longer paths are parsed, not cached (the cache outlives the stream)
#: how far past a list's end a partialArgs index may reach (the gap is filled with null). Vertex fills lists in
#: order; `$.a[10000000]` in a 170-byte frame would otherwise build 50 MB of arguments
MAX_INDEX_GAP = 64
_HUGE_INDEX = 10 ** 18     # an index of more digits than this: past every bound (int() of thousands is refused)
#: the assembled arguments are re-serialized on every frame while shorter than this (a live view of the usual
#: call), then only once they grew by as much again: total work linear in the frames
_ARGS_ALWAYS_SERIALIZED = 512


def parse_json_path(path: str) -> tuple | None:
    """`$.a[0].b` -> ("a", 0, "b"); None when the path is not of that simple form."""
    if type(path) is not str:
        return None
    cached = _path_cache.get(path, False)
    if cached is not False:
        return cached
    result: tuple | None
    if not path.startswith("$"):
        result = None
    else:
        tokens: list = []
        pos = 1
        while pos < len(path):
            m = _PATH_TOKEN.match(path, pos)
            if m is None:
                tokens = None  # type: ignore[assignment]
                break
            name, num, sq, dq = m.groups()
            if num is not None:
                tokens.append(int(num) if len(num) <= 18 else _HUGE_INDEX)
            else:
                tokens.append(name if name is not None else (sq if sq is not None else dq))
            pos = m.end()
        result = tuple(tokens) if tokens is not None else None
    if len(_path_cache) < 4096 and len(path) <= _CACHED_PATH_CHARS:
        _path_cache[path] = result
    return result


def _partial_value(arg: dict):
    """(found, value, is_string) for one partialArgs entry: its `*Value` field."""
    if "stringValue" in arg:
        value = arg["stringValue"]
        return True, value, type(value) is str   # (a string to append to; anything else replaces)
    for k, v in arg.items():
        if k == "nullValue":
            return True, None, False
        if k.endswith("Value"):
            return True, v, False
    return False, None, False


def apply_partial_arg(obj, arg: dict):
    """Apply one Vertex `partialArgs` entry to the object being assembled.

    Returns the (new) root and None, or the root unchanged and why the entry was not applied."""
    tokens = parse_json_path(arg.get("jsonPath"))
    found, value, is_string = _partial_value(arg)
    if tokens is None:
        return obj, "its jsonPath is not of the form $.name[0]['key']"
    if not found:
        return obj, "it has no *Value field"
    if len(tokens) > MAX_DEPTH:
        return obj, f"its jsonPath is deeper than {MAX_DEPTH} levels"
    if not tokens:  # the root itself
        if is_string and isinstance(obj, str):
            return obj + value, None
        return value, None
    if not isinstance(obj, (dict, list)):
        obj = [] if isinstance(tokens[0], int) else {}
    node = obj
    for i, tok in enumerate(tokens):
        last = i == len(tokens) - 1
        if isinstance(tok, int):
            if not isinstance(node, list):
                return obj, "its jsonPath indexes something that is not a list"
            if tok > len(node) + MAX_INDEX_GAP:
                return obj, (f"index {tok} is more than {MAX_INDEX_GAP} past the end of its list "
                             f"({len(node)} items)")
            if len(node) <= tok:
                node.extend([None] * (tok + 1 - len(node)))
        elif not isinstance(node, dict):
            return obj, "its jsonPath names a key of something that is not an object"
        if last:
            current = node[tok] if isinstance(tok, int) else node.get(tok)
            if is_string and isinstance(current, str):
                node[tok] = current + value
            else:
                node[tok] = value
        else:
            child = node[tok] if isinstance(tok, int) else node.get(tok)
            if not isinstance(child, (dict, list)):
                child = [] if isinstance(tokens[i + 1], int) else {}
                node[tok] = child
            node = child
    return obj, None


#: the rule `Usage.rule` names (the Usage tab shows it)
RULE = "output = candidatesTokenCount + thoughtsTokenCount (the last chunk's)"


def canonical_usage(raw: dict) -> ev.Usage:
    get = raw.get
    prompt = get("promptTokenCount")
    cand = get("candidatesTokenCount")
    thoughts = get("thoughtsTokenCount")
    total = get("totalTokenCount")
    cached = get("cachedContentTokenCount")
    if not (type(prompt) is type(total) is int and (cand is None or type(cand) is int)
            and (thoughts is None or type(thoughts) is int) and (cached is None or type(cached) is int)):
        # (one test for the usual object, whose counts are integers or absent; this runs on every chunk)
        prompt, cand, thoughts = token_count(prompt), token_count(cand), token_count(thoughts)
        total, cached = token_count(total), token_count(cached)
    out = None if cand is None and thoughts is None else (cand or 0) + (thoughts or 0)
    if total is None and prompt is not None and out is not None:
        total = prompt + out
    # positional (input, output, total, cache_read, cache_write, reasoning, raw, rule): cheaper than keywords
    return _Usage(prompt, out, total, cached, None, thoughts, raw, RULE)


class _Candidate:
    """Per-candidate (choice) state: the block text parts currently merge into, an open streamed call."""

    __slots__ = ("choice", "text_index", "text_kind", "last_index", "call_index", "call_args", "has_calls",
                 "finished", "call_streamed", "call_serialized", "call_grown")

    def __init__(self, choice: int) -> None:
        self.choice = choice
        self.text_index: int | None = None   # the open text/thinking block new text parts merge into
        self.text_kind: str | None = None
        self.last_index: int | None = None   # the newest block of this candidate (for a lone signature)
        self.call_index: int | None = None   # an open Vertex streamed function call
        self.call_args = None                # the object assembled from its partialArgs
        self.call_streamed = False           # a partialArgs entry was applied to it
        self.call_serialized = -1            # the length of its last serialization (-1: none since a change)
        self.call_grown = 0                  # about how many characters it grew since
        self.has_calls = False
        self.finished = False


class GeminiAdapter(Adapter):
    format = "gemini"
    terminator_description = "a final chunk carrying finishReason"

    def __init__(self) -> None:
        super().__init__()
        self._cands: dict[int, _Candidate] = {}
        self._started = False
        self._usage_chunks = 0
        self._last_usage = None
        self._partials_applied = 0   # partialArgs entries applied so far (a chunk that applied one is no keepalive)

    def _cand(self, choice: int) -> _Candidate:
        c = self._cands.get(choice)
        if c is None:
            c = self._cands[choice] = _Candidate(choice)
        return c

    # -- frames --------------------------------------------------------------------------------------
    def on_frame(self, frame: SSEFrame) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self.terminated:
            self.check_after_terminator(frame.n, out)
            return out
        if frame.event != "message" and self.first_time("unknown-event"):
            out.append(ev.Diagnostic(frame.n, "unknown-event",
                                     f"event {frame.event!r}: Gemini sends unnamed data events; its data is "
                                     "decoded all the same"))
        # the frame's JSON (`frame_json` inlined: this runs per frame)
        data = frame.data
        try:
            d = loads_fast(data)
        except ValueError:
            d = self.parse_json(frame, out)  # the stdlib's leniency, else a diagnostic
            if d is None:
                return out
        else:
            if len(data) > DEPTH_GATE and may_nest_too_deep(data):
                d = self.shallow(frame.n, d, out)
        if type(d) is not dict:
            if type(d) is list and d and type(d[0]) is dict and "error" in d[0]:
                d = d[0]  # the JSON-array form of a Google error body
            else:
                out.append(ev.Diagnostic(frame.n, "unexpected-data",
                                         f"data is JSON but not an object: {frame.data[:80]!r}"))
                return out
        n = frame.n
        text = self._continuation(d)
        if text:   # the usual chunk: more text for the open block, and the running usage
            out.append(_TextDelta(n, self._cands[0].text_index, text))
            um = d.get("usageMetadata")
            if um is not None:
                self._usage(n, um, out)
            return out
        try:
            self._on_chunk(n, d, out)
        except MALFORMED as exc:   # a field of an unexpected JSON type (the usual ones are tested for)
            out.append(malformed(n, "a chunk has a field of an unexpected type; partly decoded", exc))
        return out

    def _on_chunk(self, n: int, d: dict, out: list) -> None:
        """Every chunk but the usual one (see `_continuation`)."""
        err = d.get("error")
        if err is not None:
            self._error(n, err, out)
            return
        if not self._started:
            self._started = True
            out.append(ev.ResponseStarted(n, text_or_none(d.get("responseId")), text_or_none(d.get("modelVersion"))))
        finished_now = False
        produced_before = len(out)
        partials_before = self._partials_applied
        cands = d.get("candidates")
        if cands:
            if type(cands) is not list:
                out.append(malformed(n, f"candidates is a JSON {type(cands).__name__}, not an array; skipped"))
            elif len(cands) == 1:  # the usual single candidate: no enumerate()
                c = cands[0]
                if type(c) is not dict:
                    self._not_a_candidate(n, c, out)
                elif self._candidate(n, c, 0, out):
                    finished_now = True
            else:
                for pos, c in enumerate(cands):
                    if type(c) is not dict:
                        self._not_a_candidate(n, c, out)
                    elif self._candidate(n, c, pos, out):
                        finished_now = True
        pf = d.get("promptFeedback")
        blocked = False
        if type(pf) is dict and pf.get("blockReason"):
            blocked = True
            reason = pf["blockReason"]
            out.append(ev.Finished(n, ev.FinishReason("content_filter", reason)))
            out.append(ev.Diagnostic(n, "prompt-blocked",
                                     f"promptFeedback.blockReason {reason}: the prompt was blocked and no "
                                     "candidate follows"))
        um = d.get("usageMetadata")
        if um is not None:
            self._usage(n, um, out)
        if blocked or (finished_now and all(c.finished for c in self._cands.values())):
            self.mark_terminated(n, "promptFeedback.blockReason" if blocked else "finishReason", out)
        elif self._partials_applied == partials_before and (
                len(out) == produced_before or (type(out[-1]) is _Diagnostic and
                                                all(type(e) is _Diagnostic for e in out[produced_before:]))):
            # Gemini has no ping event: a chunk that carries nothing new (an empty text part, the same
            # cumulative usage) is what keeps its connection alive. The common case, a chunk whose last
            # event is not a Diagnostic, is settled by the one type check.
            out.append(_Keepalive(n))

    def _continuation(self, d: dict) -> str | None:
        """The text of the most common chunk: one candidate (0) whose one bare `{"text": ...}` part continues
        its open text block, no finishReason, no error, no promptFeedback; None for anything else."""
        st = self._cands.get(0)
        if st is None or st.text_kind != "text":
            return None
        try:
            # subscripts rather than get() and type() tests (this runs on nearly every chunk): a value of the
            # wrong JSON type along the path raises TypeError or KeyError (JSON object keys are strings)
            cands = d["candidates"]
            c = cands[0]
            parts = c["content"]["parts"]
            p = parts[0]
            text = p["text"]
        except (KeyError, IndexError, TypeError):
            return None
        if (type(text) is not str or len(p) != 1 or len(parts) != 1 or len(cands) != 1 or "finishReason" in c
                or "error" in d or "promptFeedback" in d):
            return None
        if "index" in c:   # (not `!= 0` alone: false and 0.0 equal 0, and are reported by _candidate)
            i = c["index"]
            if type(i) is not int or i != 0:
                return None
        return text

    @staticmethod
    def _not_a_candidate(n: int, c, out: list) -> None:
        out.append(malformed(n, f"a candidate is a JSON {json_type(c)}, not an object; skipped"))

    def _candidate(self, n: int, c: dict, pos: int, out: list) -> bool:
        """Handle one candidate of a chunk; True when it carried its finishReason."""
        choice = c.get("index", pos)
        if type(choice) is not int or choice < 0:
            if bad_index(choice):
                out.append(malformed(n, f"candidate index {choice!r} is not a non-negative integer; taken as its "
                                        f"position in candidates ({pos})"))
            choice = pos
        st = self._cands.get(choice) or self._cand(choice)
        content = c.get("content")
        if content is not None and type(content) is not dict:
            out.append(malformed(n, f"a candidate's content is a JSON {json_type(content)}, not an object; "
                                    "skipped"))
        elif content:
            parts = content.get("parts")
            if parts and type(parts) is not list:
                out.append(malformed(n, f"content.parts is a JSON {type(parts).__name__}, not an array; skipped"))
            elif parts:
                for p in parts:
                    if type(p) is not dict:
                        out.append(malformed(n, f"a part is a JSON {json_type(p)}, not an object; skipped"))
                        continue
                    if "text" in p:
                        text = p["text"]
                        if type(text) is not str:
                            if text is not None:
                                out.append(malformed(n, f"a part's text is a JSON {type(text).__name__}, not a "
                                                        "string; the part is skipped"))
                            continue
                        if len(p) == 1:  # the usual bare {"text": ...}: no signature, not a thought
                            sig = thought = None
                        else:
                            sig = text_or_none(p.get("thoughtSignature"))
                            thought = p.get("thought")
                        if text:
                            if thought:
                                if st.text_kind != "thinking":
                                    self._open_text(n, st, "thinking", out)
                                idx = st.text_index
                                out.append(_ThinkingDelta(n, idx, text))
                            else:
                                if st.text_kind != "text":
                                    self._open_text(n, st, "text", out)
                                idx = st.text_index
                                out.append(_TextDelta(n, idx, text))
                            if sig:
                                out.append(ev.SignatureDelta(n, idx, sig))
                        elif sig:
                            self._lone_signature(n, st, sig, "thinking" if thought else "text", out)
                    elif "functionCall" in p:
                        self._function_call(n, st, p["functionCall"], text_or_none(p.get("thoughtSignature")), out)
                    else:
                        self._other_part(n, st, p, out)
        reason = c.get("finishReason")
        if reason:
            self._close_text(n, st, out)
            self._close_unfinished_call(n, st, "finishReason arrived", out)
            if reason == "STOP" and st.has_calls:
                canonical = "tool_calls"
            else:
                canonical = _FINISH.get(reason, "other") if type(reason) is str else "other"
            out.append(ev.Finished(n, ev.FinishReason(canonical, reason), choice))
            st.finished = True
            return True
        return False

    # -- blocks ----------------------------------------------------------------------------------------
    def _open_text(self, n: int, st: _Candidate, kind: str, out: list) -> None:
        self._close_text(n, st, out)
        if st.call_index is not None:
            self._close_call(n, st, out)
        idx = self.new_index()
        out.append(ev.BlockStarted(n, idx, kind, choice=st.choice))
        st.text_index = st.last_index = idx
        st.text_kind = kind

    def _close_text(self, n: int, st: _Candidate, out: list) -> None:
        if st.text_index is not None:
            out.append(ev.BlockStopped(n, st.text_index))
            st.text_index = None
            st.text_kind = None

    def _lone_signature(self, n: int, st: _Candidate, sig: str, kind: str, out: list) -> None:
        """An empty text part carrying only a signature: it belongs to the current (newest) block."""
        if st.last_index is None:
            self._open_text(n, st, kind, out)
        out.append(ev.SignatureDelta(n, st.last_index, sig))

    def _function_call(self, n: int, st: _Candidate, fc, sig, out: list) -> None:
        if type(fc) is not dict:
            fc = {}
        if st.call_index is not None:
            if not fc:  # `functionCall {}` closes a streamed call
                if sig:
                    out.append(ev.SignatureDelta(n, st.call_index, sig))
                self._close_call(n, st, out)
                return
            if "name" not in fc:  # more partialArgs for the open call
                idx = st.call_index
                if sig:
                    out.append(ev.SignatureDelta(n, idx, sig))
                if "partialArgs" in fc:
                    self._apply_partial(n, st, fc, out)
                elif type(fc.get("args")) is dict and not st.call_streamed:   # the whole args, at the end
                    st.call_args = dict(fc["args"])
                    st.call_serialized = -1
                    self.arguments_only_at_end(n, idx, "the functionCall part that closes it", out)
                if not fc.get("willContinue"):
                    self._close_call(n, st, out)
                return
            self._close_unfinished_call(n, st, f"a new function call ({fc.get('name')!r}) began", out)
        elif not fc:
            out.append(ev.Diagnostic(n, "empty-function-call",
                                     "an empty functionCall {} with no streamed call open; ignored"))
            return
        self._close_text(n, st, out)
        idx = self.new_index()
        st.last_index = idx
        st.has_calls = True
        out.append(ev.BlockStarted(n, idx, "tool_call", choice=st.choice, id=text_or_none(fc.get("id")),
                                   name=text_or_none(fc.get("name"))))
        if sig:
            out.append(ev.SignatureDelta(n, idx, sig))
        if fc.get("willContinue") or "partialArgs" in fc:  # Vertex streamed arguments
            args = fc.get("args")
            st.call_index = idx
            st.call_args = dict(args) if type(args) is dict else {}
            st.call_streamed = False
            st.call_serialized = -1
            st.call_grown = 0
            if "partialArgs" in fc:
                self._apply_partial(n, st, fc, out)
            else:
                self._publish_args(n, st, out)
            if not fc.get("willContinue"):
                self._close_call(n, st, out)
            return
        args = fc.get("args")
        out.append(ev.ToolArgsDelta(n, idx, dumps_compact(args if args is not None else {})))
        out.append(ev.BlockStopped(n, idx))

    def _apply_partial(self, n: int, st: _Candidate, fc: dict, out: list) -> None:
        obj = st.call_args
        partial = fc.get("partialArgs")
        if type(partial) is list:
            for arg in partial:
                if type(arg) is not dict:
                    continue
                obj, problem = apply_partial_arg(obj, arg)
                if problem is not None:
                    out.append(ev.Diagnostic(n, "partial-args-unapplied",
                                             f"a partialArgs entry was not applied ({problem}): "
                                             f"{dumps_compact(arg)[:80]}"))
                    continue
                self._partials_applied += 1
                st.call_streamed = True
                # about how much the serialization grew (only needs to be proportional: see _publish_args)
                path = arg.get("jsonPath")
                _found, value, _is_string = _partial_value(arg)
                st.call_grown += (len(path) if type(path) is str else 0) + (
                    len(value) if type(value) is str else
                    len(dumps_compact(value)) if type(value) is dict or type(value) is list else 8)
        st.call_args = obj
        self._publish_args(n, st, out)

    def _publish_args(self, n: int, st: _Candidate, out: list, final: bool = False) -> None:
        """The assembled arguments as text (a ToolArgsReplaced) when they changed: every time while they are short,
        then only once they grew by half their last text's length, and always at the call's end. (Serializing
        the whole object on every frame is quadratic: 16k frames took minutes, and a run kept every copy.)"""
        last = st.call_serialized
        if last >= 0:   # (-1: never serialized since the object was replaced)
            if not st.call_grown:
                return
            if not final and last >= _ARGS_ALWAYS_SERIALIZED and st.call_grown < last // 2:
                return
        text = dumps_compact(st.call_args)
        st.call_serialized = len(text)
        st.call_grown = 0
        out.append(ev.ToolArgsReplaced(n, st.call_index, text))

    def _close_unfinished_call(self, n: int, st: _Candidate, why: str, out: list) -> None:
        """Close a streamed call that still expected partialArgs (willContinue), saying so."""
        if st.call_index is not None:
            out.append(ev.Diagnostic(n, "function-call-not-closed",
                                     f"{why} while a streamed function call still expected more partialArgs "
                                     "(willContinue)"))
            self._close_call(n, st, out)

    def _close_call(self, n: int, st: _Candidate, out: list) -> None:
        self._publish_args(n, st, out, final=True)
        out.append(ev.BlockStopped(n, st.call_index))
        st.call_index = None
        st.call_args = None

    def _other_part(self, n: int, st: _Candidate, p: dict, out: list) -> None:
        keys = [k for k in p if k not in ("thought", "thoughtSignature")]
        if not keys:  # a part with only a signature
            sig = text_or_none(p.get("thoughtSignature"))
            if sig:
                self._lone_signature(n, st, sig, "thinking" if p.get("thought") else "text", out)
            return
        self._close_text(n, st, out)
        if st.call_index is not None:
            self._close_call(n, st, out)
        idx = self.new_index()
        st.last_index = idx
        out.append(ev.BlockStarted(n, idx, "other", choice=st.choice, provider_type=keys[0], raw=p))
        sig = text_or_none(p.get("thoughtSignature"))
        if sig:
            out.append(ev.SignatureDelta(n, idx, sig))
        out.append(ev.BlockStopped(n, idx))

    # -- usage, errors ---------------------------------------------------------------------------------
    def _usage(self, n: int, um, out: list) -> None:
        """One chunk's usageMetadata: the running total (every chunk carries one; the last wins)."""
        self._usage_chunks += 1
        if self._usage_chunks == 2:
            self._usage_repeated(n, out)
        if type(um) is not dict:
            out.append(malformed(n, f"usageMetadata is a JSON {json_type(um)}, not an object; skipped"))
            return
        if um == self._last_usage:
            return
        self._last_usage = um
        out.append(_UsageUpdated(n, canonical_usage(um), "cumulative"))

    @staticmethod
    def _usage_repeated(n: int, out: list) -> None:
        out.append(ev.Diagnostic(n, "cumulative-usage-repeated",
                                 "usageMetadata arrives on every chunk and is cumulative (each is the running "
                                 "total so far): the last one is the usage; summing the chunks over-counts"))

    def _error(self, n: int, err, out: list) -> None:
        if type(err) is dict:
            status = err.get("status")
            message = err.get("message")
            etype = status if isinstance(status, str) else (str(err["code"]) if "code" in err else None)
        else:
            etype, message = None, err
        message = message if isinstance(message, str) else str(message)
        out.append(ev.InBandError(n, etype, message, err))
        out.append(ev.Diagnostic(n, "in-band-error",
                                 f"an error object in the stream after HTTP 200: {etype}: {message}; a client "
                                 "that only checks the HTTP status misses it"))

    # -- end of input ----------------------------------------------------------------------------------
    def end(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        n = self.last_frame
        for st in self._cands.values():
            self._close_text(n, st, out)
            self._close_unfinished_call(n, st, "the stream ended", out)
        out.extend(super().end())
        return out
