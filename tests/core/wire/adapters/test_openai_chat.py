"""The OpenAI Chat Completions adapter: one test per quirk (hand-written SSE bodies), then the real corpus."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from core.wire import events as ev
from tests.corpus import CORPUS, corpus_files, decode_recording
from core.wire.pipeline import StreamDecoder, decode_bytes

FORMAT = "openai-chat"


# -- helpers -------------------------------------------------------------------------------------------
def chunk(*choices, usage=..., **top) -> dict:
    obj = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
           "choices": list(choices)}
    if usage is not ...:
        obj["usage"] = usage
    obj.update(top)
    return obj


def ch(delta=None, finish=None, index=0) -> dict:
    return {"index": index, "delta": {} if delta is None else delta, "finish_reason": finish}


def sse(*items, done=True) -> bytes:
    """An SSE body: dicts become `data: JSON`, strings are written as they are (comments, event: lines)."""
    parts = []
    for it in items:
        parts.append(it if isinstance(it, str) else f"data: {json.dumps(it)}\n\n")
    if done:
        parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def decode(body: bytes, chunk_size=None) -> dict:
    return decode_bytes(FORMAT, body, chunk_size).result()


def codes(result: dict) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


def blocks(result: dict) -> list[tuple]:
    return [(b["choice"], b["type"], b["text"] if b["type"] != "tool_call" else b["arguments"])
            for b in result["blocks"]]


TEXT_BODY = sse(
    chunk(ch({"role": "assistant", "content": ""})),
    chunk(ch({"content": "Hel"}), usage=None),
    chunk(ch({"content": "lo"}), usage=None),
    chunk(ch({}, "stop"), usage=None),
)


# -- text, refusal, thinking -----------------------------------------------------------------------------
def test_role_only_first_chunk_and_text_then_done():
    d = decode_bytes(FORMAT, TEXT_BODY)
    r = d.result()
    assert blocks(r) == [(0, "text", "Hello")]
    assert r["finish_reason"] == {"canonical": "stop", "raw": "stop"}
    assert r["terminated"] is True and r["frames"] == 5
    assert r["diagnostics"] == []
    assert d.reply.response_id == "chatcmpl-1" and d.reply.model == "gpt-4o"
    assert all(b.complete for b in d.reply.blocks.values())


def test_empty_content_creates_no_block():
    r = decode(sse(chunk(ch({"role": "assistant", "content": ""})), chunk(ch({"content": ""}, "stop"))))
    assert r["blocks"] == []
    assert r["finish_reason"]["canonical"] == "stop"


def test_every_event_points_at_its_frame():
    d = StreamDecoder(FORMAT)
    events = d.feed(TEXT_BODY)
    by_type = {}
    for e in events:
        by_type.setdefault(type(e), []).append(e.frame)
    assert by_type[ev.ResponseStarted] == [0]
    assert by_type[ev.BlockStarted] == [1]
    assert by_type[ev.TextDelta] == [1, 2]
    assert by_type[ev.Finished] == [3] and by_type[ev.BlockStopped] == [3]
    assert by_type[ev.Terminated] == [4]


def test_refusal_deltas_make_a_refusal_block():
    r = decode(sse(chunk(ch({"role": "assistant", "content": None, "refusal": ""})),
                   chunk(ch({"refusal": "I'm sorry"})), chunk(ch({"refusal": ", no."})),
                   chunk(ch({}, "stop"))))
    assert blocks(r) == [(0, "refusal", "I'm sorry, no.")]


def test_reasoning_content_then_content_deepseek():
    r = decode(sse(chunk(ch({"role": "assistant", "content": None, "reasoning_content": ""})),
                   chunk(ch({"content": None, "reasoning_content": "Hmm, "})),
                   chunk(ch({"content": None, "reasoning_content": "a greeting."})),
                   chunk(ch({"content": "Hi!", "reasoning_content": None})),
                   chunk(ch({"content": ""}, "stop"))))
    assert blocks(r) == [(0, "thinking", "Hmm, a greeting."), (0, "text", "Hi!")]
    assert [b["index"] for b in r["blocks"]] == [0, 1]


def test_reasoning_field_and_duplicate_reasoning_content_are_not_doubled():
    # Groq / OpenRouter `reasoning`; some vLLM builds send both names with the same text
    r = decode(sse(chunk(ch({"reasoning": "We need", "channel": "analysis"})),
                   chunk(ch({"reasoning": " to", "reasoning_content": " to"})),
                   chunk(ch({"content": "ok"}, "stop"))))
    assert blocks(r) == [(0, "thinking", "We need to"), (0, "text", "ok")]


def test_mistral_content_array_thinking_and_text_parts():
    think = lambda t: [{"type": "thinking", "thinking": [{"type": "text", "text": t}]}]  # noqa: E731
    r = decode(sse(chunk(ch({"role": "assistant", "content": ""})),
                   chunk(ch({"content": think("Okay")})), chunk(ch({"content": think(", so")})),
                   chunk(ch({"content": [{"type": "text", "text": "To "}]})),
                   chunk(ch({"content": "cross"})),
                   chunk(ch({"content": ""}, "stop"), usage={"prompt_tokens": 10, "total_tokens": 14,
                                                             "completion_tokens": 4})))
    assert blocks(r) == [(0, "thinking", "Okay, so"), (0, "text", "To cross")]
    assert r["usage"]["output_tokens"] == 4


def test_openrouter_reasoning_details_signature_goes_on_the_thinking_block():
    r = decode(sse(
        chunk(ch({"role": "assistant", "content": "", "reasoning": None, "reasoning_details": []})),
        chunk(ch({"content": "", "reasoning": None,
                  "reasoning_details": [{"type": "reasoning.text", "text": "", "signature": "", "index": 0}]})),
        chunk(ch({"content": "", "reasoning": "2+2 is 4.",
                  "reasoning_details": [{"type": "reasoning.text", "text": "2+2 is 4.", "index": 0}]})),
        chunk(ch({"content": "", "reasoning": None,
                  "reasoning_details": [{"type": "reasoning.text", "signature": "Et0B==", "index": 0}]})),
        chunk(ch({"content": "4"}, "stop")),
    ))
    assert blocks(r) == [(0, "thinking", "2+2 is 4."), (0, "text", "4")]
    assert r["blocks"][0]["signature"] == "Et0B=="


# -- tool calls ------------------------------------------------------------------------------------------
def tc(index=..., id=None, name=None, args=None) -> dict:
    out = {}
    if index is not ...:
        out["index"] = index
    if id is not None:
        out["id"] = id
        out["type"] = "function"
    fn = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    out["function"] = fn
    return out


def tools_of(r: dict) -> list[tuple]:
    return [(b["id"], b["name"], b["arguments"]) for b in r["blocks"] if b["type"] == "tool_call"]


def test_parallel_tool_calls_fragmented_id_and_name_on_first_fragment_only():
    r = decode(sse(
        chunk(ch({"role": "assistant", "content": None, "tool_calls": [tc(0, "call_a", "get_weather", "")]})),
        chunk(ch({"tool_calls": [tc(0, args='{"loc')]})),
        chunk(ch({"tool_calls": [tc(0, args='ation": "Paris"}')]})),
        chunk(ch({"tool_calls": [tc(1, "call_b", "get_time", "")]})),
        chunk(ch({"tool_calls": [tc(1, args="{}")]})),
        chunk(ch({}, "tool_calls")),
    ))
    assert tools_of(r) == [("call_a", "get_weather", '{"location": "Paris"}'), ("call_b", "get_time", "{}")]
    assert r["finish_reason"] == {"canonical": "tool_calls", "raw": "tool_calls"}
    assert r["diagnostics"] == []


def test_tool_call_index_starting_at_1_after_text():
    r = decode(sse(chunk(ch({"content": "Reading it."})),
                   chunk(ch({"tool_calls": [tc(1, "toolu_1", "read_file", "")]})),
                   chunk(ch({"tool_calls": [tc(1, args="")]})),
                   chunk(ch({"tool_calls": [tc(1, args='{"pa')]})),
                   chunk(ch({"tool_calls": [tc(1, args='th": "a.txt"}')]})),
                   chunk(ch({}, "tool_calls"))))
    assert [b["type"] for b in r["blocks"]] == ["text", "tool_call"]
    assert tools_of(r) == [("toolu_1", "read_file", '{"path": "a.txt"}')]
    assert r["diagnostics"] == []


def test_whole_tool_call_in_one_delta_ollama():
    r = decode(sse(
        chunk(ch({"role": "assistant", "content": "",
                  "tool_calls": [tc(0, "call_x", "get_weather", '{"city":"Copenhagen"}')]})),
        chunk(ch({"role": "assistant", "content": ""}, "tool_calls")),
        chunk(usage={"prompt_tokens": 161, "completion_tokens": 24, "total_tokens": 185}),
    ))
    assert tools_of(r) == [("call_x", "get_weather", '{"city":"Copenhagen"}')]
    assert r["usage"]["input_tokens"] == 161


def test_tool_call_without_index_continues_the_last_call_or_starts_a_new_one():
    r = decode(sse(
        chunk(ch({"tool_calls": [tc(id="call_1", name="f", args='{"a":')]})),
        chunk(ch({"tool_calls": [tc(args="1")]})),
        chunk(ch({"tool_calls": [tc(args="}")]})),
        chunk(ch({"tool_calls": [tc(id="call_2", name="g", args="{}")]})),
        chunk(ch({"tool_calls": [tc(0, args="")]})),   # then an indexed fragment for a call never indexed
        chunk(ch({"tool_calls": [tc(args="")]})),
        chunk(ch({}, "tool_calls")),
    ))
    assert tools_of(r) == [("call_1", "f", '{"a":1}'), ("call_2", "g", "{}"), (None, None, "")]
    diags = [d for d in r["diagnostics"] if d["code"] == "tool-call-without-index"]
    assert [d["frame"] for d in diags] == [0, 3, 5]  # once per call


def test_new_id_on_a_known_index_is_a_new_call():
    r = decode(sse(
        chunk(ch({"tool_calls": [tc(0, "call_1", "f", '{"a":1}')]})),
        chunk(ch({"tool_calls": [tc(0, "call_2", "g", '{"b":2}')]})),
        chunk(ch({"tool_calls": [tc(0, args="")]})),
        chunk(ch({}, "tool_calls")),
    ))
    assert tools_of(r) == [("call_1", "f", '{"a":1}'), ("call_2", "g", '{"b":2}')]
    changed = [d for d in r["diagnostics"] if d["code"] == "tool-call-id-changed"]
    assert len(changed) == 1 and changed[0]["frame"] == 1


def test_same_id_repeated_on_every_fragment_is_one_call():
    r = decode(sse(chunk(ch({"tool_calls": [tc(0, "call_1", "f", '{"a":')]})),
                   chunk(ch({"tool_calls": [tc(0, "call_1", None, "1}")]})),
                   chunk(ch({}, "tool_calls"))))
    assert tools_of(r) == [("call_1", "f", '{"a":1}')]
    assert r["diagnostics"] == []


def test_invalid_tool_arguments_reported_when_the_block_closes():
    r = decode(sse(chunk(ch({"tool_calls": [tc(0, "call_1", "f", '{"a": "trunc')]})),
                   chunk(ch({}, "length"))))
    bad = [d for d in r["diagnostics"] if d["code"] == "tool-arguments-invalid-json"]
    assert len(bad) == 1 and bad[0]["frame"] == 1
    assert r["finish_reason"] == {"canonical": "length", "raw": "length"}


def test_invalid_tool_arguments_reported_at_end_of_a_cut_stream():
    d = decode_bytes(FORMAT, sse(chunk(ch({"tool_calls": [tc(0, "call_1", "f", '{"a": ')]})), done=False))
    r = d.result()
    assert codes(r) == ["tool-arguments-invalid-json", "missing-terminator"]
    assert d.reply.blocks[0].complete  # closed by end()
    assert r["terminated"] is False


def test_empty_arguments_are_not_invalid_json():
    r = decode(sse(chunk(ch({"tool_calls": [tc(0, "call_1", "f", "")]})), chunk(ch({}, "tool_calls"))))
    assert tools_of(r) == [("call_1", "f", "")]
    assert "tool-arguments-invalid-json" not in codes(r)


def test_legacy_function_call_delta():
    r = decode(sse(chunk(ch({"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": ""}})),
                   chunk(ch({"function_call": {"arguments": '{"x": 1}'}})),
                   chunk(ch({}, "function_call"))))
    assert tools_of(r) == [(None, "f", '{"x": 1}')]
    assert r["finish_reason"] == {"canonical": "tool_calls", "raw": "function_call"}


# -- choices, finish, usage ------------------------------------------------------------------------------
def test_n2_choices_interleaved():
    d = decode_bytes(FORMAT, sse(
        chunk(ch({"role": "assistant", "content": ""}, index=0), usage=None),
        chunk(ch({"role": "assistant", "content": ""}, index=1), usage=None),
        chunk(ch({"content": "A"}, index=0), usage=None),
        chunk(ch({"content": "B"}, index=1), usage=None),
        chunk(ch({"content": "a"}, index=0), usage=None),
        chunk(ch({}, "length", index=1), usage=None),
        chunk(ch({}, "stop", index=0), usage=None),
        chunk(usage={"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}),
    ))
    r = d.result()
    assert blocks(r) == [(0, "text", "Aa"), (1, "text", "B")]
    assert [b["index"] for b in r["blocks"]] == [0, 0]
    assert r["finish_reason"] == {"canonical": "stop", "raw": "stop"}
    assert d.reply.finish_by_choice[1] == ev.FinishReason("length", "length")
    assert r["usage"]["total_tokens"] == 9


@pytest.mark.parametrize("raw,canonical", [("stop", "stop"), ("length", "length"), ("tool_calls", "tool_calls"),
                                           ("content_filter", "content_filter"), ("function_call", "tool_calls"),
                                           ("eos", "other"), ("insufficient_system_resource", "other")])
def test_finish_reason_mapping_keeps_raw(raw, canonical):
    r = decode(sse(chunk(ch({"content": "x"})), chunk(ch({}, raw))))
    assert r["finish_reason"] == {"canonical": canonical, "raw": raw}


def test_finish_reason_not_erased_by_a_later_null():
    r = decode(sse(chunk(ch({"reasoning": "We"}, "length")), chunk(ch({"content": ""}, None))))
    assert r["finish_reason"] == {"canonical": "length", "raw": "length"}


def test_empty_string_finish_reason_means_not_yet():
    r = decode(sse(chunk(ch({"tool_calls": [tc(0, "c1", "f", '{"a":')]}, "")),
                   chunk(ch({"tool_calls": [tc(0, args="1}")]}, "")),
                   chunk(ch({}, "tool_calls"))))
    assert tools_of(r) == [("c1", "f", '{"a":1}')]
    assert r["finish_reason"] == {"canonical": "tool_calls", "raw": "tool_calls"}
    assert r["diagnostics"] == []


def test_non_string_text_fields_are_ignored():
    r = decode(sse(chunk(ch({"content": "ok", "refusal": {"odd": 1}})),
                   chunk(ch({"content": [{"type": "text", "text": 5}, {"type": "thinking", "thinking": [7]}]})),
                   chunk(ch({}, "stop"))))
    assert blocks(r) == [(0, "text", "ok")]


def test_non_integer_choice_index_is_taken_as_0():
    r = decode(sse(chunk(ch({"content": "a"}, index=0), ch({"content": "b"}, index="x")), chunk(ch({}, "stop"))))
    assert blocks(r) == [(0, "text", "ab")]
    assert "malformed-event" in codes(r)


def test_malformed_fields_become_a_diagnostic_not_an_exception():
    r = decode(sse(chunk(ch({"content": "ok"})), chunk(ch({"content": "!"}), "junk choice"),
                   chunk(ch({}, "stop"), usage={"prompt_tokens": "many", "completion_tokens": 2})))
    assert codes(r) == ["malformed-event"]
    assert blocks(r) == [(0, "text", "ok!")]
    assert r["finish_reason"]["raw"] == "stop"
    assert (r["usage"]["input_tokens"], r["usage"]["output_tokens"], r["usage"]["total_tokens"]) == (None, 2, None)
    assert r["usage"]["raw"]["prompt_tokens"] == "many"


FULL_USAGE = {"prompt_tokens": 78, "completion_tokens": 9, "total_tokens": 87,
              "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
              "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": 0}}


def test_usage_only_chunk_and_moderation_chunk_after_it():
    d = decode_bytes(FORMAT, sse(
        chunk(ch({"content": "London."}), usage=None, obfuscation="abc"),
        chunk(ch({}, "stop"), usage=None),
        chunk(usage=FULL_USAGE),
        chunk(moderation={"flagged": False}),   # gpt-5: empty choices, no usage: must not erase it
    ))
    r = d.result()
    assert r["usage"] == {"input_tokens": 78, "output_tokens": 9, "total_tokens": 87, "cache_read_tokens": 64,
                          "cache_write_tokens": None, "reasoning_tokens": 3, "raw": FULL_USAGE}
    only = [x for x in r["diagnostics"] if x["code"] == "usage-only-chunk"]
    assert [x["frame"] for x in only] == [2]
    assert d.reply.usage_reporting == "usage-chunk" and d.reply.usage_frame == 2


def test_usage_on_the_finish_chunk_deepseek_cache_fields():
    u = {"prompt_tokens": 12, "completion_tokens": 89, "total_tokens": 101,
         "prompt_cache_hit_tokens": 8, "prompt_cache_miss_tokens": 4}
    d = decode_bytes(FORMAT, sse(chunk(ch({"content": "joke"})), chunk(ch({"content": ""}, "stop"), usage=u)))
    r = d.result()
    assert (r["usage"]["input_tokens"], r["usage"]["output_tokens"], r["usage"]["cache_read_tokens"]) == (12, 89, 8)
    assert r["usage"]["raw"] == u
    assert "usage-only-chunk" not in codes(r)
    assert d.reply.usage_reporting == "final"


def test_together_top_level_cached_tokens_and_missing_total():
    u = {"prompt_tokens": 41, "completion_tokens": 15, "cached_tokens": 7}
    r = decode(sse(chunk(ch({"content": "1, 2"}, "stop"), usage=u)))
    assert (r["usage"]["cache_read_tokens"], r["usage"]["total_tokens"]) == (7, 56)


def test_groq_x_groq_usage_used_when_there_is_no_usage():
    xu = {"queue_time": 0.28, "prompt_tokens": 18, "completion_tokens": 73, "total_tokens": 91}
    r = decode(sse(chunk(ch({"content": "joke"}), x_groq={"id": "req_1"}),
                   chunk(ch({}, "stop"), x_groq={"id": "req_1", "usage": xu})))
    assert (r["usage"]["input_tokens"], r["usage"]["output_tokens"]) == (18, 73)
    assert r["usage"]["raw"] == xu


def test_usage_wins_over_x_groq_usage():
    u = dict(FULL_USAGE)
    r = decode(sse(chunk(ch({}, "stop"), usage=u, x_groq={"usage": {"prompt_tokens": 1, "completion_tokens": 1}})))
    assert r["usage"]["input_tokens"] == 78


def test_no_usage_anywhere():
    r = decode(TEXT_BODY)
    assert r["usage"]["input_tokens"] is None and r["usage"]["raw"] is None


# -- errors, terminator, framing -------------------------------------------------------------------------
def test_openrouter_error_object_in_a_chunk_with_choices_and_usage():
    err = {"code": 400, "message": "Token limit reached"}
    r = decode(sse(
        ": OPENROUTER PROCESSING\n\n",
        chunk(ch({"role": "assistant", "content": "", "reasoning": "We need"}, "length")),
        chunk(ch({"role": "assistant", "content": ""}), error=err,
              usage={"prompt_tokens": 43, "completion_tokens": 10, "total_tokens": 53}),
    ))
    assert r["error"] == {"type": "400", "message": "Token limit reached", "raw": err}
    assert "in-band-error" in codes(r)
    assert r["usage"]["input_tokens"] == 43
    assert blocks(r) == [(0, "thinking", "We need")]
    assert r["finish_reason"]["raw"] == "length"
    assert r["terminated"] is True and r["frames"] == 3


def test_groq_event_error_frame():
    err = {"message": "Tool call validation failed", "type": "invalid_request_error", "code": "tool_use_failed"}
    body = sse(chunk(ch({"reasoning": "Let me", "channel": "analysis"})), done=False) + \
        f"event: error\ndata: {json.dumps({'error': err})}\n\n".encode()
    r = decode(body)
    assert r["error"] == {"type": "invalid_request_error", "message": "Tool call validation failed", "raw": err}
    assert codes(r) == ["in-band-error", "missing-terminator"]
    assert [d["frame"] for d in r["diagnostics"]] == [1, 1]
    assert r["terminated"] is False


def test_done_is_not_data_not_json_and_later_frames_are_flagged():
    r = decode(TEXT_BODY + sse(chunk(ch({"content": "!"})), done=False) + b"data: [DONE]\n\n")
    assert "data-not-json" not in codes(r)
    late = [d for d in r["diagnostics"] if d["code"] == "event-after-terminator"]
    assert len(late) == 1 and late[0]["frame"] == 5
    assert r["terminated"] is True


def test_done_without_trailing_blank_line():
    r = decode(sse(chunk(ch({"content": "x"}, "stop")), done=False) + b"data: [DONE]\n")
    assert r["terminated"] is True
    assert codes(r) == ["unterminated-final-event"]


def test_missing_done_marker():
    r = decode(sse(chunk(ch({"content": "cut"})), done=False))
    assert r["terminated"] is False
    assert codes(r) == ["missing-terminator"]
    assert r["diagnostics"][0]["frame"] == 0


def test_data_not_json_is_reported_and_skipped():
    r = decode(sse(chunk(ch({"content": "a"})), "data: {\"choices\": [\n\n", chunk(ch({"content": "b"}, "stop"))))
    assert blocks(r) == [(0, "text", "ab")]
    bad = [d for d in r["diagnostics"] if d["code"] == "data-not-json"]
    assert len(bad) == 1 and bad[0]["frame"] == 1


def test_comment_lines_produce_nothing():
    plain = decode(TEXT_BODY)
    with_comments = decode(b": keep-alive\n\n" + TEXT_BODY.replace(b"\n\n", b"\n\n: OPENROUTER PROCESSING\n\n", 2))
    assert with_comments == plain


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_result_does_not_depend_on_chunk_size(size):
    body = sse(chunk(ch({"role": "assistant", "content": "", "reasoning_content": "é思"})),
               chunk(ch({"content": "Grüße 👋"})),
               chunk(ch({"tool_calls": [tc(0, "c1", "f", '{"k": "v"}')]})),
               chunk(ch({}, "tool_calls")), chunk(usage=FULL_USAGE))
    assert decode(body, size) == decode(body)


# -- the real recordings -----------------------------------------------------------------------------------
_FILES = corpus_files(FORMAT)


@pytest.mark.skipif(not _FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", _FILES, ids=[f"{f.parent.name}/{f.stem}" for f in _FILES])
def test_corpus_stream(path):
    _exp, got = decode_recording(FORMAT, path)
    assert "data-not-json" not in codes(got)


def test_corpus_has_chat_streams():
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    assert len(_FILES) >= 20


# -- robustness: arbitrary JSON in every field never raises ------------------------------------------------
_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["index", "id", "type", "text", "thinking", "function", "arguments",
                                          "name", "signature", "usage", "prompt_tokens"]), inner, max_size=3),
                     max_leaves=8)
_delta = st.dictionaries(st.sampled_from(["role", "content", "refusal", "reasoning", "reasoning_content",
                                          "reasoning_details", "tool_calls", "function_call"]),
                         st.text(max_size=3) | _json, max_size=4)
_choice = st.fixed_dictionaries({"index": st.sampled_from([0, 1, None, "x"]), "delta": _delta | _json,
                                 "finish_reason": st.sampled_from([None, "", "stop", "tool_calls", 3])})
_chunk = st.fixed_dictionaries({"id": st.just("c")}, optional={
    "choices": st.lists(_choice, max_size=2) | _json, "usage": _json, "error": _json,
    "x_groq": st.dictionaries(st.just("usage"), _json)})


@settings(max_examples=300, deadline=None)
@given(st.lists(_chunk, min_size=1, max_size=6), st.booleans())
@pytest.mark.slow
def test_arbitrary_chunks_never_raise_and_ignore_chunking(chunks, done):
    body = sse(*chunks, done=done)
    r = decode(body)
    assert r["terminated"] is done
    json.dumps(r)  # the result is plain JSON
    assert decode(body, 3) == r


# -- usage that leaves reasoning out (xAI) ------------------------------------------------------------------
XAI_USAGE = {"prompt_tokens": 288, "completion_tokens": 27, "total_tokens": 628,
             "prompt_tokens_details": {"text_tokens": 288, "audio_tokens": 0, "image_tokens": 0,
                                       "cached_tokens": 6},
             "completion_tokens_details": {"reasoning_tokens": 313, "audio_tokens": 0,
                                           "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
             "num_sources_used": 0}


def xai_body(usage: dict) -> bytes:
    """Shaped like grok's stream: role chunk, text chunks, the finish chunk, then usage on an empty-choices chunk."""
    def c(*choices, **top):
        return {"id": "b1c2", "object": "chat.completion.chunk", "created": 1, "model": "grok-3-mini",
                "system_fingerprint": "fp_1", "choices": list(choices), **top}
    return sse(c(ch({"role": "assistant", "content": ""})), c(ch({"content": "Paris"})),
               c(ch({"content": "."})), c(ch({}, "stop")), c(usage=usage))


def test_completion_count_leaving_reasoning_out_counts_it_back_in():
    d = decode_bytes(FORMAT, xai_body(XAI_USAGE))
    r = d.result()
    assert r["usage"]["output_tokens"] == 27 + 313 and r["usage"]["total_tokens"] == 628
    assert r["usage"]["input_tokens"] == 288 and r["usage"]["reasoning_tokens"] == 313
    assert r["usage"]["raw"] == XAI_USAGE   # as sent
    assert codes(r).count("usage-reasoning-excluded") == 1
    diag = next(x for x in r["diagnostics"] if x["code"] == "usage-reasoning-excluded")
    assert diag["frame"] == 4 and "340" in diag["message"]
    assert "completion_tokens + reasoning_tokens" in d.reply.usage.rule   # the Usage tab shows the rule


def test_usage_that_does_not_add_up_that_way_is_read_as_always():
    # OpenAI's own: reasoning is a subset of completion_tokens, total = prompt + completion
    usage = dict(XAI_USAGE, completion_tokens=340, total_tokens=628)
    d = decode_bytes(FORMAT, xai_body(usage))
    assert d.result()["usage"]["output_tokens"] == 340
    assert "usage-reasoning-excluded" not in codes(d.result())
    assert d.reply.usage.rule == "output = completion_tokens"
    # a total that fits neither reading changes nothing either
    odd = dict(XAI_USAGE, total_tokens=700)
    r = decode(xai_body(odd))
    assert r["usage"]["output_tokens"] == 27 and "usage-reasoning-excluded" not in codes(r)


def test_reasoning_excluded_is_reported_once_when_usage_repeats():
    def c(i, **top):
        return chunk(ch({"content": f"w{i}"}), usage=XAI_USAGE, **top)
    r = decode(sse(c(0), c(1), c(2)))
    assert codes(r).count("usage-reasoning-excluded") == 1 and r["usage"]["output_tokens"] == 340


def test_tool_arguments_nested_too_deep_are_judged_not_crashed():
    deep = "[" * 5000 + "]" * 5000
    r = decode(sse(chunk(ch({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                             "function": {"name": "f", "arguments": deep}}]})),
                   chunk(ch({}, "tool_calls"))))
    assert r["blocks"][0]["arguments"] == deep   # kept as sent
    diag = next(x for x in r["diagnostics"] if x["code"] == "tool-arguments-invalid-json")
    assert "nested deeper" in diag["message"]
