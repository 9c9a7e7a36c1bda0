"""The official SDKs against the emulator, on request fields beyond the conversation: Anthropic's message threads
(the tool runner's default), the model endpoints, tool_choice, stop sequences, roles, and history fields of the
wrong JSON type. Each test drives the SDK as an application does; a failure is a bug in the emulator."""
from __future__ import annotations

import json

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

pytestmark = pytest.mark.slow

Q = "What is the weather in Paris and the time there?"


# -- Anthropic message threads -----------------------------------------------------------------------------------
def _runner_tools(calls: list):
    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """Get the weather for a city.

        Args:
            city: the city
        """
        calls.append(("get_weather", city))
        return json.dumps({"forecast": f"sunny in {city}"})

    @anthropic.beta_tool
    def get_time(timezone: str) -> str:
        """Get the time in a timezone.

        Args:
            timezone: IANA time zone
        """
        calls.append(("get_time", timezone))
        return json.dumps({"time": "12:00"})

    return [get_weather, get_time]


class _Recorder:
    """An httpx event hook keeping each request body the SDK sends."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []

    def __call__(self, request) -> None:
        if request.url.path.endswith("/v1/messages"):
            request.read()
            self.bodies.append(json.loads(request.content or b"{}"))


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("model, kw, rounds", [("tool-rounds", {}, 2), ("parallel-tools", {}, 1),
                                                ("thinking-tools", {"thinking": {"type": "enabled",
                                                                                 "budget_tokens": 1024}}, 1)])
def test_the_default_tool_runner_completes_over_threads(emulator, model, kw, rounds, stream):
    rec = _Recorder()
    client = anthropic.Anthropic(base_url=emulator, api_key="sk-ant-test", max_retries=0, timeout=10,
                                 http_client=anthropic.DefaultHttpxClient(event_hooks={"request": [rec]}))
    calls: list = []
    runner = client.beta.messages.tool_runner(model=model, max_tokens=3000, tools=_runner_tools(calls),
                                              messages=[{"role": "user", "content": Q}], stream=stream, **kw)
    if stream:
        for s in runner:
            for _ in s:
                pass
        final = runner.until_done()
    else:
        final = None
        for final in runner:
            pass
    assert final.content[-1].type == "text" and "sunny in Paris" in final.content[-1].text
    assert calls and calls[0] == ("get_weather", "Paris")
    threads = [b.get("thread") for b in rec.bodies]
    assert threads[0] == {"type": "create"}                 # the SDK threads by default ...
    assert {"type": "continue", "previous_message_id": final.id} not in threads
    assert any(t and t["type"] == "continue" for t in threads)   # ... is told the thread is not held ...
    assert all(len(b["messages"]) >= 1 and b["messages"][0]["role"] == "user"
               and isinstance(b["messages"][0]["content"], str) for b in rec.bodies
               if (b.get("thread") or {}).get("type") != "continue")   # ... and replays the whole history
    assert sum(1 for b in rec.bodies if (b.get("thread") or {}).get("type") != "continue") == rounds + 1


def test_a_thread_continue_is_thread_not_found_in_the_sdks_shape(ac):
    with pytest.raises(anthropic.NotFoundError) as e:
        ac.beta.messages.create(model="text", max_tokens=100, messages=[{"role": "user", "content": "hi"}],
                                thread={"type": "continue", "previous_message_id": "msg_01abc"},
                                betas=["message-threads-2026-08-12"])
    assert e.value.status_code == 404
    assert e.value.body["error"]["type"] == "not_found_error"
    assert e.value.body["error"]["details"] == {"error_code": "thread_not_found"}
    assert type(e.value).__name__ == "ThreadNotFoundError"
    m = ac.beta.messages.create(model="text", max_tokens=100, messages=[{"role": "user", "content": "hi"}],
                                thread={"type": "create"}, betas=["message-threads-2026-08-12"])
    assert m.content[0].type == "text"


def test_a_user_thread_sends_every_turn(ac):
    thread = ac.beta.messages.thread(model="text", max_tokens=200)
    first = thread.send({"role": "user", "content": "What is the capital of France?"})
    second = thread.send({"role": "user", "content": "What is the capital of Italy?"})
    assert "Paris" in first.content[0].text and "Rome" in second.content[0].text


# -- the model endpoints -------------------------------------------------------------------------------------------
def test_models_list_and_retrieve_in_every_sdk(oc, ac, gc):
    assert "tool-call" in [m.id for m in oc.models.list()]
    m = oc.models.retrieve("tool-call")
    assert (m.id, m.object, m.owned_by) == ("tool-call", "model", "streamscope-emulator")
    assert oc.models.retrieve("gpt-4o-mini").id == "gpt-4o-mini"      # any name is answered, as any model is
    assert "thinking" in [m.id for m in ac.models.list()]
    info = ac.models.retrieve("thinking")
    assert (info.type, info.id, info.lifecycle) == ("model", "thinking", "active") and info.created_at.year == 2026
    names = [m.name for m in gc.models.list()]                          # google-genai 3: GET /v1/models
    assert "models/text" in names and "models/tool-call" in names
    g = gc.models.get(model="thinking")
    assert g.name == "models/thinking" and "thinking block" in g.description
    assert "generateContent" in g.supported_actions
    assert gc.models.get(model="models/gemini-2.5-flash").name == "models/gemini-2.5-flash"


def test_gemini_models_on_v1beta(emulator):
    beta = genai.Client(api_key="k", http_options=genai_types.HttpOptions(base_url=emulator, api_version="v1beta"))
    assert beta.models.get(model="text").name == "models/text"
    assert "models/text" in [m.name for m in beta.models.list()]


# -- tool_choice -----------------------------------------------------------------------------------------------------
SCHEMA_W = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
SCHEMA_T = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA_W}},
              {"type": "function", "function": {"name": "get_time", "parameters": SCHEMA_T}}]
RESP_TOOLS = [{"type": "function", "name": "get_weather", "parameters": SCHEMA_W},
              {"type": "function", "name": "get_time", "parameters": SCHEMA_T}]
ANTH_TOOLS = [{"name": "get_weather", "input_schema": SCHEMA_W}, {"name": "get_time", "input_schema": SCHEMA_T}]
GEM_TOOLS = [genai_types.Tool(function_declarations=[
    genai_types.FunctionDeclaration(name="get_weather", parameters_json_schema=SCHEMA_W),
    genai_types.FunctionDeclaration(name="get_time", parameters_json_schema=SCHEMA_T)])]
WQ = "What is the weather in Paris?"


def chat_calls(oc, model, **kw):
    c = oc.chat.completions.create(model=model, messages=[{"role": "user", "content": WQ}], tools=CHAT_TOOLS,
                                   **kw).choices[0]
    return c.finish_reason, [t.function.name for t in c.message.tool_calls or []], c.message.content


def resp_calls(oc, model, **kw):
    r = oc.responses.create(model=model, input=WQ, tools=RESP_TOOLS, **kw)
    return [x.name for x in r.output if x.type == "function_call"], r.output_text


def anth_calls(ac, model, **kw):
    m = ac.messages.create(model=model, messages=[{"role": "user", "content": WQ}], tools=ANTH_TOOLS,
                           **{"max_tokens": 500, **kw})
    return m.stop_reason, [(b.type, getattr(b, "name", None)) for b in m.content]


def gem_calls(gc, model, mode, names=None):
    cfg = genai_types.GenerateContentConfig(
        tools=GEM_TOOLS, automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
        tool_config=genai_types.ToolConfig(function_calling_config=genai_types.FunctionCallingConfig(
            mode=mode, allowed_function_names=names)))
    r = gc.models.generate_content(model=model, contents=WQ, config=cfg)
    return [f.name for f in r.function_calls or []], r.candidates[0].content.parts


def test_tool_choice_none_gives_a_text_answer(oc, ac, gc):
    for model in ("tool-call", "parallel-tools", "tool-rounds"):
        finish, calls, text = chat_calls(oc, model, tool_choice="none")
        assert (finish, calls) == ("stop", []) and "Paris" in text, model
        calls, text = resp_calls(oc, model, tool_choice="none")
        assert calls == [] and "Paris" in text
        stop, blocks = anth_calls(ac, model, tool_choice={"type": "none"})
        assert stop == "end_turn" and blocks == [("text", None)]
        calls, parts = gem_calls(gc, model, "NONE")
        assert calls == [] and "Paris" in parts[0].text


def test_tool_choice_forcing_a_tool_calls_it(oc, ac, gc):
    for model in ("tool-call", "text", "thinking", "parallel-tools"):
        n = 2 if model == "parallel-tools" else 1
        finish, calls, _ = chat_calls(oc, model, tool_choice={"type": "function", "function": {"name": "get_time"}})
        assert (finish, calls) == ("tool_calls", ["get_time"] * n), model
        calls, _ = resp_calls(oc, model, tool_choice={"type": "function", "name": "get_time"})
        assert calls == ["get_time"] * n
        stop, blocks = anth_calls(ac, model, tool_choice={"type": "tool", "name": "get_time"})
        assert stop == "tool_use" and blocks == [("tool_use", "get_time")] * n    # no text before a forced call
        calls, _ = gem_calls(gc, model, "ANY", ["get_time"])
        assert calls == ["get_time"] * n


def test_tool_choice_required_on_a_text_scenario_makes_a_call(oc, ac, gc):
    assert chat_calls(oc, "text", tool_choice="required")[:2] == ("tool_calls", ["get_weather"])
    assert chat_calls(oc, "text")[:2] == ("stop", [])
    assert resp_calls(oc, "text", tool_choice="required")[0] == ["get_weather"]
    assert anth_calls(ac, "text", tool_choice={"type": "any"}) == ("tool_use", [("tool_use", "get_weather")])
    assert gem_calls(gc, "text", "ANY")[0] == ["get_weather"]
    assert gem_calls(gc, "text", "AUTO")[0] == []


def test_parallel_tool_calls_off_gives_one_call(oc, ac):
    assert chat_calls(oc, "parallel-tools")[1] == ["get_weather", "get_time"]
    assert chat_calls(oc, "parallel-tools", parallel_tool_calls=False)[1] == ["get_weather"]
    assert resp_calls(oc, "parallel-tools", parallel_tool_calls=False)[0] == ["get_weather"]
    stop, blocks = anth_calls(ac, "parallel-tools", tool_choice={"type": "auto", "disable_parallel_tool_use": True})
    assert stop == "tool_use" and [b for b in blocks if b[0] == "tool_use"] == [("tool_use", "get_weather")]


def test_anthropic_forced_tool_choice_with_thinking_is_a_400(ac):
    with pytest.raises(anthropic.BadRequestError) as e:
        anth_calls(ac, "thinking-tools", tool_choice={"type": "any"},
                   thinking={"type": "enabled", "budget_tokens": 1024}, max_tokens=2048)
    assert "Thinking may not be enabled when tool_choice forces tool use." in e.value.body["error"]["message"]


# -- stop sequences ------------------------------------------------------------------------------------------------
HELLO = [{"role": "user", "content": "Hello there"}]


def _full_text(oc) -> str:
    return oc.chat.completions.create(model="text", messages=HELLO).choices[0].message.content


def test_stop_sequences_cut_the_text_and_finish_as_the_api_does(oc, ac, gc):
    from core.servers.emulator.scenarios import count_tokens

    full = _full_text(oc)
    word = full.split()[3]                                # a word well inside the reply
    want = full[:full.index(word)]
    c = oc.chat.completions.create(model="text", messages=HELLO, stop=[word, "zzz"]).choices[0]
    assert (c.finish_reason, c.message.content) == ("stop", want)
    streamed = "".join(ch.choices[0].delta.content or "" for ch in oc.chat.completions.create(
        model="text", messages=HELLO, stop=word, stream=True) if ch.choices)
    assert streamed == want
    m = ac.messages.create(model="text", max_tokens=200, messages=HELLO, stop_sequences=[word])
    assert (m.stop_reason, m.stop_sequence, m.content[0].text) == ("stop_sequence", word, want)
    assert m.usage.output_tokens == count_tokens(want)
    with ac.messages.stream(model="text", max_tokens=200, messages=HELLO, stop_sequences=["zzz", word]) as s:
        sm = s.get_final_message()
    assert (sm.stop_reason, sm.stop_sequence, sm.content[0].text) == ("stop_sequence", word, want)
    assert sm.usage.output_tokens == count_tokens(want)
    g = gc.models.generate_content(model="text", contents="Hello there",
                                   config=genai_types.GenerateContentConfig(stop_sequences=[word]))
    assert g.candidates[0].finish_reason == genai_types.FinishReason.STOP and g.text == want
    assert g.usage_metadata.candidates_token_count == count_tokens(want)
    m = ac.messages.create(model="text", max_tokens=200, messages=HELLO, stop_sequences=["zzz"])
    assert (m.stop_reason, m.stop_sequence) == ("end_turn", None)


def test_a_stop_sequence_in_claudes_preamble_ends_the_reply_before_the_tool_use(ac):
    m = ac.messages.create(model="tool-call", max_tokens=200, messages=[{"role": "user", "content": WQ}],
                           tools=ANTH_TOOLS, stop_sequences=["Paris"])
    assert m.stop_reason == "stop_sequence" and m.stop_sequence == "Paris"
    assert [b.type for b in m.content] == ["text"] and not m.content[0].text.endswith("Paris")


def test_max_tokens_before_the_stop_sequence_is_length(ac):
    full = ac.messages.create(model="text", max_tokens=200, messages=HELLO).content[0].text
    last = full.split()[-1]
    m = ac.messages.create(model="text", max_tokens=2, messages=HELLO, stop_sequences=[last])
    assert (m.stop_reason, m.stop_sequence) == ("max_tokens", None)


def test_chat_allows_four_stop_sequences(oc):
    with pytest.raises(openai.BadRequestError) as e:
        oc.chat.completions.create(model="text", messages=HELLO, stop=["a", "b", "c", "d", "e"])
    assert e.value.body["param"] == "stop" and "maximum length 4" in e.value.body["message"]


# -- roles ---------------------------------------------------------------------------------------------------------
def test_an_unknown_role_is_each_providers_400(oc, gc):
    with pytest.raises(openai.BadRequestError) as e:
        oc.chat.completions.create(model="text", messages=[{"role": "user", "content": "hi"},
                                                           {"role": "model", "content": "hello"}])
    assert e.value.body["message"] == ("Invalid value: 'model'. Supported values are: 'system', 'assistant', "
                                       "'user', 'function', 'tool', and 'developer'.")
    assert e.value.body["param"] == "messages[1].role" and e.value.body["code"] == "invalid_value"
    with pytest.raises(openai.BadRequestError) as e:
        oc.responses.create(model="text", input=[{"role": "user", "content": "hi"},
                                                 {"role": "model", "content": "hello"}])
    assert e.value.body["message"].startswith("Invalid value: 'model'. Supported values are: ")
    assert e.value.body["param"] == "input[1].role"
    with pytest.raises(genai_errors.ClientError) as e:
        gc.models.generate_content(model="text", contents=[
            genai_types.Content(role="user", parts=[genai_types.Part(text="hi")]),
            genai_types.Content(role="assistant", parts=[genai_types.Part(text="hello")])])
    assert e.value.code == 400 and e.value.status == "INVALID_ARGUMENT"
    assert e.value.message == "Please use a valid role: user, model."
    for role in ("system", "developer", "assistant", "user"):   # what they take is still taken
        oc.chat.completions.create(model="text", messages=[{"role": role, "content": "hi"},
                                                           {"role": "user", "content": "hi"}])
        oc.responses.create(model="text", input=[{"role": role, "content": "hi"}, {"role": "user", "content": "hi"}])


# -- structured outputs ----------------------------------------------------------------------------------------
def test_every_sdks_structured_output_helper_parses_the_reply(oc, ac, gc):
    """response_format / text.format / output_config.format / responseSchema: the reply is JSON fitting the
    schema (nested models through $defs too), so each SDK's parse helper gives the model back."""
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        country: str
        population: int

    class Trip(BaseModel):
        cities: list[City]
        answer: str

    ask = [{"role": "user", "content": "What is the capital of France?"}]
    assert isinstance(oc.chat.completions.parse(model="text", messages=ask, response_format=City)
                      .choices[0].message.parsed, City)
    trip = oc.chat.completions.parse(model="thinking", messages=ask, response_format=Trip).choices[0].message.parsed
    assert trip.cities and isinstance(trip.cities[0], City) and trip.answer
    with oc.chat.completions.stream(model="text", messages=ask, response_format=City) as s:
        assert isinstance(s.get_final_completion().choices[0].message.parsed, City)
    assert isinstance(oc.responses.parse(model="text", input=ask[0]["content"], text_format=City).output_parsed, City)
    plain = oc.chat.completions.create(model="text", messages=ask, response_format={"type": "json_object"})
    assert isinstance(json.loads(plain.choices[0].message.content)["answer"], str)
    assert isinstance(ac.messages.parse(model="text", max_tokens=500, messages=ask, output_format=City)
                      .parsed_output, City)
    for config in ({"response_mime_type": "application/json", "response_schema": City},
                   {"response_mime_type": "application/json", "response_json_schema": City.model_json_schema()}):
        got = gc.models.generate_content(model="text", contents=ask[0]["content"], config=config)
        assert City.model_validate_json(got.text)
    free = oc.chat.completions.create(model="text", messages=ask)        # no format asked: prose, as before
    assert not free.choices[0].message.content.startswith("{")


# -- Responses: stored responses ---------------------------------------------------------------------------------
def test_previous_response_id_continues_a_stored_response_and_retrieve_gets_it(oc):
    """OpenAI's guide: the next request names the response and sends only the tool's output."""
    tools = [{"type": "function", "name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    first = oc.responses.create(model="tool-call", input="Weather in Paris?", tools=tools)
    [call] = [o for o in first.output if o.type == "function_call"]
    then = oc.responses.create(model="tool-call", previous_response_id=first.id, tools=tools,
                               input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
    assert "sunny" in then.output_text
    assert oc.responses.retrieve(then.id).output_text == then.output_text
    with oc.responses.stream(model="thinking-tools", input="Weather in Rome?", tools=tools,
                             reasoning={"effort": "low"}) as s:     # (its reasoning item is stored with its call)
        streamed = s.get_final_response()
    [call] = [o for o in streamed.output if o.type == "function_call"]
    after = oc.responses.create(model="thinking-tools", previous_response_id=streamed.id, tools=tools,
                                reasoning={"effort": "low"},
                                input=[{"type": "function_call_output", "call_id": call.call_id, "output": "rain"}])
    assert "rain" in after.output_text
    unstored = oc.responses.create(model="text", input="hi", store=False)
    for missing in (unstored.id, "resp_nowhere"):
        with pytest.raises(openai.BadRequestError, match=f"Previous response with id '{missing}' not found"):
            oc.responses.create(model="text", input="more", previous_response_id=missing)
    with pytest.raises(openai.NotFoundError):
        oc.responses.retrieve(unstored.id)


# -- counting tokens -----------------------------------------------------------------------------------------------
def test_count_tokens_in_the_anthropic_and_google_sdks_matches_the_replys_usage(ac, gc):
    ask = [{"role": "user", "content": "What is the capital of France?"}]
    counted = ac.messages.count_tokens(model="text", messages=ask).input_tokens
    assert counted == ac.messages.create(model="text", max_tokens=100, messages=ask).usage.input_tokens
    counted = gc.models.count_tokens(model="text", contents=ask[0]["content"]).total_tokens
    assert counted == gc.models.generate_content(model="text", contents=ask[0]["content"]).usage_metadata \
        .prompt_token_count
    with pytest.raises(anthropic.BadRequestError, match="all messages must have non-empty content"):
        ac.messages.count_tokens(model="text", messages=[ask[0], {"role": "assistant", "content": ""},
                                                         {"role": "user", "content": "and?"}])


def test_a_responses_object_repeats_what_the_request_set(oc):
    kw = dict(store=False, instructions="Be terse", reasoning={"effort": "low", "summary": "auto"},
              max_output_tokens=500, temperature=0.2, tool_choice="none", metadata={"a": "b"}, top_p=0.9)
    r = oc.responses.create(model="thinking", input="hi", **kw)
    assert (r.store, r.instructions, r.reasoning.effort, r.reasoning.summary, r.max_output_tokens, r.temperature,
            r.tool_choice, r.metadata, r.top_p) == (False, "Be terse", "low", "auto", 500, 0.2, "none", {"a": "b"}, 0.9)
    with oc.responses.stream(model="text", input="hi", temperature=0.3) as s:
        streamed = s.get_final_response()
    assert (streamed.temperature, streamed.store, streamed.instructions) == (0.3, True, None)   # (the defaults)
