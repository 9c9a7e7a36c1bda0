"""One prompt spec, four request shapes: each request body pinned exactly."""
from __future__ import annotations

import json
import shlex

import pytest

from core.live.config import ProviderConfig
from core.live.request import (PromptSpec, adapt_schema_for_gemini, build_request, curl_command, insecure_transport,
                          is_loopback_host)

WEATHER = {"name": "get_weather", "description": "Current weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
KEY = "sk-test-0123456789"

SPEC = PromptSpec(user="Weather in Paris?", system="Be brief.", history=[("user", "Hi"), ("assistant", "Hello!")],
                  temperature=0.5, max_tokens=300, tools=(WEATHER,), tool_choice="auto", thinking=False)


def prov(fmt, base="http://127.0.0.1:9/v1", model="m1", **kw):
    return ProviderConfig("p", fmt, base, model, "K", **kw)


def test_openai_chat_body_pinned():
    req = build_request(prov("openai-chat"), SPEC, KEY)
    assert req.method == "POST" and req.url == "http://127.0.0.1:9/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.headers["Accept"] == "text/event-stream"
    assert req.body == {
        "model": "m1",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Weather in Paris?"}],
        "stream": True, "stream_options": {"include_usage": True}, "temperature": 0.5, "max_tokens": 300,
        "tools": [{"type": "function", "function": WEATHER}], "tool_choice": "auto"}


def test_openai_chat_always_asks_for_usage_and_maps_thinking():
    spec = PromptSpec(user="hi", max_tokens=None, thinking=True, thinking_budget=10000)
    req = build_request(prov("openai-chat", base="https://api.openai.com/v1"), spec, KEY)
    assert req.body == {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                        "stream_options": {"include_usage": True}, "reasoning_effort": "high"}
    assert any("reasoning_effort" in n for n in req.notes)
    req = build_request(prov("openai-chat", base="https://api.openai.com/v1"), PromptSpec(user="x", max_tokens=5),
                        KEY)
    assert req.body["max_completion_tokens"] == 5 and "max_tokens" not in req.body


def test_choices_are_openai_chats_n_and_noted_elsewhere():
    spec = PromptSpec(user="hi", max_tokens=None, choices=3)
    chat = build_request(prov("openai-chat"), spec, KEY)
    assert chat.body == {"model": "m1", "messages": [{"role": "user", "content": "hi"}], "n": 3, "stream": True,
                         "stream_options": {"include_usage": True}}
    assert not any("choices" in n for n in chat.notes)
    for fmt in ("openai-responses", "anthropic", "gemini"):
        req = build_request(prov(fmt), spec, KEY)
        assert "n" not in req.body and "candidateCount" not in json.dumps(req.body)
        assert any("3 choices asked: only OpenAI Chat Completions takes `n`" in n for n in req.notes)
    assert "n" not in build_request(prov("openai-chat"), PromptSpec(user="hi"), KEY).body   # 1: the default
    assert PromptSpec.from_json(spec.to_json()) == spec and PromptSpec.from_json({"user": "x"}).choices == 1


def test_openai_responses_body_pinned():
    spec = PromptSpec(user="Weather in Paris?", system="Be brief.", history=[{"role": "user", "content": "Hi"}],
                      temperature=0.2, max_tokens=200, tools=(WEATHER,), tool_choice="get_weather", thinking=True,
                      thinking_budget=4096)
    req = build_request(prov("openai-responses"), spec, KEY)
    assert req.url == "http://127.0.0.1:9/v1/responses"
    assert req.body == {
        "model": "m1", "instructions": "Be brief.",
        "input": [{"role": "user", "content": "Hi"}, {"role": "user", "content": "Weather in Paris?"}],
        "stream": True, "temperature": 0.2, "max_output_tokens": 200,
        "tools": [{"type": "function", "name": "get_weather", "description": "Current weather for a city",
                   "parameters": WEATHER["parameters"], "strict": False}],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "reasoning": {"effort": "medium", "summary": "auto"}, "include": ["reasoning.encrypted_content"]}


def test_anthropic_body_pinned():
    req = build_request(prov("anthropic", base="http://127.0.0.1:9"), SPEC, KEY)
    assert req.url == "http://127.0.0.1:9/v1/messages"
    assert req.headers["x-api-key"] == KEY and req.headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in req.headers
    assert req.body == {
        "model": "m1", "max_tokens": 300, "system": "Be brief.",
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
                     {"role": "user", "content": "Weather in Paris?"}],
        "stream": True, "temperature": 0.5,
        "tools": [{"name": "get_weather", "description": "Current weather for a city",
                   "input_schema": WEATHER["parameters"]}],
        "tool_choice": {"type": "auto"}}


def test_anthropic_leaves_out_an_assistant_turn_with_nothing_to_send_and_says_so():
    from core.live.conversation import Conversation
    from core.wire.history import check_request
    conv = Conversation.from_json({"turns": [   # Gemini's thought cannot cross, and its text is empty
        {"role": "user", "content": "hi"},
        {"role": "assistant", "format": "gemini", "parts": [
            {"type": "thinking", "text": "thinking...", "signature": "CpoBAdHtilNTRU1VMQN5"},
            {"type": "text", "text": ""}]},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": " \n"},
        {"role": "user", "content": "and?"}]})
    req = build_request(prov("anthropic", base="http://127.0.0.1:9"), PromptSpec(user="again", conversation=conv),
                        KEY)
    msgs = req.body["messages"]
    assert msgs == [{"role": "user", "content": t} for t in ("hi", "next", "and?", "again")]   # the API merges them
    assert check_request("anthropic", req.body) == []
    (note,) = [n for n in req.notes if "left out" in n]
    assert note.startswith("2 assistant turn(s) left out (turn 1, 3 of the conversation") and "merges" in note
    # an assistant turn that still has something to send stays, with its empty text block left out
    conv = Conversation.from_json({"turns": [{"role": "user", "content": "hi"}, {"role": "assistant", "parts": [
        {"type": "text", "text": ""}, {"type": "tool_call", "id": "toolu_1", "name": "get_weather",
                                       "arguments": "{}"}]},
        {"role": "user", "parts": [{"type": "tool_result", "id": "toolu_1", "name": "get_weather", "text": "sunny"}]}]})
    req = build_request(prov("anthropic", base="http://127.0.0.1:9"), PromptSpec(user="", conversation=conv), KEY)
    assert [b["type"] for b in req.body["messages"][1]["content"]] == ["tool_use"]
    assert not any("left out (turn" in n for n in req.notes)


def test_anthropic_thinking_adjusts_max_tokens_and_temperature():
    spec = PromptSpec(user="hi", temperature=0.3, max_tokens=1000, thinking=True, thinking_budget=2000,
                      tools=(WEATHER,), tool_choice="required")
    req = build_request(prov("anthropic", base="http://h:1"), spec, KEY)
    assert req.body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert req.body["max_tokens"] == 3000 and "temperature" not in req.body
    assert req.body["tool_choice"] == {"type": "auto"}
    assert len(req.notes) == 3


def test_gemini_body_pinned():
    spec = PromptSpec(user="Weather in Paris?", system="Be brief.", history=[("user", "Hi"), ("assistant", "Yo")],
                      temperature=0.5, max_tokens=300, tools=(WEATHER,), tool_choice="required", thinking=True,
                      thinking_budget=512)
    req = build_request(prov("gemini", base="http://127.0.0.1:9", model="models/gemini-x"), spec, KEY)
    assert req.url == "http://127.0.0.1:9/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    assert req.headers["x-goog-api-key"] == KEY and "key=" not in req.url
    assert req.body == {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}, {"role": "model", "parts": [{"text": "Yo"}]},
                     {"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "tools": [{"functionDeclarations": [WEATHER]}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        "generationConfig": {"temperature": 0.5, "maxOutputTokens": 300,
                             "thinkingConfig": {"thinkingBudget": 512, "includeThoughts": True}}}
    assert req.notes == []


def test_gemini_schema_adapted_and_said_so():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "additionalProperties": False,
              "properties": {"city": {"type": ["string", "null"]}, "unit": {"const": "c"},
                             "days": {"type": "integer", "exclusiveMinimum": 0, "enum": [1, 2]},
                             "where": {"$ref": "#/$defs/Place"}, "either": {"oneOf": [{"type": "string"}]}},
              "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}},
                                  "additionalProperties": False}}}
    out, changes = adapt_schema_for_gemini(schema)
    assert out == {"type": "object",
                   "properties": {"city": {"type": "string", "nullable": True}, "unit": {"enum": ["c"]},
                                  "days": {"type": "integer", "minimum": 0},
                                  "where": {"type": "object", "properties": {"lat": {"type": "number"}}},
                                  "either": {"anyOf": [{"type": "string"}]}}}
    text = "\n".join(changes)
    for word in ("$schema", "additionalProperties", "$ref", "const", "exclusiveMinimum", "oneOf", "enum", "$defs"):
        assert word in text
    tool = dict(WEATHER, parameters=schema)
    req = build_request(prov("gemini", base="http://h"), PromptSpec(user="x", tools=(tool,)), KEY)
    assert req.body["tools"][0]["functionDeclarations"][0]["parameters"] == out
    assert any(n.startswith("tool get_weather: #: additionalProperties dropped") for n in req.notes)
    assert schema["additionalProperties"] is False   # the caller's schema is untouched


def test_tool_shapes_accepted_and_choice_validated():
    openai_shaped = {"type": "function", "function": WEATHER}
    anthropic_shaped = {"name": "get_weather", "description": "Current weather for a city",
                        "input_schema": WEATHER["parameters"]}
    for t in (openai_shaped, anthropic_shaped):
        req = build_request(prov("openai-chat"), PromptSpec(user="x", tools=(t,)), KEY)
        assert req.body["tools"] == [{"type": "function", "function": WEATHER}]
    with pytest.raises(ValueError):
        build_request(prov("openai-chat"), PromptSpec(user="x", tools=(WEATHER,), tool_choice="nope"), KEY)
    req = build_request(prov("openai-chat"), PromptSpec(user="x", tool_choice="auto"), KEY)
    assert "tool_choice" not in req.body and req.notes


def test_no_key_sends_no_auth_header():
    for fmt in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        req = build_request(prov(fmt), PromptSpec(user="x"), None)
        assert not {"authorization", "x-api-key", "x-goog-api-key"} & {k.lower() for k in req.headers}


def test_content_is_the_body_json():
    req = build_request(prov("openai-chat"), PromptSpec(user="héllo"), KEY)
    assert json.loads(req.content()) == req.body and "héllo".encode() in req.content()


def test_redacted_request_has_no_key():
    req = build_request(prov("gemini", base="http://h"), PromptSpec(user="x"), KEY)
    req.url += "&key=" + KEY
    red = req.redacted([KEY])
    assert KEY not in json.dumps(red.to_json()) and red.headers["x-goog-api-key"] == "[REDACTED]"
    assert KEY in req.headers["x-goog-api-key"]   # the original is untouched


def test_curl_references_the_variable_not_the_key():
    for fmt in ("openai-chat", "anthropic", "gemini"):
        req = build_request(prov(fmt), SPEC, KEY)
        cmd = curl_command(req, "MY_KEY")
        assert KEY not in cmd and "${MY_KEY}" in cmd
        words = shlex.split(cmd.replace("\\\n", " "))
        assert words[0] == "curl" and req.url in words
        assert json.loads(words[words.index("--data-binary") + 1]) == req.body
    assert "<API_KEY>" in curl_command(build_request(prov("anthropic"), SPEC, KEY), None)
    # a request built without its key (the variable was not set, so it was not sent): the command names it anyway
    for fmt, header in (("openai-chat", "Authorization: Bearer ${MY_KEY}"), ("anthropic", "x-api-key: ${MY_KEY}"),
                        ("gemini", "x-goog-api-key: ${MY_KEY}")):
        p = prov(fmt)
        cmd = curl_command(build_request(p, SPEC, None), "MY_KEY", p)
        assert shlex.split(cmd.replace("\\\n", " ")).count(header) == 1, fmt
        keyed = curl_command(build_request(p, SPEC, KEY), "MY_KEY", p)
        assert keyed.count("${MY_KEY}") == 1 and KEY not in keyed      # (not twice when it was there)


def test_insecure_transport_refused_unless_allowed():
    assert insecure_transport(prov("openai-chat", base="http://example.com/v1"), "http://example.com/v1/x", KEY)
    assert insecure_transport(prov("openai-chat"), "http://127.0.0.1:9/v1/x", KEY) is None
    assert insecure_transport(prov("openai-chat"), "http://localhost:9/v1/x", KEY) is None
    assert insecure_transport(prov("openai-chat"), "http://[::1]:9/v1/x", KEY) is None
    assert insecure_transport(prov("openai-chat"), "https://example.com/v1/x", KEY) is None
    assert insecure_transport(prov("openai-chat"), "http://example.com/v1/x", None) is None
    allowed = prov("openai-chat", base="http://example.com/v1", allow_insecure=True)
    assert insecure_transport(allowed, "http://example.com/v1/x", KEY) is None
    assert is_loopback_host("127.8.0.1") and not is_loopback_host("10.0.0.1") and not is_loopback_host(None)


# -- stop sequences, top_p and seed --------------------------------------------------------------------------
def _sampled(fmt: str, **kw):
    spec = PromptSpec("hi", stop=("\n\n", "END"), top_p=0.9, seed=42, **kw)
    return build_request(ProviderConfig("p", fmt, "https://h", "m"), spec, None)


def test_sampling_options_mapped_per_format():
    chat = _sampled("openai-chat")
    assert (chat.body["stop"], chat.body["top_p"], chat.body["seed"]) == (["\n\n", "END"], 0.9, 42)
    resp = _sampled("openai-responses")
    assert resp.body["top_p"] == 0.9 and "stop" not in resp.body and "seed" not in resp.body
    assert any("stop sequences left out" in n for n in resp.notes) and any("seed 42 left out" in n for n in resp.notes)
    ant = _sampled("anthropic")
    assert ant.body["stop_sequences"] == ["\n\n", "END"] and ant.body["top_p"] == 0.9 and "seed" not in ant.body
    assert any("seed 42 left out" in n for n in ant.notes)
    gem = _sampled("gemini")
    assert gem.body["generationConfig"] == {"maxOutputTokens": 1024, "stopSequences": ["\n\n", "END"],
                                            "topP": 0.9, "seed": 42}
    assert not any("left out" in n for n in chat.notes + gem.notes)


def test_anthropic_top_p_with_thinking_follows_its_rules():
    low = _sampled("anthropic", thinking=True)
    assert "top_p" not in low.body and any("0.95" in n for n in low.notes)
    both = build_request(ProviderConfig("p", "anthropic", "https://h", "m"), PromptSpec("hi", temperature=0.5, top_p=0.9),
                         None)
    assert both.body["top_p"] == 0.9 and any("both sent" in n for n in both.notes)


@pytest.mark.parametrize("kw, words", [({"top_p": 1.5}, "between 0 and 1"), ({"stop": ("a",) * 5}, "at most 4"),
                                       ({"stop": ("",)}, "empty"), ({"top_p": float("nan")}, "between 0 and 1"),
                                       ({"temperature": float("nan")}, "temperature must be a finite number"),
                                       ({"temperature": float("inf")}, "temperature must be a finite number"),
                                       ({"temperature": -0.5}, r"0 or more \(got -0.5\)")])
def test_bad_sampling_options_are_refused(kw, words):
    with pytest.raises(ValueError, match=words):
        build_request(ProviderConfig("p", "openai-chat", "https://h", "m"), PromptSpec("hi", **kw), None)


def test_sampling_options_survive_a_capture_and_the_stop_text_form():
    from core.live.request import parse_stop_text, stop_text

    spec = PromptSpec("hi", stop=("a|b", "\n"), top_p=0.5, seed=-3)
    assert PromptSpec.from_json(spec.to_json()) == spec
    assert PromptSpec.from_json(PromptSpec("hi").to_json()).stop == ()
    assert parse_stop_text(r"a\|b|\n|") == ("a|b", "\n")
    assert parse_stop_text(stop_text(spec.stop)) == spec.stop
