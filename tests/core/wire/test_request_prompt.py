"""core.wire.request_prompt: the system text and last user message of a request body, in every format, as
StreamScope builds them (so a cassette's or a browser HAR's replay shows what was asked)."""
from __future__ import annotations

import pytest

from core.live.config import ProviderConfig
from core.live.request import PromptSpec, build_request, recorded_spec
from core.wire.formats import FORMATS
from core.wire.request_prompt import MAX_PROMPT_CHARS, request_prompt


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("system", ["", "Answer in French."])
def test_what_a_request_was_built_from_is_read_back(fmt, system):
    spec = PromptSpec(user="What is the capital of Spain?", system=system,
                      history=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}])
    body = build_request(ProviderConfig("p", fmt, "http://127.0.0.1:9", "m"), spec, "k").body
    assert request_prompt(fmt, body) == (system, "What is the capital of Spain?")
    again = recorded_spec(fmt, body)
    assert (again.user, again.system) == (spec.user, spec.system)


def test_parts_shapes_tool_results_and_other_shapes():
    anthropic = {"system": [{"type": "text", "text": "S"}], "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}, {"type": "image", "source": {}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "w", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "sunny"}]}]}
    assert request_prompt("anthropic", anthropic) == ("S", "Weather?")    # (the tool result is no user text)
    responses = {"instructions": "I", "input": [{"role": "developer", "content": "D"},
                                                 {"role": "user", "content": [{"type": "input_text", "text": "Q"}]}]}
    assert request_prompt("openai-responses", responses) == ("I\nD", "Q")
    gemini = {"system_instruction": {"parts": [{"text": "G"}]},
              "contents": {"parts": [{"text": "thinking", "thought": True}, {"text": "Hello"}]}}
    assert request_prompt("gemini", gemini) == ("G", "Hello")
    for fmt in FORMATS:
        assert request_prompt(fmt, {"messages": "x", "input": 5, "contents": [7]}) is None
        assert request_prompt(fmt, ["not", "an", "object"]) is None
    huge = {"messages": [{"role": "user", "content": "x" * (MAX_PROMPT_CHARS + 10)}]}
    assert len(request_prompt("openai-chat", huge)[1]) == MAX_PROMPT_CHARS
