"""Gemini / Vertex streamGenerateContent: one test per quirk, then the real recordings of the corpus."""
from __future__ import annotations

import json

import pytest

from core.wire import events as ev
from core.wire.adapters.gemini import apply_partial_arg, parse_json_path
from tests.corpus import corpus_files, decode_recording
from core.wire.pipeline import StreamDecoder, decode_bytes

FORMAT = "gemini"


def sse(*chunks) -> bytes:
    """Chunks (dicts, or str sent as is) -> a Gemini body with CRLF framing, as Google sends it."""
    return "".join(f"data: {c if isinstance(c, str) else json.dumps(c, ensure_ascii=False)}\r\n\r\n"
                   for c in chunks).encode()


def chunk(*parts, finish=None, usage=None, index=None, **extra) -> dict:
    cand: dict = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        cand["finishReason"] = finish
    if index is not None:
        cand["index"] = index
    out = {"candidates": [cand], **extra}
    if usage is not None:
        out["usageMetadata"] = usage
    return out


def decode(*chunks, chunk_size=None) -> dict:
    return decode_bytes(FORMAT, sse(*chunks), chunk_size).result()


def codes(result) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


def kinds(result) -> list[tuple]:
    return [(b["type"], b["text"]) for b in result["blocks"]]


# -- text ------------------------------------------------------------------------------------------------
def test_text_chunks_merge_into_one_block_and_final_finish_reason_terminates():
    d = decode_bytes(FORMAT, sse(chunk({"text": "The capital "}, responseId="r1", modelVersion="gemini-x"),
                                 chunk({"text": "is Paris."}, finish="STOP")))
    r = d.result()
    assert r["blocks"] == [{"choice": 0, "index": 0, "type": "text", "text": "The capital is Paris.", "id": None,
                            "name": None, "arguments": None, "signature": None, "redacted": False}]
    assert r["finish_reason"] == {"canonical": "stop", "raw": "STOP"}
    assert r["terminated"] is True and r["frames"] == 2 and r["diagnostics"] == []
    assert d.reply.response_id == "r1" and d.reply.model == "gemini-x"
    assert d.reply.terminator_frame == 1


def test_thought_and_answer_parts_are_separate_blocks_merged_by_kind():
    r = decode(chunk({"text": "Think ", "thought": True}), chunk({"text": "hard.", "thought": True}),
               chunk({"text": "Answer "}), chunk({"text": "here."}, finish="STOP"))
    assert kinds(r) == [("thinking", "Think hard."), ("text", "Answer here.")]


def test_two_kinds_in_one_chunk_and_back_make_three_blocks():
    r = decode(chunk({"text": "a", "thought": True}, {"text": "b"}, {"text": "c", "thought": True}, finish="STOP"))
    assert kinds(r) == [("thinking", "a"), ("text", "b"), ("thinking", "c")]


def test_events_carry_their_frame_numbers():
    d = StreamDecoder(FORMAT)
    events = d.feed(sse(chunk({"text": "x"}), chunk({"text": "y"}, finish="STOP")))
    assert [(type(e).__name__, e.frame) for e in events if not isinstance(e, ev.UsageUpdated)] == [
        ("ResponseStarted", 0), ("BlockStarted", 0), ("TextDelta", 0), ("TextDelta", 1), ("BlockStopped", 1),
        ("Finished", 1), ("Terminated", 1)]


# -- signatures ------------------------------------------------------------------------------------------
def test_signature_on_a_text_part_belongs_to_that_parts_block():
    r = decode(chunk({"text": "hmm", "thought": True}), chunk({"text": "Hi", "thoughtSignature": "SIG1"}),
               chunk({"text": " there"}, finish="STOP"))
    assert [(b["type"], b["signature"]) for b in r["blocks"]] == [("thinking", None), ("text", "SIG1")]


def test_signature_on_a_thought_part_belongs_to_the_thinking_block():
    r = decode(chunk({"text": "hmm", "thought": True, "thoughtSignature": "TSIG"}), chunk({"text": "ok"},
                                                                                        finish="STOP"))
    assert [(b["type"], b["signature"]) for b in r["blocks"]] == [("thinking", "TSIG"), ("text", None)]


def test_empty_text_part_with_only_a_signature_attaches_to_the_current_block():
    r = decode(chunk({"text": "story", "thought": False}), chunk({"text": "", "thoughtSignature": "LATE"},
                                                                 finish="STOP"))
    assert [(b["type"], b["text"], b["signature"]) for b in r["blocks"]] == [("text", "story", "LATE")]


def test_empty_text_part_without_signature_creates_no_block():
    r = decode(chunk({"functionCall": {"name": "get_country", "args": {}}, "thoughtSignature": "FSIG"}),
               chunk({"text": ""}, finish="STOP"))
    assert [(b["type"], b["name"], b["arguments"], b["signature"]) for b in r["blocks"]] == [
        ("tool_call", "get_country", "{}", "FSIG")]


# -- function calls --------------------------------------------------------------------------------------
def test_whole_function_calls_are_compact_json_and_stop_means_tool_calls():
    r = decode(chunk({"functionCall": {"name": "get_weather", "args": {"location": "Zürich", "days": 2}}},
                     {"functionCall": {"id": "fc_2", "name": "get_weather", "args": {"location": "東京"}}},
                     finish="STOP"))
    assert [(b["type"], b["id"], b["name"], b["arguments"]) for b in r["blocks"]] == [
        ("tool_call", None, "get_weather", '{"location":"Zürich","days":2}'),
        ("tool_call", "fc_2", "get_weather", '{"location":"東京"}')]
    assert r["finish_reason"] == {"canonical": "tool_calls", "raw": "STOP"}


def test_text_after_a_function_call_is_a_new_block():
    r = decode(chunk({"text": "Let me check. "}), chunk({"functionCall": {"name": "f", "args": {}}}),
               chunk({"text": "Done."}, finish="STOP"))
    assert [b["type"] for b in r["blocks"]] == ["text", "tool_call", "text"]


def test_vertex_streamed_partial_args_are_assembled_by_json_path():
    d = decode_bytes(FORMAT, sse(
        chunk({"functionCall": {"name": "writeItems", "willContinue": True}, "thoughtSignature": "VSIG"}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.ops[0].action", "stringValue": "ad",
                                                 "willContinue": True}], "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.ops[0].action", "stringValue": "d"}],
                                "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.ops[0].price", "numberValue": 0.5},
                                                {"jsonPath": "$.ops[0].ok", "boolValue": True},
                                                {"jsonPath": "$.ops[1].note", "nullValue": None}],
                                "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.ops[1].action", "stringValue": "remove"}]}}),
        chunk({"text": ""}, finish="STOP")))
    r = d.result()
    assert len(r["blocks"]) == 1
    b = r["blocks"][0]
    assert (b["type"], b["name"], b["signature"]) == ("tool_call", "writeItems", "VSIG")
    assert json.loads(b["arguments"]) == {"ops": [{"action": "add", "price": 0.5, "ok": True},
                                                  {"note": None, "action": "remove"}]}
    assert b["arguments"] == '{"ops":[{"action":"add","price":0.5,"ok":true},{"note":null,"action":"remove"}]}'
    assert d.reply.blocks[0].complete
    assert r["finish_reason"]["canonical"] == "tool_calls"
    assert "function-call-not-closed" not in codes(r)


def test_vertex_streamed_args_replace_rather_than_append():
    d = StreamDecoder(FORMAT)
    events = d.feed(sse(
        chunk({"functionCall": {"name": "getWeather", "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "Bos",
                                                 "willContinue": True}], "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "ton"}],
                                "willContinue": True}})))
    replaced = [e.arguments for e in events if isinstance(e, ev.ToolArgsReplaced)]
    assert replaced == ["{}", '{"location":"Bos"}', '{"location":"Boston"}']
    assert d.reply.blocks[0].arguments == '{"location":"Boston"}'


def test_empty_function_call_closes_a_streamed_call_and_a_second_call_follows():
    r = decode(chunk({"functionCall": {"name": "getWeather", "willContinue": True}}),
               chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "Boston"}],
                                       "willContinue": True}}),
               chunk({"functionCall": {}}),
               chunk({"functionCall": {"name": "getWeather", "willContinue": True}}),
               chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "SF"}],
                                       "willContinue": True}}),
               chunk({"functionCall": {}}, finish="STOP"))
    assert [(b["index"], b["arguments"]) for b in r["blocks"]] == [
        (0, '{"location":"Boston"}'), (1, '{"location":"SF"}')]
    assert codes(r) == []


def test_a_streamed_call_still_open_at_the_end_is_closed_and_diagnosed():
    d = decode_bytes(FORMAT, sse(
        chunk({"functionCall": {"name": "f", "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.a", "stringValue": "x", "willContinue": True}],
                                "willContinue": True}})))
    r = d.result()
    assert d.reply.blocks[0].complete and r["blocks"][0]["arguments"] == '{"a":"x"}'
    assert codes(r) == ["function-call-not-closed", "missing-terminator"]


def test_json_path_parsing_and_application():
    assert parse_json_path("$.a[0].b") == ("a", 0, "b")
    assert parse_json_path("$['odd key'][2]") == ("odd key", 2)
    assert parse_json_path("$") == ()
    assert parse_json_path("no-dollar") is None
    obj, problem = apply_partial_arg({}, {"jsonPath": "$.list[2]", "numberValue": 7})
    assert problem is None and obj == {"list": [None, None, 7]}
    obj, problem = apply_partial_arg(obj, {"jsonPath": "$.list[0].deep.s", "stringValue": "a"})
    obj, problem = apply_partial_arg(obj, {"jsonPath": "$.list[0].deep.s", "stringValue": "b"})
    assert problem is None and obj == {"list": [{"deep": {"s": "ab"}}, None, 7]}
    _, problem = apply_partial_arg(obj, {"jsonPath": "bad", "stringValue": "x"})
    assert "jsonPath" in problem


# -- other parts -----------------------------------------------------------------------------------------
def test_code_execution_parts_are_other_blocks_with_their_raw_part():
    code = {"executableCode": {"language": "PYTHON", "code": "print(1+1)"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2\n"}}
    r = decode(chunk({"text": "Computing: "}), chunk(code), chunk(result), chunk({"text": "It is 2."}, finish="STOP"))
    assert [(b["type"], b.get("provider_type")) for b in r["blocks"]] == [
        ("text", None), ("other", "executableCode"), ("other", "codeExecutionResult"), ("text", None)]
    assert r["blocks"][1]["raw"] == code and r["blocks"][2]["raw"] == result
    assert r["finish_reason"]["canonical"] == "stop"


# -- usage -----------------------------------------------------------------------------------------------
def test_cumulative_usage_the_last_wins_and_repetition_is_diagnosed_once():
    u1 = {"promptTokenCount": 18, "candidatesTokenCount": 10, "totalTokenCount": 63, "thoughtsTokenCount": 35}
    u2 = {"promptTokenCount": 18, "candidatesTokenCount": 40, "totalTokenCount": 93, "thoughtsTokenCount": 35}
    u3 = {"promptTokenCount": 18, "candidatesTokenCount": 80, "totalTokenCount": 133, "thoughtsTokenCount": 35,
          "cachedContentTokenCount": 4}
    d = decode_bytes(FORMAT, sse(chunk({"text": "1"}, usage=u1), chunk({"text": "2"}, usage=u2),
                                 chunk({"text": "3"}, usage=u3, finish="STOP")))
    r = d.result()
    assert r["usage"] == {"input_tokens": 18, "output_tokens": 80 + 35, "total_tokens": 133, "cache_read_tokens": 4,
                          "cache_write_tokens": None, "reasoning_tokens": 35, "raw": u3}
    assert [(x["code"], x["frame"]) for x in r["diagnostics"]] == [("cumulative-usage-repeated", 1)]
    assert "cumulative" in r["diagnostics"][0]["message"]
    events = list(StreamDecoder(FORMAT).iter_events([b"".join(i.raw for i in d.items)]))
    assert [e.reporting for e in events if isinstance(e, ev.UsageUpdated)] == ["cumulative"] * 3
    assert d.reply.usage_updates == 3


def test_unchanged_usage_is_not_re_emitted_and_missing_counts_stay_null():
    meta = {"trafficType": "ON_DEMAND"}
    d = decode_bytes(FORMAT, sse(chunk({"text": "a"}, usage=meta), chunk({"text": "b"}, usage=meta),
                                 chunk({"text": "c"}, usage={"promptTokenCount": 5}, finish="STOP")))
    r = d.result()
    assert d.reply.usage_updates == 2
    assert r["usage"]["input_tokens"] == 5 and r["usage"]["output_tokens"] is None
    assert r["usage"]["total_tokens"] is None


def test_total_falls_back_to_input_plus_output():
    r = decode(chunk({"text": "a"}, usage={"promptTokenCount": 5, "candidatesTokenCount": 3}, finish="STOP"))
    assert r["usage"]["total_tokens"] == 8 and r["usage"]["output_tokens"] == 3


# -- finish reasons, blocked prompts, errors, end markers ------------------------------------------------
@pytest.mark.parametrize("raw,canonical", [
    ("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("RECITATION", "content_filter"),
    ("BLOCKLIST", "content_filter"), ("PROHIBITED_CONTENT", "content_filter"), ("SPII", "content_filter"),
    ("IMAGE_SAFETY", "content_filter"), ("MALFORMED_FUNCTION_CALL", "error"), ("LANGUAGE", "other"),
    ("OTHER", "other")])
def test_finish_reason_maps_to_canonical(raw, canonical):
    r = decode(chunk({"text": "x"}, finish=raw))
    assert r["finish_reason"] == {"canonical": canonical, "raw": raw}
    assert r["terminated"] is True


def test_blocked_prompt_finishes_as_content_filter_and_terminates():
    r = decode({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
                "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7}})
    assert r["finish_reason"] == {"canonical": "content_filter", "raw": "SAFETY"}
    assert r["terminated"] is True and r["blocks"] == []
    assert r["usage"]["input_tokens"] == 7
    assert "missing-terminator" not in codes(r)


def test_error_object_in_the_stream_is_a_stream_error():
    err = {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
    r = decode(chunk({"text": "Partial"}), {"error": err})
    assert r["error"] == {"type": "UNAVAILABLE", "message": "The model is overloaded.", "raw": err}
    assert r["blocks"][0]["text"] == "Partial"
    assert codes(r) == ["in-band-error", "missing-terminator"]
    assert r["diagnostics"][0]["frame"] == 1


def test_missing_final_chunk_is_diagnosed_with_geminis_end_marker():
    d = decode_bytes(FORMAT, sse(chunk({"text": "cut"}), chunk({"text": " off"})))
    r = d.result()
    assert r["terminated"] is False and r["blocks"][0]["text"] == "cut off"
    assert d.reply.blocks[0].complete
    miss = r["diagnostics"][-1]
    assert miss["code"] == "missing-terminator" and miss["frame"] == 1
    assert "a final chunk carrying finishReason" in miss["message"]


def test_chunks_after_the_final_one_are_reported():
    r = decode(chunk({"text": "end"}, finish="STOP"), chunk({"text": "extra"}))
    assert r["blocks"][0]["text"] == "end"
    assert [(x["code"], x["frame"]) for x in r["diagnostics"]] == [("event-after-terminator", 1)]


def test_data_that_is_not_json_is_diagnosed_and_the_rest_decodes():
    r = decode(chunk({"text": "a"}), "{oops", chunk({"text": "b"}, finish="STOP"))
    assert codes(r) == ["data-not-json"] and r["diagnostics"][0]["frame"] == 1
    assert r["blocks"][0]["text"] == "ab"


def test_several_candidates_are_choices_and_terminate_when_all_finished():
    both = {"candidates": [{"index": 0, "content": {"parts": [{"text": "A"}]}},
                           {"index": 1, "content": {"parts": [{"text": "B"}]}}]}
    one = {"candidates": [{"index": 0, "content": {"parts": [{"text": "!"}]}, "finishReason": "STOP"}]}
    two = {"candidates": [{"index": 1, "content": {"parts": [{"text": "?"}]}, "finishReason": "MAX_TOKENS"}]}
    d = decode_bytes(FORMAT, sse(both, one, two))
    r = d.result()
    assert [(b["choice"], b["index"], b["text"]) for b in r["blocks"]] == [(0, 0, "A!"), (1, 0, "B?")]
    assert d.reply.terminator_frame == 2
    assert d.reply.finish_by_choice[1].canonical == "length"
    assert r["finish_reason"]["raw"] == "STOP"


def test_crlf_framing_and_multibyte_text_do_not_depend_on_chunking():
    chunks = (chunk({"text": "Grüße, "}), chunk({"text": "世界 🌍"}, finish="STOP",
                                                usage={"promptTokenCount": 3, "candidatesTokenCount": 4}))
    whole = decode(*chunks)
    assert whole["blocks"][0]["text"] == "Grüße, 世界 🌍"
    assert decode(*chunks, chunk_size=1) == whole
    assert decode(*chunks, chunk_size=3) == whole


# -- the real recordings ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", corpus_files(FORMAT) or [None], ids=lambda p: p.stem if p else "absent")
def test_corpus_stream(path):
    if path is None:
        pytest.skip("the shared corpus is absent")
    exp, got = decode_recording(FORMAT, path)
    # stricter than the shared check: block by block, with signatures, ids and the raw of other parts
    assert len(got["blocks"]) == len(exp["blocks"])
    for e, g in zip(exp["blocks"], got["blocks"]):
        assert g["index"] == e["index"] and g["type"] == e["type"]
        for key in ("text", "id", "name", "arguments", "provider_type"):
            if key in e:
                assert g.get(key) == e[key], (e["index"], key)
        assert g["signature"] == e.get("signature"), (e["index"], "signature")
        if e["type"] == "other":
            assert g["raw"] == e["part"]
    assert got["usage"]["raw"] == exp["usage"]
    assert got["frames"] == exp["chunks"]
    assert got["terminated"] is True


def test_chunk_that_carries_nothing_new_is_a_keepalive():
    from core.wire import events as ev
    from core.wire.pipeline import StreamDecoder

    d = StreamDecoder("gemini")
    chunk = (b'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}}],'
             b' "usageMetadata": {"promptTokenCount": 3}}\r\n\r\n')
    empty = (b'data: {"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}}],'
             b' "usageMetadata": {"promptTokenCount": 3}}\r\n\r\n')
    d.feed(chunk)
    produced = d.feed(empty)
    assert [type(e) for e in produced if not isinstance(e, ev.Diagnostic)] == [ev.Keepalive]
    assert d.reply.keepalives == 1 and d.reply.blocks[0].text == "Hi"


# The usual chunk (one bare text part continuing the open text block) takes a short path in the adapter
# (`_continuation`); every other shape must fall through to the general path. Each case follows an opening
# text chunk; the events must be what the general path alone produces.
_AFTER_OPEN_TEXT = [
    chunk({"text": "more"}),                                    # the short path itself
    chunk({"text": "more"}, usage={"promptTokenCount": 3, "totalTokenCount": 9}),
    chunk({"text": "end"}, finish="STOP"),
    chunk({"text": "c1"}, index=1),
    chunk({"text": "x", "thought": True}),
    chunk({"text": "x", "thoughtSignature": "c2ln"}),
    chunk({"text": "a"}, {"text": "b"}),
    chunk({"functionCall": {"name": "f", "args": {}}}),
    chunk({"text": ""}),
    chunk({"text": 5}),
    chunk(),
    {"candidates": [{"content": {"parts": "text"}}]},
    {"candidates": [{"content": {"parts": [["text"]]}}]},
    {"candidates": [{"content": "text"}]},
    {"candidates": ["text"]},
    {"candidates": {"0": {"content": {"parts": [{"text": "x"}]}}}},
    {"candidates": [{"content": {"parts": [{"text": "a"}]}}, {"content": {"parts": [{"text": "b"}]}, "index": 1}]},
    {"candidates": [{"content": {"parts": [{"text": "x"}]}}], "promptFeedback": {"blockReason": "SAFETY"}},
    {"candidates": [{"content": {"parts": [{"text": "x"}]}}], "error": {"code": 500, "message": "boom"}},
    {"usageMetadata": {"promptTokenCount": 3}},
]


@pytest.mark.parametrize("case", _AFTER_OPEN_TEXT, ids=lambda c: json.dumps(c)[:60])
def test_the_usual_chunks_short_path_gives_what_the_general_path_does(case, monkeypatch):
    body = sse(chunk({"text": "Hello"}, usage={"promptTokenCount": 3, "totalTokenCount": 4}), case)
    fast = decode_bytes(FORMAT, body)
    from core.wire.adapters.gemini import GeminiAdapter
    monkeypatch.setattr(GeminiAdapter, "_continuation", lambda self, d: None)
    general = decode_bytes(FORMAT, body)
    assert fast.reply.to_json() == general.reply.to_json()
    assert fast.result() == general.result()


# -- partialArgs: bounded, linear -------------------------------------------------------------------------
def streamed_call(*partials, close=True) -> list:
    """A Vertex streamed call: the name, one chunk per partialArgs list, then `functionCall {}` with the finish."""
    out = [chunk({"functionCall": {"name": "f", "willContinue": True}})]
    out += [chunk({"functionCall": {"partialArgs": p, "willContinue": True}}) for p in partials]
    if close:
        out.append(chunk({"functionCall": {}}, finish="STOP"))
    return out


@pytest.mark.parametrize("path", ["$.a[10000000]", "$.a[4294967296]", "$.a[" + "9" * 5000 + "]",
                                  "$.a[0][1000]"])
def test_a_huge_json_path_index_is_not_applied(path):
    d = decode_bytes(FORMAT, sse(*streamed_call([{"jsonPath": "$.a[0]", "stringValue": "x"}],
                                                [{"jsonPath": path, "numberValue": 1}])))
    r = d.result()
    assert r["blocks"][0]["arguments"] == '{"a":["x"]}'
    diag = next(x for x in r["diagnostics"] if x["code"] == "partial-args-unapplied")
    assert "past the end" in diag["message"] or "not a list" in diag["message"]
    assert r["terminated"] is True


def test_an_index_a_little_past_the_end_is_padded_with_null():
    r = decode(*streamed_call([{"jsonPath": "$.a[3]", "numberValue": 1}]))
    assert r["blocks"][0]["arguments"] == '{"a":[null,null,null,1]}' and codes(r) == []


def test_a_json_path_deeper_than_the_limit_is_not_applied():
    r = decode(*streamed_call([{"jsonPath": "$" + ".k" * 5000, "stringValue": "x"}],
                              [{"jsonPath": "$.ok", "stringValue": "y"}]))
    assert r["blocks"][0]["arguments"] == '{"ok":"y"}'
    assert "deeper than" in next(x for x in r["diagnostics"] if x["code"] == "partial-args-unapplied")["message"]


def test_streamed_args_cost_is_linear_in_frames_and_the_end_is_exact():
    """16k frames each appending to one string: the serializations the events carry add up to a small multiple
    of the final text (re-serializing on every frame would carry about 8,000 times it)."""
    frames = 16_000
    piece = "abcdefghij"
    d = StreamDecoder(FORMAT)
    events = d.feed(sse(*streamed_call(*([{"jsonPath": "$.s", "stringValue": piece}] for _ in range(frames)))))
    events += d.end()
    final = '{"s":"' + piece * frames + '"}'
    assert d.reply.blocks[0].arguments == final and d.result()["blocks"][0]["arguments"] == final
    carried = sum(len(e.arguments) for e in events if isinstance(e, ev.ToolArgsReplaced))
    assert carried < 5 * len(final)
    assert not any(isinstance(e, ev.Keepalive) for e in events)   # a chunk of partialArgs is not a keepalive


def test_small_streamed_args_are_shown_on_every_frame():
    d = StreamDecoder(FORMAT)
    events = d.feed(sse(*streamed_call(*([{"jsonPath": "$.s", "stringValue": c}] for c in "abc"), close=False)))
    assert [e.arguments for e in events if isinstance(e, ev.ToolArgsReplaced)] == [
        "{}", '{"s":"a"}', '{"s":"ab"}', '{"s":"abc"}']


def test_args_only_in_the_part_that_closes_a_streamed_call():
    r = decode(chunk({"functionCall": {"name": "getWeather", "willContinue": True}}),
               chunk({"functionCall": {"args": {"location": "Boston"}}}, finish="STOP"))
    assert r["blocks"][0]["arguments"] == '{"location":"Boston"}'
    assert codes(r) == ["arguments-only-at-end"]


def test_function_call_not_closed_says_why():
    r = decode(chunk({"functionCall": {"name": "f", "willContinue": True}}),
               chunk({"functionCall": {"name": "g", "args": {}}}, finish="STOP"))
    diag = next(x for x in r["diagnostics"] if x["code"] == "function-call-not-closed")
    assert diag["message"].startswith("a new function call ('g') began while a streamed function call")
    assert [b["name"] for b in r["blocks"]] == ["f", "g"]
