"""A provider-neutral conversation: turns of parts, shared by the request layer, the CLI, the GUI and exports.

Pure data (no I/O). A `Conversation` is a tuple of `Turn`s; a turn is a role (`user` or `assistant`) and its
`Part`s, in order:

    user       text, tool_result (paired to its call by `id`; `is_error` for a failed tool)
    assistant  text, thinking (with its `signature`), redacted_thinking (opaque `data`), reasoning (an OpenAI
               Responses reasoning item: `id`, summary `text`, `data` = its encrypted_content), tool_call (`id`,
               `name`, `arguments` as JSON text), other (a provider block with no neutral meaning, kept as `raw`)

Signatures, redacted data and encrypted reasoning are only valid for the API that issued them, so every part
remembers its `origin` (the wire format that produced it) and a Gemini `thoughtSignature` stays on whichever part
carried it (text, thought or function call). `portable(conversation, target)` is the one place that decides what
crosses to another format: it returns the conversation as the target API can take it and notes for what was
dropped or changed. The request builders (`core.live.request`) then map it mechanically.

`assistant_turn(reply, format)` makes the assistant turn of a finished run from its reply snapshot
(`core.wire.reply.Reply`); `Conversation.to_json()` / `from_json()` are the file shape documented in
`docs/conversation-format.md`.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.wire.formats import FORMATS
from core.wire.jsonfast import loads as parse_json   # a ValueError, never a RecursionError, on deep input

FILE_FORMAT = "streamscope-conversation"
FILE_VERSION = 1
ROLES = ("user", "assistant")
USER_PARTS = ("text", "tool_result")
ASSISTANT_PARTS = ("text", "thinking", "redacted_thinking", "reasoning", "tool_call", "other")
MAX_TURNS = 2000            # a conversation file is bounded: longer ones are refused with a clear error
MAX_PARTS_PER_TURN = 500
# Gemini's documented placeholder for function calls that did not come from Gemini (a conversation moved over
# from another model): with it, a Gemini 3 model accepts a functionCall part that carries no signature of its own.
GEMINI_SKIP_SIGNATURE = "skip_thought_signature_validator"


class ConversationError(ValueError):
    """A conversation (file or JSON) that cannot be read; the message says where and why."""


@dataclass(frozen=True)
class Part:
    type: str                         # one of USER_PARTS / ASSISTANT_PARTS
    text: str = ""                    # text, thinking text, reasoning summary, tool result content
    id: str | None = None             # tool_call: the call id; tool_result: the id of the call it answers;
                                      #   reasoning: the Responses item id (rs_...)
    name: str | None = None           # tool_call / tool_result: the tool's name
    arguments: str | None = None      # tool_call: the arguments, JSON text as the model sent them
    signature: str | None = None      # Anthropic thinking signature; Gemini thoughtSignature on this part
    data: str | None = None           # redacted_thinking data; reasoning encrypted_content
    is_error: bool = False            # tool_result: the tool failed
    item_id: str | None = None        # tool_call from the Responses API: its output item id (fc_...)
    origin: str | None = None         # the wire format that produced this part (signatures are valid only there)
    raw: Any = None                   # other: the provider's own object

    def to_json(self) -> dict:
        out: dict[str, Any] = {"type": self.type}
        if self.type != "tool_call" or self.text:
            out["text"] = self.text
        for key in ("id", "name", "arguments", "signature", "data", "item_id", "origin"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.type == "tool_result":
            out["is_error"] = self.is_error
        if self.raw is not None:
            out["raw"] = self.raw
        return out


@dataclass(frozen=True)
class Turn:
    role: str                                   # user | assistant
    parts: tuple[Part, ...] = ()
    format: str | None = None                   # assistant turns: the wire format that produced it
    model: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.type == "text")

    @property
    def tool_calls(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.type == "tool_call")

    @property
    def tool_results(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.type == "tool_result")

    def to_json(self) -> dict:
        out: dict[str, Any] = {"role": self.role, "parts": [p.to_json() for p in self.parts]}
        if self.format:
            out["format"] = self.format
        if self.model:
            out["model"] = self.model
        return out


@dataclass(frozen=True)
class Conversation:
    turns: tuple[Turn, ...] = ()
    system: str = ""                                  # optional, from a conversation file
    tools: tuple[Mapping[str, Any], ...] = field(default=())  # optional, from a conversation file

    def __len__(self) -> int:
        return len(self.turns)

    @property
    def last(self) -> Turn | None:
        return self.turns[-1] if self.turns else None

    def add(self, turn: Turn) -> "Conversation":
        return replace(self, turns=self.turns + (turn,))

    def add_user_text(self, text: str) -> "Conversation":
        """The conversation with the user's text after it (merged into a trailing user turn of tool results, since
        the APIs want user and assistant turns to alternate)."""
        part = Part("text", text)
        last = self.last
        if last is not None and last.role == "user" and last.tool_results:
            return replace(self, turns=self.turns[:-1] + (replace(last, parts=last.parts + (part,)),))
        return self.add(Turn("user", (part,)))

    def add_tool_results(self, results: Iterable[Part]) -> "Conversation":
        return self.add(Turn("user", tuple(results)))

    def pending_tool_calls(self) -> tuple[Part, ...]:
        """The calls of the final assistant turn, when the conversation ends there (they await results)."""
        last = self.last
        if last is None or last.role != "assistant":
            return ()
        return last.tool_calls

    def exchanges(self) -> int:
        """How many assistant turns the conversation holds."""
        return sum(1 for t in self.turns if t.role == "assistant")

    def to_json(self) -> dict:
        out: dict[str, Any] = {"format": FILE_FORMAT, "version": FILE_VERSION,
                               "turns": [t.to_json() for t in self.turns]}
        if self.system:
            out["system"] = self.system
        if self.tools:
            out["tools"] = [dict(t) for t in self.tools]
        return out

    @classmethod
    def from_json(cls, data: Any) -> "Conversation":
        """Read the documented shape (or a bare list of turns); every error names the turn and part."""
        if isinstance(data, list):
            data = {"turns": data}
        if not isinstance(data, Mapping):
            raise ConversationError("a conversation is a JSON object with a 'turns' list (or a list of turns)")
        fmt = data.get("format", FILE_FORMAT)
        if fmt != FILE_FORMAT:
            raise ConversationError(f"format {fmt!r} is not {FILE_FORMAT!r}")
        version = data.get("version", FILE_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FILE_VERSION:
            raise ConversationError(f"conversation version {version!r} is not supported (this build reads "
                                    f"version {FILE_VERSION})")
        turns = data.get("turns")
        if not isinstance(turns, list):
            raise ConversationError("'turns' must be a list")
        if len(turns) > MAX_TURNS:
            raise ConversationError(f"{len(turns)} turns: more than the {MAX_TURNS} a conversation may hold")
        system = data.get("system", "") or ""
        if not isinstance(system, str):
            raise ConversationError("'system' must be a string")
        tools = data.get("tools") or ()
        if not isinstance(tools, list) or not all(isinstance(t, Mapping) for t in tools):
            if tools:
                raise ConversationError("'tools' must be a list of tool definitions")
        return cls(tuple(_turn(t, i) for i, t in enumerate(turns)), system, tuple(tools))

    @classmethod
    def from_history(cls, history: Iterable[Any]) -> "Conversation":
        """The legacy `PromptSpec.history`: `(role, text)` pairs or `{"role", "content"}` objects."""
        turns = []
        for item in history:
            if isinstance(item, Mapping):
                role, text = item.get("role"), item.get("content")
            else:
                role, text = item
            role = {"model": "assistant", "ai": "assistant"}.get(str(role), str(role))
            if role not in ROLES:
                raise ConversationError(f"a history turn's role must be user or assistant, not {role!r}")
            turns.append(Turn(role, (Part("text", "" if text is None else str(text)),)))
        return cls(tuple(turns))


def _turn(t: Any, i: int) -> Turn:
    where = f"turn {i}"
    if not isinstance(t, Mapping):
        raise ConversationError(f"{where}: a turn is an object with 'role' and 'parts'")
    role = t.get("role")
    role = {"model": "assistant"}.get(role, role)
    if role not in ROLES:
        raise ConversationError(f"{where}: role must be 'user' or 'assistant', not {role!r}")
    parts = t.get("parts")
    if parts is None and "content" in t:          # shorthand: {"role": "user", "content": "text"}
        content = t["content"]
        if not isinstance(content, str):
            raise ConversationError(f"{where}: 'content' (the shorthand) must be a string; use 'parts' otherwise")
        parts = [{"type": "text", "text": content}]
    if not isinstance(parts, list):
        raise ConversationError(f"{where}: 'parts' must be a list")
    if len(parts) > MAX_PARTS_PER_TURN:
        raise ConversationError(f"{where}: {len(parts)} parts: more than the {MAX_PARTS_PER_TURN} a turn may hold")
    fmt = t.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise ConversationError(f"{where}: format {fmt!r} is not one of {', '.join(FORMATS)}")
    model = t.get("model")
    if model is not None and not isinstance(model, str):
        raise ConversationError(f"{where}: 'model' must be a string")
    allowed = USER_PARTS if role == "user" else ASSISTANT_PARTS
    out = []
    for k, p in enumerate(parts):
        pw = f"{where}, part {k}"
        if not isinstance(p, Mapping):
            raise ConversationError(f"{pw}: a part is an object with a 'type'")
        typ = p.get("type")
        if typ not in allowed:
            raise ConversationError(f"{pw}: a {role} turn has parts of type {', '.join(allowed)}, not {typ!r}")
        fields: dict[str, Any] = {}
        for key in ("text", "id", "name", "arguments", "signature", "data", "item_id", "origin"):
            v = p.get(key)
            if v is not None and not isinstance(v, str):
                if key == "arguments" and isinstance(v, (dict, list)):   # arguments written as a JSON object
                    v = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
                else:
                    raise ConversationError(f"{pw}: {key!r} must be a string")
            if v is not None:
                fields[key] = v
        origin = fields.get("origin") or (fmt if role == "assistant" else None)
        if origin is not None and origin not in FORMATS:
            raise ConversationError(f"{pw}: origin {origin!r} is not one of {', '.join(FORMATS)}")
        if origin is not None:
            fields["origin"] = origin
        if typ == "tool_call":
            if not fields.get("name"):
                raise ConversationError(f"{pw}: a tool_call needs a 'name'")
            fields.setdefault("arguments", "{}")
        if typ == "tool_result":
            if not fields.get("id") and not fields.get("name"):
                raise ConversationError(f"{pw}: a tool_result needs the 'id' of its call (or at least its 'name')")
            err = p.get("is_error", False)
            if not isinstance(err, bool):
                raise ConversationError(f"{pw}: 'is_error' must be true or false")
            fields["is_error"] = err
        if typ == "other":
            fields["raw"] = p.get("raw")
        out.append(Part(typ, **fields))
    return Turn(role, tuple(out), fmt, model)


def load_conversation(text: str | bytes) -> Conversation:
    try:
        data = parse_json(text)
    except (ValueError, RecursionError) as exc:
        raise ConversationError(f"not JSON: {exc}") from None
    return Conversation.from_json(data)


# -- from a finished run ---------------------------------------------------------------------------------------
def assistant_turn(reply: Any, fmt: str, choice: int = 0) -> Turn:
    """The assistant turn a reply snapshot (`core.wire.reply.Reply`) holds, every part with what its API needs
    back: signatures, redacted data, the Responses reasoning item (id, summary, encrypted_content), call ids."""
    parts: list[Part] = []
    for b in reply.ordered_blocks():
        if b.choice != choice:
            continue
        raw = b.raw if isinstance(b.raw, Mapping) else None
        if b.kind == "text" or b.kind == "refusal":
            parts.append(Part("text", b.text or "", signature=b.signature, origin=fmt))
        elif b.kind == "thinking":
            if b.redacted:
                parts.append(Part("redacted_thinking", data=(raw or {}).get("data"), origin=fmt))
            elif fmt == "openai-responses":
                enc = (raw or {}).get("encrypted_content")
                parts.append(Part("reasoning", b.text or "", id=(raw or {}).get("id"),
                                  data=enc if isinstance(enc, str) else None, origin=fmt))
            else:
                parts.append(Part("thinking", b.text or "", signature=b.signature, origin=fmt))
        elif b.kind == "tool_call":
            item_id = (raw or {}).get("id") if fmt == "openai-responses" else None
            parts.append(Part("tool_call", id=b.id, name=b.name or "", arguments=b.arguments or "{}",
                              signature=b.signature, item_id=item_id if isinstance(item_id, str) else None,
                              origin=fmt))
        else:
            parts.append(Part("other", b.text or "", name=b.provider_type, signature=b.signature, origin=fmt,
                              raw=b.raw))
    return Turn("assistant", tuple(parts), fmt, getattr(reply, "model", None))


def tool_result(call: Part, text: str, is_error: bool = False) -> Part:
    """The result part answering `call` (same id and name)."""
    return Part("tool_result", text, id=call.id, name=call.name, is_error=is_error)


# -- crossing formats ------------------------------------------------------------------------------------------
_PREFIX = {"anthropic": "toolu_", "openai-chat": "call_", "openai-responses": "call_"}


def portable(conv: Conversation, target: str) -> tuple[Conversation, list[str]]:
    """`conv` as the `target` API can take it, and what was dropped or changed (one note per kind of change).

    What stays only in its own format: thinking blocks and their signatures (Anthropic, Gemini), redacted
    thinking, Responses reasoning items and their encrypted_content, Gemini thoughtSignatures on any part, and
    provider blocks of type `other`. Chat Completions takes back no reasoning at all. Tool calls cross; a call
    without an id (Gemini may send none) gets one where the target pairs results by id, and its result the same.
    A function call sent to Gemini that did not come from Gemini (another API's, or one of unknown origin) and
    carries no signature of its own gets Gemini's documented placeholder signature."""
    counts: dict[str, int] = {}

    def note(key: str) -> None:
        counts[key] = counts.get(key, 0) + 1

    turns: list[Turn] = []
    unanswered: list[str] = []                   # ids given to the calls of the previous assistant turn
    for ti, turn in enumerate(conv.turns):
        parts: list[Part] = []
        if turn.role == "user":
            given = list(unanswered)
            for p in turn.parts:
                if p.type == "tool_result" and not p.id and target != "gemini" and given:
                    p = replace(p, id=given.pop(0))
                parts.append(p)
            unanswered = []
            turns.append(replace(turn, parts=tuple(parts)))
            continue
        unanswered = []
        first_call = True
        for pi, p in enumerate(turn.parts):
            own = p.origin in (None, target)
            if p.type in ("thinking", "redacted_thinking", "reasoning"):
                if target == "openai-chat":
                    note("chat-reasoning")
                    continue
                if not own or (p.type == "reasoning") != (target == "openai-responses"):
                    note(f"foreign-{p.type}")
                    continue
                parts.append(p)
                continue
            if p.type == "other":
                note("other")
                continue
            if p.signature and not own:
                note("signature")
                p = replace(p, signature=None)
            if p.type == "tool_call":
                if p.item_id and target != "openai-responses":
                    p = replace(p, item_id=None)
                if not p.id and target != "gemini":
                    p = replace(p, id=f"{_PREFIX[target]}{ti}_{pi}")
                    note("id")
                # a call of unknown origin (a hand-written turn: no format/origin) has no Gemini signature either
                if target == "gemini" and first_call and not p.signature and p.origin != "gemini":
                    p = replace(p, signature=GEMINI_SKIP_SIGNATURE)
                    note("gemini-placeholder")
                first_call = False
                if p.id:
                    unanswered.append(p.id)
            parts.append(p)
        turns.append(replace(turn, parts=tuple(parts)))
    return replace(conv, turns=tuple(turns)), _notes(counts, target)


_NOTE_TEXT = {
    "chat-reasoning": "{n} thinking/reasoning part(s) not sent back: Chat Completions has no field for earlier "
                      "reasoning",
    "foreign-thinking": "{n} thinking block(s) from another API dropped: {t} accepts only thinking it signed itself",
    "foreign-redacted_thinking": "{n} redacted thinking block(s) from another API dropped: their data is "
                                 "readable only by the API that issued it",
    "foreign-reasoning": "{n} Responses reasoning item(s) dropped: {t} cannot take OpenAI's reasoning items or "
                         "their encrypted_content",
    "other": "{n} provider-specific block(s) (server tools, code execution, ...) not sent back",
    "signature": "{n} signature(s) from another API dropped: {t} would reject a signature it did not issue",
    "id": "{n} tool call(s) had no id (Gemini sends none): ids were given to them and to their results",
    # (what a notice shows is the text before " (" or ":": `gui.conversation.note_head`)
    "gemini-placeholder": "{n} function call(s) sent with Gemini's placeholder thoughtSignature "
                          f"{GEMINI_SKIP_SIGNATURE!r}, from another API or of unknown origin (Gemini 3 rejects a "
                          "first functionCall part without one)",
}


def _notes(counts: Mapping[str, int], target: str) -> list[str]:
    return [_NOTE_TEXT[k].format(n=n, t=target) for k, n in counts.items()]


def conversation_text(conv: Conversation | Sequence[Turn]) -> str:
    """A plain-text transcript (for logs and quick looks): one line per part."""
    turns = conv.turns if isinstance(conv, Conversation) else conv
    lines = []
    for t in turns:
        for p in t.parts:
            if p.type == "text":
                lines.append(f"{t.role}: {p.text}")
            elif p.type == "tool_call":
                lines.append(f"{t.role}: calls {p.name}({p.arguments})")
            elif p.type == "tool_result":
                lines.append(f"{t.role}: {p.name or p.id} {'failed' if p.is_error else 'returned'}: {p.text}")
            elif p.type in ("thinking", "reasoning"):
                lines.append(f"{t.role} (thinking): {p.text}")
            else:
                lines.append(f"{t.role}: [{p.type}]")
    return "\n".join(lines)
