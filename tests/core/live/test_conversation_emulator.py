"""Conversations through StreamScope's own request building and transport, on the emulator, in every format:
two-turn text, a tool round with one and with parallel calls, a tool round with thinking on (what must come back
unchanged does), automatic rounds with the mocks, and continuing one provider's reply in another format."""
from __future__ import annotations

import asyncio
import json

import pytest

from core.live.config import demo_providers
from core.live.conversation import GEMINI_SKIP_SIGNATURE, assistant_turn
from core.live.request import PromptSpec
from core.live.tool_loop import exchange_index, follow_up, pending_calls, run_tool_loop
from core.live.tool_mocks import CALCULATOR_TOOL, TIME_TOOL, WEATHER_TOOL, forecast, mock_results
from core.servers.emulator.server import EmulatorServer
from core.wire.formats import FORMATS


@pytest.fixture(scope="module")
def base():
    server = EmulatorServer(speed=0)
    yield server.start()
    server.stop()


def provider(base, fmt, model):
    return next(p for p in demo_providers(base, model) if p.format == fmt)


def send(prov, spec, rounds=0):
    return asyncio.run(run_tool_loop([prov], spec, rounds))


def one(prov, spec):
    (run,) = send(prov, spec)
    assert run.ok, (run.error, run.notes)
    return run


def text_of(run) -> str:
    return assistant_turn(run.reply, run.format).text


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_turn_text(base, fmt):
    p = provider(base, fmt, "text")
    spec = PromptSpec(user="What is the capital of France?")
    first = one(p, spec)
    assert "Paris" in text_of(first)
    spec2 = follow_up(spec, first, user="What is the capital of Italy?")
    second = one(p, spec2)
    assert "Rome" in text_of(second) and exchange_index(spec2) == 1
    body = json.dumps(second.request.body)
    assert "Paris" in body and "capital of France" in body     # the first exchange went back as history


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("scenario, tools, calls", [("tool-call", [WEATHER_TOOL], 1),
                                                    ("parallel-tools", [WEATHER_TOOL, TIME_TOOL], 2)])
def test_tool_round(base, fmt, scenario, tools, calls):
    p = provider(base, fmt, scenario)
    spec = PromptSpec(user="What is the weather in Paris?", tools=tuple(tools))
    first = one(p, spec)
    pending = pending_calls(first)
    assert len(pending) == calls and all(c.name for c in pending)
    results = mock_results(pending)
    second = one(p, follow_up(spec, first, results=results))
    assert not pending_calls(second)
    answer = text_of(second)
    city = json.loads(pending[0].arguments)["city"]
    assert forecast(city)["forecast"] in answer            # the weather answer quotes the forecast it was given
    if calls == 2:
        assert "2026-01-15" in answer                      # ... and the clock's fixed time
    assert second.history_findings == ()


def _body_parts(fmt, body):
    if fmt == "anthropic":
        return body["messages"][1]["content"]
    if fmt == "gemini":
        return body["contents"][1]["parts"]
    if fmt == "openai-responses":
        return body["input"][1:]
    return body["messages"][1]


@pytest.mark.parametrize("fmt", FORMATS)
def test_tool_round_with_thinking_passes_back_what_must_come_back(base, fmt):
    p = provider(base, fmt, "thinking-tools")
    spec = PromptSpec(user="What is the weather in Paris?", tools=(WEATHER_TOOL,), thinking=True,
                      max_tokens=2048, thinking_budget=1024)
    first = one(p, spec)
    turn = assistant_turn(first.reply, fmt)
    second = one(p, follow_up(spec, first, results=mock_results(pending_calls(first))))
    parts = _body_parts(fmt, second.request.body)
    if fmt == "anthropic":
        assert parts[0]["type"] == "thinking" and parts[0]["signature"] == turn.parts[0].signature
        assert parts[0]["thinking"] == turn.parts[0].text and parts[-1]["type"] == "tool_use"
    elif fmt == "gemini":
        call = next(x for x in parts if "functionCall" in x)
        assert call["thoughtSignature"] == turn.tool_calls[0].signature and call["thoughtSignature"]
    elif fmt == "openai-responses":
        reasoning, call = parts[0], parts[1]
        assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"].startswith("gAAAAA")
        assert call["type"] == "function_call" and call["id"].startswith("fc_")
        assert second.request.body["include"] == ["reasoning.encrypted_content"]
    else:
        assert "reasoning_content" not in parts and parts["tool_calls"]
        assert any("Chat Completions has no field for earlier reasoning" in n for n in second.notes)
    assert "Paris" in text_of(second)


@pytest.mark.parametrize("fmt", FORMATS)
def test_automatic_rounds_with_the_mocks(base, fmt):
    p = provider(base, fmt, "tool-rounds")
    spec = PromptSpec(user="Plan my day in Paris.", tools=(WEATHER_TOOL, CALCULATOR_TOOL, TIME_TOOL))
    runs = send(p, spec, rounds=5)
    assert len(runs) == 4 and all(r.ok for r in runs)        # three tool rounds, then the answer
    assert [len(pending_calls(r)) for r in runs] == [1, 1, 1, 0]
    assert [exchange_index(r.spec) for r in runs] == [0, 1, 2, 3]
    assert [pending_calls(r)[0].name for r in runs[:3]] == ["get_weather", "calculator", "get_time"]
    final = text_of(runs[-1])
    assert "get_weather" in final and "calculator" in final and "get_time" in final
    limited = send(p, spec, rounds=1)                          # the limit holds: one round, then stop
    assert len(limited) == 2 and len(pending_calls(limited[-1])) == 1


def test_continue_from_another_pane_drops_what_cannot_cross(base):
    src = provider(base, "anthropic", "thinking-tools")
    spec = PromptSpec(user="What is the weather in Paris?", tools=(WEATHER_TOOL,), thinking=True, max_tokens=2048)
    first = one(src, spec)
    results = mock_results(pending_calls(first))
    shared = follow_up(spec, first, results=results)     # Anthropic's turn becomes everyone's history

    gem = one(provider(base, "gemini", "thinking-tools"), shared)   # Gemini 3: the placeholder signature
    contents = gem.request.body["contents"]
    assert all(not p.get("thought") for c in contents for p in c["parts"])
    call = next(p for c in contents for p in c["parts"] if "functionCall" in p)
    assert call["thoughtSignature"] == GEMINI_SKIP_SIGNATURE
    assert any("thinking block(s) from another API dropped" in n for n in gem.notes)
    assert "Paris" in text_of(gem)

    chat = one(provider(base, "openai-chat", "tool-call"), shared)
    assert chat.request.body["messages"][1]["tool_calls"][0]["id"] == first.reply.ordered_blocks()[-1].id
    assert "Paris" in text_of(chat)

    resp = one(provider(base, "openai-responses", "thinking-tools"), shared)
    assert not any(i.get("type") == "reasoning" for i in resp.request.body["input"])
    assert "Paris" in text_of(resp)

    # back into Anthropic from Gemini's turn: with thinking on, a tool-use continuation needs Anthropic's own
    # thinking block, which no other API can give: StreamScope does not send it and says why
    gfirst = one(provider(base, "gemini", "thinking-tools"), spec)
    back = follow_up(spec, gfirst, results=mock_results(pending_calls(gfirst)))
    (refused,) = send(src, back)
    assert refused.error["type"] == "history_rejected" and not refused.sent
    assert "Expected `thinking` or `redacted_thinking`" in refused.error["message"]
    assert [f.code for f in refused.history_findings if f.severity == "error"] == ["thinking-block-missing"]


def test_a_hand_written_tool_round_is_accepted_by_gemini_3(base):
    from core.live.conversation import Conversation
    conv = Conversation.from_json({"turns": [   # no format/origin on the assistant turn
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                         "arguments": {"city": "Paris"}}]},
        {"role": "user", "parts": [{"type": "tool_result", "id": "call_1", "name": "get_weather",
                                    "text": json.dumps(forecast("Paris"))}]}]})
    spec = PromptSpec(user="", conversation=conv, tools=(WEATHER_TOOL,), thinking=True, max_tokens=2048)
    gem = one(provider(base, "gemini", "thinking-tools"), spec)   # the emulator's Gemini 3 requires a signature
    call = next(p for c in gem.request.body["contents"] for p in c["parts"] if "functionCall" in p)
    assert call["thoughtSignature"] == GEMINI_SKIP_SIGNATURE


def anthropic_post(base, body):
    import httpx
    r = httpx.post(f"{base}/v1/messages", json={"stream": True, **body}, timeout=30,
                   headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    return r.status_code, (r.json() if r.status_code != 200 else None)


def test_the_emulator_rejects_an_empty_anthropic_message_as_the_api_does(base):
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}, {"role": "user", "content": "again"}]
    status, err = anthropic_post(base, {"model": "text", "max_tokens": 100, "messages": msgs})
    assert status == 400 and err["error"] == {"type": "invalid_request_error", "message": (
        "messages.1: all messages must have non-empty content except for the optional final assistant message")}
    assert anthropic_post(base, {"model": "text", "max_tokens": 100, "messages": msgs[:2]})[0] == 200   # a prefill


@pytest.mark.parametrize("blocks, results, want", [
    ([{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
     [{"type": "text", "text": "here"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
     "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message."),
    ([{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}] * 2,
     [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
     "messages.1.content.1: `tool_use` ids must be unique")])
def test_the_emulator_rejects_misplaced_results_and_duplicate_tool_use_ids(base, blocks, results, want):
    msgs = [{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": blocks},
            {"role": "user", "content": results}]
    status, err = anthropic_post(base, {"model": "tool-call", "max_tokens": 100, "messages": msgs,
                                        "tools": [{"name": "get_weather", "description": "w",
                                                   "input_schema": WEATHER_TOOL["parameters"]}]})
    assert status == 400 and err["error"]["type"] == "invalid_request_error"
    assert err["error"]["message"].startswith(want)
