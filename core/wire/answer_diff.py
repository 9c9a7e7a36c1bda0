"""What differs between two answers: text word by word, tool calls key by key, thinking, finish and usage.

Sans-IO and Qt-free: it compares two `core.wire.reply.Reply` snapshots (two providers, or two turns), so the GUI's
diff view and `python main.py diff` show the same thing.

    d = diff_replies(a, b, choice=0)
    d.text.ops           # WordOp(op, a, b): "equal" | "delete" | "insert" | "replace" pieces, whitespace kept,
                         #   so joining the `a` sides gives A's text and the `b` sides B's
    d.tool_calls         # ToolCallDiff per pair of calls (same tool name paired first, then by position)
    d.thinking           # SideBySide(a, b) of thinking characters
    d.finish, d.usage    # FinishDiff; UsageDiff rows (field, a, b)
    d.to_json()          # plain JSON (what `diff --json` prints)

A token is a word (a run of letters and digits) or one punctuation mark, with the whitespace after it. The
diff is difflib's SequenceMatcher over those tokens after the common head and tail are set aside, so two long
answers that differ in one place cost little; its `autojunk` rule keeps it fast on long texts (in a text of 200
tokens or more, a token making up over 1% of B, such as "the ", anchors no match: it still matches inside a
longer run). Hostile sizes are bounded: when what is left to compare
is larger than `MAX_DIFF_TOKENS` on either side, the differing middle is one "replace" piece and
`TextDiff.exact` is False (the view says so). Tool arguments are parsed as JSON and compared key by key to
`MAX_JSON_DEPTH` levels; at most `MAX_DIFFERENCES` differing paths are listed (the rest are counted).
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from core.wire.reply import Block, Reply
from core.wire.jsonfast import loads

MAX_DIFF_TOKENS = 20_000     # per side, after the common head and tail: beyond, the middle is one piece
MAX_JSON_DEPTH = 64          # deeper values are compared whole
MAX_DIFFERENCES = 200        # differing JSON paths listed per tool call
_TOKEN = re.compile(r"\w+\s*|[^\w\s]\s*|\s+")
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens",
                "reasoning_tokens")


@dataclass(frozen=True, slots=True)
class WordOp:
    op: str       # "equal" | "delete" | "insert" | "replace"
    a: str        # A's text of this piece ("" for an insert)
    b: str        # B's text of this piece ("" for a delete)


@dataclass(frozen=True, slots=True)
class TextDiff:
    ops: tuple[WordOp, ...]
    same: bool
    similarity: float     # 0..1: matched tokens over all tokens (difflib's ratio)
    exact: bool = True    # False: too large to diff word by word; the differing middle is one piece

    def to_json(self) -> dict:
        return {"same": self.same, "similarity": round(self.similarity, 4), "exact": self.exact,
                "ops": [{"op": o.op, "a": o.a, "b": o.b} for o in self.ops]}


@dataclass(frozen=True, slots=True)
class ArgumentDifference:
    path: str         # a JSONPath: $.city, $.stops[2].name, $["odd key"]
    kind: str         # "changed" | "only_a" | "only_b" | "type" (same path, different JSON types)
    a: Any = None     # A's value there (absent for only_b)
    b: Any = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind != "only_b":
            out["a"] = self.a
        if self.kind != "only_a":
            out["b"] = self.b
        return out


@dataclass(frozen=True, slots=True)
class ToolCallDiff:
    a_name: str | None            # None: only B made this call
    b_name: str | None            # None: only A made it
    a_arguments: str | None
    b_arguments: str | None
    a_valid: bool | None          # the arguments parse as JSON (None: no call on that side)
    b_valid: bool | None
    differences: tuple[ArgumentDifference, ...]   # key by key, when both sides parse
    more_differences: int = 0     # differing paths beyond MAX_DIFFERENCES, not listed

    @property
    def same_tool(self) -> bool:
        return self.a_name is not None and self.a_name == self.b_name

    @property
    def same_arguments(self) -> bool:
        if self.a_valid and self.b_valid:
            return not self.differences and not self.more_differences
        return self.a_arguments == self.b_arguments

    def to_json(self) -> dict:
        return {"a_name": self.a_name, "b_name": self.b_name, "same_tool": self.same_tool,
                "same_arguments": self.same_arguments, "a_arguments": self.a_arguments,
                "b_arguments": self.b_arguments, "a_valid_json": self.a_valid, "b_valid_json": self.b_valid,
                "differences": [d.to_json() for d in self.differences], "more_differences": self.more_differences}


@dataclass(frozen=True, slots=True)
class SideBySide:
    a: Any
    b: Any

    @property
    def same(self) -> bool:
        return self.a == self.b

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "same": self.same}


@dataclass(frozen=True, slots=True)
class UsageRow:
    field: str
    a: int | None
    b: int | None

    @property
    def delta(self) -> int | None:
        return None if self.a is None or self.b is None else self.b - self.a

    def to_json(self) -> dict:
        return {"field": self.field, "a": self.a, "b": self.b, "delta": self.delta}


@dataclass(frozen=True, slots=True)
class ReplyDiff:
    text: TextDiff
    tool_calls: tuple[ToolCallDiff, ...]
    thinking_chars: SideBySide        # characters of thinking (redacted blocks count 0)
    thinking_blocks: SideBySide       # thinking blocks, redacted ones included
    finish: SideBySide                # canonical finish reasons
    finish_raw: SideBySide            # the providers' own values
    usage: tuple[UsageRow, ...]

    @property
    def same(self) -> bool:
        return self.text.same and all(t.same_tool and t.same_arguments for t in self.tool_calls) \
            and self.finish.same

    def to_json(self) -> dict:
        return {"same": self.same, "text": self.text.to_json(),
                "tool_calls": [t.to_json() for t in self.tool_calls],
                "thinking": {"chars": self.thinking_chars.to_json(), "blocks": self.thinking_blocks.to_json()},
                "finish": {"canonical": self.finish.to_json(), "raw": self.finish_raw.to_json()},
                "usage": [u.to_json() for u in self.usage]}


# -- text ------------------------------------------------------------------------------------------------------
def tokens(text: str) -> list[str]:
    """Words and single punctuation marks, each with the whitespace after it; joined they give the text back."""
    return _TOKEN.findall(text)


def diff_text(a: str, b: str) -> TextDiff:
    """A word-level diff of two texts (see the module docstring)."""
    ta, tb = tokens(a), tokens(b)
    head = 0
    limit = min(len(ta), len(tb))
    while head < limit and ta[head] == tb[head]:
        head += 1
    tail = 0
    while tail < limit - head and ta[len(ta) - 1 - tail] == tb[len(tb) - 1 - tail]:
        tail += 1
    mid_a, mid_b = ta[head:len(ta) - tail], tb[head:len(tb) - tail]
    ops: list[WordOp] = []
    if head:
        ops.append(WordOp("equal", "".join(ta[:head]), "".join(ta[:head])))
    exact = True
    matched = head + tail
    if len(mid_a) > MAX_DIFF_TOKENS or len(mid_b) > MAX_DIFF_TOKENS:
        exact = False
        ops.append(WordOp("replace", "".join(mid_a), "".join(mid_b)))
    elif mid_a or mid_b:
        sm = difflib.SequenceMatcher(None, mid_a, mid_b)   # autojunk: see the module docstring
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            pa, pb = "".join(mid_a[i1:i2]), "".join(mid_b[j1:j2])
            if tag == "equal":
                matched += i2 - i1
            ops.append(WordOp(tag, pa, pb))
    if tail:
        end = "".join(ta[len(ta) - tail:])
        ops.append(WordOp("equal", end, end))
    total = len(ta) + len(tb)
    return TextDiff(tuple(_merge(ops)), a == b, 1.0 if total == 0 else 2.0 * matched / total, exact)


def _merge(ops: list[WordOp]) -> list[WordOp]:
    """Adjacent pieces of the same kind joined (the head, difflib's first match and the tail may touch)."""
    out: list[WordOp] = []
    for o in ops:
        if out and out[-1].op == o.op:
            out[-1] = WordOp(o.op, out[-1].a + o.a, out[-1].b + o.b)
        else:
            out.append(o)
    return out


# -- tool arguments ----------------------------------------------------------------------------------------------
_MISSING = object()
_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _BARE.match(key) else f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def diff_json(a: Any, b: Any, path: str = "$") -> tuple[list[ArgumentDifference], int]:
    """The paths where two JSON values differ (listed up to MAX_DIFFERENCES), and how many more there are.

    Objects are compared key by key (A's key order, then B's new keys), arrays index by index; 1 and 1.0 are
    the same number, true and 1 are not."""
    found: list[ArgumentDifference] = []
    extra = 0

    def add(d: ArgumentDifference) -> None:
        nonlocal extra
        if len(found) < MAX_DIFFERENCES:
            found.append(d)
        else:
            extra += 1

    def walk(x: Any, y: Any, where: str, depth: int) -> None:
        if x is _MISSING:
            add(ArgumentDifference(where, "only_b", None, y))
            return
        if y is _MISSING:
            add(ArgumentDifference(where, "only_a", x, None))
            return
        kx, ky = _kind(x), _kind(y)
        if kx != ky:
            add(ArgumentDifference(where, "type", x, y))
        elif depth >= MAX_JSON_DEPTH or kx not in ("object", "array"):
            if x != y:
                add(ArgumentDifference(where, "changed", x, y))
        elif kx == "object":
            for k in list(x) + [k for k in y if k not in x]:
                walk(x.get(k, _MISSING), y.get(k, _MISSING), _child(where, k), depth + 1)
        else:
            for i in range(max(len(x), len(y))):
                walk(x[i] if i < len(x) else _MISSING, y[i] if i < len(y) else _MISSING, _child(where, i),
                     depth + 1)

    walk(a, b, path, 0)
    return found, extra


def _parse(arguments: str | None) -> tuple[bool, Any]:
    if arguments is None:
        return False, None
    try:
        return True, loads(arguments or "{}")   # (a lone surrogate escape reads as U+FFFD)
    except (ValueError, RecursionError):
        return False, None


def _call_diff(a: Block | None, b: Block | None) -> ToolCallDiff:
    a_args = None if a is None else a.arguments
    b_args = None if b is None else b.arguments
    a_ok, a_val = _parse(a_args)
    b_ok, b_val = _parse(b_args)
    diffs, extra = diff_json(a_val, b_val) if a_ok and b_ok else ([], 0)
    return ToolCallDiff(None if a is None else a.name or "", None if b is None else b.name or "", a_args, b_args,
                        None if a is None else a_ok, None if b is None else b_ok, tuple(diffs), extra)


def pair_tool_calls(a: list[Block], b: list[Block]) -> list[tuple[Block | None, Block | None]]:
    """Calls of the same tool paired in order first, the rest by position, then what only one side made."""
    used_b: set[int] = set()
    pairs: dict[int, int] = {}
    for i, ca in enumerate(a):
        for j, cb in enumerate(b):
            if j not in used_b and cb.name == ca.name:
                pairs[i] = j
                used_b.add(j)
                break
    rest_b = [j for j in range(len(b)) if j not in used_b]
    out: list[tuple[Block | None, Block | None]] = []
    for i, ca in enumerate(a):
        if i in pairs:
            out.append((ca, b[pairs[i]]))
        elif rest_b:
            out.append((ca, b[rest_b.pop(0)]))
        else:
            out.append((ca, None))
    out += [(None, b[j]) for j in rest_b]
    return out


# -- replies -----------------------------------------------------------------------------------------------------
def _blocks(reply: Reply, choice: int, kind: str) -> list[Block]:
    return [blk for blk in reply.ordered_blocks() if blk.choice == choice and blk.kind == kind]


def answer_text(reply: Reply, choice: int = 0) -> str:
    """The reply's text blocks of one choice, joined by blank lines (what the diff compares)."""
    return "\n\n".join(blk.text or "" for blk in _blocks(reply, choice, "text"))


def diff_replies(a: Reply, b: Reply, choice: int = 0) -> ReplyDiff:
    ta, tb = _blocks(a, choice, "thinking"), _blocks(b, choice, "thinking")
    fa = a.finish_by_choice.get(choice, a.finish if choice == 0 else None)
    fb = b.finish_by_choice.get(choice, b.finish if choice == 0 else None)
    return ReplyDiff(
        text=diff_text(answer_text(a, choice), answer_text(b, choice)),
        tool_calls=tuple(_call_diff(x, y) for x, y in pair_tool_calls(_blocks(a, choice, "tool_call"),
                                                                       _blocks(b, choice, "tool_call"))),
        thinking_chars=SideBySide(sum(len(t.text or "") for t in ta), sum(len(t.text or "") for t in tb)),
        thinking_blocks=SideBySide(len(ta), len(tb)),
        finish=SideBySide(None if fa is None else fa.canonical, None if fb is None else fb.canonical),
        finish_raw=SideBySide(None if fa is None else fa.raw, None if fb is None else fb.raw),
        usage=tuple(UsageRow(f, None if a.usage is None else getattr(a.usage, f),
                             None if b.usage is None else getattr(b.usage, f)) for f in USAGE_FIELDS))
