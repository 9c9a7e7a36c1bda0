"""The history checker: every rule on a request the API accepts and on one it rejects (or flags)."""
from __future__ import annotations

import base64
import copy

import pytest

from core.wire.errors import LocalProtocolError
from core.wire.history import (HistoryRules, check_request, first_error, gemini_call_content, rejects,
                               signature_family)

ANTHROPIC_SIG = base64.b64encode(b"\x12\x99\x01\x0a\x48\x08\x01\x18\x02" + bytes(40)).decode()
GEMINI_SIG = base64.b64encode(b"\x0a\x24\x01\xd1\xed\x8a" + bytes(40)).decode()
OPENAI_ENC = "gAAAAABoYWxsb3dvcmxk"


def codes(findings, severity=None):
    return [f.code for f in findings if severity is None or f.severity == severity]


def verifier(good: dict):
    """A verifier that knows the signatures in `good` (signature -> the content it was issued for)."""
    def verify(kind, sig, content):
        if sig not in good:
            return "unknown"
        return "valid" if good[sig] == content else "mismatch"
    return verify


# -- OpenAI Chat -----------------------------------------------------------------------------------------------
CHAT_OK = {"model": "m", "messages": [
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}}]},
    {"role": "tool", "tool_call_id": "call_a", "content": "18 C"},
    {"role": "tool", "tool_call_id": "call_b", "content": "21 C"}]}


def test_chat_good_request_has_no_findings():
    assert check_request("openai-chat", CHAT_OK) == []


def test_chat_assistant_tool_calls_need_a_tool_message_per_id():
    body = copy.deepcopy(CHAT_OK)
    del body["messages"][3]
    body["messages"].append({"role": "user", "content": "and?"})
    f = first_error(check_request("openai-chat", body))
    assert f.code == "tool-call-without-result" and f.message_index == 1 and f.path == "messages[1]"
    assert "must be followed by tool messages responding to each 'tool_call_id'" in f.message
    assert "call_b" in f.message and "call_a" not in f.message.split("messages:")[1]


def test_chat_tool_message_without_a_call_and_with_an_unknown_id():
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "1"}]}
    f = first_error(check_request("openai-chat", body))
    assert f.code == "tool-result-without-call" and "preceeding message with 'tool_calls'" in f.message
    body = copy.deepcopy(CHAT_OK)
    body["messages"][3]["tool_call_id"] = "call_zzz"
    found = check_request("openai-chat", body)
    assert codes(found, "error") == ["tool-result-without-call", "tool-call-without-result"]
    assert "'call_zzz' not found" in found[0].message and found[0].message_index == 3


def test_chat_tool_call_without_id():
    body = copy.deepcopy(CHAT_OK)
    del body["messages"][1]["tool_calls"][0]["id"]
    f = first_error(check_request("openai-chat", body))
    assert f.code == "tool-call-id-missing" and f.path == "messages[1].tool_calls[0]" and f.part_index == 0


def test_chat_warnings_empty_tool_result_and_empty_assistant():
    body = copy.deepcopy(CHAT_OK)
    body["messages"][2]["content"] = ""
    body["messages"].append({"role": "assistant", "content": ""})
    found = check_request("openai-chat", body)
    assert not rejects(found)
    assert codes(found) == ["tool-result-empty", "empty-assistant-turn"]
    assert [f.message_index for f in found] == [2, 4]


# -- OpenAI Responses ------------------------------------------------------------------------------------------
RESP_OK = {"model": "m", "reasoning": {"effort": "low"}, "input": [
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "use the tool"}],
     "encrypted_content": OPENAI_ENC},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
     "arguments": '{"city":"Paris"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "18 C"}]}


def test_responses_good_request():
    assert check_request("openai-responses", RESP_OK) == []
    ok = verifier({OPENAI_ENC: "use the tool"})
    assert check_request("openai-responses", RESP_OK, HistoryRules(verify_signature=ok)) == []


def test_responses_output_with_an_unknown_call_id():
    body = copy.deepcopy(RESP_OK)
    body["input"][3]["call_id"] = "call_9"
    found = check_request("openai-responses", body)
    assert codes(found, "error") == ["tool-result-without-call", "tool-call-without-result"]
    bad = next(f for f in found if f.code == "tool-result-without-call")
    assert bad.message == "No tool call found for function call output with call_id call_9." and bad.path == "input[3]"
    assert next(f for f in found if f.code == "tool-call-without-result").message == \
        "No tool output found for function call call_1."


def test_responses_function_call_without_its_reasoning_item():
    body = copy.deepcopy(RESP_OK)
    del body["input"][1]
    f = first_error(check_request("openai-responses", body))
    assert f.code == "function-call-without-reasoning" and f.path == "input[1]"
    assert f.message.startswith("Item 'fc_1' of type 'function_call' was provided without its required 'reasoning'")
    # a reasoning model needs it even when the request does not ask for reasoning ("required")
    nothink = copy.deepcopy(body)
    del nothink["reasoning"]
    assert not rejects(check_request("openai-responses", nothink))
    assert rejects(check_request("openai-responses", nothink, HistoryRules(responses_reasoning="required")))
    assert not rejects(check_request("openai-responses", body, HistoryRules(responses_reasoning="optional")))
    # without its item id a call cannot be tied to any reasoning: accepted
    del body["input"][1]["id"]
    assert not rejects(check_request("openai-responses", body, HistoryRules(responses_reasoning="required")))


def test_responses_reasoning_item_needs_a_following_item():
    body = copy.deepcopy(RESP_OK)
    body["input"] = body["input"][:2]
    f = first_error(check_request("openai-responses", body))
    assert f.code == "reasoning-without-following-item"
    assert f.message == "Item 'rs_1' of type 'reasoning' was provided without its required following item."


def test_responses_encrypted_content_is_verified_and_foreign_ones_flagged():
    rules = HistoryRules(verify_signature=verifier({OPENAI_ENC: "another summary"}))
    f = first_error(check_request("openai-responses", RESP_OK, rules))
    assert f.code == "reasoning-not-verified" and "rs_1" in f.message
    body = copy.deepcopy(RESP_OK)
    body["input"][1]["encrypted_content"] = ANTHROPIC_SIG
    assert codes(check_request("openai-responses", body)) == ["foreign-signature"]


def test_responses_warnings():
    body = copy.deepcopy(RESP_OK)
    body["input"][3]["output"] = ""
    body["input"].append({"role": "assistant", "content": ""})
    found = check_request("openai-responses", body)
    assert codes(found) == ["tool-result-empty", "empty-assistant-turn"] and not rejects(found)


# -- Anthropic -------------------------------------------------------------------------------------------------
THINK = "The user wants the weather; I will call the tool."
ANTH_OK = {"model": "m", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": THINK, "signature": ANTHROPIC_SIG},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18 C"}]}]}
ANTH_VERIFY = HistoryRules(verify_signature=verifier({ANTHROPIC_SIG: THINK}))


def test_anthropic_good_request():
    assert check_request("anthropic", ANTH_OK) == []
    assert check_request("anthropic", ANTH_OK, ANTH_VERIFY) == []


def test_anthropic_tool_use_without_result_and_unexpected_result():
    body = copy.deepcopy(ANTH_OK)
    body["messages"][2]["content"] = [{"type": "text", "text": "go on"}]
    f = first_error(check_request("anthropic", body))
    assert f.code == "tool-call-without-result" and f.message.startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.")
    body = copy.deepcopy(ANTH_OK)
    body["messages"][2]["content"][0]["tool_use_id"] = "toolu_9"
    found = check_request("anthropic", body)
    bad = next(f for f in found if f.code == "tool-result-without-call")
    assert bad.path == "messages[2].content[0]" and bad.message.startswith(
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9.")


def test_anthropic_tool_results_must_come_first_in_their_message():
    body = copy.deepcopy(ANTH_OK)
    body["messages"][2]["content"].insert(0, {"type": "text", "text": "here"})
    (f,) = check_request("anthropic", body)
    assert (f.severity, f.code, f.path, f.message_index, f.part_index) == (
        "error", "tool-result-not-first", "messages[2].content[1]", 2, 1)
    assert f.message == ("messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
                         "Messages following `tool_use` blocks must begin with a matching number of `tool_result` "
                         "blocks.")
    body["messages"][2]["content"].reverse()                     # text after the results: accepted
    assert check_request("anthropic", body) == []


def test_anthropic_tool_use_ids_must_be_unique_in_a_message():
    body = copy.deepcopy(ANTH_OK)
    body["messages"][1]["content"].append(copy.deepcopy(body["messages"][1]["content"][2]))
    (f,) = check_request("anthropic", body)
    assert (f.severity, f.code, f.path, f.part_index) == ("error", "tool-use-id-duplicate", "messages[1].content[3]", 3)
    assert f.message == "messages.1.content.3: `tool_use` ids must be unique"


def test_anthropic_thinking_block_missing_on_a_tool_use_continuation():
    body = copy.deepcopy(ANTH_OK)
    del body["messages"][1]["content"][0]
    f = first_error(check_request("anthropic", body))
    assert f.code == "thinking-block-missing" and f.path == "messages[1].content[0]"
    assert "Expected `thinking` or `redacted_thinking`, but found `text`" in f.message
    del body["thinking"]       # thinking off: no requirement
    assert not rejects(check_request("anthropic", body))


def test_anthropic_thinking_block_reordered_or_changed():
    body = copy.deepcopy(ANTH_OK)
    blocks = body["messages"][1]["content"]
    blocks[0], blocks[1] = blocks[1], blocks[0]
    found = check_request("anthropic", body)
    assert codes(found, "error") == ["thinking-block-missing", "thinking-block-modified"]
    assert check_request("anthropic", body, HistoryRules(interleaved_thinking=True))[0].code == "thinking-block-missing"
    body = copy.deepcopy(ANTH_OK)
    body["messages"][1]["content"][0]["thinking"] = THINK + " (edited)"
    f = first_error(check_request("anthropic", body, ANTH_VERIFY))
    assert f.code == "thinking-block-modified" and "cannot be modified" in f.message
    assert not rejects(check_request("anthropic", body))     # without the issuer, an edit cannot be seen


def test_anthropic_thinking_signature_missing_empty_or_unknown():
    for sig, want in ((None, "signature: Field required"), ("", "Invalid `signature` in `thinking` block"),
                      (GEMINI_SIG, "Invalid `signature` in `thinking` block")):
        body = copy.deepcopy(ANTH_OK)
        if sig is None:
            del body["messages"][1]["content"][0]["signature"]
        else:
            body["messages"][1]["content"][0]["signature"] = sig
        found = check_request("anthropic", body, ANTH_VERIFY)
        f = first_error(found)
        assert f.code == "thinking-signature-invalid" and want in f.message and f.part_index == 0
    assert "foreign-signature" in codes(found)


def test_anthropic_warnings():
    body = copy.deepcopy(ANTH_OK)
    body["messages"][2]["content"][0]["content"] = ""
    body["messages"][2]["content"][0]["is_error"] = True
    body["messages"] += [{"role": "assistant", "content": ""}]     # the optional final assistant message: empty is fine
    found = check_request("anthropic", body)
    assert codes(found) == ["tool-result-empty"] and not rejects(found)


@pytest.mark.parametrize("content", ["", []])
def test_anthropic_rejects_an_empty_message_but_the_final_assistant_one(content):
    body = {"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": content},
        {"role": "user", "content": "again"}]}
    (f,) = check_request("anthropic", body)
    assert (f.severity, f.code, f.path, f.message_index) == ("error", "empty-assistant-turn", "messages[1]", 1)
    assert f.message == ("messages.1: all messages must have non-empty content except for the optional final "
                         "assistant message")
    body["messages"][1:] = [{"role": "assistant", "content": "Hello"}, {"role": "user", "content": content}]
    assert [(f.code, f.path) for f in check_request("anthropic", body)] == [("empty-message", "messages[2]")]
    body["messages"][1:] = [{"role": "assistant", "content": content}]   # a prefill of nothing
    assert check_request("anthropic", body) == []


def test_anthropic_rejects_empty_and_blank_text_blocks():
    body = {"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": ""}]},
        {"role": "assistant", "content": [{"type": "text", "text": " \n"}]},
        {"role": "user", "content": "  "}]}
    found = check_request("anthropic", body)
    assert [(f.severity, f.code, f.path) for f in found] == [
        ("error", "empty-text-block", "messages[0].content[1]"), ("error", "empty-text-block", "messages[1].content[0]"),
        ("error", "empty-text-block", "messages[2]")]
    assert [f.message for f in found] == ["messages: text content blocks must be non-empty"] + [
        "messages: text content blocks must contain non-whitespace text"] * 2


# -- Gemini ----------------------------------------------------------------------------------------------------
CALL = {"name": "get_weather", "args": {"city": "Paris"}}
GEM_OK = {"contents": [
    {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
    {"role": "model", "parts": [{"text": "thinking...", "thought": True},
                                {"functionCall": CALL, "thoughtSignature": GEMINI_SIG},
                                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp": 18}}},
                               {"functionResponse": {"name": "get_weather", "response": {"temp": 21}}}]}]}
GEM3 = HistoryRules(gemini_signatures="required", verify_signature=verifier({GEMINI_SIG: gemini_call_content(CALL)}))


def test_gemini_good_request():
    assert check_request("gemini", GEM_OK) == []
    assert check_request("gemini", GEM_OK, GEM3) == []


def test_gemini_function_call_missing_its_signature_when_required():
    body = copy.deepcopy(GEM_OK)
    del body["contents"][1]["parts"][1]["thoughtSignature"]
    f = first_error(check_request("gemini", body, GEM3))
    assert f.code == "function-call-missing-signature" and f.path == "contents[1].parts[1]"
    assert f.message.startswith("Function call is missing a thought_signature in functionCall parts.")
    assert "`default_api:get_weather` , position 2" in f.message
    assert not rejects(check_request("gemini", body))                          # Gemini 2.5: optional
    assert rejects(check_request("gemini", body, HistoryRules(model="models/gemini-3-pro-preview")))
    body["contents"][1]["parts"][1]["thoughtSignature"] = "skip_thought_signature_validator"
    assert not rejects(check_request("gemini", body, GEM3))                    # the documented placeholder
    # only the current turn needs them: a later user question makes that call history
    body = copy.deepcopy(GEM_OK)
    del body["contents"][1]["parts"][1]["thoughtSignature"]
    body["contents"] += [{"role": "model", "parts": [{"text": "18 and 21."}]},
                         {"role": "user", "parts": [{"text": "thanks"}]}]
    assert not rejects(check_request("gemini", body, GEM3))


def test_gemini_changed_arguments_corrupt_the_signature():
    body = copy.deepcopy(GEM_OK)
    body["contents"][1]["parts"][1]["functionCall"]["args"] = {"city": "Lyon"}
    f = first_error(check_request("gemini", body, GEM3))
    assert f.code == "signature-corrupted" and f.message == "Corrupted thought signature."


def test_gemini_response_counts_and_orphans():
    body = copy.deepcopy(GEM_OK)
    del body["contents"][2]["parts"][1]
    f = first_error(check_request("gemini", body))
    assert f.code == "tool-call-without-result" and "number of function response parts" in f.message
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {"a": 1}}}]}]}
    f = first_error(check_request("gemini", body))
    assert f.code == "tool-result-without-call" and "immediately after a function call turn" in f.message
    body = copy.deepcopy(GEM_OK)
    body["contents"][1]["parts"][1]["functionCall"]["id"] = "a1"
    body["contents"][2]["parts"][0]["functionResponse"]["id"] = "zz"
    assert first_error(check_request("gemini", body)).code == "tool-result-without-call"


def test_gemini_warnings():
    body = copy.deepcopy(GEM_OK)
    body["contents"][2]["parts"][0]["functionResponse"]["response"] = {}
    body["contents"][1]["parts"][0]["thoughtSignature"] = ANTHROPIC_SIG
    body["contents"] += [{"role": "model", "parts": [{"text": ""}]}]
    found = check_request("gemini", body)
    assert sorted(codes(found)) == ["empty-assistant-turn", "foreign-signature", "tool-result-empty"]
    assert not rejects(found)


# -- shared ----------------------------------------------------------------------------------------------------
def test_signature_families():
    assert signature_family(ANTHROPIC_SIG) == "anthropic"
    assert signature_family(GEMINI_SIG) == "gemini"
    assert signature_family(OPENAI_ENC) == "openai-responses"
    assert signature_family("not base64 at all!") is None and signature_family(None) is None


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_hostile_shapes_never_raise(fmt):
    for body in ({}, [], {"messages": 3, "input": "x", "contents": [1, None, {"parts": 5}]},
                 {"messages": [None, {"role": "assistant", "tool_calls": [None, 3], "content": [None]}],
                  "input": [None, {"type": "reasoning"}], "contents": {"role": "model", "parts": [None]}}):
        assert isinstance(check_request(fmt, body), list)
    with pytest.raises(LocalProtocolError):
        check_request("nope", {})


@pytest.mark.parametrize("fmt, body, path, wording", [
    ("openai-chat", {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "f", "arguments": {"x": 1}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"}]},
     "messages[1].tool_calls[0].function.arguments",
     "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead."),
    ("openai-responses", {"input": [
        {"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": ["x"]},
        {"type": "function_call_output", "call_id": "c1", "output": "r"}]},
     "input[1].arguments", "Invalid type for 'input[1].arguments': expected a string, but got an array instead."),
    ("openai-responses", {"input": [
        {"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": {"temp": 3}}]},
     "input[2].output", "Invalid type for 'input[2].output': expected one of a string or array of content parts, "
                        "but got an object instead."),
    ("anthropic", {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": '{"x": 1}'}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}]},
     "messages[1].content[0].input", "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
    ("gemini", {"contents": [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"function_call": {"name": "f", "args": '{"x": 1}'}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": 1}}}]}]},
     "contents[1].parts[0]", "Invalid value at 'contents[1].parts[0].function_call.args' "
                             "(type.googleapis.com/google.protobuf.Struct), \"{\\\"x\\\": 1}\""),
])
def test_a_tool_field_of_the_wrong_json_type_is_the_apis_400(fmt, body, path, wording):
    """The mistake of a history translated by hand between APIs (arguments as an object where a string is due, or
    the reverse): each API's own 400, which the emulator answers with."""
    [err] = [f for f in check_request(fmt, body) if f.severity == "error"]
    assert (err.code, err.path, err.message) == ("tool-field-wrong-type", path, wording)


def test_tool_fields_of_the_right_types_pass():
    ok = {"input": [{"role": "user", "content": "q"},
                    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c1",
                     "output": [{"type": "input_text", "text": "r"}]}]}      # (an output may be content parts)
    assert not [f for f in check_request("openai-responses", ok) if f.severity == "error"]
    gem = {"contents": [{"role": "user", "parts": [{"text": "q"}]},
                        {"role": "model", "parts": [{"functionCall": {"name": "f"}}]},       # (args optional)
                        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": 1}}}]}]}
    assert not [f for f in check_request("gemini", gem) if f.severity == "error"]
