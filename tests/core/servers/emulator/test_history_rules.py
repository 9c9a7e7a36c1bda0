"""The emulator checks conversations as the real APIs do: each violation gets that provider's own 400 body and
wording; the same follow-up, unbroken, is accepted. The follow-ups are built by StreamScope's request layer from
a real first exchange, then broken the way client bugs break them."""
from __future__ import annotations

import asyncio
import copy
import json

import httpx
import pytest

from core.live.config import DEMO_KEY, demo_providers
from core.live.request import PromptSpec, build_request
from core.live.tool_loop import follow_up, pending_calls, run_tool_loop
from core.live.tool_mocks import TIME_TOOL, WEATHER_TOOL, mock_results

SPEC = PromptSpec(user="What is the weather in Paris?", tools=(WEATHER_TOOL, TIME_TOOL), thinking=True,
                  max_tokens=2048, thinking_budget=1024)


def provider(base, fmt, model):
    return next(p for p in demo_providers(base, model) if p.format == fmt)


def continuation(base, fmt, model, spec=SPEC):
    """(request, follow-up spec) of a valid tool-result continuation of a real first exchange."""
    p = provider(base, fmt, model)
    (first,) = asyncio.run(run_tool_loop([p], spec, 0))
    assert first.ok and pending_calls(first)
    nxt = follow_up(spec, first, results=mock_results(pending_calls(first)))
    return build_request(p, nxt, DEMO_KEY), p


def post(req, body):
    with httpx.Client(timeout=10) as c:
        r = c.post(req.url, headers=req.headers, content=json.dumps(body).encode())
        return r.status_code, r.content


def error_of(fmt, status, content):
    assert status == 400, content
    body = json.loads(content)
    if fmt == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error" and body["request_id"]
        return body["error"]["message"]
    if fmt == "gemini":
        assert body["error"]["code"] == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
        return body["error"]["message"]
    assert body["error"]["type"] == "invalid_request_error" and set(body["error"]) == {"message", "type", "param",
                                                                                       "code"}
    return body["error"]["message"]


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_the_unbroken_continuation_is_accepted(emulator, fmt):
    req, _ = continuation(emulator, fmt, "thinking-tools")
    status, content = post(req, req.body)
    assert status == 200 and b"get_weather" in content


# -- unpaired or unknown ids, both directions -------------------------------------------------------------------
def _drop_results(fmt, body):
    if fmt == "openai-chat":
        body["messages"] = [m for m in body["messages"] if m["role"] != "tool"] + [{"role": "user", "content": "?"}]
    elif fmt == "openai-responses":
        body["input"] = [i for i in body["input"] if i.get("type") != "function_call_output"]
    elif fmt == "anthropic":
        body["messages"][-1]["content"] = [{"type": "text", "text": "go on"}]
    else:
        body["contents"][-1]["parts"] = body["contents"][-1]["parts"][1:] + [{"text": "go on"}]


def _unknown_result(fmt, body):
    """One more result, answering a call that was never made."""
    if fmt == "openai-chat":
        body["messages"].append({"role": "tool", "tool_call_id": "call_unknown", "content": "1"})
    elif fmt == "openai-responses":
        body["input"].append({"type": "function_call_output", "call_id": "call_unknown", "output": "1"})
    elif fmt == "anthropic":
        body["messages"][-1]["content"].append({"type": "tool_result", "tool_use_id": "toolu_unknown",
                                                "content": "1"})
    else:
        body["contents"][1]["parts"] = [p for p in body["contents"][1]["parts"] if "functionCall" not in p] \
            or [{"text": "hm"}]


MISSING = {"openai-chat": "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                          "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_",
           "openai-responses": "No tool output found for function call call_",
           "anthropic": "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_",
           "gemini": "Please ensure that the number of function response parts is equal to the number of function "
                     "call parts of the function call turn."}
UNKNOWN = {"openai-chat": "Invalid parameter: 'tool_call_id' of 'call_unknown' not found in 'tool_calls' of previous "
                          "message.",
           "openai-responses": "No tool call found for function call output with call_id call_unknown.",
           "anthropic": "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_unknown.",
           "gemini": "Please ensure that function response turn comes immediately after a function call turn."}


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_a_call_without_its_result_and_a_result_without_its_call(emulator, fmt):
    req, _ = continuation(emulator, fmt, "tool-call", PromptSpec(user="Weather in Paris?", tools=(WEATHER_TOOL,)))
    for breaker, want in ((_drop_results, MISSING), (_unknown_result, UNKNOWN)):
        body = copy.deepcopy(req.body)
        breaker(fmt, body)
        assert error_of(fmt, *post(req, body)).startswith(want[fmt])


# -- what must come back unchanged -------------------------------------------------------------------------------
def test_anthropic_thinking_block_dropped_moved_or_changed(emulator):
    req, _ = continuation(emulator, "anthropic", "thinking-tools")
    blocks = req.body["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    dropped = copy.deepcopy(req.body)
    del dropped["messages"][1]["content"][0]
    assert "Expected `thinking` or `redacted_thinking`, but found `text`" in error_of("anthropic", *post(req, dropped))
    moved = copy.deepcopy(req.body)
    c = moved["messages"][1]["content"]
    c.insert(1, c.pop(0))
    assert "but found `text`" in error_of("anthropic", *post(req, moved))
    edited = copy.deepcopy(req.body)
    edited["messages"][1]["content"][0]["thinking"] += " (edited)"
    assert error_of("anthropic", *post(req, edited)) == ("messages.1.content.0: `thinking` or `redacted_thinking` "
                                                         "blocks in the latest assistant message cannot be modified. "
                                                         "These blocks must remain as they were in the original "
                                                         "response.")
    forged = copy.deepcopy(req.body)
    forged["messages"][1]["content"][0]["signature"] = "RXF3QkNrZ0lBUkFC" * 4
    assert error_of("anthropic", *post(req, forged)) == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_gemini_3_needs_the_function_call_signature_and_gemini_2_5_does_not(emulator):
    for scenario, required in (("thinking-tools", True), ("thinking-tools-lenient", False)):
        req, _ = continuation(emulator, "gemini", scenario)
        body = copy.deepcopy(req.body)
        call = next(p for p in body["contents"][1]["parts"] if "functionCall" in p)
        del call["thoughtSignature"]
        status, content = post(req, body)
        if required:
            msg = error_of("gemini", status, content)
            assert msg.startswith("Function call is missing a thought_signature in functionCall parts.")
            assert "`default_api:get_weather` , position 2" in msg
        else:
            assert status == 200
        changed = copy.deepcopy(req.body)
        call = next(p for p in changed["contents"][1]["parts"] if "functionCall" in p)
        call["functionCall"]["args"] = {"city": "Lyon"}
        assert error_of("gemini", *post(req, changed)) == "Corrupted thought signature."


def test_responses_reasoning_item_dropped(emulator):
    req, _ = continuation(emulator, "openai-responses", "thinking-tools")
    body = copy.deepcopy(req.body)
    body["input"] = [i for i in body["input"] if i.get("type") != "reasoning"]
    msg = error_of("openai-responses", *post(req, body))
    assert msg.startswith("Item 'fc_") and "of type 'function_call' was provided without its required 'reasoning'" \
        in msg
    lenient, _ = continuation(emulator, "openai-responses", "thinking-tools-lenient")
    body = copy.deepcopy(lenient.body)
    body["input"] = [i for i in body["input"] if i.get("type") != "reasoning"]
    assert post(lenient, body)[0] == 200
    tampered = copy.deepcopy(req.body)
    next(i for i in tampered["input"] if i.get("type") == "reasoning")["encrypted_content"] = "gAAAAABnotours"
    assert "could not be verified" in error_of("openai-responses", *post(req, tampered))


def test_the_scenarios_are_listed(emulator):
    names = {s["name"] for s in httpx.get(emulator + "/scenarios").json()["scenarios"]}
    assert {"thinking-tools", "thinking-tools-lenient", "tool-rounds"} <= names


def test_emulator_signatures_verify_and_look_like_the_providers():
    from core.servers.emulator.signatures import sign, verify
    from core.wire.history import signature_family

    for kind, family in (("anthropic-thinking", "anthropic"), ("gemini-call", "gemini"), ("gemini-part", "gemini"),
                         ("responses-reasoning", "openai-responses")):
        sig = sign(kind, "content")
        assert verify(kind, sig, "content") == "valid" and verify(kind, sig, "other") == "mismatch"
        assert signature_family(sig) == family
        assert verify(kind, "bm90IG91cnM=", "content") == "unknown"
    urlsafe = sign("gemini-call", "x").replace("+", "-").replace("/", "_").rstrip("=")
    assert verify("gemini-call", urlsafe, "x") == "valid"
    assert verify("gemini-call", sign("anthropic-thinking", "x"), "x") == "unknown"   # bound to its kind
