"""`python main.py check-request`: findings as JSON, exit 1 when the API would reject the request."""
from __future__ import annotations

import copy
import json

import pytest

from tests.core.cli.test_run import main_py
from tests.core.wire.test_history import ANTH_OK, CHAT_OK, GEM_OK


def run(tmp_path, fmt, doc, *extra):
    f = tmp_path / "request.json"
    f.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    p = main_py("check-request", "--format", fmt, str(f), *extra)
    return p, (json.loads(p.stdout) if p.stdout.strip() else None)


def test_a_good_request_exits_0(tmp_path):
    p, out = run(tmp_path, "openai-chat", CHAT_OK)
    assert p.returncode == 0 and out == {"format": "openai-chat", "rejected": False, "errors": 0, "warnings": 0,
                                         "findings": []}


def test_a_rejected_request_exits_1_and_points_at_the_message(tmp_path):
    body = copy.deepcopy(ANTH_OK)
    del body["messages"][1]["content"][0]
    p, out = run(tmp_path, "anthropic", body)
    assert p.returncode == 1 and out["rejected"] and out["errors"] == 1
    (f,) = out["findings"]
    assert f["code"] == "thinking-block-missing" and f["path"] == "messages[1].content[0]"
    assert f["message_index"] == 1 and f["part_index"] == 0 and f["severity"] == "error"


def test_warnings_alone_exit_0(tmp_path):
    body = copy.deepcopy(CHAT_OK)
    body["messages"][2]["content"] = ""
    p, out = run(tmp_path, "openai-chat", body)
    assert p.returncode == 0 and out["warnings"] == 1 and out["findings"][0]["code"] == "tool-result-empty"


def test_gemini_model_from_a_captured_request_or_the_option(tmp_path):
    body = copy.deepcopy(GEM_OK)
    del body["contents"][1]["parts"][1]["thoughtSignature"]
    assert run(tmp_path, "gemini", body)[0].returncode == 0                       # Gemini 2.5 rules
    captured = {"method": "POST", "url": "https://generativelanguage.googleapis.com/v1beta/models/"
                "gemini-3-pro-preview:streamGenerateContent?alt=sse", "headers": [], "body": body}
    p, out = run(tmp_path, "gemini", captured)
    assert p.returncode == 1 and out["findings"][0]["code"] == "function-call-missing-signature"
    assert run(tmp_path, "gemini", body, "--model", "gemini-3-flash")[0].returncode == 1
    assert run(tmp_path, "gemini", captured, "--gemini-signatures", "optional")[0].returncode == 0


@pytest.mark.parametrize("content, why", [("not json", "is not JSON"), ("[1, 2]", "not a request body"),
                                          ("[" * 100000 + "]" * 100000, ("is nested too deep: JSON deeper than 250 "
                                                                        "levels is not read"))])
def test_bad_input_exits_2(tmp_path, content, why):
    """Bad input is 2 with one line (1 means the API would reject the request): a RecursionError was 1."""
    p, out = run(tmp_path, "anthropic", content)
    assert p.returncode == 2 and why in p.stderr and out is None
    assert p.stderr.count("\n") == 1, p.stderr


def test_unknown_format_and_missing_file_exit_2(tmp_path):
    assert main_py("check-request", "--format", "nope", "x.json").returncode == 2
    p = main_py("check-request", "--format", "gemini", str(tmp_path / "missing.json"))
    assert p.returncode == 2 and "cannot read" in p.stderr


def test_an_empty_anthropic_message_is_a_rejection(tmp_path):
    body = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"},
                                                          {"role": "assistant", "content": []},
                                                          {"role": "user", "content": "again"}]}
    p, out = run(tmp_path, "anthropic", body)
    assert p.returncode == 1 and out["rejected"] and out["errors"] == 1 and out["warnings"] == 0
    assert out["findings"][0]["code"] == "empty-assistant-turn" and out["findings"][0]["path"] == "messages[1]"


@pytest.mark.parametrize("where, change, code", [
    (2, lambda c: c.insert(0, {"type": "text", "text": "here"}), "tool-result-not-first"),
    (1, lambda c: c.append(dict(c[2])), "tool-use-id-duplicate")])
def test_anthropic_results_after_text_and_duplicate_tool_use_ids_are_rejections(tmp_path, where, change, code):
    body = copy.deepcopy(ANTH_OK)
    change(body["messages"][where]["content"])
    p, out = run(tmp_path, "anthropic", body)
    assert p.returncode == 1 and out["rejected"] and [f["code"] for f in out["findings"]] == [code]
    assert out["findings"][0]["message_index"] == where
