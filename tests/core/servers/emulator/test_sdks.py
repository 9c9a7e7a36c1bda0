"""The official SDKs against the emulator: their own accumulated results must equal the scripted reply, and for
the fault scenarios each raises its own documented error. A failure here is a bug in the emulator."""
from __future__ import annotations

import json

import pytest

from core.servers.emulator.history import annotate
from core.servers.emulator.providers import parse_request
from core.servers.emulator.scenarios import build_plan

from tests.core.servers.emulator.conftest import PROMPT

pytestmark = pytest.mark.slow   # the SDKs take seconds to import; the emulator's own tests run in the fast loop

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string",
                                                                                  "enum": ["celsius", "fahrenheit"]}},
          "required": ["city"]}
TOOLS_CHAT = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
                                                "parameters": PARAMS}},
              {"type": "function", "function": {"name": "get_time", "description": "Local time in a timezone",
                                                "parameters": {"type": "object",
                                                               "properties": {"timezone": {"type": "string"}},
                                                               "required": ["timezone"]}}}]
TOOLS_RESPONSES = [{"type": "function", "name": "get_weather", "description": "Current weather for a city",
                    "parameters": PARAMS}]
TOOLS_ANTHROPIC = [{"name": "get_weather", "description": "Current weather for a city", "input_schema": PARAMS}]
MSGS = [{"role": "user", "content": PROMPT}]


def expected(fmt: str, body: dict, model_path: str | None = None):
    """The scripted reply the emulator builds for this request body (what the SDK must reproduce)."""
    parsed = parse_request(fmt, {}, {}, json.dumps(body).encode(), model_path or "")
    annotate(fmt, parsed)
    return build_plan(fmt, parsed.model, parsed.conversation).reply


# -- OpenAI Chat ---------------------------------------------------------------------------------------------------

def test_openai_chat_text_include_usage(oc):
    text, usage, chunks = "", None, 0
    for ch in oc.chat.completions.create(model="text", messages=MSGS, stream=True,
                                         stream_options={"include_usage": True}):
        chunks += 1
        if ch.choices:
            text += ch.choices[0].delta.content or ""
        if ch.usage:
            usage = ch.usage
    want = expected("openai-chat", {"model": "text", "messages": MSGS, "stream": True})
    assert text == want.blocks[0].text
    assert "Paris" in text
    assert usage.completion_tokens == want.usage.output_tokens
    assert usage.prompt_tokens == want.usage.input_tokens
    assert usage.total_tokens == want.usage.total_tokens


def test_openai_chat_no_usage_without_include_usage(oc):
    for ch in oc.chat.completions.create(model="text", messages=MSGS, stream=True):
        assert ch.usage is None
        assert ch.choices


@pytest.mark.parametrize("model,count", [("tool-call", 1), ("parallel-tools", 2)])
def test_openai_chat_tools_stream_helper(oc, model, count):
    stream_api = getattr(oc.chat.completions, "stream", None) or oc.beta.chat.completions.stream
    with stream_api(model=model, messages=MSGS, tools=TOOLS_CHAT, stream_options={"include_usage": True}) as s:
        final = s.get_final_completion()
    want = expected("openai-chat", {"model": model, "messages": MSGS, "tools": TOOLS_CHAT, "stream": True})
    calls = final.choices[0].message.tool_calls
    assert final.choices[0].finish_reason == "tool_calls"
    wanted = [b for b in want.blocks if b.kind == "tool_call"]
    assert len(calls) == len(wanted) == count
    for got, w in zip(calls, wanted):
        assert (got.id, got.function.name, got.function.arguments) == (w.id, w.name, w.arguments)
        json.loads(got.function.arguments)
    if count == 2:   # two declared tools: one call each, arguments that fit each schema
        assert [c.function.name for c in calls] == ["get_weather", "get_time"]
        assert json.loads(calls[0].function.arguments)["city"] == "Paris"
        assert "timezone" in json.loads(calls[1].function.arguments)
    assert final.usage.completion_tokens == want.usage.output_tokens


def test_openai_chat_tool_round_trip_answers_with_text(oc):
    first = oc.chat.completions.create(model="tool-call", messages=MSGS, tools=TOOLS_CHAT[:1], stream=False)
    call = first.choices[0].message.tool_calls[0]
    msgs = MSGS + [first.choices[0].message.model_dump(exclude_none=True),
                   {"role": "tool", "tool_call_id": call.id, "content": '{"temp_c": 18, "sky": "clear"}'}]
    text = ""
    for ch in oc.chat.completions.create(model="tool-call", messages=msgs, tools=TOOLS_CHAT[:1], stream=True):
        if ch.choices:
            text += ch.choices[0].delta.content or ""
    assert "get_weather" in text and "18" in text


def test_openai_chat_n_choices(oc):
    texts = {0: "", 1: ""}
    finishes = {}
    for ch in oc.chat.completions.create(model="text", messages=MSGS, stream=True, n=2):
        for c in ch.choices:
            texts[c.index] += c.delta.content or ""
            if c.finish_reason:
                finishes[c.index] = c.finish_reason
    want = expected("openai-chat", {"model": "text", "messages": MSGS, "n": 2, "stream": True})
    assert texts == {0: want.choice_blocks(0)[0].text, 1: want.choice_blocks(1)[0].text}
    assert finishes == {0: "stop", 1: "stop"}


def test_openai_chat_non_streaming(oc):
    r = oc.chat.completions.create(model="text", messages=MSGS)
    want = expected("openai-chat", {"model": "text", "messages": MSGS})
    assert r.choices[0].message.content == want.blocks[0].text
    assert r.usage.completion_tokens == want.usage.output_tokens


# -- OpenAI Responses ----------------------------------------------------------------------------------------------

def test_openai_responses_text(oc):
    with oc.responses.stream(model="text", input=PROMPT) as s:
        deltas = [e.delta for e in s if e.type == "response.output_text.delta"]
        r = s.get_final_response()
    want = expected("openai-responses", {"model": "text", "input": PROMPT, "stream": True})
    assert r.output_text == "".join(deltas) == want.blocks[0].text
    assert r.usage.output_tokens == want.usage.output_tokens
    assert r.status == "completed"


def test_openai_responses_tool_call(oc):
    with oc.responses.stream(model="tool-call", input=PROMPT, tools=TOOLS_RESPONSES) as s:
        r = s.get_final_response()
    want = expected("openai-responses", {"model": "tool-call", "input": PROMPT, "tools": TOOLS_RESPONSES,
                                         "stream": True}).blocks[0]
    calls = [o for o in r.output if o.type == "function_call"]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [(want.id, want.name, want.arguments)]
    assert json.loads(calls[0].arguments) == {"city": "Paris"}


def test_openai_responses_thinking(oc):
    with oc.responses.stream(model="thinking", input=PROMPT, reasoning={"effort": "low", "summary": "auto"}) as s:
        summary = "".join(e.delta for e in s if e.type == "response.reasoning_summary_text.delta")
        r = s.get_final_response()
    want = expected("openai-responses", {"model": "thinking", "input": PROMPT, "stream": True,
                                         "reasoning": {"effort": "low", "summary": "auto"}})
    assert summary == want.blocks[0].text
    assert r.output[0].type == "reasoning" and r.output[0].summary[0].text == summary
    assert r.output_text == want.blocks[1].text
    assert r.usage.output_tokens_details.reasoning_tokens == want.usage.reasoning_tokens


# -- Anthropic -----------------------------------------------------------------------------------------------------

def test_anthropic_text(ac):
    with ac.messages.stream(model="text", max_tokens=512, messages=MSGS) as s:
        streamed = "".join(s.text_stream)
        m = s.get_final_message()
    want = expected("anthropic", {"model": "text", "max_tokens": 512, "messages": MSGS})
    assert m.content[0].text == streamed == want.blocks[0].text
    assert m.stop_reason == "end_turn"
    assert (m.usage.input_tokens, m.usage.output_tokens) == (want.usage.input_tokens, want.usage.output_tokens)


def test_anthropic_tool_use(ac):
    with ac.messages.stream(model="parallel-tools", max_tokens=512, messages=MSGS, tools=TOOLS_ANTHROPIC) as s:
        m = s.get_final_message()
    want = expected("anthropic", {"model": "parallel-tools", "max_tokens": 512, "messages": MSGS,
                                  "tools": TOOLS_ANTHROPIC})
    assert m.stop_reason == "tool_use"
    assert [b.type for b in m.content] == ["text", "tool_use", "tool_use"]
    for got, w in zip(m.content[1:], want.blocks[1:]):
        assert (got.id, got.name, got.input) == (w.id, w.name, json.loads(w.arguments))
    assert m.content[1].input["city"] == "Paris" and m.content[2].input["city"] != "Paris"


def test_anthropic_thinking_with_signature(ac):
    with ac.messages.stream(model="thinking", max_tokens=2048, messages=MSGS,
                            thinking={"type": "enabled", "budget_tokens": 1024}) as s:
        m = s.get_final_message()
    want = expected("anthropic", {"model": "thinking", "max_tokens": 2048, "messages": MSGS,
                                  "thinking": {"type": "enabled", "budget_tokens": 1024}})
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[0].thinking == want.blocks[0].text
    assert m.content[0].signature == want.blocks[0].signature and m.content[0].signature
    assert m.content[1].text == want.blocks[1].text


def test_anthropic_max_tokens_cuts_with_length(ac):
    with ac.messages.stream(model="text", max_tokens=5, messages=MSGS) as s:
        m = s.get_final_message()
    assert m.stop_reason == "max_tokens"
    assert m.usage.output_tokens == 5
    assert m.content[0].text.startswith("The capital") and len(m.content[0].text) < 60


# -- Gemini --------------------------------------------------------------------------------------------------------

def test_gemini_text(gc):
    chunks = list(gc.models.generate_content_stream(model="text", contents=PROMPT))
    text = "".join(c.text or "" for c in chunks)
    want = expected("gemini", {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}, "text")
    assert text == want.blocks[0].text
    last = chunks[-1]
    assert last.candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert last.usage_metadata.candidates_token_count == want.usage.output_tokens
    assert all(c.usage_metadata is not None for c in chunks)


def test_gemini_parallel_function_calls(gc):
    decl = genai_types.FunctionDeclaration(name="get_weather", description="Current weather for a city",
                                           parameters_json_schema=PARAMS)
    cfg = genai_types.GenerateContentConfig(tools=[genai_types.Tool(function_declarations=[decl])])
    calls = []
    for ch in gc.models.generate_content_stream(model="parallel-tools", contents=PROMPT, config=cfg):
        calls += ch.function_calls or []
    assert [c.name for c in calls] == ["get_weather", "get_weather"]
    assert calls[0].args["city"] == "Paris" and calls[1].args["city"] != "Paris"


def test_gemini_thinking(gc):
    cfg = genai_types.GenerateContentConfig(thinking_config=genai_types.ThinkingConfig(include_thoughts=True))
    thoughts, answer, sig = "", "", None
    for ch in gc.models.generate_content_stream(model="thinking", contents=PROMPT, config=cfg):
        for p in ch.candidates[0].content.parts or []:
            if p.thought:
                thoughts += p.text or ""
                sig = p.thought_signature or sig
            else:
                answer += p.text or ""
    want = expected("gemini", {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}],
                               "generationConfig": {"thinkingConfig": {"includeThoughts": True}}}, "thinking")
    assert thoughts == want.blocks[0].text and answer == want.blocks[1].text
    assert sig   # bytes, base64-decoded by the SDK


def test_gemini_non_streaming(gc):
    r = gc.models.generate_content(model="text", contents=PROMPT)
    assert "Paris" in r.text


# -- faults: each SDK's own documented error -----------------------------------------------------------------------

def test_rate_limit_errors(oc, ac, gc):
    with pytest.raises(openai.RateLimitError) as e:
        oc.chat.completions.create(model="http-429", messages=MSGS, stream=True)
    assert e.value.response.headers["retry-after"] == "1"
    assert e.value.body["code"] == "rate_limit_exceeded"
    with pytest.raises(openai.RateLimitError):
        with oc.responses.stream(model="http-429", input=PROMPT) as s:
            s.get_final_response()
    with pytest.raises(anthropic.RateLimitError) as ea:
        with ac.messages.stream(model="http-429", max_tokens=64, messages=MSGS) as s:
            s.get_final_message()
    assert ea.value.body["error"]["type"] == "rate_limit_error"
    with pytest.raises(genai_errors.ClientError) as eg:
        list(gc.models.generate_content_stream(model="http-429", contents=PROMPT))
    assert eg.value.code == 429 and eg.value.status == "RESOURCE_EXHAUSTED"


def test_server_errors(oc, ac, gc):
    with pytest.raises(openai.InternalServerError):
        oc.chat.completions.create(model="http-500", messages=MSGS, stream=True)
    with pytest.raises(anthropic.InternalServerError) as ea:
        with ac.messages.stream(model="http-500", max_tokens=64, messages=MSGS) as s:
            s.get_final_message()
    assert ea.value.body["error"]["type"] == "api_error"
    with pytest.raises(genai_errors.ServerError) as eg:
        list(gc.models.generate_content_stream(model="http-500", contents=PROMPT))
    assert eg.value.code == 500


def test_in_band_errors(oc, ac, gc):
    with pytest.raises(openai.APIError) as e:
        for _ in oc.chat.completions.create(model="mid-stream-error", messages=MSGS, stream=True):
            pass
    assert e.value.body["type"] == "server_error"
    with pytest.raises(openai.APIError):
        with oc.responses.stream(model="mid-stream-error", input=PROMPT) as s:
            for _ in s:
                pass
    with pytest.raises(anthropic.APIStatusError) as ea:
        with ac.messages.stream(model="mid-stream-error", max_tokens=256, messages=MSGS) as s:
            for _ in s:
                pass
    assert ea.value.body["error"]["type"] == "overloaded_error"
    with pytest.raises(genai_errors.ServerError) as eg:
        list(gc.models.generate_content_stream(model="mid-stream-error", contents=PROMPT))
    assert eg.value.code == 503


def test_authentication_errors(emulator):
    ac = anthropic.Anthropic(base_url=emulator, api_key="x", max_retries=0, 
                             default_headers={"x-api-key": anthropic.Omit(), "Authorization": anthropic.Omit()})
    with pytest.raises(anthropic.AuthenticationError) as ea:
        ac.messages.create(model="text", max_tokens=16, messages=MSGS)
    assert ea.value.body["error"]["type"] == "authentication_error"


def test_dropped_connection(oc, ac):
    with pytest.raises(openai.APIConnectionError):
        for _ in oc.chat.completions.create(model="drop", messages=MSGS, stream=True):
            pass
    with pytest.raises(Exception) as ea:   # the anthropic SDK lets the transport error through
        with ac.messages.stream(model="drop", max_tokens=256, messages=MSGS) as s:
            s.get_final_message()
    assert "incomplete" in str(ea.value) or "peer closed" in str(ea.value)


def test_stall_times_out(emulator):
    oc = openai.OpenAI(base_url=emulator + "/v1", api_key="k", max_retries=0, timeout=0.5)
    got = ""
    with pytest.raises(openai.APITimeoutError):
        for ch in oc.chat.completions.create(model="stall", messages=MSGS, stream=True):
            if ch.choices:
                got += ch.choices[0].delta.content or ""
    assert got   # some text came before the stall


def test_malformed_json(oc, ac, gc):
    with pytest.raises(json.JSONDecodeError):
        for _ in oc.chat.completions.create(model="malformed-json", messages=MSGS, stream=True):
            pass
    with pytest.raises(json.JSONDecodeError):
        with ac.messages.stream(model="malformed-json", max_tokens=256, messages=MSGS) as s:
            s.get_final_message()
    with pytest.raises(genai_errors.UnknownApiResponseError):
        list(gc.models.generate_content_stream(model="malformed-json", contents=PROMPT))


def test_no_terminator(oc, ac):
    # chat completions and messages end fine without their end markers; the Responses helper insists
    text = "".join(ch.choices[0].delta.content or "" for ch in
                   oc.chat.completions.create(model="no-terminator", messages=MSGS, stream=True) if ch.choices)
    assert "Paris" in text
    with ac.messages.stream(model="no-terminator", max_tokens=256, messages=MSGS) as s:
        assert "Paris" in s.get_final_message().content[0].text
    with pytest.raises(RuntimeError, match="response.completed"):
        with oc.responses.stream(model="no-terminator", input=PROMPT) as s:
            s.get_final_response()


@pytest.mark.parametrize("model", ["split-utf8", "ping-heavy"])
def test_benign_faults_accumulate_normally(oc, ac, gc, model):
    chat = "".join(ch.choices[0].delta.content or "" for ch in
                   oc.chat.completions.create(model=model, messages=MSGS, stream=True) if ch.choices)
    with oc.responses.stream(model=model, input=PROMPT) as s:
        resp = s.get_final_response().output_text
    with ac.messages.stream(model=model, max_tokens=512, messages=MSGS) as s:
        msg = s.get_final_message().content[0].text
    gem = "".join(c.text or "" for c in gc.models.generate_content_stream(model=model, contents=PROMPT))
    assert chat == resp == msg == gem
    assert "Paris" in chat
    if model == "split-utf8":
        assert any(ord(ch) > 0xFFFF for ch in chat)   # emoji made it through intact
