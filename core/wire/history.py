"""The history check: what an API would reject in a request body's conversation, and what is suspicious.

Pure (sans-IO): `check_request(format, body, rules) -> list[Finding]` reads the request body of any of the four
wire formats and reports, each pointing at the message and part (`path`, `message_index`, `part_index`):

errors (the API answers 400):
- `tool-call-without-result`: a tool call not answered right after it (Chat: an assistant message with
  `tool_calls` not followed by a `tool` message per id; Responses: a `function_call` with no
  `function_call_output`; Anthropic: `tool_use` ids without `tool_result` blocks in the next message; Gemini: a
  `functionCall` turn not followed by as many `functionResponse` parts);
- `tool-result-without-call`: a result answering no call (an unknown or unpaired id, a `tool` message or a
  `functionResponse` turn with no call before it);
- `tool-call-id-missing`: a Chat tool call without the id its result must name;
- `tool-result-not-first`: Anthropic, a user message answering `tool_use` blocks whose `tool_result` blocks do
  not all come before its other blocks (text);
- `tool-use-id-duplicate`: Anthropic, two `tool_use` blocks of one assistant message with the same id;
- `thinking-block-missing`: Anthropic with thinking on, a tool-use continuation whose last assistant message does
  not start with its thinking block;
- `thinking-block-modified`: Anthropic, a thinking block of the latest assistant message changed, or moved after
  other blocks;
- `thinking-signature-invalid`: Anthropic, a thinking block whose signature is missing, empty or not valid;
- `function-call-missing-signature`: Gemini, the first `functionCall` part of a model turn in the current turn
  without its `thoughtSignature` (when the model requires it: Gemini 3, `rules.gemini_signatures`);
- `signature-corrupted`: Gemini, a `thoughtSignature` that does not verify;
- `function-call-without-reasoning`: Responses, a `function_call` passed back without the `reasoning` item
  before it, when the model reasons (`rules.responses_reasoning`);
- `reasoning-without-following-item`: Responses, a `reasoning` item not followed by the item it led to;
- `reasoning-not-verified`: Responses, an `encrypted_content` that does not verify;
- `empty-assistant-turn`, `empty-message`: Anthropic, a message whose content is empty (`""`, `[]`) other than
  the optional final assistant message (a prefill), or with no content at all;
- `empty-text-block`: Anthropic, a text block (or string content) that is empty or only white space;
- `tool-field-wrong-type`: a tool call's arguments or a result of the wrong JSON type, the mistake of a history
  translated by hand between APIs (Chat `function.arguments` and Responses `arguments` not a string, a Responses
  `function_call_output.output` that is an object, Anthropic `tool_use.input` not an object, Gemini
  `functionCall.args` / `functionResponse.response` not an object), and an id that is not a string (Chat
  `tool_calls[].id` / `tool_call_id`, Responses `call_id`, Anthropic `tool_use.id` / `tool_result.tool_use_id`,
  Gemini `functionCall` / `functionResponse` `id` and `name`, `thoughtSignature`): such an id pairs with nothing
  (and is never a dict key or set member: an unhashable one would raise).

warnings (accepted, but probably a bug): `foreign-signature` (a signature that looks like another provider's),
`tool-result-empty` (a tool result with no text), `empty-assistant-turn` (the other formats: an assistant message
with nothing in it).

Signatures are opaque, so their checks beyond presence need the issuer: `rules.verify_signature(kind, signature,
content)` answers "valid", "mismatch" (issued here, but for other content) or "unknown" (not issued here). The
emulator passes its own; without one, only presence and shape are checked. The wording of each error is the
provider's own (`Finding.message`), so the emulator can answer with it.

Bounded: the check never raises on any JSON value (of any type, at any depth) and is linear in the body's size;
it lists the first `FINDINGS_PER_CODE` findings of each code and counts the rest, with one `findings-not-listed`
finding per code that had more ("… and K more `code` findings"; `history_check` gives the full counts), so a
hostile body cannot make its result grow with every message.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.wire.errors import LocalProtocolError
from core.wire.formats import FORMATS, unknown_format_message
from core.wire.jsonfast import MAX_DEPTH, TOO_DEEP_MARKER, bounded

ERROR, WARNING = "error", "warning"
#: how many findings of each code (and severity) a check lists; past that they are counted, not listed, and one
#: `findings-not-listed` finding says how many more there were (a hostile body cannot make the check's result,
#: or its printout, grow with every message)
FINDINGS_PER_CODE = 100
NOT_LISTED = "findings-not-listed"
# Gemini's documented placeholders for function calls that did not come from Gemini itself.
GEMINI_PLACEHOLDER_SIGNATURES = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")
ANTHROPIC_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
GEMINI_SIGNATURE_DOCS = "https://ai.google.dev/gemini-api/docs/thought-signatures"


@dataclass(frozen=True)
class Finding:
    severity: str                 # "error" (the API would reject the request) | "warning" (suspicious)
    code: str
    message: str                  # errors: the provider's own wording
    path: str                     # e.g. "messages[3].content[1]", "input[4]", "contents[2].parts[0]"
    message_index: int | None = None
    part_index: int | None = None
    more: int = 0                 # a `findings-not-listed` finding: how many it stands for (not in `to_json`)

    def to_json(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message, "path": self.path,
                "message_index": self.message_index, "part_index": self.part_index}


@dataclass(frozen=True)
class HistoryRules:
    """What the checked API requires beyond the format itself.

    gemini_signatures: "required" (Gemini 3 thinking models), "optional" (Gemini 2.5), or "auto": required when
    `model` names a Gemini 3 model. responses_reasoning: "required" (a reasoning model: a function_call passed back
    as the output item it was, with its item id, needs the reasoning item before it), "optional", or "auto": the
    same when the request asks for reasoning. (A function_call without an item id cannot be tied to any reasoning,
    so the API accepts it.) interleaved_thinking: Anthropic's interleaved-thinking beta (thinking blocks may follow
    tool_use blocks)."""

    model: str | None = None
    gemini_signatures: str = "auto"
    responses_reasoning: str = "auto"
    interleaved_thinking: bool = False
    verify_signature: Callable[[str, str, str], str] | None = None


def rejects(findings: list[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)


def finding_totals(findings) -> tuple[int, int]:
    """(errors, warnings) that `findings`, as `check_request` lists them, stand for: a `findings-not-listed` one
    counts the findings it was put for, not itself."""
    errors = warnings = 0
    for f in findings:
        n = f.more if f.code == NOT_LISTED else 1
        if f.severity == ERROR:
            errors += n
        else:
            warnings += n
    return errors, warnings


def first_error(findings: list[Finding]) -> Finding | None:
    return next((f for f in findings if f.severity == ERROR), None)


@dataclass(frozen=True)
class HistoryCheck:
    """What the check found: `findings` lists the first `per_code` findings of each severity and code in the
    order of the conversation, then, for each code with more, one `findings-not-listed` finding of the same
    severity ("… and K more `code` findings", pointing at the first of them not listed); `errors` and `warnings`
    count every finding, listed or not (the `findings-not-listed` ones aside)."""

    findings: list[Finding]
    errors: int
    warnings: int

    @property
    def rejected(self) -> bool:
        return self.errors > 0


class _Findings:
    """Where the checkers put their findings (`append`, as on a list): the first `per_code` of each (severity,
    code) are kept in the order they come, the rest counted (the first of them remembered: where they begin)."""

    __slots__ = ("counts", "first_unlisted", "listed", "per_code")

    def __init__(self, per_code: int | None) -> None:
        self.per_code = per_code
        self.listed: list[Finding] = []
        self.counts: dict[tuple[str, str], int] = {}
        self.first_unlisted: dict[tuple[str, str], Finding] = {}

    def append(self, f: Finding) -> None:
        key = (f.severity, f.code)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        if self.per_code is None or n <= self.per_code:
            self.listed.append(f)
        elif n == self.per_code + 1:
            self.first_unlisted[key] = f

    def extend(self, findings) -> None:
        for f in findings:
            self.append(f)

    def result(self) -> HistoryCheck:
        findings = list(self.listed)
        for (severity, code), f in self.first_unlisted.items():
            more = self.counts[(severity, code)] - self.per_code
            findings.append(Finding(severity, NOT_LISTED, f"… and {more:,} more `{code}` findings (counted, not "
                                    f"listed; the first of them at {f.path})", f.path, f.message_index,
                                    f.part_index, more=more))
        errors = sum(n for (severity, _), n in self.counts.items() if severity == ERROR)
        return HistoryCheck(findings, errors, sum(self.counts.values()) - errors)


def history_check(fmt: str, body: Any, rules: HistoryRules = HistoryRules(),
                  per_code: int | None = FINDINGS_PER_CODE) -> HistoryCheck:
    """The findings for `body` (a request body of format `fmt`, any JSON value: never raises for one), in the
    order of the conversation, the first `per_code` of each code listed (None: all) and every one counted.

    An id, name or signature of the wrong JSON type is a `tool-field-wrong-type` finding, never a dict key or set
    member (an unhashable one would raise); what the check reads of a content stops at `jsonfast.MAX_DEPTH` levels
    and what it quotes or encodes is `bounded` first (the stdlib's encoder, str() and repr recurse per level), so
    no depth raises either. Linear in the body's size."""
    if fmt not in FORMATS:
        raise LocalProtocolError(unknown_format_message(fmt))
    out = _Findings(per_code)
    if isinstance(body, Mapping):
        _CHECKERS[fmt](body, rules, out)
    return out.result()


def check_request(fmt: str, body: Any, rules: HistoryRules = HistoryRules(),
                  per_code: int | None = FINDINGS_PER_CODE) -> list[Finding]:
    """The findings for `body` (a request body of format `fmt`), in the order of the conversation: the first
    `per_code` of each code, then a `findings-not-listed` for each code with more (`history_check`)."""
    return history_check(fmt, body, rules, per_code).findings


# -- signatures ------------------------------------------------------------------------------------------------
def signature_family(sig: Any) -> str | None:
    """Which provider a signature looks like it came from (a heuristic on its first bytes), or None.

    OpenAI's encrypted reasoning is a Fernet token (`gAAAAA...`); Gemini's thought signatures are base64 of a
    protobuf whose payload starts 0x01 0xD1 0xED 0x8A; Anthropic's start with field 2 (0x12) holding a message
    whose first fields are 0x0A (length) then 0x08."""
    if not isinstance(sig, str) or not sig:
        return None
    if sig in GEMINI_PLACEHOLDER_SIGNATURES:
        return "gemini"
    if sig.startswith("gAAAAA"):
        return "openai-responses"
    try:
        head32 = sig[:32].replace("-", "+").replace("_", "/")   # either base64 alphabet
        head = base64.b64decode(head32 + "=" * (-len(head32) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    if b"\x01\xd1\xed\x8a" in head[:8]:
        return "gemini"
    if len(head) > 6 and head[0] == 0x12:
        i = 1
        while i < len(head) and head[i] & 0x80:   # skip the length varint
            i += 1
        if i + 3 < len(head) and head[i + 1] == 0x0A and head[i + 3] == 0x08:
            return "anthropic"
    return None


def _foreign(sig: Any, own: str, path: str, mi: int, pi: int | None, out: list) -> None:
    family = signature_family(sig)
    if family is not None and family != own:
        out.append(Finding(WARNING, "foreign-signature",
                           f"this signature looks like one issued by {family}, not {own}: {own} will reject it "
                           f"(signatures are valid only for the API that issued them)", path, mi, pi))


def _verify(rules: HistoryRules, kind: str, sig: str, content: str) -> str:
    if rules.verify_signature is None:
        return "valid"
    return rules.verify_signature(kind, sig, content)


def _text(v: Any, depth: int = 0) -> str:
    """The text of a message content in any shape (string, list of parts); what lies deeper than MAX_DEPTH levels
    reads as TOO_DEEP_MARKER (this recurses per level)."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if depth > MAX_DEPTH:
        return TOO_DEEP_MARKER
    if isinstance(v, list):
        return "".join(_text(x.get("text") if isinstance(x, Mapping) else x, depth + 1) for x in v)
    if isinstance(v, Mapping):
        if "text" in v:
            return _text(v["text"], depth + 1)
        return json.dumps(bounded(v), ensure_ascii=False) if v else ""
    return str(v)


def _shown(v: Any) -> str:
    """A peer's value as a message quotes it: a string as it is; a list or an object as (bounded) JSON, cut to 200
    characters (str() of one recurses per level and is as long as the value)."""
    if isinstance(v, (list, Mapping)):
        return json.dumps(bounded(v), ensure_ascii=False)[:200]
    return str(v)


def _list(v: Any) -> list:
    return v if isinstance(v, list) else []


# -- OpenAI Chat -----------------------------------------------------------------------------------------------
class _OpenCalls:
    """The ids of the latest assistant tool_calls still to be answered, in their order: a list of the ids with, per
    id, the positions still open (a result closes the first). Linear: a list's `in` and `remove` per tool message
    were quadratic in a body of many calls and results a peer sends the emulator."""

    __slots__ = ("count", "ids", "open", "positions")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.open: list[bool] = []
        self.positions: dict[str, deque[int]] = {}
        self.count = 0

    def add(self, cid: str) -> None:
        self.positions.setdefault(cid, deque()).append(len(self.ids))
        self.ids.append(cid)
        self.open.append(True)
        self.count += 1

    def __contains__(self, cid: str) -> bool:
        return bool(self.positions.get(cid))

    def close(self, cid: str) -> None:
        at = self.positions.get(cid)
        if at:
            self.open[at.popleft()] = False
            self.count -= 1

    def __bool__(self) -> bool:
        return self.count > 0

    def still_open(self) -> list[str]:
        return [cid for cid, o in zip(self.ids, self.open) if o]


def _chat(body: Mapping, rules: HistoryRules, out: _Findings) -> None:
    msgs = _list(body.get("messages"))
    open_calls = _OpenCalls()           # the latest assistant tool_calls still to be answered
    open_at: int | None = None
    answered_by: set[str] = set()
    for i, m in enumerate(msgs):
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        where = f"messages[{i}]"
        if role == "tool":
            cid = m.get("tool_call_id")
            wrong = cid is not None and not isinstance(cid, str)
            if wrong:
                out.append(_openai_wrong_type(f"messages[{i}].tool_call_id", cid, "a string", i))
            if open_at is None:
                out.append(Finding(ERROR, "tool-result-without-call",
                                   "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                                   "message with 'tool_calls'.", where, i))
            elif wrong:
                pass   # (answers no call: its type is the finding)
            elif cid not in open_calls and cid not in answered_by:
                out.append(Finding(ERROR, "tool-result-without-call",
                                   f"Invalid parameter: 'tool_call_id' of '{cid}' not found in 'tool_calls' of "
                                   "previous message.", where, i))
            else:
                open_calls.close(cid)
                answered_by.add(cid)
            if not _text(m.get("content")).strip():
                out.append(Finding(WARNING, "tool-result-empty", "this tool message has no text: the model learns "
                                   "nothing from it", where, i))
            continue
        if open_calls:
            out.append(_chat_unanswered(open_at, open_calls.still_open()))
        open_calls, open_at, answered_by = _OpenCalls(), None, set()
        if role == "assistant":
            calls = _list(m.get("tool_calls"))
            for k, tc in enumerate(calls):
                fn = tc.get("function") if isinstance(tc, Mapping) else None
                if isinstance(fn, Mapping) and "arguments" in fn and not isinstance(fn["arguments"], str):
                    out.append(_openai_wrong_type(f"messages[{i}].tool_calls[{k}].function.arguments",
                                                  fn["arguments"], "a string", i, k))
                cid = tc.get("id") if isinstance(tc, Mapping) else None
                if cid is not None and not isinstance(cid, str):
                    out.append(_openai_wrong_type(f"messages[{i}].tool_calls[{k}].id", cid, "a string", i, k))
                elif not cid:
                    out.append(Finding(ERROR, "tool-call-id-missing",
                                       f"Missing required parameter: 'messages[{i}].tool_calls[{k}].id'.",
                                       f"{where}.tool_calls[{k}]", i, k))
                else:
                    open_calls.add(cid)
            if calls:
                open_at = i
            if not calls and not _text(m.get("content")).strip() and not m.get("refusal") \
                    and not m.get("function_call"):
                out.append(Finding(WARNING, "empty-assistant-turn", "this assistant message has no content and no "
                                   "tool calls", where, i))
    if open_calls:
        out.append(_chat_unanswered(open_at, open_calls.still_open()))


_JSON_TYPE = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number",
              bool: "a boolean", type(None): "null"}


def _openai_wrong_type(path: str, value: Any, expected: str, i: int, k: int | None = None) -> Finding:
    """OpenAI's 400 for a field of the wrong JSON type (its wording: "Invalid type for 'messages[1].tool_calls[0]
    .function.arguments': expected a string, but got an object instead.")."""
    return Finding(ERROR, "tool-field-wrong-type", f"Invalid type for '{path}': expected {expected}, but got "
                   f"{_JSON_TYPE.get(type(value), 'a value')} instead.", path, i, k)


def _chat_unanswered(i: int | None, ids: list[str]) -> Finding:
    return Finding(ERROR, "tool-call-without-result",
                   "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
                   f"messages[{i}]", i)


# -- OpenAI Responses ------------------------------------------------------------------------------------------
def _responses(body: Mapping, rules: HistoryRules, out: _Findings) -> None:
    items = body.get("input")
    if not isinstance(items, list):
        return
    reasons = body.get("reasoning") is not None
    strict = rules.responses_reasoning == "required"
    auto = rules.responses_reasoning == "auto" and reasons
    calls: dict[str, int] = {}          # call_id -> index of its function_call
    answered: set[str] = set()
    step_reasoning = False              # a reasoning item since the last non-assistant item
    for i, it in enumerate(items):
        if not isinstance(it, Mapping):
            continue
        typ = it.get("type") or ("message" if "role" in it else None)
        where = f"input[{i}]"
        if typ == "reasoning":
            nxt = items[i + 1] if i + 1 < len(items) else None
            nxt_type = (nxt.get("type") or ("message" if nxt.get("role") == "assistant" else "user")) \
                if isinstance(nxt, Mapping) else None
            if nxt_type not in ("function_call", "message", "custom_tool_call", "reasoning") \
                    or (nxt_type == "message" and nxt.get("role") != "assistant"):
                out.append(Finding(ERROR, "reasoning-without-following-item",
                                   f"Item '{_shown(it.get('id') or i)}' of type 'reasoning' was provided without its "
                                   "required following item.", where, i))
            enc = it.get("encrypted_content")
            if isinstance(enc, str) and enc:
                _foreign(enc, "openai-responses", where, i, None, out)
                summary = "".join(_text(s) for s in _list(it.get("summary")))
                if _verify(rules, "responses-reasoning", enc, summary) != "valid":
                    out.append(Finding(ERROR, "reasoning-not-verified",
                                       f"The encrypted content for item {_shown(it.get('id') or i)} could not be "
                                       "verified.", where, i))
            step_reasoning = True
            continue
        if typ == "function_call":
            if "arguments" in it and not isinstance(it["arguments"], str):
                out.append(_openai_wrong_type(f"input[{i}].arguments", it["arguments"], "a string", i))
            cid = it.get("call_id")
            if cid is not None and not isinstance(cid, str):
                out.append(_openai_wrong_type(f"input[{i}].call_id", cid, "a string", i))
            elif cid:
                calls[cid] = i
            # only an item passed back with its id can be tied to the reasoning that produced it
            needs = (strict or auto) and bool(it.get("id"))
            if needs and not step_reasoning:
                out.append(Finding(ERROR, "function-call-without-reasoning",
                                   f"Item '{_shown(it.get('id') or cid)}' of type 'function_call' was provided "
                                   "without its required 'reasoning' item.", where, i))
            continue
        if typ == "function_call_output":
            if not isinstance(it.get("output"), (str, list)) and "output" in it:
                out.append(_openai_wrong_type(f"input[{i}].output", it["output"],
                                              "one of a string or array of content parts", i))
            cid = it.get("call_id")
            if cid is not None and not isinstance(cid, str):
                out.append(_openai_wrong_type(f"input[{i}].call_id", cid, "a string", i))
            elif cid not in calls:
                out.append(Finding(ERROR, "tool-result-without-call",
                                   f"No tool call found for function call output with call_id {cid}.", where, i))
            else:
                answered.add(cid)
            if not _text(it.get("output")).strip():
                out.append(Finding(WARNING, "tool-result-empty", "this function_call_output has no text: the model "
                                   "learns nothing from it", where, i))
            step_reasoning = False
            continue
        if typ == "message" and it.get("role") == "assistant":
            if not _text(it.get("content")).strip():
                out.append(Finding(WARNING, "empty-assistant-turn", "this assistant message has no content",
                                   where, i))
            continue
        step_reasoning = False
    for cid, i in calls.items():
        if cid not in answered:
            out.append(Finding(ERROR, "tool-call-without-result", f"No tool output found for function call {cid}.",
                               f"input[{i}]", i))
    # (in input order; the unanswered calls last, found once the whole input was read, as the API does)


# -- Anthropic -------------------------------------------------------------------------------------------------
def _blocks(m: Mapping) -> list:
    c = m.get("content")
    return c if isinstance(c, list) else []


def _btype(b: Any) -> str | None:
    return b.get("type") if isinstance(b, Mapping) else None


def _anthropic(body: Mapping, rules: HistoryRules, out: _Findings) -> None:
    msgs = [m if isinstance(m, Mapping) else {} for m in _list(body.get("messages"))]
    thinking = body.get("thinking")
    thinking_on = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    last_assistant = max((i for i, m in enumerate(msgs) if m.get("role") == "assistant"), default=None)
    missing = _anthropic_thinking_missing(msgs, thinking_on, last_assistant)
    for i, m in enumerate(msgs):
        found: list[Finding] = []
        _anthropic_message(i, m, msgs, last_assistant, thinking_on, rules, found)
        if i == last_assistant and missing is not None:
            found.append(missing)
        # in the order of the conversation: by message, then by part (the message's own findings first)
        out.extend(sorted(found, key=lambda f: f.part_index if f.part_index is not None else -1))


def _anthropic_thinking_missing(msgs: list, thinking_on: bool, last_assistant: int | None) -> Finding | None:
    if thinking_on and last_assistant is not None and msgs and msgs[-1].get("role") == "user" and any(
            _btype(b) == "tool_result" for b in _blocks(msgs[-1])) and last_assistant == len(msgs) - 2:
        blocks = _blocks(msgs[last_assistant])
        first = _btype(blocks[0]) if blocks else "text"
        if any(_btype(b) == "tool_use" for b in blocks) and first not in ("thinking", "redacted_thinking"):
            return Finding(ERROR, "thinking-block-missing",
                           f"messages.{last_assistant}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                           f"but found `{_shown(first)}`. When `thinking` is enabled, a final `assistant` message must "
                           "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                           "`tool_result` blocks). We recommend you include thinking blocks from previous turns. "
                           "To avoid this requirement, disable `thinking`. Please consult our documentation at "
                           f"{ANTHROPIC_DOCS}", f"messages[{last_assistant}].content[0]", last_assistant, 0)
    return None


def _anthropic_id(v: Any) -> bool:
    """An id the pairing can use: a string, or none at all (a missing one pairs with nothing but another)."""
    return v is None or isinstance(v, str)


def _anthropic_message(i: int, m: Mapping, msgs: list, last_assistant: int | None, thinking_on: bool,
                       rules: HistoryRules, out: list) -> None:
    where = f"messages[{i}]"
    blocks = _blocks(m)
    if m.get("role") == "assistant":
        uses = []
        seen: set = set()
        for k, b in enumerate(blocks):
            if _btype(b) != "tool_use":
                continue
            if "input" in b and not isinstance(b["input"], Mapping):
                out.append(Finding(ERROR, "tool-field-wrong-type", f"messages.{i}.content.{k}.tool_use.input: "
                                   "Input should be a valid dictionary", f"{where}.content[{k}].input", i, k))
            uid = b.get("id")
            if not _anthropic_id(uid):
                out.append(Finding(ERROR, "tool-field-wrong-type", f"messages.{i}.content.{k}.tool_use.id: "
                                   "Input should be a valid string", f"{where}.content[{k}].id", i, k))
                continue
            uses.append(uid)
            if isinstance(uid, str):
                if uid in seen:
                    out.append(Finding(ERROR, "tool-use-id-duplicate", f"messages.{i}.content.{k}: `tool_use` "
                                       "ids must be unique", f"{where}.content[{k}]", i, k))
                seen.add(uid)
        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
        results = {b.get("tool_use_id") for b in _blocks(nxt) if _btype(b) == "tool_result"
                   and _anthropic_id(b.get("tool_use_id"))} if nxt and nxt.get("role") == "user" else set()
        missing = [u for u in uses if u not in results]
        if missing:
            out.append(Finding(ERROR, "tool-call-without-result",
                               f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                               f"after: {', '.join(str(u) for u in missing)}. Each `tool_use` block must have a "
                               "corresponding `tool_result` block in the next message.", where, i))
        _anthropic_thinking_blocks(i, blocks, i == last_assistant, thinking_on, rules, out)
        _anthropic_empty(i, m, i == len(msgs) - 1, out)
        return
    _anthropic_empty(i, m, False, out)
    prev = msgs[i - 1] if i > 0 else None
    uses = {b.get("id") for b in _blocks(prev) if _btype(b) == "tool_use" and _anthropic_id(b.get("id"))} \
        if prev and prev.get("role") == "assistant" else set()
    # (the first other block found once: asking each result about the blocks before it was quadratic in a
    # message a peer sends the emulator)
    first_other = next((k for k, b in enumerate(blocks) if _btype(b) != "tool_result"), len(blocks))
    misplaced = next((k for k in range(first_other + 1, len(blocks)) if _btype(blocks[k]) == "tool_result"
                      and _anthropic_id(blocks[k].get("tool_use_id")) and blocks[k].get("tool_use_id") in uses),
                     None)
    if misplaced is not None:
        out.append(Finding(ERROR, "tool-result-not-first",
                           f"messages.{i}: Did not find {len(uses)} `tool_result` block(s) at the beginning of "
                           "this message. Messages following `tool_use` blocks must begin with a matching number "
                           "of `tool_result` blocks.", f"{where}.content[{misplaced}]", i, misplaced))
    for k, b in enumerate(blocks):
        if _btype(b) != "tool_result":
            continue
        uid = b.get("tool_use_id")
        if not _anthropic_id(uid):
            out.append(Finding(ERROR, "tool-field-wrong-type", f"messages.{i}.content.{k}.tool_result.tool_use_id: "
                               "Input should be a valid string", f"{where}.content[{k}].tool_use_id", i, k))
        elif uid not in uses:
            out.append(Finding(ERROR, "tool-result-without-call",
                               f"messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
                               f"{uid}. Each `tool_result` block must have a corresponding "
                               "`tool_use` block in the previous message.", f"{where}.content[{k}]", i, k))
        if not _text(b.get("content")).strip():
            out.append(Finding(WARNING, "tool-result-empty", "this tool_result has no text: the model learns "
                               "nothing from it" + (" (is_error is set)" if b.get("is_error") else ""),
                               f"{where}.content[{k}]", i, k))


def _anthropic_empty(i: int, m: Mapping, final_assistant: bool, out: list) -> None:
    """Anthropic rejects a message with empty content (`""` or `[]`), except the optional final assistant message
    (a prefill), and any text block, in any message, that is empty or only white space."""
    where = f"messages[{i}]"
    content = m.get("content")
    assistant = m.get("role") == "assistant"
    if content is None:
        if "content" not in m:
            out.append(Finding(ERROR, "empty-assistant-turn" if assistant else "empty-message",
                               f"messages.{i}.content: Field required", where, i))
        return
    if content == "" or content == []:
        if not final_assistant:
            out.append(Finding(ERROR, "empty-assistant-turn" if assistant else "empty-message",
                               f"messages.{i}: all messages must have non-empty content except for the optional "
                               "final assistant message", where, i))
        return
    if isinstance(content, str):
        if not content.strip():
            out.append(_blank_text(i, None, content))
        return
    for k, b in enumerate(_list(content)):
        if _btype(b) == "text" and isinstance(b.get("text"), str) and not b["text"].strip():
            out.append(_blank_text(i, k, b["text"]))


def _blank_text(i: int, k: int | None, text: str) -> Finding:
    return Finding(ERROR, "empty-text-block", "messages: text content blocks must be non-empty" if not text else
                   "messages: text content blocks must contain non-whitespace text",
                   f"messages[{i}]" if k is None else f"messages[{i}].content[{k}]", i, k)


def _anthropic_thinking_blocks(i: int, blocks: list, latest: bool, thinking_on: bool, rules: HistoryRules,
                               out: list) -> None:
    """The thinking blocks of one assistant message: a signature field is always required; with thinking off the
    API strips them unread, so what they hold is checked only with thinking on."""
    seen_other = False
    for k, b in enumerate(blocks):
        t = _btype(b)
        where = f"messages[{i}].content[{k}]"
        if t not in ("thinking", "redacted_thinking"):
            seen_other = True
            continue
        if not thinking_on and "signature" in b:
            continue
        if seen_other and latest and not rules.interleaved_thinking:
            out.append(_modified(i, k))
            continue
        if t == "redacted_thinking":
            continue
        if "signature" not in b:
            out.append(Finding(ERROR, "thinking-signature-invalid",
                               f"messages.{i}.content.{k}.thinking.signature: Field required", where, i, k))
            continue
        sig = b.get("signature")
        if not isinstance(sig, str) or not sig:
            out.append(_invalid_signature(i, k))
            continue
        _foreign(sig, "anthropic", where, i, k, out)
        verdict = _verify(rules, "anthropic-thinking", sig, _text(b.get("thinking")))
        if verdict == "mismatch" and latest:
            out.append(_modified(i, k))
        elif verdict != "valid":
            out.append(_invalid_signature(i, k))


def _invalid_signature(i: int, k: int) -> Finding:
    return Finding(ERROR, "thinking-signature-invalid", f"messages.{i}.content.{k}: Invalid `signature` in "
                   "`thinking` block", f"messages[{i}].content[{k}]", i, k)


def _modified(i: int, k: int) -> Finding:
    return Finding(ERROR, "thinking-block-modified",
                   f"messages.{i}.content.{k}: `thinking` or `redacted_thinking` blocks in the latest assistant "
                   "message cannot be modified. These blocks must remain as they were in the original response.",
                   f"messages[{i}].content[{k}]", i, k)


# -- Gemini ----------------------------------------------------------------------------------------------------
def _parts(c: Any) -> list:
    return _list(c.get("parts")) if isinstance(c, Mapping) else []


def _gemini_signatures_required(rules: HistoryRules) -> bool:
    if rules.gemini_signatures == "required":
        return True
    if rules.gemini_signatures == "optional":
        return False
    model = (rules.model or "").lower().rsplit("/", 1)[-1]
    return model.startswith("gemini-3")


def _fc(p: Any) -> Mapping | None:
    if not isinstance(p, Mapping):
        return None
    fc = p.get("functionCall", p.get("function_call"))
    return fc if isinstance(fc, Mapping) else None


def _fr(p: Any) -> Mapping | None:
    if not isinstance(p, Mapping):
        return None
    fr = p.get("functionResponse", p.get("function_response"))
    return fr if isinstance(fr, Mapping) else None


def _sig(p: Mapping) -> Any:
    return p.get("thoughtSignature", p.get("thought_signature"))


def gemini_call_content(fc: Mapping) -> str:
    """What a Gemini function call's signature is bound to (its name and arguments, canonical JSON)."""
    return json.dumps(bounded({"name": fc.get("name"), "args": fc.get("args") or {}}), sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))


def _gemini_wrong_string(where: str, k: int, name: str, value: Any, proto_type: str, i: int) -> Finding:
    """Gemini's 400 for a string field of another JSON type (its wording: "Invalid value at
    'contents[1].parts[0].function_call.name' (TYPE_STRING), 5")."""
    text = json.dumps(bounded(value), ensure_ascii=False)
    return Finding(ERROR, "tool-field-wrong-type", f"Invalid value at '{where}.parts[{k}].{name}' ({proto_type}), "
                   f"{text[:200]}", f"{where}.parts[{k}]", i, k)


def _gemini_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _gemini(body: Mapping, rules: HistoryRules, out: _Findings) -> None:
    contents = body.get("contents")
    if isinstance(contents, Mapping):
        contents = [contents]
    contents = _list(contents)
    required = _gemini_signatures_required(rules)

    def role(c: Any) -> str:
        r = c.get("role") if isinstance(c, Mapping) else None
        return r or "user"

    # the current turn starts after the last user content that holds text rather than function responses
    current = 0
    for i, c in enumerate(contents):
        if role(c) == "user" and any(isinstance(p, Mapping) and "text" in p for p in _parts(c)) \
                and not any(_fr(p) for p in _parts(c)):
            current = i
    for i, c in enumerate(contents):
        where = f"contents[{i}]"
        parts = _parts(c)
        for k, p in enumerate(parts):
            for holder, field, name in ((_fc(p), "args", "function_call.args"),
                                        (_fr(p), "response", "function_response.response")):
                if isinstance(holder, Mapping) and holder.get(field) is not None \
                        and not isinstance(holder[field], Mapping):
                    value = json.dumps(bounded(holder[field]), ensure_ascii=False)
                    out.append(Finding(ERROR, "tool-field-wrong-type", f"Invalid value at '{where}.parts[{k}].{name}' "
                                       f"(type.googleapis.com/google.protobuf.Struct), {value[:200]}",
                                       f"{where}.parts[{k}]", i, k))
            for holder, prefix in ((_fc(p), "function_call"), (_fr(p), "function_response")):
                for field in ("id", "name"):
                    if isinstance(holder, Mapping) and not _gemini_str(holder.get(field)):
                        out.append(_gemini_wrong_string(where, k, f"{prefix}.{field}", holder[field], "TYPE_STRING",
                                                        i))
            if isinstance(p, Mapping) and not _gemini_str(_sig(p)):
                out.append(_gemini_wrong_string(where, k, "thought_signature", _sig(p), "TYPE_BYTES", i))
        if role(c) == "model":
            calls = [(k, _fc(p)) for k, p in enumerate(parts) if _fc(p) is not None]
            if calls:
                nxt = contents[i + 1] if i + 1 < len(contents) else None
                responses = [_fr(p) for p in _parts(nxt) if _fr(p) is not None] if nxt is not None else None
                if responses is not None and len(responses) != len(calls):
                    out.append(Finding(ERROR, "tool-call-without-result",
                                       "Please ensure that the number of function response parts is equal to the "
                                       "number of function call parts of the function call turn.", where, i))
                k0, fc0 = calls[0]
                if i > current and required and not _sig(parts[k0]):
                    out.append(Finding(ERROR, "function-call-missing-signature",
                                       "Function call is missing a thought_signature in functionCall parts. This is "
                                       "required for tools to work correctly, and missing thought_signature may lead "
                                       "to degraded model performance. Additional data, function call "
                                       f"`default_api:{_shown(fc0.get('name'))}` , position {i + 1}. Please refer to "
                                       f"{GEMINI_SIGNATURE_DOCS} for more details.", f"{where}.parts[{k0}]", i, k0))
                for k, fc in calls:
                    sig = _sig(parts[k])
                    if not sig or not isinstance(sig, str) or sig in GEMINI_PLACEHOLDER_SIGNATURES:
                        continue   # (one of another type is a tool-field-wrong-type)
                    _foreign(sig, "gemini", f"{where}.parts[{k}]", i, k, out)
                    if _verify(rules, "gemini-call", sig, gemini_call_content(fc)) != "valid":
                        out.append(Finding(ERROR, "signature-corrupted", "Corrupted thought signature.",
                                           f"{where}.parts[{k}]", i, k))
            for k, p in enumerate(parts):
                if isinstance(p, Mapping) and "text" in p and _sig(p):
                    _foreign(_sig(p), "gemini", f"{where}.parts[{k}]", i, k, out)
            if not parts or all(isinstance(p, Mapping) and set(p) <= {"text", "thought"} and not _text(p.get("text"))
                                for p in parts):
                out.append(Finding(WARNING, "empty-assistant-turn", "this model content has no content", where, i))
            continue
        responses = [(k, _fr(p)) for k, p in enumerate(parts) if _fr(p) is not None]
        if not responses:
            continue
        prev = contents[i - 1] if i > 0 else None
        calls = [_fc(p) for p in _parts(prev) if _fc(p) is not None] if prev is not None and role(prev) == "model" \
            else []
        if not calls:
            out.append(Finding(ERROR, "tool-result-without-call",
                               "Please ensure that function response turn comes immediately after a function call "
                               "turn.", where, i))
        else:
            # (only strings, or no value, as set members: an id or name of another type is a tool-field-wrong-type)
            ids = {fc.get("id") for fc in calls if fc.get("id") and isinstance(fc.get("id"), str)}
            names = {fc.get("name") for fc in calls if _gemini_str(fc.get("name"))}
            for k, fr in responses:
                fid, fname = fr.get("id"), fr.get("name")
                if fid and isinstance(fid, str) and fid not in ids:
                    out.append(Finding(ERROR, "tool-result-without-call",
                                       f"Function response id {fid!r} does not match any function call id of "
                                       "the function call turn.", f"{where}.parts[{k}]", i, k))
                elif (fid and not isinstance(fid, str)) or not _gemini_str(fname):
                    pass
                elif fname not in names:
                    out.append(Finding(WARNING, "tool-result-without-call",
                                       f"this functionResponse names {fr.get('name')!r}, which no functionCall of the "
                                       "previous turn called", f"{where}.parts[{k}]", i, k))
        for k, fr in responses:
            if not fr.get("response"):
                out.append(Finding(WARNING, "tool-result-empty", "this functionResponse has an empty response: the "
                                   "model learns nothing from it", f"{where}.parts[{k}]", i, k))


_CHECKERS = {"openai-chat": _chat, "openai-responses": _responses, "anthropic": _anthropic, "gemini": _gemini}
