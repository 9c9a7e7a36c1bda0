"""Anthropic Messages streaming: one test per quirk, then the real recordings of the corpus."""
from __future__ import annotations

import json

import pytest

from tests.corpus import corpus_files, decode_recording
from core.wire import events as ev
from core.wire.pipeline import StreamDecoder, decode_bytes

FORMAT = "anthropic"


def sse(*events) -> bytes:
    """(name, obj) pairs -> an Anthropic body; obj may be a str (sent as is)."""
    out = []
    for name, obj in events:
        data = obj if isinstance(obj, str) else json.dumps(obj)
        out.append(f"event: {name}\ndata: {data}\n\n")
    return "".join(out).encode()


def start(usage=None, id_="msg_1", model="claude-test"):
    return ("message_start", {"type": "message_start", "message": {
        "id": id_, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 1}}})


def block_start(i, block):
    return ("content_block_start", {"type": "content_block_start", "index": i, "content_block": block})


def delta(i, d):
    return ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})


def text(i, t):
    return delta(i, {"type": "text_delta", "text": t})


def args(i, frag):
    return delta(i, {"type": "input_json_delta", "partial_json": frag})


def block_stop(i):
    return ("content_block_stop", {"type": "content_block_stop", "index": i})


def message_delta(stop_reason="end_turn", usage=None):
    return ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                              "usage": usage if usage is not None else {"output_tokens": 5}})


STOP = ("message_stop", {"type": "message_stop"})


def decode(*events, chunk_size=None) -> dict:
    return decode_bytes(FORMAT, sse(*events), chunk_size).result()


def codes(result) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


# -- the basic shape -------------------------------------------------------------------------------------
def test_text_stream_decodes_to_the_contract_shape():
    body = sse(start(), block_start(0, {"type": "text", "text": ""}), text(0, "Hel"), text(0, "lo"), block_stop(0),
               message_delta(), STOP)
    d = decode_bytes(FORMAT, body)
    r = d.result()
    assert r["format"] == "anthropic"
    assert r["blocks"] == [{"choice": 0, "index": 0, "type": "text", "text": "Hello", "id": None, "name": None,
                            "arguments": None, "signature": None, "redacted": False}]
    assert r["finish_reason"] == {"canonical": "stop", "raw": "end_turn"}
    assert r["terminated"] is True and r["error"] is None
    assert r["frames"] == 7 and r["diagnostics"] == []
    assert d.reply.response_id == "msg_1" and d.reply.model == "claude-test"


def test_every_event_carries_the_frame_that_produced_it():
    d = StreamDecoder(FORMAT)
    events = d.feed(sse(start(), block_start(0, {"type": "text", "text": ""}), text(0, "a"), block_stop(0), STOP))
    by_type = {type(e).__name__: e.frame for e in events}
    assert by_type["ResponseStarted"] == 0 and by_type["UsageUpdated"] == 0
    assert by_type["BlockStarted"] == 1 and by_type["TextDelta"] == 2
    assert by_type["BlockStopped"] == 3 and by_type["Terminated"] == 4


def test_initial_text_in_content_block_start_is_kept():
    r = decode(start(), block_start(0, {"type": "text", "text": "Hi "}), text(0, "there"), block_stop(0), STOP)
    assert r["blocks"][0]["text"] == "Hi there"


# -- usage -----------------------------------------------------------------------------------------------
def test_usage_counts_cache_tokens_as_input_and_message_delta_replaces():
    d = decode_bytes(FORMAT, sse(
        start({"input_tokens": 4, "cache_read_input_tokens": 1165, "cache_creation_input_tokens": 7,
               "output_tokens": 1, "service_tier": "standard"}),
        block_start(0, {"type": "text", "text": ""}), text(0, "x"), block_stop(0),
        message_delta(usage={"output_tokens": 221}), STOP))
    u = d.result()["usage"]
    assert u["input_tokens"] == 4 + 1165 + 7
    assert u["output_tokens"] == 221                      # replaced, not 1 + 221
    assert u["total_tokens"] == 4 + 1165 + 7 + 221
    assert u["cache_read_tokens"] == 1165 and u["cache_write_tokens"] == 7
    assert u["raw"] == {"input_tokens": 4, "cache_read_input_tokens": 1165, "cache_creation_input_tokens": 7,
                        "output_tokens": 221, "service_tier": "standard"}
    assert d.reply.usage_updates == 2 and d.reply.usage_reporting == "cumulative"
    events = list(StreamDecoder(FORMAT).iter_events([b"".join(i.raw for i in d.items)]))
    assert [e.reporting for e in events if isinstance(e, ev.UsageUpdated)] == ["up-front", "cumulative"]


def test_message_delta_input_tokens_replace_the_up_front_ones_and_thinking_tokens_are_reasoning():
    r = decode(start({"input_tokens": 10, "output_tokens": 1}),
               message_delta("tool_use", {"input_tokens": 12, "output_tokens": 92,
                                          "output_tokens_details": {"thinking_tokens": 53}}), STOP)
    assert r["usage"]["input_tokens"] == 12 and r["usage"]["output_tokens"] == 92
    assert r["usage"]["reasoning_tokens"] == 53


def test_a_null_in_message_delta_usage_does_not_erase_a_count():
    r = decode(start({"input_tokens": 10, "output_tokens": 1}),
               message_delta("end_turn", {"input_tokens": None, "output_tokens": 3}), STOP)
    assert r["usage"]["input_tokens"] == 10 and r["usage"]["output_tokens"] == 3


# -- finish reasons --------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw,canonical", [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "tool_calls"),
    ("refusal", "content_filter"), ("pause_turn", "other"), ("something_new", "other")])
def test_stop_reason_maps_to_canonical_finish(raw, canonical):
    r = decode(start(), message_delta(raw), STOP)
    assert r["finish_reason"] == {"canonical": canonical, "raw": raw}


# -- tool calls ------------------------------------------------------------------------------------------
def test_tool_arguments_are_the_exact_concatenation_of_fragments_empty_ones_included():
    r = decode(start(), block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}),
               args(0, ""), args(0, '{"city": '), args(0, '"Paris"}'), block_stop(0), message_delta("tool_use"), STOP)
    b = r["blocks"][0]
    assert (b["type"], b["id"], b["name"], b["arguments"]) == ("tool_call", "toolu_1", "get_weather",
                                                                '{"city": "Paris"}')
    assert r["finish_reason"]["canonical"] == "tool_calls"
    assert "tool-arguments-invalid-json" not in codes(r)


def test_tool_with_only_empty_fragments_takes_its_arguments_from_the_start_input():
    r = decode(start(), block_start(0, {"type": "tool_use", "id": "t0", "name": "noargs", "input": {}}),
               args(0, ""), block_stop(0),
               block_start(1, {"type": "tool_use", "id": "t1", "name": "preset", "input": {"a": 1, "b": "é"}}),
               block_stop(1), STOP)
    assert [b["arguments"] for b in r["blocks"]] == ["{}", '{"a":1,"b":"é"}']


def test_invalid_tool_json_is_diagnosed_at_a_normal_block_stop():
    r = decode(start(), block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
               args(0, '{"filename": "tax'), block_stop(0), message_delta("max_tokens"), STOP)
    bad = [d for d in r["diagnostics"] if d["code"] == "tool-arguments-invalid-json"]
    assert len(bad) == 1 and bad[0]["frame"] == 3
    assert r["blocks"][0]["arguments"] == '{"filename": "tax'
    assert r["finish_reason"]["canonical"] == "length"


def test_end_closes_open_blocks_and_reports_truncated_arguments_and_missing_terminator():
    d = decode_bytes(FORMAT, sse(start(), block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
                                 args(0, '{"a": [1, 2')))
    r = d.result()
    assert d.reply.blocks[0].complete is True
    assert codes(r) == ["tool-arguments-invalid-json", "missing-terminator"]
    assert r["terminated"] is False
    assert all(x["frame"] == 2 for x in r["diagnostics"])
    assert "message_stop" in r["diagnostics"][-1]["message"]


def test_server_tool_use_and_its_result_block():
    result_block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                    "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Ex"}]}
    r = decode(start(), block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                        "input": {}}),
               args(0, '{"query": "sf"}'), block_stop(0), block_start(1, result_block), block_stop(1),
               block_start(2, {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "s",
                               "input": {"q": 1}}), block_stop(2), STOP)
    b0, b1, b2 = r["blocks"]
    assert (b0["type"], b0["provider_type"], b0["arguments"]) == ("tool_call", "server_tool_use", '{"query": "sf"}')
    assert (b1["type"], b1["provider_type"], b1["raw"]) == ("other", "web_search_tool_result", result_block)
    assert b1["text"] is None and b1["arguments"] is None
    assert (b2["type"], b2["provider_type"], b2["arguments"]) == ("tool_call", "mcp_tool_use", '{"q":1}')


# -- thinking --------------------------------------------------------------------------------------------
def test_thinking_text_and_signature_deltas():
    r = decode(start(), block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
               delta(0, {"type": "thinking_delta", "thinking": "Let me "}),
               delta(0, {"type": "thinking_delta", "thinking": "think."}),
               delta(0, {"type": "signature_delta", "signature": "EqQB"}),
               delta(0, {"type": "signature_delta", "signature": "xyz="}), block_stop(0),
               block_start(1, {"type": "text", "text": ""}), text(1, "Answer"), block_stop(1), STOP)
    assert [(b["type"], b["text"], b["signature"]) for b in r["blocks"]] == [
        ("thinking", "Let me think.", "EqQBxyz="), ("text", "Answer", None)]


def test_redacted_thinking_is_a_redacted_thinking_block_keeping_its_data():
    block = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
    d = decode_bytes(FORMAT, sse(start(), block_start(0, block), block_stop(0), STOP))
    b = d.result()["blocks"][0]
    assert (b["type"], b["redacted"], b["text"]) == ("thinking", True, None)
    assert d.reply.blocks[0].raw == block


# -- citations -------------------------------------------------------------------------------------------
def test_citations_stay_out_of_the_text_and_are_kept_on_the_block():
    citation = {"type": "web_search_result_location", "cited_text": "Winds W at 10 mph", "url": "https://x"}
    d = decode_bytes(FORMAT, sse(start(), block_start(0, {"type": "text", "text": "", "citations": []}),
                                 delta(0, {"type": "citations_delta", "citation": citation}),
                                 text(0, "Winds are westerly."), block_stop(0), STOP))
    r = d.result()
    assert r["blocks"][0]["text"] == "Winds are westerly."
    assert d.reply.blocks[0].raw == {"type": "text", "citations": [citation]}
    assert r["diagnostics"] == []


# -- keepalives, errors, odd events ----------------------------------------------------------------------
def test_pings_are_keepalives_diagnosed_once():
    d = decode_bytes(FORMAT, sse(start(), ("ping", {"type": "ping"}), ("ping", {"type": "ping"}),
                                 block_start(0, {"type": "text", "text": ""}), text(0, "ok"), block_stop(0), STOP))
    r = d.result()
    assert d.reply.keepalives == 2
    assert [(x["code"], x["frame"]) for x in r["diagnostics"]] == [("keepalive", 1)]
    assert r["blocks"][0]["text"] == "ok"


def test_error_event_after_http_200_is_a_stream_error():
    err = {"type": "overloaded_error", "message": "Overloaded"}
    r = decode(start(), block_start(0, {"type": "text", "text": ""}), text(0, "partial"),
               ("error", {"type": "error", "error": err}))
    assert r["error"] == {"type": "overloaded_error", "message": "Overloaded", "raw": err}
    assert r["blocks"][0]["text"] == "partial"
    assert r["terminated"] is False
    assert codes(r) == ["in-band-error", "missing-terminator"]
    assert r["diagnostics"][0]["frame"] == 3


def test_fragment_that_starts_with_deltas_infers_the_block():
    r = decode(text(0, "d with a "), text(0, "replacement ("),
               ("error", {"type": "error", "error": {"details": None, "type": "api_error",
                                                     "message": "Internal server error"}}))
    assert [(b["type"], b["text"]) for b in r["blocks"]] == [("text", "d with a replacement (")]
    assert codes(r) == ["delta-without-block-start", "in-band-error", "missing-terminator"]
    assert r["error"]["type"] == "api_error"


def test_unknown_event_is_diagnosed_once_and_skipped():
    r = decode(start(), ("future_thing", {"type": "future_thing"}), ("future_thing", {"type": "future_thing"}),
               block_start(0, {"type": "text", "text": ""}), text(0, "fine"), block_stop(0), STOP)
    assert codes(r) == ["unknown-event"]
    assert r["diagnostics"][0]["frame"] == 1
    assert r["blocks"][0]["text"] == "fine" and r["terminated"]


def test_frames_after_message_stop_are_reported_and_not_applied():
    r = decode(start(), block_start(0, {"type": "text", "text": ""}), text(0, "done"), block_stop(0), STOP,
               block_start(1, {"type": "text", "text": ""}), text(1, "late"))
    assert [b["text"] for b in r["blocks"]] == ["done"]
    assert [(x["code"], x["frame"]) for x in r["diagnostics"]] == [("event-after-terminator", 5)]


def test_data_that_is_not_json_is_diagnosed_and_the_rest_decodes():
    r = decode(start(), block_start(0, {"type": "text", "text": ""}), ("content_block_delta", "{not json"),
               text(0, "ok"), block_stop(0), STOP)
    assert codes(r) == ["data-not-json"]
    assert r["diagnostics"][0]["frame"] == 2 and r["blocks"][0]["text"] == "ok"


def test_unnamed_events_fall_back_to_data_type():
    body = b"".join(f"data: {json.dumps(obj)}\n\n".encode() for _, obj in (
        start(), block_start(0, {"type": "text", "text": ""}), text(0, "anon"), block_stop(0), STOP))
    r = decode_bytes(FORMAT, body).result()
    assert r["blocks"][0]["text"] == "anon" and r["terminated"]
    assert codes(r) == ["event-name-missing"]


def test_multibyte_text_split_across_one_byte_chunks():
    events = (start(), block_start(0, {"type": "text", "text": ""}), text(0, "Ça va? 日本語 🐦"), block_stop(0),
              message_delta(), STOP)
    assert decode(*events, chunk_size=1) == decode(*events)
    assert decode(*events, chunk_size=1)["blocks"][0]["text"] == "Ça va? 日本語 🐦"


# -- the real recordings ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", corpus_files(FORMAT) or [None], ids=lambda p: p.stem if p else "absent")
def test_corpus_stream(path):
    if path is None:
        pytest.skip("the shared corpus is absent")
    exp, got = decode_recording(FORMAT, path)
    # stricter than the shared check: block by block, signatures and server blocks included
    assert len(got["blocks"]) == len(exp["blocks"])
    for e, g in zip(exp["blocks"], got["blocks"]):
        assert g["index"] == e["index"] and g["type"] == e["type"]
        for key in ("text", "id", "name", "arguments", "signature", "provider_type"):
            if key in e:
                assert g.get(key) == e[key], (e["index"], key)
        if e["type"] == "other":
            assert g["raw"] == e["content_block"]
    assert got["usage"]["raw"] == exp["usage"]
    if exp.get("error"):
        assert got["error"]["raw"] == exp["error"]
    assert got["terminated"] == exp["message_stop_seen"]


def test_argument_fragments_for_a_text_block_are_not_mixed_into_its_text():
    r = decode(start(), block_start(0, {"type": "text", "text": ""}), text(0, "plain"), args(0, '{"x":1}'),
               block_stop(0), STOP)
    assert r["blocks"][0]["text"] == "plain"
    assert [(x["code"], x["frame"]) for x in r["diagnostics"]] == [("delta-kind-mismatch", 3)]


# -- blocks of type other that carry text (compaction) ----------------------------------------------------
def compaction_delta(i, content, encrypted):
    return delta(i, {"type": "compaction_delta", "content": content, "encrypted_content": encrypted})


def test_compaction_block_keeps_the_text_of_its_deltas():
    """Shaped like a stream with context compaction on (beta compact-2026-01-12): the summary streams first."""
    d = decode_bytes(FORMAT, sse(
        start(), block_start(0, {"type": "compaction", "content": None, "encrypted_content": None}),
        compaction_delta(0, "The user asked ", "opaque-1"), compaction_delta(0, "about Paris.", "opaque-final"),
        block_stop(0), block_start(1, {"type": "text", "text": ""}), text(1, "Paris it is."), block_stop(1),
        message_delta("end_turn"), STOP))
    r = d.result()
    other, answer = r["blocks"]
    assert other["type"] == "other" and other["provider_type"] == "compaction"
    assert other["text"] == "The user asked about Paris."
    assert other["raw"] == {"type": "compaction", "content": "The user asked about Paris.",
                            "encrypted_content": "opaque-final"}   # the final object, as the SDK accumulates it
    assert answer["text"] == "Paris it is."
    assert "unknown-event" not in codes(r) and r["diagnostics"] == []
    assert d.reply.blocks[0].frames == [1, 2, 3, 4]   # the Blocks tab links the text to its frames


def test_compaction_content_sent_whole_at_the_start():
    r = decode(start(), block_start(0, {"type": "compaction", "content": "Earlier: greetings."}), block_stop(0),
               message_delta("compaction"), STOP)
    assert r["blocks"][0]["text"] == "Earlier: greetings." and r["diagnostics"] == []
    assert r["finish_reason"] == {"canonical": "other", "raw": "compaction"}


def test_a_future_block_with_its_own_delta_keeps_its_text():
    r = decode(start(), block_start(0, {"type": "memo", "memo": ""}), delta(0, {"type": "memo_delta", "memo": "a"}),
               delta(0, {"type": "memo_delta", "memo": "b"}), block_stop(0), STOP)
    assert r["blocks"][0]["text"] == "ab" and r["blocks"][0]["raw"]["memo"] == "ab" and r["diagnostics"] == []


def test_deltas_matching_no_block_are_still_unknown():
    r = decode(start(), block_start(0, {"type": "text", "text": ""}), text(0, "Hi"),
               delta(0, {"type": "compaction_delta", "content": "x"}), delta(0, {"type": "sparkle_delta", "v": 1}),
               block_stop(0), block_start(1, {"type": "web_search_tool_result", "content": []}),
               delta(1, {"type": "text_delta_v2", "text": "y"}), block_stop(1), STOP)
    assert r["blocks"][0]["text"] == "Hi" and r["blocks"][1]["text"] is None
    assert codes(r) == ["unknown-event"] * 3


def test_compaction_delta_before_its_start_opens_a_compaction_block():
    r = decode(compaction_delta(0, "cut from a log", None), block_stop(0), STOP)
    assert r["blocks"][0]["type"] == "other" and r["blocks"][0]["text"] == "cut from a log"
    assert codes(r) == ["delta-without-block-start"]


def test_ping_and_message_stop_need_no_json_data():
    r = decode(start(), ("ping", "keepalive"), block_start(0, {"type": "text", "text": "x"}), block_stop(0),
               ("message_stop", ""))
    assert r["terminated"] is True and "data-not-json" not in codes(r)


def test_usage_nested_a_thousand_deep_is_bounded_and_the_rest_decodes():
    deep = "[" * 1000 + "]" * 1000   # (written as text: json.dumps itself would recurse past the limit)
    r = decode(start(), block_start(0, {"type": "text", "text": ""}), text(0, "Hi"), block_stop(0),
               ("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn"},'
                                 f'"usage":{{"output_tokens":5,"server_tool_use":{deep}}}}}'), STOP)
    assert r["blocks"][0]["text"] == "Hi" and r["usage"]["output_tokens"] == 5 and r["terminated"] is True
    assert "json-too-deep" in codes(r)
    json.dumps(r)   # printable: nothing in it nests past the limit
    json.dumps(r, indent=2)   # (the pure-Python encoder too)
