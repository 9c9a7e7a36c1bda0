"""The conversation over exchanges without a network: what a handover to another format drops, said before sending
and the same as the request's own notes."""
from __future__ import annotations

from core.live.config import ProviderConfig
from core.live.recorder import rebuild_run
from core.live.request import PromptSpec, build_request
from core.live.tool_loop import follow_up, handover_notes, pending_calls
from core.live.tool_mocks import WEATHER_TOOL, mock_results
from core.servers.emulator.responder import Conversation as EmulatorConversation, weather_tool
from core.servers.emulator.scenarios import build_plan
from core.wire.encoders import encode_bytes

SPEC = PromptSpec(user="Weather in Paris?", tools=(WEATHER_TOOL,), thinking=True, max_tokens=2048)


def prov(fmt):
    return ProviderConfig("p-" + fmt, fmt, "http://127.0.0.1:9" + ("/v1" if fmt.startswith("openai") else ""), "m", "")


def recorded(fmt, scenario="thinking-tools"):
    reply = build_plan(fmt, scenario, EmulatorConversation(prompt=SPEC.user, tools=[weather_tool()])).reply
    headers = (1000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    return rebuild_run(prov(fmt), spec=SPEC, headers=headers, chunks=[(2000, encode_bytes(fmt, reply))], end_ns=3000)


def test_handover_notes_say_what_a_foreign_format_drops_and_match_the_request():
    run = recorded("anthropic")
    assert pending_calls(run)
    assert handover_notes(SPEC, run, "anthropic") == []          # its own format takes everything back
    notes = handover_notes(SPEC, run, "gemini")
    assert any("thinking block(s) from another API dropped" in n for n in notes)
    assert any("placeholder thoughtSignature" in n for n in notes)
    nxt = follow_up(SPEC, run, results=mock_results(pending_calls(run)))
    sent = build_request(prov("gemini"), nxt, "k").notes
    assert all(n in sent for n in notes)                         # the notice says what the request will say
    chat = handover_notes(SPEC, run, "openai-chat")
    assert any("Chat Completions has no field for earlier reasoning" in n for n in chat)


def test_handover_notes_from_gemini_name_its_signatures():
    run = recorded("gemini")
    notes = handover_notes(SPEC, run, "openai-responses")
    assert any("signature(s) from another API dropped" in n for n in notes)
    assert handover_notes(SPEC, run, "gemini") == []


def test_conversations_of_groups_a_capture_by_provider_and_turn():
    from core.live.tool_loop import conversations_of

    a0, b0 = recorded("anthropic"), recorded("gemini")
    a1 = rebuild_run(prov("anthropic"), spec=follow_up(SPEC, a0, results=mock_results(pending_calls(a0))))
    b1 = rebuild_run(prov("gemini"), spec=follow_up(SPEC, b0, results=mock_results(pending_calls(b0))))
    again = recorded("anthropic")                  # a first exchange again: a new conversation
    assert conversations_of([a0, b0, a1, b1, again]) == [[a0, a1], [b0, b1], [again]]
    assert conversations_of([a0, again]) == [[a0], [again]]
