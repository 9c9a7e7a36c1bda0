"""The official SDKs build the follow-up requests, as applications do, and the emulator accepts what the real APIs
accept and rejects (with the SDK's own BadRequest error) what they reject: two-turn text, a tool round with one
and with parallel calls, a tool round with thinking on, and automatic rounds with the mock tools."""
from __future__ import annotations

import json

import pytest

from core.live.tool_mocks import CALCULATOR_TOOL, TIME_TOOL, WEATHER_TOOL, forecast, run_mock

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

pytestmark = pytest.mark.slow

TOOLS = [WEATHER_TOOL, TIME_TOOL, CALCULATOR_TOOL]
CHAT_TOOLS = [{"type": "function", "function": t} for t in TOOLS]
RESP_TOOLS = [{"type": "function", **t, "strict": False} for t in TOOLS]
ANTH_TOOLS = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in TOOLS]
THINK = {"type": "enabled", "budget_tokens": 1024}
Q = "What is the weather in Paris?"


def mock(name, args) -> str:
    return run_mock(name, json.dumps(args) if isinstance(args, dict) else args).text


# -- Anthropic ---------------------------------------------------------------------------------------------------
def anth_round(ac, model, tools=ANTH_TOOLS, thinking=None, rounds=1):
    kw = {"thinking": thinking, "max_tokens": 2048} if thinking else {"max_tokens": 1024}
    msgs = [{"role": "user", "content": Q}]
    for _ in range(rounds + 1):
        m = ac.messages.create(model=model, messages=msgs, tools=tools, **kw)
        uses = [b for b in m.content if b.type == "tool_use"]
        if not uses:
            return m, msgs
        msgs += [{"role": "assistant", "content": m.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id,
                                               "content": mock(u.name, u.input)} for u in uses]}]
    return m, msgs


def test_anthropic_two_turns(ac):
    m = ac.messages.create(model="text", max_tokens=256, messages=[{"role": "user", "content": "Capital of France?"}])
    m2 = ac.messages.create(model="text", max_tokens=256, messages=[
        {"role": "user", "content": "Capital of France?"}, {"role": "assistant", "content": m.content},
        {"role": "user", "content": "What is the capital of Italy?"}])
    assert "Paris" in m.content[0].text and "Rome" in m2.content[0].text


@pytest.mark.parametrize("scenario, calls", [("tool-call", 1), ("parallel-tools", 2)])
def test_anthropic_tool_round(ac, scenario, calls):
    m, msgs = anth_round(ac, scenario)
    assert len(msgs[-1]["content"]) == calls
    assert forecast("Paris")["forecast"] in m.content[0].text


def test_anthropic_tool_round_with_thinking_and_the_violations(ac):
    m, msgs = anth_round(ac, "thinking-tools", thinking=THINK)
    assert msgs[1]["content"][0].type == "thinking" and msgs[1]["content"][0].signature
    assert m.content[0].type == "thinking" and "Paris" in m.content[-1].text
    history = [msgs[0], {"role": "assistant", "content": [b.model_dump() for b in msgs[1]["content"]]}, msgs[2]]
    dropped = json.loads(json.dumps(history))
    del dropped[1]["content"][0]                                   # the thinking block left out
    edited = json.loads(json.dumps(history))
    edited[1]["content"][0]["thinking"] += "!"                     # ... or changed
    unanswered = json.loads(json.dumps(history))
    unanswered[2]["content"] = [{"type": "text", "text": "go on"}]  # ... or the tool_result missing
    for broken, words in ((dropped, "Expected `thinking` or `redacted_thinking`"), (edited, "cannot be modified"),
                          (unanswered, "`tool_use` ids were found without `tool_result` blocks")):
        with pytest.raises(anthropic.BadRequestError) as e:
            ac.messages.create(model="thinking-tools", max_tokens=2048, thinking=THINK, messages=broken,
                               tools=ANTH_TOOLS)
        assert e.value.status_code == 400 and words in e.value.body["error"]["message"]
        assert e.value.body["error"]["type"] == "invalid_request_error"


def test_anthropic_automatic_rounds(ac):
    m, msgs = anth_round(ac, "tool-rounds", rounds=5)
    assert len(msgs) == 7 and all(w in m.content[0].text for w in ("get_weather", "get_time", "calculator"))


# -- OpenAI Chat ---------------------------------------------------------------------------------------------------
def chat_round(oc, model, rounds=1, **kw):
    msgs = [{"role": "user", "content": Q}]
    for _ in range(rounds + 1):
        msg = oc.chat.completions.create(model=model, messages=msgs, tools=CHAT_TOOLS, **kw).choices[0].message
        if not msg.tool_calls:
            return msg, msgs
        msgs.append(msg)
        msgs += [{"role": "tool", "tool_call_id": tc.id, "content": mock(tc.function.name, tc.function.arguments)}
                 for tc in msg.tool_calls]
    return msg, msgs


def test_openai_chat_two_turns(oc):
    first = oc.chat.completions.create(model="text", messages=[{"role": "user", "content": "Capital of France?"}])
    msgs = [{"role": "user", "content": "Capital of France?"}, first.choices[0].message,
            {"role": "user", "content": "What is the capital of Italy?"}]
    assert "Rome" in oc.chat.completions.create(model="text", messages=msgs).choices[0].message.content


@pytest.mark.parametrize("scenario, calls", [("tool-call", 1), ("parallel-tools", 2), ("thinking-tools", 1)])
def test_openai_chat_tool_rounds_and_the_violations(oc, scenario, calls):
    msg, msgs = chat_round(oc, scenario, reasoning_effort="low") if scenario == "thinking-tools" \
        else chat_round(oc, scenario)
    assert sum(1 for m in msgs if isinstance(m, dict) and m["role"] == "tool") == calls
    assert forecast("Paris")["forecast"] in msg.content
    with pytest.raises(openai.BadRequestError) as e:                 # a tool message left out
        oc.chat.completions.create(model=scenario, messages=msgs[:-1] + [{"role": "user", "content": "?"}],
                                   tools=CHAT_TOOLS)
    assert "must be followed by tool messages responding to each 'tool_call_id'" in e.value.body["message"]
    assert e.value.code is None and e.value.type == "invalid_request_error"


def test_openai_chat_automatic_rounds(oc):
    msg, msgs = chat_round(oc, "tool-rounds", rounds=5)
    assert sum(1 for m in msgs if isinstance(m, dict) and m["role"] == "tool") == 3
    assert "calculator" in msg.content


# -- OpenAI Responses --------------------------------------------------------------------------------------------
def resp_round(oc, model, rounds=1, **kw):
    items: list = [{"role": "user", "content": Q}]
    for _ in range(rounds + 1):
        r = oc.responses.create(model=model, input=items, tools=RESP_TOOLS, **kw)
        calls = [o for o in r.output if o.type == "function_call"]
        if not calls:
            return r, items
        items += r.output
        items += [{"type": "function_call_output", "call_id": c.call_id, "output": mock(c.name, c.arguments)}
                  for c in calls]
    return r, items


def test_openai_responses_two_turns(oc):
    r = oc.responses.create(model="text", input="Capital of France?")
    r2 = oc.responses.create(model="text", input=[{"role": "user", "content": "Capital of France?"}, *r.output,
                                                  {"role": "user", "content": "What is the capital of Italy?"}])
    assert "Rome" in r2.output_text


@pytest.mark.parametrize("scenario, calls", [("tool-call", 1), ("parallel-tools", 2)])
def test_openai_responses_tool_round(oc, scenario, calls):
    r, items = resp_round(oc, scenario)
    assert sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output") == calls
    assert forecast("Paris")["forecast"] in r.output_text
    with pytest.raises(openai.BadRequestError) as e:                # an output for a call never made
        oc.responses.create(model=scenario, input=items + [{"type": "function_call_output", "call_id": "call_x",
                                                            "output": "1"}])
    assert e.value.body["message"] == "No tool call found for function call output with call_id call_x."
    assert e.value.param == "input"


def test_openai_responses_tool_round_with_reasoning_and_without_it(oc):
    kw = {"reasoning": {"effort": "low", "summary": "auto"}, "include": ["reasoning.encrypted_content"]}
    r, items = resp_round(oc, "thinking-tools", **kw)
    reasoning = next(i for i in items if getattr(i, "type", None) == "reasoning")
    assert reasoning.encrypted_content.startswith("gAAAAA") and "Paris" in r.output_text
    without = [i for i in items if getattr(i, "type", None) != "reasoning"]
    with pytest.raises(openai.BadRequestError) as e:
        oc.responses.create(model="thinking-tools", input=without, tools=RESP_TOOLS, **kw)
    assert "of type 'function_call' was provided without its required 'reasoning' item" in e.value.body["message"]


def test_openai_responses_automatic_rounds(oc):
    r, items = resp_round(oc, "tool-rounds", rounds=5)
    assert "get_time" in r.output_text and "calculator" in r.output_text


# -- Gemini --------------------------------------------------------------------------------------------------------
def gem_config(thinking=False):
    decls = [genai_types.FunctionDeclaration(name=t["name"], description=t["description"],
                                             parameters_json_schema=t["parameters"]) for t in TOOLS]
    return genai_types.GenerateContentConfig(
        tools=[genai_types.Tool(function_declarations=decls)],
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
        thinking_config=genai_types.ThinkingConfig(include_thoughts=True) if thinking else None)


def gem_round(gc, model, rounds=1, thinking=False):
    contents = [genai_types.Content(role="user", parts=[genai_types.Part.from_text(text=Q)])]
    for _ in range(rounds + 1):
        r = gc.models.generate_content(model=model, contents=contents, config=gem_config(thinking))
        content = r.candidates[0].content
        calls = [p.function_call for p in content.parts if p.function_call]
        if not calls:
            return r, contents
        contents.append(content)
        contents.append(genai_types.Content(role="user", parts=[
            genai_types.Part.from_function_response(name=c.name, response=json.loads(mock(c.name, c.args)))
            for c in calls]))
    return r, contents


def test_gemini_two_turns(gc):
    first = gc.models.generate_content(model="text", contents="Capital of France?")
    contents = [genai_types.Content(role="user", parts=[genai_types.Part.from_text(text="Capital of France?")]),
                first.candidates[0].content,
                genai_types.Content(role="user", parts=[genai_types.Part.from_text(text="Capital of Italy?")])]
    assert "Rome" in gc.models.generate_content(model="text", contents=contents).text


@pytest.mark.parametrize("scenario, calls", [("tool-call", 1), ("parallel-tools", 2)])
def test_gemini_tool_round(gc, scenario, calls):
    r, contents = gem_round(gc, scenario)
    assert len(contents[-1].parts) == calls and forecast("Paris")["forecast"] in r.text


def test_gemini_3_signature_passed_back_and_dropped(gc):
    r, contents = gem_round(gc, "thinking-tools", thinking=True)
    call_part = next(p for p in contents[1].parts if p.function_call)
    assert call_part.thought_signature and "Paris" in r.text
    call_part.thought_signature = None                              # a client that drops the signature
    with pytest.raises(genai_errors.ClientError) as e:
        gc.models.generate_content(model="thinking-tools", contents=contents, config=gem_config(True))
    assert e.value.code == 400 and e.value.status == "INVALID_ARGUMENT"
    assert "Function call is missing a thought_signature in functionCall parts" in e.value.message
    ok = gc.models.generate_content(model="thinking-tools-lenient", contents=contents, config=gem_config(True))
    assert "Paris" in ok.text                                       # where the signature is optional


def test_gemini_automatic_rounds(gc):
    r, contents = gem_round(gc, "tool-rounds", rounds=5)
    assert len(contents) == 7 and "calculator" in r.text
