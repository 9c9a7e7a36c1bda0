"""The history check on hostile bodies: ids of any JSON type, any depth, many findings, many tool calls.

It never raises on any JSON value, is linear in the body's size, and lists a bounded number of findings.
"""
from __future__ import annotations

import copy
import json

import pytest

from core.wire.history import (
    FINDINGS_PER_CODE,
    NOT_LISTED,
    HistoryRules,
    check_request,
    first_error,
    gemini_call_content,
    history_check,
)
from tests.core.wire.test_history import ANTH_OK, CHAT_OK, GEM_OK, RESP_OK

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")
GOOD = {"openai-chat": CHAT_OK, "openai-responses": RESP_OK, "anthropic": ANTH_OK, "gemini": GEM_OK}


def _deep(n: int, kind: str):
    v: object = "x"
    for _ in range(n):
        v = [v] if kind == "list" else {"text": v} if kind == "text" else {"a": v}
    return v


# deeper than any parser reads (5,000 levels): the check must still not recurse into them unbounded
WILD = [{"x": 1}, [], [1, [2]], 5, 2.5, True, None, "", float("nan"), 10 ** 40,
        _deep(5000, "list"), _deep(5000, "dict"), _deep(5000, "text")]


def _paths(v, path=()):
    """Every (container path, key) in a JSON value."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield path + (k,)
            yield from _paths(x, path + (k,))
    elif isinstance(v, list):
        for k, x in enumerate(v):
            yield path + (k,)
            yield from _paths(x, path + (k,))


def _replaced(body, path, value):
    out = copy.deepcopy(body)
    holder = out
    for k in path[:-1]:
        holder = holder[k]
    holder[path[-1]] = value
    return out


def _verify(kind, sig, content):
    assert isinstance(sig, str) and isinstance(content, str)
    return "mismatch"


@pytest.mark.parametrize("fmt", FORMATS)
def test_any_json_value_anywhere_never_raises(fmt):
    """Each value of a good request (every id, name, signature, content, block, ...) replaced by each hostile value
    (unhashable, of another type, nested 5,000 levels): findings, never an exception (a TypeError: unhashable
    crashed check-request; a RecursionError a deep content)."""
    body = GOOD[fmt]
    for rules in (HistoryRules(), HistoryRules(gemini_signatures="required", responses_reasoning="required",
                                                verify_signature=_verify)):
        for path in _paths(body):
            for value in WILD:
                found = check_request(fmt, _replaced(body, path, value), rules)
                json.dumps([f.to_json() for f in found], ensure_ascii=False).encode()   # printable, too


def test_a_signed_gemini_call_with_deep_arguments_is_encodable():
    assert gemini_call_content({"name": "f", "args": {"a": _deep(5000, "dict")}})


@pytest.mark.parametrize("fmt, body, path, wording", [
    ("openai-chat", {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": {"x": 1}, "type": "function",
                                              "function": {"name": "f", "arguments": "{}"}}]}]},
     "messages[1].tool_calls[0].id",
     "Invalid type for 'messages[1].tool_calls[0].id': expected a string, but got an object instead."),
    ("openai-chat", {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "tool", "tool_call_id": ["c1"], "content": "r"}]},
     "messages[3].tool_call_id", ("Invalid type for 'messages[3].tool_call_id': expected a string, but got an array "
                                 "instead.")),
    ("openai-responses", {"input": [
        {"role": "user", "content": "q"}, {"type": "function_call", "call_id": 5, "name": "f", "arguments": "{}"}]},
     "input[1].call_id", "Invalid type for 'input[1].call_id': expected a string, but got an integer instead."),
    ("openai-responses", {"input": [
        {"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r"},
        {"type": "function_call_output", "call_id": [], "output": "r"}]},
     "input[3].call_id", "Invalid type for 'input[3].call_id': expected a string, but got an array instead."),
    ("anthropic", {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": [], "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "next"}]}]},
     "messages[1].content[0].id", "messages.1.content.0.tool_use.id: Input should be a valid string"),
    ("anthropic", {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"},
                                     {"type": "tool_result", "tool_use_id": {"x": 1}, "content": "r"}]}]},
     "messages[2].content[1].tool_use_id",
     "messages.2.content.1.tool_result.tool_use_id: Input should be a valid string"),
    ("gemini", {"contents": [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "id": ["c"], "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": 1}}}]}]},
     "contents[1].parts[0]", "Invalid value at 'contents[1].parts[0].function_call.id' (TYPE_STRING), [\"c\"]"),
    ("gemini", {"contents": [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": {"n": 1}, "response": {"r": 1}}}]}]},
     "contents[2].parts[0]", ("Invalid value at 'contents[2].parts[0].function_response.name' (TYPE_STRING), "
                             "{\"n\": 1}")),
    ("gemini", {"contents": [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": [1]}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": 1}}}]}]},
     "contents[1].parts[0]", "Invalid value at 'contents[1].parts[0].thought_signature' (TYPE_BYTES), [1]"),
])
def test_an_id_that_is_not_a_string_is_the_apis_wrong_type_400(fmt, body, path, wording):
    """Each API's own 400 for an id of the wrong JSON type (check-request crashed on an unhashable one: a
    `tool_result.tool_use_id` object, a `function_call_output.call_id` list)."""
    [err] = [f for f in check_request(fmt, body, HistoryRules(verify_signature=_verify)) if f.severity == "error"]
    assert (err.code, err.path, err.message) == ("tool-field-wrong-type", path, wording)


# -- linear --------------------------------------------------------------------------------------------------------
class _Id(str):
    """A string id that counts how often it is compared: a list's `in` or `remove` compares with every element."""

    comparisons = 0

    def __eq__(self, other):
        _Id.comparisons += 1
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _many_calls_and_stray_results(fmt: str, n: int) -> dict:
    calls = [_Id(f"c{k}") for k in range(n)]
    results = [_Id(f"r{k}") for k in range(n)]   # none answers a call
    if fmt == "openai-chat":
        return {"messages": [{"role": "assistant", "tool_calls": [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}} for c in calls]}]
            + [{"role": "tool", "tool_call_id": r, "content": "x"} for r in results]}
    if fmt == "openai-responses":
        return {"input": [{"type": "function_call", "call_id": c, "name": "f", "arguments": "{}"} for c in calls]
                + [{"type": "function_call_output", "call_id": r, "output": "x"} for r in results]}
    if fmt == "anthropic":
        return {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": c, "name": "f", "input": {}}
                                                               for c in calls]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": r, "content": "x"}
                                                          for r in results]}]}
    return {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "id": c, "args": {}}}
                                                     for c in calls]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": r, "response": {"r": 1}}}
                                                    for r in results]}]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_pairing_calls_and_results_is_linear(fmt):
    """n tool calls then n results answering none: a few comparisons per id, not n (the Chat check kept the open
    calls in a list: 20,000 calls took 18 s in check-request and 14.6 s per request in the emulator)."""
    n = 4000
    body = _many_calls_and_stray_results(fmt, n)
    _Id.comparisons = 0
    result = history_check(fmt, body, per_code=None)
    assert result.errors >= (1 if fmt in ("openai-chat", "gemini") else n)
    assert _Id.comparisons < 10 * n, _Id.comparisons     # (the list's: about n * n = 16,000,000)


def _chat(calls, results):
    return {"messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "tool_calls": [
                             {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                             for c in calls]}]
            + [{"role": "tool", "tool_call_id": r, "content": "r"} for r in results]
            + [{"role": "user", "content": "next"}]}


@pytest.mark.parametrize("calls, results, expected", [
    (["a", "b", "a"], ["a"], [("tool-call-without-result", "messages[1]", "b, a")]),
    (["a", "b", "a", "c"], ["a", "a", "a", "x"], [("tool-result-without-call", "messages[5]", None),
                                                  ("tool-call-without-result", "messages[1]", "b, c")]),
    (["b", "a", "b"], ["b", "c"], [("tool-result-without-call", "messages[3]", None),
                                   ("tool-call-without-result", "messages[1]", "a, b")]),
])
def test_chat_findings_with_repeated_ids_are_as_before(calls, results, expected):
    """The linear Chat check finds what the list did, in the same order: a result closes the first open call of
    its id, a repeat of an answered id is accepted, and the unanswered ids are named in their order."""
    found = check_request("openai-chat", _chat(calls, results))
    assert [(f.code, f.path) for f in found] == [(c, p) for c, p, _ in expected]
    for f, (_, _, ids) in zip(found, expected):
        if ids is not None:
            assert f.message.endswith(f"did not have response messages: {ids}")


# -- bounded ---------------------------------------------------------------------------------------------------
def test_findings_are_listed_up_to_a_bound_per_code_and_counted():
    n = 3000
    body = {"messages": [{"role": "user", "content": "q"}]
            + [{"role": "tool", "tool_call_id": f"r{k}", "content": ""} for k in range(n)]}
    full = history_check("openai-chat", body, per_code=None)
    result = history_check("openai-chat", body)
    assert (result.errors, result.warnings, result.rejected) == (n, n, True) == (full.errors, full.warnings, True)
    listed = [f for f in result.findings if f.code != NOT_LISTED]
    # the first FINDINGS_PER_CODE of each code, in the conversation's order (as the full list has them)
    assert listed == [f for f in full.findings if f.message_index <= FINDINGS_PER_CODE]
    summaries = [f for f in result.findings if f.code == NOT_LISTED]
    assert result.findings[-2:] == summaries
    more = n - FINDINGS_PER_CODE
    assert [(f.severity, f.message, f.path, f.message_index) for f in summaries] == [
        ("error", (f"… and {more:,} more `tool-result-without-call` findings (counted, not listed; the first of "
                  f"them at messages[{FINDINGS_PER_CODE + 1}])"), f"messages[{FINDINGS_PER_CODE + 1}]",
         FINDINGS_PER_CODE + 1),
        ("warning", (f"… and {more:,} more `tool-result-empty` findings (counted, not listed; the first of "
                    f"them at messages[{FINDINGS_PER_CODE + 1}])"), f"messages[{FINDINGS_PER_CODE + 1}]",
         FINDINGS_PER_CODE + 1)]
    assert first_error(result.findings) == first_error(full.findings)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_listed_findings_do_not_grow_with_the_body(fmt):
    """A body of 400,000 messages gave 152 MB of check-request output: what is listed stays the same size."""
    small = check_request(fmt, _many_calls_and_stray_results(fmt, 300))
    big = check_request(fmt, _many_calls_and_stray_results(fmt, 6000))
    assert len(big) == len(small) <= 4 * (FINDINGS_PER_CODE + 1)


def test_anthropic_findings_keep_the_conversations_order_when_bounded():
    """Anthropic's findings come by message then part (the thinking-block-missing of the last assistant message
    too, found once the whole conversation was read)."""
    body = copy.deepcopy(ANTH_OK)
    del body["messages"][1]["content"][0]                      # the thinking block: thinking-block-missing
    body["messages"][1]["content"].append({"type": "text", "text": " "})   # a blank text block after it
    body["messages"][0]["content"] = " "
    found = check_request("anthropic", body)
    assert [(f.code, f.message_index, f.part_index) for f in found] == [
        ("empty-text-block", 0, None), ("thinking-block-missing", 1, 0), ("empty-text-block", 1, 2)]
