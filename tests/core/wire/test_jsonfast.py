"""The wire layer's JSON: the depth limit (nothing kept nests past MAX_DEPTH, nothing raises RecursionError) and
the one tool-argument check."""
from __future__ import annotations

import json

import pytest

from core.wire import jsonfast
from core.wire.jsonfast import (MAX_DEPTH, TOO_DEEP_MARKER, JSONTooDeep, arguments_problem, bounded, dumps_compact,
                                loads, may_nest_too_deep)


def nested(depth: int, leaf: str = "") -> str:
    """JSON text of `depth` nested arrays (built as text: json.dumps would recurse past the limit)."""
    return "[" * depth + leaf + "]" * depth


def depth_of(value) -> int:
    """How deep a JSON value nests, found iteratively (the values tested are deeper than recursion allows)."""
    best, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            best = max(best, d)
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return best


@pytest.mark.parametrize("depth", [1025, 5000, 100_000])
def test_text_too_deep_to_parse_is_a_value_error_not_recursion(depth):
    with pytest.raises(JSONTooDeep):
        loads(nested(depth))
    with pytest.raises(JSONTooDeep):
        jsonfast._stdlib_loads(nested(depth))   # the path where orjson is absent


def test_too_deep_and_not_orjson_json_is_still_a_value_error():
    text = "[" * 3000 + "NaN" + "]" * 3000    # orjson refuses NaN: the stdlib fallback must not recurse away
    with pytest.raises(ValueError):
        loads(text)


def test_bounded_keeps_shallow_values_as_they_are_and_cuts_deep_ones():
    v = {"a": [1, {"b": "c"}]}
    assert bounded(v) is v
    deep = loads(nested(1000))
    cut = bounded(deep)
    assert depth_of(cut) == MAX_DEPTH
    inner = cut
    for _ in range(MAX_DEPTH - 1):
        inner = inner[0]
    assert inner == [TOO_DEEP_MARKER]
    json.dumps(cut, indent=2)   # the pure-Python encoder copes
    assert deep is not cut       # the original is not changed
    mixed = {"keep": "me", "deep": loads(nested(500)), "n": [1, 2]}
    out = bounded(mixed)
    assert out["keep"] == "me" and out["n"] == [1, 2] and depth_of(out) == MAX_DEPTH


def test_the_cheap_gate_never_misses_a_deep_value():
    assert not may_nest_too_deep('{"a":' + '"x"' * 500 + "}")
    assert may_nest_too_deep(nested(MAX_DEPTH + 1))


def test_dumps_compact_never_recurses_away():
    assert dumps_compact({"é": [1, None]}) == '{"é":[1,null]}'
    deep = loads(nested(1000))
    assert dumps_compact(deep).count(TOO_DEEP_MARKER) == 1


@pytest.mark.parametrize("text,ok", [('{"a": 1}', True), ("", True), (None, True), ('{"a": ', False),
                                     ("nope", False), (nested(MAX_DEPTH), True), (nested(MAX_DEPTH + 1), False),
                                     (nested(5000), False)])
def test_arguments_problem(text, ok):
    problem = arguments_problem(text)
    assert (problem is None) is ok
    if text and text.startswith("[[") and not ok:
        assert "nested deeper" in problem
