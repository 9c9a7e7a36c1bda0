"""The provider-neutral conversation: its file shape, the assistant turn a reply holds, crossing formats, and each
format's history shape."""
from __future__ import annotations

import dataclasses
import json

import pytest

from core.live.config import ProviderConfig
from core.live.conversation import (GEMINI_SKIP_SIGNATURE, MAX_TURNS, Conversation, ConversationError, Part, Turn,
                                    assistant_turn, conversation_text, load_conversation, portable)
from core.live.request import PromptSpec, build_request
from core.servers.emulator.responder import Conversation as EmulatorConversation, weather_tool
from core.servers.emulator.scenarios import build_plan
from core.wire.encoders import encode_bytes
from core.wire.pipeline import StreamDecoder

CALL = Part("tool_call", id="call_1", name="get_weather", arguments='{"city":"Paris"}', origin="openai-chat")
CONV = Conversation((
    Turn("user", (Part("text", "Weather in Paris?"),)),
    Turn("assistant", (Part("text", "Checking.", origin="openai-chat"), CALL), "openai-chat"),
    Turn("user", (Part("tool_result", "no network", id="call_1", name="get_weather", is_error=True),)),
))


def prov(fmt):
    base = "http://127.0.0.1:9" + ("/v1" if fmt.startswith("openai") else "")
    return ProviderConfig("p", fmt, base, "m", "")


def body(fmt, conv=CONV, **kw):
    return build_request(prov(fmt), PromptSpec(user="", conversation=conv, **kw), "k")


def test_json_round_trip_and_shorthand():
    again = Conversation.from_json(json.loads(json.dumps(CONV.to_json())))
    assert again == CONV
    short = load_conversation('[{"role": "user", "content": "hi"}, {"role": "model", "content": "hello"}]')
    assert short.turns == (Turn("user", (Part("text", "hi"),)), Turn("assistant", (Part("text", "hello"),)))
    args = Conversation.from_json({"turns": [{"role": "assistant", "parts": [
        {"type": "tool_call", "name": "f", "arguments": {"a": 1}}]}]})
    assert args.turns[0].parts[0].arguments == '{"a":1}'


@pytest.mark.parametrize("doc, why", [
    ({"format": "other"}, "is not 'streamscope-conversation'"), ({"version": 9, "turns": []}, "version 9"),
    ({"turns": {}}, "'turns' must be a list"), ({"turns": [{"role": "user", "parts": [{"type": "tool_call"}]}]},
                                                "turn 0, part 0: a user turn has parts of type text, tool_result"),
    ({"turns": [{"role": "assistant", "parts": [{"type": "tool_call"}]}]}, "needs a 'name'"),
    ({"turns": [{"role": "user", "parts": [{"type": "tool_result", "text": "x"}]}]}, "needs the 'id'"),
    ({"turns": [{"role": "user", "parts": [{"type": "text", "text": 3}]}]}, "'text' must be a string"),
    ({"turns": [{"role": "user", "content": "x"}] * (MAX_TURNS + 1)}, "more than the"),
    ({"turns": [{"role": "assistant", "format": "cobol", "parts": []}]}, "format 'cobol'"),
])
def test_bad_conversations_say_where(doc, why):
    with pytest.raises(ConversationError, match=why):
        Conversation.from_json(doc)


def decoded_turn(fmt, scenario, **conv_kw):
    conv = EmulatorConversation(prompt="Weather in Paris?", tools=[weather_tool()], **conv_kw)
    reply = build_plan(fmt, scenario, conv).reply
    d = StreamDecoder(fmt)
    d.feed(encode_bytes(fmt, reply))
    d.end()
    return assistant_turn(d.reply, fmt), reply


def test_assistant_turn_keeps_what_each_api_needs_back():
    anth, script = decoded_turn("anthropic", "thinking-tools")
    assert [p.type for p in anth.parts] == ["thinking", "text", "tool_call"]
    assert anth.parts[0].signature == script.blocks[0].signature and anth.parts[2].id.startswith("toolu_")
    gem, script = decoded_turn("gemini", "thinking-tools")
    assert [p.type for p in gem.parts] == ["thinking", "tool_call"]
    assert gem.parts[1].signature == script.blocks[1].signature and gem.parts[0].signature
    resp, script = decoded_turn("openai-responses", "thinking-tools", encrypted_reasoning=True)
    r, call = resp.parts
    assert r.type == "reasoning" and r.id.startswith("rs_") and r.data == script.blocks[0].signature
    assert call.item_id.startswith("fc_") and call.id.startswith("call_")
    chat, _ = decoded_turn("openai-chat", "thinking-tools")
    assert [p.type for p in chat.parts] == ["thinking", "tool_call"] and chat.format == "openai-chat"
    assert all(p.origin == "openai-chat" for p in chat.parts)


def test_portable_gives_gemini_calls_ids_and_drops_foreign_parts_with_notes():
    gem = Conversation((Turn("user", (Part("text", "q"),)),
                        Turn("assistant", (Part("thinking", "t", signature="s", origin="gemini"),
                                           Part("tool_call", name="f", arguments="{}", signature="sig", origin="gemini"),
                                           Part("tool_call", name="g", arguments="{}", origin="gemini")), "gemini"),
                        Turn("user", (Part("tool_result", "1", name="f"), Part("tool_result", "2", name="g")))))
    out, notes = portable(gem, "anthropic")
    calls, results = out.turns[1].parts, out.turns[2].parts
    assert [c.type for c in calls] == ["tool_call", "tool_call"] and [c.signature for c in calls] == [None, None]
    assert [c.id for c in calls] == ["toolu_1_1", "toolu_1_2"] and [r.id for r in results] == ["toolu_1_1",
                                                                                               "toolu_1_2"]
    assert any("thinking block(s) from another API dropped" in n for n in notes)
    assert any("1 signature(s) from another API dropped" in n for n in notes)
    assert any("had no id" in n for n in notes)
    same, none = portable(gem, "gemini")
    assert same == gem and none == []
    into_gemini, notes = portable(CONV, "gemini")
    assert into_gemini.turns[1].parts[1].signature == GEMINI_SKIP_SIGNATURE and "placeholder" in notes[0]
    red = Conversation((Turn("assistant", (Part("redacted_thinking", data="d", origin="anthropic"),
                                           Part("reasoning", "r", id="rs_1", data="gAAAA", origin="openai-responses"),
                                           Part("other", name="server_tool_use", origin="anthropic"))),))
    out, notes = portable(red, "openai-responses")
    assert [p.type for p in out.turns[0].parts] == ["reasoning"] and len(notes) == 2


def test_each_format_maps_a_tool_round_with_an_error_result():
    chat = body("openai-chat")
    assert chat.body["messages"][1:] == [
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Error: no network"}]
    assert any("has no error flag" in n for n in chat.notes)
    resp = body("openai-responses")
    assert resp.body["input"][1:] == [
        {"role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "Error: no network"}]
    anth = body("anthropic")
    assert anth.body["messages"][1:] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                          {"type": "tool_use", "id": "call_1", "name": "get_weather",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "no network",
                                      "is_error": True}]}]
    gem = body("gemini")
    assert gem.body["contents"][1:] == [
        {"role": "model", "parts": [{"text": "Checking."},
                                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                                     "thoughtSignature": GEMINI_SKIP_SIGNATURE}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                         "response": {"error": "no network"}}}]}]


def test_user_text_after_results_joins_their_turn_and_spec_round_trips():
    spec = PromptSpec(user="and tomorrow?", conversation=CONV)
    anth = build_request(prov("anthropic"), spec, "k").body["messages"]
    assert len(anth) == 3 and anth[2]["content"][-1] == {"type": "text", "text": "and tomorrow?"}
    chat = build_request(prov("openai-chat"), spec, "k").body["messages"]
    assert chat[-2]["role"] == "tool" and chat[-1] == {"role": "user", "content": "and tomorrow?"}
    assert PromptSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    assert "user: Weather in Paris?" in conversation_text(CONV) and "get_weather failed" in conversation_text(CONV)


HAND_WRITTEN = {"turns": [   # no format, no origin: a conversation written by hand
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                     "arguments": {"city": "Paris"}}]},
    {"role": "user", "parts": [{"type": "tool_result", "id": "call_1", "name": "get_weather", "text": "sunny"}]}]}


def test_a_call_of_unknown_origin_sent_to_gemini_gets_the_placeholder_and_an_own_signature_stays():
    from core.wire.history import HistoryRules, check_request, rejects
    conv = Conversation.from_json(HAND_WRITTEN)
    assert conv.turns[1].parts[0].origin is None
    out, notes = portable(conv, "gemini")
    assert out.turns[1].parts[0].signature == GEMINI_SKIP_SIGNATURE and "unknown origin" in notes[0]
    req = body("gemini", conv)
    assert req.body["contents"][1]["parts"][0]["thoughtSignature"] == GEMINI_SKIP_SIGNATURE
    assert not rejects(check_request("gemini", req.body, HistoryRules(gemini_signatures="required")))
    turns = json.loads(json.dumps(HAND_WRITTEN["turns"]))
    turns[1]["parts"][0]["signature"] = "own-gemini-sig"
    out, notes = portable(Conversation.from_json(turns), "gemini")
    assert out.turns[1].parts[0].signature == "own-gemini-sig" and notes == []
    for fmt in ("openai-chat", "openai-responses", "anthropic"):   # only Gemini takes the placeholder
        assert portable(conv, fmt)[0].turns[1].parts[0].signature is None


def test_gemini_gets_another_apis_parallel_results_in_the_calls_order():
    """Gemini pairs responses to calls by name and order (another API's ids are not sent): results given in
    another order are sent in the calls' order, matched by id; one that answers no call keeps its place."""
    from core.wire.history import HistoryRules, check_request, rejects
    calls = tuple(Part("tool_call", id=f"toolu_{c}", name="get_weather", arguments=json.dumps({"city": city}),
                       origin="anthropic") for c, city in (("A", "Paris"), ("B", "Oslo"), ("C", "Rome")))
    results = (Part("tool_result", '{"error": "timeout"}', id="toolu_B", name="get_weather", is_error=True),
               Part("tool_result", "late", id="toolu_X", name="get_weather"),
               Part("tool_result", "rainy", id="toolu_C", name="get_weather"),
               Part("tool_result", "sunny", id="toolu_A", name="get_weather"))
    conv = Conversation((Turn("user", (Part("text", "weather?"),)),
                         Turn("assistant", (Part("text", "Checking.", origin="anthropic"),) + calls, "anthropic"),
                         Turn("user", results + (Part("text", "thanks"),))))
    contents = body("gemini", conv).body["contents"]
    assert [p["functionCall"]["args"]["city"] for p in contents[1]["parts"][1:]] == ["Paris", "Oslo", "Rome"]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"result": "sunny"}}},      # Paris
        {"functionResponse": {"name": "get_weather", "response": {"result": "late"}}},       # no call: in place
        {"functionResponse": {"name": "get_weather", "response": {"error": {"error": "timeout"}}}},   # Oslo
        {"functionResponse": {"name": "get_weather", "response": {"result": "rainy"}}},      # Rome
        {"text": "thanks"}]
    assert not any("functionResponse" in p and "id" in p["functionResponse"] for p in contents[2]["parts"])
    anth = body("anthropic", conv).body["messages"][2]["content"]   # id-pairing APIs keep the given order
    assert [b.get("tool_use_id") for b in anth] == ["toolu_B", "toolu_X", "toolu_C", "toolu_A", None]
    # Gemini's own calls carry their ids (sent, echoed on the responses): their results are not moved
    own = Conversation((conv.turns[0],
                        Turn("assistant", tuple(dataclasses.replace(c, origin="gemini") for c in calls), "gemini"),
                        Turn("user", results[2:] + results[:1])))
    sent = body("gemini", own).body["contents"][2]["parts"]
    assert [p["functionResponse"]["id"] for p in sent] == ["toolu_C", "toolu_A", "toolu_B"]
    answered = Conversation(conv.turns[:2] + (Turn("user", results[:1] + results[2:]),))   # one result per call
    assert not rejects(check_request("gemini", body("gemini", answered).body,
                                     HistoryRules(gemini_signatures="required")))
