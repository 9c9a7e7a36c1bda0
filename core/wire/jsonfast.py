"""JSON for the wire layer: fast parsing (orjson when installed, the standard library otherwise) and a depth limit.

orjson rejects a few things the stdlib accepts (NaN, integers beyond 64 bits, lone surrogates); `loads` falls
back to `json` for those. `loads_fast` is the bare parser (no wrapper call per frame): a caller catches its
ValueError and then asks `loads`, as the adapters do through `Adapter.parse_json`.

Depth: every parser and encoder a consumer may use recurses per level (the stdlib's C scanner and encoder, its
pure-Python encoder behind `indent=`, `==`, `repr`) up to the interpreter's limit (1000 frames), and orjson
stops at 1024 levels to parse. So no JSON value the wire layer keeps nests deeper than `MAX_DEPTH`: a text too
deep to parse is a `JSONTooDeep` (a ValueError) from `loads`, and a parsed value deeper than the limit is
`bounded`, its deepest parts replaced by a marker string. Real provider JSON nests about ten levels; 250 leaves
those consumers most of their stack, and puts the cheap length gate (500 characters) above nearly every frame
of the OpenAI and Anthropic formats, so their hot paths pay one comparison. (orjson's encoder stops at 254
levels: a result holding a value nested 250 deep is beyond it.)

Lone surrogates: a `\\ud800` escape with no partner is JSON the stdlib accepts, but the string it gives cannot be
encoded as UTF-8 (every writer, `json.dumps(ensure_ascii=False)` then a file or stdout, fails on it). So no string
the wire layer's parsers give holds one: `loads_repaired` replaces each with U+FFFD (`REPLACEMENT`) and says how
many it replaced (the adapters report `lone-surrogate`), and `loads` is the same without the count. orjson refuses
such text, so only the stdlib path pays for the check (one regex search of the text, a walk only on a hit).
The text itself (a frame's raw bytes) is left as it is.
"""
from __future__ import annotations

import json
import re

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    _orjson = None

#: the deepest nesting a kept JSON value may have (far beyond any provider's, well below every parser's limit)
MAX_DEPTH = 250
#: a text shorter than this cannot nest deeper than MAX_DEPTH (each level takes an opening and a closing bracket)
DEPTH_GATE = 2 * MAX_DEPTH
#: what stands in for a part of a value nested deeper than MAX_DEPTH
TOO_DEEP_MARKER = f"(nested deeper than {MAX_DEPTH} levels: not kept)"


class JSONTooDeep(ValueError):
    """The text is JSON nested too deep for the parser (it would recurse past the interpreter's limit)."""


#: what stands in for a lone surrogate in a parsed string
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: text that may give a lone surrogate: an escape of one (paired or not: the walk tells), or one as a character
_MAY_HOLD_SURROGATE = re.compile(r"\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]")
_MAY_HOLD_SURROGATE_B = re.compile(rb"\\u[dD][89abcdefABCDEF]")   # (bytes: a surrogate can only be escaped)


def _stdlib_loads_repaired(text: str) -> tuple:
    """(value, how many lone surrogates were replaced) by the stdlib's parser."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONTooDeep("JSON nested too deep to parse") from None
    may = _MAY_HOLD_SURROGATE if type(text) is str else _MAY_HOLD_SURROGATE_B
    if may.search(text) is not None:
        return _without_surrogates(value)
    return value, 0


def _stdlib_loads(text: str):
    return _stdlib_loads_repaired(text)[0]


def _clean(s: str, counter: list) -> str:
    if _SURROGATE.search(s) is None:
        return s
    fixed, n = _SURROGATE.subn(REPLACEMENT, s)
    counter[0] += n
    return fixed


def _without_surrogates(value) -> tuple:
    """`value` with every lone surrogate in its strings (keys included) replaced by REPLACEMENT, and how many.

    Iterative (safe on any depth); the containers are changed in place (they are the parser's fresh ones)."""
    counter = [0]
    if type(value) is str:
        return _clean(value, counter), counter[0]
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        if type(v) is dict:
            if any(_SURROGATE.search(k) is not None for k in v):
                items = [(_clean(k, counter), c) for k, c in v.items()]
                v.clear()
                v.update(items)   # (two keys that become equal: the later one wins, as a repeated key does)
            for k, c in v.items():
                if type(c) is str:
                    v[k] = _clean(c, counter)
                elif type(c) is dict or type(c) is list:
                    push(c)
        elif type(v) is list:
            for i, c in enumerate(v):
                if type(c) is str:
                    v[i] = _clean(c, counter)
                elif type(c) is dict or type(c) is list:
                    push(c)
    return value, counter[0]


def without_lone_surrogates(value):
    """`value` (fresh from a JSON parser) with every lone surrogate in its strings replaced by REPLACEMENT: for a
    caller that must parse with the stdlib's own options (`parse_constant`) and still hold none."""
    return _without_surrogates(value)[0]


if _orjson is not None:
    _orjson_loads = _orjson.loads
    #: orjson's own loads, for hot paths that catch ValueError and then call `loads` (the stdlib's leniency)
    loads_fast = _orjson_loads
    _JSONDecodeError = _orjson.JSONDecodeError

    def loads(text: str):
        """The JSON value of `text` (no lone surrogate in its strings); a ValueError when it is not JSON."""
        try:
            return _orjson_loads(text)
        except _JSONDecodeError:
            return _stdlib_loads(text)

    def loads_repaired(text: str) -> tuple:
        """(`loads(text)`, how many lone surrogates its strings had: each is now REPLACEMENT)."""
        try:
            return _orjson_loads(text), 0
        except _JSONDecodeError:
            return _stdlib_loads_repaired(text)
else:
    loads = loads_fast = _stdlib_loads
    loads_repaired = _stdlib_loads_repaired


def may_nest_too_deep(text: str) -> bool:
    """A cheap test on a frame's text: False when its JSON cannot nest deeper than MAX_DEPTH (the usual case).

    Callers test `len(text) > DEPTH_GATE` first (one comparison per frame on their hot paths).
    """
    return text.count("[") + text.count("{") > MAX_DEPTH


def bounded(value):
    """`value` itself when it nests at most MAX_DEPTH levels, else a copy whose parts below that depth are
    TOO_DEEP_MARKER. Iterative: safe on any depth."""
    if not _deeper_than(value, MAX_DEPTH):
        return value
    return _copy_bounded(value)


def _deeper_than(value, limit: int) -> bool:
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        if type(v) is dict:
            children = v.values()
        elif type(v) is list:
            children = v
        else:
            continue
        if depth > limit:
            return True
        for c in children:
            if type(c) is dict or type(c) is list:
                push((c, depth + 1))
    return False


def _copy_bounded(value):
    root: list = [None]
    # (source, the container the copy goes in, the key or index there, the depth of the source)
    stack = [(value, root, 0, 1)]
    while stack:
        v, parent, key, depth = stack.pop()
        t = type(v)
        if t is not dict and t is not list:
            parent[key] = v
        elif depth > MAX_DEPTH:
            parent[key] = TOO_DEEP_MARKER
        elif t is dict:
            copy: dict = dict.fromkeys(v)
            parent[key] = copy
            stack.extend((c, copy, k, depth + 1) for k, c in v.items())
        else:
            copy_l: list = [None] * len(v)
            parent[key] = copy_l
            stack.extend((c, copy_l, i, depth + 1) for i, c in enumerate(v))
    return root[0]


def dumps_compact(obj) -> str:
    """Compact JSON with non-ASCII kept (the contract's form for Gemini's whole `args` objects).

    A value nested too deep to encode (the wire layer keeps none: see `bounded`) is encoded bounded.
    """
    try:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    except RecursionError:
        return json.dumps(_copy_bounded(obj), separators=(",", ":"), ensure_ascii=False)


def finite(value):
    """`value` with every NaN and infinity replaced by None (as JavaScript's JSON.stringify writes them): the
    one rule for output that must be standard JSON. `value` itself when it holds none; iterative."""
    if not _non_finite_in(value):
        return value
    root: list = [None]
    stack = [(value, root, 0)]
    while stack:
        v, parent, key = stack.pop()
        t = type(v)
        if t is float:
            parent[key] = v if v - v == 0.0 else None      # (inf - inf and nan - nan are nan)
        elif t is dict:
            copy: dict = dict.fromkeys(v)
            parent[key] = copy
            stack.extend((c, copy, k) for k, c in v.items())
        elif t is list or t is tuple:
            copy_l: list = [None] * len(v)
            parent[key] = copy_l
            stack.extend((c, copy_l, i) for i, c in enumerate(v))
        else:
            parent[key] = v
    return root[0]


def _non_finite_in(value) -> bool:
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        v = pop()
        t = type(v)
        if t is float:
            if v - v != 0.0:
                return True
        elif t is dict:
            extend(v.values())
        elif t is list or t is tuple:
            extend(v)
    return False


def dumps_standard(obj, **kwargs) -> str:
    """`json.dumps(obj, ensure_ascii=False, **kwargs)` as standard JSON: a NaN or infinity (the stdlib parser
    accepts them from a peer) is written as null (`finite`), never as the bare `NaN` no other parser reads."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, **kwargs)
    except ValueError:   # (only then is the value walked)
        return json.dumps(finite(obj), ensure_ascii=False, allow_nan=False, **kwargs)


def json_text_problem(text: str) -> str | None:
    """Why `text` is not JSON a client's `json.loads` accepts, or None when it is.

    Nesting deeper than MAX_DEPTH counts as a problem: a client's parser recurses per level.
    """
    try:
        value = loads(text)
    except JSONTooDeep:
        return "nested deeper than the parser's limit"
    except ValueError as exc:
        return f"not valid JSON ({exc})"
    if len(text) > DEPTH_GATE and may_nest_too_deep(text) and _deeper_than(value, MAX_DEPTH):
        return f"nested deeper than {MAX_DEPTH} levels"
    return None


def arguments_problem(arguments: str | None) -> str | None:
    """Why a tool call's argument text is not usable JSON, or None when it is: the one check the adapters (at
    block end), the reducer's readers and the GUI share. No text at all (nothing streamed) reads as `{}`."""
    if not arguments:
        return None
    return json_text_problem(arguments)
