"""Request fields beyond the conversation, with plain httpx: message threads, model endpoints, tool_choice, stop
sequences, roles, and history fields of the wrong JSON type, each answered as the provider does."""
from __future__ import annotations

import httpx
import pytest

ANTH = {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01", "anthropic-beta": "message-threads-2026-08-12"}


def anth(base: str, body: dict) -> httpx.Response:
    full = {"model": "text", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(base + "/v1/messages", headers=ANTH, json=full, timeout=10)


# -- Anthropic message threads -----------------------------------------------------------------------------------
def test_a_thread_continue_is_not_found_and_a_create_is_answered(emulator):
    r = anth(emulator, {"thread": {"type": "continue", "previous_message_id": "msg_01x"},
                        "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01x",
                                                                    "content": "sunny"}]}]})
    assert r.status_code == 404, r.text
    err = r.json()["error"]
    assert err["type"] == "not_found_error" and err["details"] == {"error_code": "thread_not_found"}
    assert r.json()["type"] == "error" and r.headers["request-id"] == r.json()["request_id"]
    r = anth(emulator, {"thread": {"type": "create"}})
    assert r.status_code == 200 and r.json()["content"][0]["type"] == "text"


@pytest.mark.parametrize("thread, needle", [({"type": "fork"}, "does not match any of the expected tags"),
                                            ({"type": "continue"}, "previous_message_id: Field required"),
                                            ("create", "valid dictionary")])
def test_a_malformed_thread_is_a_400(emulator, thread, needle):
    r = anth(emulator, {"thread": thread})
    assert r.status_code == 400 and needle in r.json()["error"]["message"]
    assert r.json()["error"]["type"] == "invalid_request_error"


# -- the model endpoints -------------------------------------------------------------------------------------------
def test_models_are_routed_by_the_key_and_retrieved_in_each_shape(emulator):
    r = httpx.get(emulator + "/v1/models", headers={"x-goog-api-key": "k"})      # google-genai 3 lists on /v1
    assert r.status_code == 200 and r.json()["models"][0]["name"] == "models/text"
    r = httpx.get(emulator + "/v1/models?key=k")
    assert r.status_code == 200 and "models" in r.json()
    r = httpx.get(emulator + "/v1/models/tool-call", headers={"Authorization": "Bearer k"})
    assert r.json() == {"id": "tool-call", "object": "model", "created": 1767225600, "owned_by": "streamscope-emulator"}
    r = httpx.get(emulator + "/v1/models/tool-call", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert r.json()["type"] == "model" and r.json()["id"] == "tool-call" and r.json()["lifecycle"] == "active"
    for path in ("/v1/models/tool-call", "/v1beta/models/tool-call"):
        r = httpx.get(emulator + path, headers={"x-goog-api-key": "k"})
        assert r.status_code == 200 and r.json()["name"] == "models/tool-call", path
        assert r.json()["supportedGenerationMethods"] == ["generateContent", "streamGenerateContent"]


def test_model_endpoints_answer_a_missing_key_with_the_providers_401(emulator):
    r = httpx.get(emulator + "/v1beta/models/text")
    assert r.status_code == 401 and r.json()["error"]["status"] == "UNAUTHENTICATED"
    r = httpx.get(emulator + "/v1/models/text", headers={"anthropic-version": "2023-06-01"})
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    r = httpx.get(emulator + "/v1/models/text")
    assert r.status_code == 401 and "API key" in r.json()["error"]["message"]


# -- tool_choice ---------------------------------------------------------------------------------------------------
def _chat(base: str, model: str, **extra) -> dict:
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
             for n in ("get_weather", "get_time")]
    r = httpx.post(base + "/v1/chat/completions", headers={"Authorization": "Bearer k"}, timeout=10,
                   json={"model": model, "messages": [{"role": "user", "content": "Weather in Paris?"}],
                         "tools": tools, **extra})
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]


def test_tool_choice_in_chat(emulator):
    assert _chat(emulator, "tool-call")["finish_reason"] == "tool_calls"
    assert _chat(emulator, "tool-call", tool_choice="none")["finish_reason"] == "stop"
    forced = _chat(emulator, "text", tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert [t["function"]["name"] for t in forced["message"]["tool_calls"]] == ["get_time"]
    legacy = _chat(emulator, "text", function_call={"name": "get_time"})
    assert legacy["finish_reason"] == "tool_calls"
    assert len(_chat(emulator, "parallel-tools", parallel_tool_calls=False)["message"]["tool_calls"]) == 1


def test_anthropic_tool_choice_is_validated(emulator):
    r = anth(emulator, {"tool_choice": {"type": "tool"}})
    assert r.status_code == 400 and r.json()["error"]["message"] == "tool_choice.tool.name: Field required"
    r = anth(emulator, {"tool_choice": {"type": "sometimes"}})
    assert r.status_code == 400 and "expected tags: 'auto', 'any', 'tool', 'none'" in r.json()["error"]["message"]


# -- stop sequences ------------------------------------------------------------------------------------------------
def test_anthropic_stream_names_the_stop_sequence(emulator):
    from core.wire.pipeline import decode_bytes

    full = anth(emulator, {}).json()["content"][0]["text"]
    word = full.split()[2]
    r = anth(emulator, {"stop_sequences": [word], "stream": True})
    assert b'"stop_reason":"stop_sequence","stop_sequence":' + f'"{word}"'.encode() in r.content
    result = decode_bytes("anthropic", r.content).result()
    assert result["finish_reason"]["raw"] == "stop_sequence" and result["terminated"]
    assert "".join(b["text"] for b in result["blocks"]) == full[:full.index(word)]
    whole = anth(emulator, {"stop_sequences": [word]}).json()
    assert (whole["stop_reason"], whole["stop_sequence"]) == ("stop_sequence", word)


# -- roles ---------------------------------------------------------------------------------------------------------
def test_roles_are_validated_in_the_openai_formats_and_gemini(emulator):
    r = httpx.post(emulator + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                   json={"model": "text", "messages": [{"role": "model", "content": "hi"}]})
    assert r.status_code == 400 and r.json()["error"]["param"] == "messages[0].role"
    r = httpx.post(emulator + "/v1/responses", headers={"Authorization": "Bearer k"},
                   json={"model": "text", "input": [{"type": "message", "role": "tool", "content": "hi"}]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_value"
    r = httpx.post(emulator + "/v1beta/models/text:generateContent?key=k",
                   json={"contents": [{"role": "system", "parts": [{"text": "hi"}]}]})
    assert r.status_code == 400 and r.json()["error"]["message"] == "Please use a valid role: user, model."
    r = httpx.post(emulator + "/v1beta/models/text:generateContent?key=k",
                   json={"contents": [{"parts": [{"text": "hi"}]}]})
    assert r.status_code == 200


# -- history fields of the wrong JSON type -------------------------------------------------------------------------
def test_tool_fields_of_the_wrong_json_type_are_each_providers_400(emulator):
    call = {"id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    r = httpx.post(emulator + "/v1/chat/completions", headers={"authorization": "Bearer sk-x"}, timeout=10, json={
        "model": "tool-call", "messages": [{"role": "user", "content": "hi"},
                                           {"role": "assistant", "content": None, "tool_calls": [call]},
                                           {"role": "tool", "tool_call_id": "call_A", "content": "sunny"}]})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith(
        "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string")
    r = anth(emulator, {"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": "{}"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}]})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "messages.1.content.0.tool_use.input: Input should be a valid dictionary"
    r = httpx.post(emulator + "/v1beta/models/tool-call:generateContent", headers={"x-goog-api-key": "k"}, timeout=10,
                   json={"contents": [{"role": "user", "parts": [{"text": "hi"}]},
                                      {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                                      {"role": "user", "parts": [{"functionResponse": {"name": "f",
                                                                                       "response": "sunny"}}]}]})
    assert r.status_code == 400 and r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "function_response.response' (type.googleapis.com/google.protobuf.Struct)" in r.json()["error"]["message"]


def test_bodies_nested_too_deep_are_the_apis_400_on_the_new_endpoints(emulator):
    deep = b'{"previous_response_id": "resp_x", "input": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    r = httpx.post(emulator + "/v1/responses", headers={"authorization": "Bearer sk-x",
                                                         "content-type": "application/json"}, content=deep, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["message"]
    deep = b'{"model": "text", "messages": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    r = httpx.post(emulator + "/v1/messages/count_tokens", headers=ANTH | {"content-type": "application/json"},
                   content=deep, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
