"""`check-request` on hostile bodies: ids of any type, deep nesting, and more findings than anyone reads."""
from __future__ import annotations

import pytest

from core.wire.history import FINDINGS_PER_CODE
from tests.core.cli.test_check_request import run

#: the QA's repro (/tmp/qa-hostile/cr_types2.json): every field of the wrong type, in the shape of every format
TYPES2 = {"messages": [1, "x", None, {"role": 5, "content": {"a": 1}},
                       {"role": "assistant", "content": [1, {"type": 5},
                                                         {"type": "tool_use", "id": [], "name": {}, "input": "x"}]},
                       {"role": "user", "content": [{"type": "tool_result", "tool_use_id": {"x": 1}, "content": 5}]}],
          "contents": [1, {"role": "model", "parts": "x"},
                       {"parts": [{"functionCall": "x"}, {"functionResponse": []},
                                  {"functionCall": {"name": 5, "args": []}}]}],
          "input": [1, {"type": "function_call", "call_id": 5, "arguments": {}},
                    {"type": "function_call_output", "call_id": [], "output": {}}, {"type": "reasoning"}]}
KEYS = {"severity", "code", "message", "path", "message_index", "part_index"}


@pytest.mark.parametrize("fmt, paths", [
    ("anthropic", {"messages[4].content[2].id", "messages[5].content[0].tool_use_id"}),
    ("openai-responses", {"input[1].call_id", "input[2].call_id"}),
    ("gemini", {"contents[2].parts[2]"}),
    ("openai-chat", set())])
def test_ids_of_any_json_type_are_findings_not_a_crash(tmp_path, fmt, paths):
    """A `tool_result.tool_use_id` object or a `function_call_output.call_id` list was `TypeError: unhashable`
    with a traceback: now each is the API's wrong-type 400, and the exit status says rejected."""
    p, out = run(tmp_path, fmt, TYPES2)
    assert p.stderr == "" and out is not None
    assert p.returncode == (1 if paths else 0) and out["rejected"] is bool(paths)
    wrong = {f["path"] for f in out["findings"] if f["code"] == "tool-field-wrong-type"}
    assert paths <= wrong
    assert all(set(f) == KEYS for f in out["findings"])


def test_findings_are_listed_up_to_a_bound_and_counted(tmp_path):
    """A body of 400,000 messages gave 152 MB on stdout: each code lists its first FINDINGS_PER_CODE findings,
    then one line says how many more were counted; `errors` and `warnings` count them all."""
    n = 2 * FINDINGS_PER_CODE + 50
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}]
            + [{"role": "tool", "tool_call_id": f"r{k}", "content": "x"} for k in range(n)]}
    p, out = run(tmp_path, "openai-chat", body)
    assert p.returncode == 1 and out["rejected"] and (out["errors"], out["warnings"]) == (n, 0)
    assert set(out) == {"format", "rejected", "errors", "warnings", "findings"}
    *listed, summary = out["findings"]
    assert len(listed) == FINDINGS_PER_CODE and {f["code"] for f in listed} == {"tool-result-without-call"}
    assert [f["message_index"] for f in listed] == list(range(1, FINDINGS_PER_CODE + 1))
    more = n - FINDINGS_PER_CODE
    assert summary == {"severity": "error", "code": "findings-not-listed",
                       "message": f"… and {more:,} more `tool-result-without-call` findings (counted, not listed; "
                                  f"the first of them at messages[{FINDINGS_PER_CODE + 1}])",
                       "path": f"messages[{FINDINGS_PER_CODE + 1}]", "message_index": FINDINGS_PER_CODE + 1,
                       "part_index": None}


@pytest.mark.parametrize("depth", [251, 5000])
def test_a_body_nested_too_deep_says_so(tmp_path, depth):
    """Valid JSON nested 5,000 levels was "is not JSON"; one that parses but nests deeper than the limit every
    other reader of JSON in StreamScope keeps (--tools, --conversation) is refused the same way: exit 2, one line
    naming the limit."""
    doc = '{"model": "m", "messages": [{"role": "user", "content": ' + "[" * depth + "]" * depth + "}]}"
    p, out = run(tmp_path, "anthropic", doc)
    assert p.returncode == 2 and out is None
    assert p.stderr.count("\n") == 1 and "is nested too deep: JSON deeper than 250 levels is not read" in p.stderr
    assert "not JSON" not in p.stderr


def test_a_body_nested_to_the_limit_is_checked(tmp_path):
    inner = "[" * 240 + "]" * 240
    doc = '{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": ' + inner + "}]}"
    p, out = run(tmp_path, "anthropic", doc)
    assert p.returncode == 0 and p.stderr == "" and out["rejected"] is False
