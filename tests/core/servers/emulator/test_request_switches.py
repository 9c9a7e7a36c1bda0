"""What the request switches on, the emulator does, as the real APIs do (the official SDKs as the clients):
thinking only when the request turns it on, the legacy `functions` answered in the legacy `function_call` shape,
and stop sequences within each API's limits (Gemini's 5), a request with tens of thousands of them (Anthropic
documents no limit) answered with bounded work. The SDK tests are marked slow, as in test_sdks; each has a
raw-HTTP twin in the fast loop (the last section)."""
from __future__ import annotations

import json
import random

import httpx
import pytest

from core.wire.pipeline import decode_bytes
from tests.core.servers.emulator.conftest import PROMPT
from tests.core.servers.emulator.test_server import post

MSGS = [{"role": "user", "content": PROMPT}]
WEATHER = {"name": "get_weather", "description": "The weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
ASK_WEATHER = [{"role": "user", "content": "What is the weather in Paris?"}]


# -- thinking ------------------------------------------------------------------------------------------------------

@pytest.mark.slow   # (the SDKs take seconds to import: the fast loop has the raw twin below)
def test_anthropic_thinks_only_with_thinking_enabled(ac):
    off = ac.messages.create(model="thinking", max_tokens=1024, messages=MSGS)
    assert [b.type for b in off.content] == ["text"]
    with ac.messages.stream(model="thinking", max_tokens=1024, messages=MSGS) as s:
        assert [b.type for b in s.get_final_message().content] == ["text"]
    on = ac.messages.create(model="thinking", max_tokens=2048, messages=MSGS,
                            thinking={"type": "enabled", "budget_tokens": 1024})
    assert [b.type for b in on.content] == ["thinking", "text"] and on.content[0].signature
    assert off.content[0].text == on.content[1].text
    assert off.usage.output_tokens < on.usage.output_tokens   # (no thinking: none counted either)
    disabled = ac.messages.create(model="thinking", max_tokens=1024, messages=MSGS, thinking={"type": "disabled"})
    assert [b.type for b in disabled.content] == ["text"]


def test_anthropic_adaptive_thinking_thinks(emulator):
    r = httpx.post(emulator + "/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                   json={"model": "thinking", "max_tokens": 2048, "messages": MSGS, "thinking": {"type": "adaptive"}})
    assert [b["type"] for b in r.json()["content"]] == ["thinking", "text"]


@pytest.mark.slow   # (the SDKs take seconds to import: the fast loop has the raw twin below)
def test_gemini_sends_thoughts_only_with_include_thoughts(gc):
    from google.genai import types

    off = gc.models.generate_content(model="thinking", contents=PROMPT)
    parts = off.candidates[0].content.parts
    assert [bool(p.thought) for p in parts] == [False]
    assert off.usage_metadata.thoughts_token_count > 0   # (the model still thought, and says how much)
    chunks = list(gc.models.generate_content_stream(model="thinking", contents=PROMPT))
    assert not any(p.thought for c in chunks for p in c.candidates[0].content.parts)
    assert "".join(c.text or "" for c in chunks) == off.text
    on = gc.models.generate_content(model="thinking", contents=PROMPT, config=types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True)))
    assert [bool(p.thought) for p in on.candidates[0].content.parts] == [True, False]
    assert on.usage_metadata.thoughts_token_count == off.usage_metadata.thoughts_token_count
    none = gc.models.generate_content(model="thinking", contents=PROMPT, config=types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(thinking_budget=0)))
    assert not none.usage_metadata.thoughts_token_count and none.text == off.text


@pytest.mark.slow   # (the SDKs take seconds to import: the fast loop has the raw twin below)
def test_responses_summary_text_only_with_reasoning_summary(oc, emulator):
    with oc.responses.stream(model="thinking", input=PROMPT, reasoning={"effort": "low"}) as s:
        kinds = [e.type for e in s]
        r = s.get_final_response()
    assert not any(k.startswith("response.reasoning_summary") for k in kinds)
    assert [(o.type, o.summary if o.type == "reasoning" else None) for o in r.output] == [("reasoning", []),
                                                                                         ("message", None)]
    assert r.reasoning.effort == "low" and r.reasoning.summary is None
    assert r.usage.output_tokens_details.reasoning_tokens > 0   # (a reasoning model reasons all the same)
    raw = httpx.post(emulator + "/v1/responses", headers={"Authorization": "Bearer k"},
                     json={"model": "thinking", "input": PROMPT, "stream": True}).text
    numbers = [json.loads(line[6:])["sequence_number"] for line in raw.splitlines() if line.startswith("data: ")]
    assert numbers == list(range(len(numbers)))
    whole = oc.responses.create(model="thinking", input=PROMPT)
    assert whole.output[0].type == "reasoning" and whole.output[0].summary == []
    assert oc.responses.retrieve(whole.id).output[0].summary == []
    asked = oc.responses.create(model="thinking", input=PROMPT, reasoning={"summary": "auto"})
    assert asked.output[0].summary[0].text and asked.reasoning.summary == "auto"
    assert asked.output_text == whole.output_text


def test_chat_reasoning_content_comes_by_model(emulator):
    """OpenAI's Chat Completions has no thinking; the compatible servers that send `reasoning_content`
    (DeepSeek's deepseek-reasoner) send it by model, with no request field, as the `thinking` model does."""
    r = httpx.post(emulator + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                   json={"model": "thinking", "messages": MSGS})
    assert r.json()["choices"][0]["message"]["reasoning_content"]


# -- the legacy functions ------------------------------------------------------------------------------------------

@pytest.mark.slow   # (the SDKs take seconds to import: the fast loop has the raw twin below)
def test_legacy_functions_are_answered_with_function_call(oc):
    c = oc.chat.completions.create(model="tool-call", messages=ASK_WEATHER, functions=[WEATHER])
    msg = c.choices[0].message
    assert c.choices[0].finish_reason == "function_call" and msg.tool_calls is None
    assert msg.function_call.name == "get_weather" and json.loads(msg.function_call.arguments) == {"city": "Paris"}
    names, args, finish = [], "", None
    for ch in oc.chat.completions.create(model="tool-call", messages=ASK_WEATHER, functions=[WEATHER], stream=True):
        d = ch.choices[0].delta
        assert d.tool_calls is None
        if d.function_call:
            names += [d.function_call.name] if d.function_call.name else []
            args += d.function_call.arguments or ""
        finish = ch.choices[0].finish_reason or finish
    assert names == ["get_weather"] and args == msg.function_call.arguments and finish == "function_call"
    # one call at most (the legacy API has no parallel calls); with `tools` the tools API's shape
    two = oc.chat.completions.create(model="parallel-tools", messages=ASK_WEATHER, functions=[WEATHER])
    assert two.choices[0].message.function_call.name == "get_weather"
    tools = oc.chat.completions.create(model="tool-call", messages=ASK_WEATHER,
                                       tools=[{"type": "function", "function": WEATHER}])
    assert tools.choices[0].finish_reason == "tool_calls" and tools.choices[0].message.function_call is None
    # the result goes back as a `function` message, and the model answers from it
    back = oc.chat.completions.create(model="tool-call", functions=[WEATHER], messages=ASK_WEATHER + [
        {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": args}},
        {"role": "function", "name": "get_weather", "content": '{"temp_c": 18}'}])
    assert back.choices[0].finish_reason == "stop" and "18" in back.choices[0].message.content


def test_legacy_function_call_stream_decodes_as_a_call(emulator):
    r = httpx.post(emulator + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                   json={"model": "tool-call", "messages": ASK_WEATHER, "functions": [WEATHER], "stream": True,
                         "function_call": {"name": "get_weather"}})
    assert b'"tool_calls"' not in r.content
    got = decode_bytes("openai-chat", r.content).result()
    assert [(b["type"], b["name"]) for b in got["blocks"]] == [("tool_call", "get_weather")]
    assert got["finish_reason"]["raw"] == "function_call"


# -- stop sequences ------------------------------------------------------------------------------------------------

@pytest.mark.slow   # (the SDKs take seconds to import: the fast loop has the raw twin below)
def test_gemini_takes_five_stop_sequences_at_most(gc):
    from google.genai import errors, types

    five = gc.models.generate_content(model="text", contents=PROMPT, config=types.GenerateContentConfig(
        stop_sequences=["Paris", "x1", "x2", "x3", "x4"]))
    assert five.text == "The capital of France is "
    with pytest.raises(errors.ClientError) as err:
        gc.models.generate_content(model="text", contents=PROMPT, config=types.GenerateContentConfig(
            stop_sequences=["Paris", "x1", "x2", "x3", "x4", "x5"]))
    assert err.value.code == 400 and "at most 5 stop sequences" in err.value.message


@pytest.mark.slow   # (the SDKs take seconds to import: the fast loop has the raw twin below)
def test_fifty_thousand_anthropic_stop_sequences_are_answered(ac):
    many = [f"zq{i}xv" for i in range(50_000)]
    m = ac.messages.create(model="long", max_tokens=4096, messages=MSGS, stop_sequences=many)
    assert m.stop_reason == "end_turn" and len(m.content[0].text) > 5000   # (none of them in the reply)
    hit = ac.messages.create(model="text", max_tokens=1024, messages=MSGS,
                             stop_sequences=many + ["a" * 40, "of France", "Paris"])
    assert (hit.stop_reason, hit.stop_sequence, hit.content[0].text) == ("stop_sequence", "of France",
                                                                          "The capital ")
    with ac.messages.stream(model="text", max_tokens=1024, messages=MSGS, stop_sequences=many + ["Paris"]) as s:
        streamed = s.get_final_message()
    assert (streamed.stop_reason, streamed.stop_sequence) == ("stop_sequence", "Paris")


def test_the_one_pass_stop_search_finds_what_the_plain_search_finds():
    from core.servers.emulator.scenarios import first_stop

    rng = random.Random(7)
    text = "The capital of France is Paris. It sits on the Seine; the Seine flows to the sea. " * 3
    for _ in range(300):
        stops = []
        for _ in range(rng.randint(9, 40)):
            i = rng.randrange(len(text))
            st = text[i:i + rng.randint(1, 30)]
            stops.append(st if rng.random() < 0.5 else st + "#")   # half of them do not occur
        plain = [(i + len(st), i, st) for st in stops if (i := text.find(st)) >= 0]
        assert first_stop(text, stops) == (min(plain) if plain else None), stops


# -- the same, raw HTTP (the fast loop) ----------------------------------------------------------------------------

def _blocks(emulator: str, fmt: str, **extra) -> list[str]:
    """The kinds of the reply's blocks that carry text (a Responses reasoning item with no summary has none)."""
    r = post(emulator, fmt, "thinking", **extra)
    assert r.status_code == 200, r.text
    return [b["type"] for b in decode_bytes(fmt, r.content).result()["blocks"] if b.get("text")]


@pytest.mark.parametrize("fmt, on", [
    ("anthropic", {"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    ("gemini", {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}),
    ("openai-responses", {"reasoning": {"summary": "detailed"}})])
def test_thinking_text_only_when_the_request_turns_it_on(emulator, fmt, on):
    assert _blocks(emulator, fmt) == ["text"]
    assert _blocks(emulator, fmt, **on) == ["thinking", "text"]


def test_responses_reasoning_item_without_summary_raw(emulator):
    raw = post(emulator, "openai-responses", "thinking").content
    assert b"reasoning_summary" not in raw
    done = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")][-1]
    assert done["response"]["output"][0] == {"id": done["response"]["output"][0]["id"], "type": "reasoning",
                                             "summary": []}
    assert done["response"]["usage"]["output_tokens_details"]["reasoning_tokens"] > 0


def test_legacy_functions_non_stream_raw(emulator):
    r = httpx.post(emulator + "/v1/chat/completions", headers={"Authorization": "Bearer k"},
                   json={"model": "tool-call", "messages": ASK_WEATHER, "functions": [WEATHER]})
    choice = r.json()["choices"][0]
    assert choice["finish_reason"] == "function_call" and "tool_calls" not in choice["message"]
    assert choice["message"]["function_call"]["name"] == "get_weather"


def test_gemini_six_stop_sequences_are_a_400_raw(emulator):
    r = post(emulator, "gemini", "text", generationConfig={"stopSequences": ["a", "b", "c", "d", "e", "f"]})
    assert r.status_code == 400 and r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "at most 5 stop sequences" in r.json()["error"]["message"]


def test_fifty_thousand_stop_sequences_raw(emulator):
    many = [f"zq{i}xv" for i in range(50_000)]
    r = post(emulator, "anthropic", "long", timeout=30, stop_sequences=many)
    got = decode_bytes("anthropic", r.content).result()
    assert r.status_code == 200 and got["finish_reason"]["raw"] == "end_turn"
    r = post(emulator, "anthropic", "text", timeout=30, stop_sequences=many + ["Paris"])
    got = decode_bytes("anthropic", r.content).result()
    assert got["finish_reason"]["raw"] == "stop_sequence" and b'"stop_sequence":"Paris"' in r.content
