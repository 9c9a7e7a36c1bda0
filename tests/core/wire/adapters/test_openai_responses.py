"""The OpenAI Responses adapter: one test per quirk (hand-written SSE bodies), then the real corpus."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from core.wire import events as ev
from tests.corpus import CORPUS, corpus_files, decode_recording
from core.wire.pipeline import StreamDecoder, decode_bytes

FORMAT = "openai-responses"


# -- helpers -------------------------------------------------------------------------------------------
def e(type_: str, **fields) -> dict:
    return {"type": type_, **fields}


def resp(status="in_progress", **fields) -> dict:
    return {"id": "resp_1", "object": "response", "model": "gpt-5", "status": status, "output": [], **fields}


USAGE = {"input_tokens": 278, "input_tokens_details": {"cached_tokens": 256}, "output_tokens": 9,
         "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 287}


def sse(*items, named=True) -> bytes:
    """Dicts become `event: <type>` + `data: JSON` (or data alone with named=False); strings are written as is."""
    parts = []
    for it in items:
        if isinstance(it, str):
            parts.append(it)
        elif named:
            parts.append(f"event: {it['type']}\ndata: {json.dumps(it)}\n\n")
        else:
            parts.append(f"data: {json.dumps(it)}\n\n")
    return "".join(parts).encode()


def start() -> list[dict]:
    return [e("response.created", response=resp()), e("response.in_progress", response=resp())]


def completed(usage=USAGE, status="completed") -> dict:
    return e("response.completed", response=resp(status, usage=usage))


def message(oi: int, text_deltas: list[str], msg_id="msg_1") -> list[dict]:
    full = "".join(text_deltas)
    part = {"type": "output_text", "annotations": [], "text": ""}
    out = [e("response.output_item.added", output_index=oi,
             item={"id": msg_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}),
           e("response.content_part.added", item_id=msg_id, output_index=oi, content_index=0, part=part)]
    out += [e("response.output_text.delta", item_id=msg_id, output_index=oi, content_index=0, delta=d)
            for d in text_deltas]
    done_part = dict(part, text=full)
    out += [e("response.output_text.done", item_id=msg_id, output_index=oi, content_index=0, text=full),
            e("response.content_part.done", item_id=msg_id, output_index=oi, content_index=0, part=done_part),
            e("response.output_item.done", output_index=oi,
              item={"id": msg_id, "type": "message", "status": "completed", "content": [done_part],
                    "role": "assistant"})]
    return out


def function_call(oi: int, deltas: list[str], call_id="call_1", name="get_capital", stream_done=True) -> list[dict]:
    args = "".join(deltas)
    item = {"id": f"fc_{oi}", "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": call_id, "name": name}
    out = [e("response.output_item.added", output_index=oi, item=item)]
    out += [e("response.function_call_arguments.delta", item_id=item["id"], output_index=oi, delta=d)
            for d in deltas]
    if stream_done:
        out.append(e("response.function_call_arguments.done", item_id=item["id"], output_index=oi, arguments=args))
    out.append(e("response.output_item.done", output_index=oi, item=dict(item, status="completed", arguments=args)))
    return out


def decode(body: bytes, chunk_size=None) -> dict:
    return decode_bytes(FORMAT, body, chunk_size).result()


def codes(result: dict) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


def blocks(result: dict) -> list[tuple]:
    return [(b["type"], b["text"] if b["type"] != "tool_call" else b["arguments"]) for b in result["blocks"]]


TEXT_BODY = sse(*start(), *message(0, ["The capital", " of France", " is Paris."]), completed())


# -- text ----------------------------------------------------------------------------------------------------
def test_text_stream_lifecycle_usage_and_finish():
    d = decode_bytes(FORMAT, TEXT_BODY)
    r = d.result()
    assert blocks(r) == [("text", "The capital of France is Paris.")]
    assert r["finish_reason"] == {"canonical": "stop", "raw": "completed"}
    assert r["usage"] == {"input_tokens": 278, "output_tokens": 9, "total_tokens": 287, "cache_read_tokens": 256,
                          "cache_write_tokens": None, "reasoning_tokens": 4, "raw": USAGE}
    assert r["terminated"] is True and r["diagnostics"] == [] and r["error"] is None
    assert d.reply.response_id == "resp_1" and d.reply.model == "gpt-5"
    assert all(b.complete for b in d.reply.blocks.values())


def test_every_event_points_at_its_frame():
    d = StreamDecoder(FORMAT)
    events = d.feed(TEXT_BODY)
    frames = {}
    for x in events:
        frames.setdefault(type(x), []).append(x.frame)
    assert frames[ev.ResponseStarted] == [0]
    assert frames[ev.BlockStarted] == [3]           # content_part.added
    assert frames[ev.TextDelta] == [4, 5, 6]
    assert frames[ev.Terminated] == [10] and frames[ev.Finished] == [10] and frames[ev.UsageUpdated] == [10]


def test_data_only_framing_comments_and_trailing_done_openrouter():
    body = b": OPENROUTER PROCESSING\n\n" + sse(*start(), *message(0, ["4"]), completed(), named=False) + \
        b"data: [DONE]\n\n"
    r = decode(body)
    assert blocks(r) == [("text", "4")]
    assert r["terminated"] is True
    assert "data-not-json" not in codes(r)
    assert codes(r) == ["event-after-terminator"]


def test_done_marker_without_a_terminal_event_does_not_terminate():
    r = decode(sse(*start(), *message(0, ["hi"])) + b"data: [DONE]\n\n")
    assert r["terminated"] is False
    assert codes(r) == ["unexpected-done-marker", "missing-terminator"]


def test_text_only_in_done_events_is_not_lost():
    # a server that streams no deltas: the text comes from content_part.done / output_item.done
    items = [x for x in message(0, ["whole text"]) if x["type"] != "response.output_text.delta"]
    r = decode(sse(*start(), *items, completed()))
    assert blocks(r) == [("text", "whole text")]


def test_deltas_without_part_added_still_make_a_block():
    r = decode(sse(*start(), e("response.output_text.delta", item_id="m", output_index=0, content_index=0,
                               delta="hi"), completed()))
    assert blocks(r) == [("text", "hi")]


def test_refusal_part():
    part = {"type": "refusal", "refusal": ""}
    r = decode(sse(*start(),
                   e("response.output_item.added", output_index=0, item={"id": "m", "type": "message", "content": []}),
                   e("response.content_part.added", item_id="m", output_index=0, content_index=0, part=part),
                   e("response.refusal.delta", item_id="m", output_index=0, content_index=0, delta="I can't"),
                   e("response.refusal.delta", item_id="m", output_index=0, content_index=0, delta=" help."),
                   e("response.refusal.done", item_id="m", output_index=0, content_index=0, refusal="I can't help."),
                   e("response.content_part.done", item_id="m", output_index=0, content_index=0,
                     part={"type": "refusal", "refusal": "I can't help."}),
                   completed()))
    assert blocks(r) == [("refusal", "I can't help.")]


def test_annotation_events_are_ignored_without_diagnostics():
    items = message(0, ["See [1]."])
    items.insert(4, e("response.output_text.annotation.added", item_id="msg_1", output_index=0, content_index=0,
                      annotation_index=0, annotation={"type": "url_citation", "url": "https://x"}))
    r = decode(sse(*start(), *items, completed()))
    assert blocks(r) == [("text", "See [1].")]
    assert r["diagnostics"] == []


# -- tool calls ----------------------------------------------------------------------------------------
def test_function_call_uses_call_id_and_reports_tool_calls():
    r = decode(sse(*start(), *function_call(0, ['{"', 'country', '":"', 'France', '"}']), completed()))
    b = r["blocks"][0]
    assert (b["type"], b["id"], b["name"], b["arguments"]) == ("tool_call", "call_1", "get_capital",
                                                               '{"country":"France"}')
    assert r["finish_reason"] == {"canonical": "tool_calls", "raw": "completed"}
    assert r["diagnostics"] == []


def test_function_call_arguments_from_done_when_nothing_streamed():
    r = decode(sse(*start(), *function_call(0, ['{"a":1}'])[:1],
                   e("response.function_call_arguments.done", item_id="fc_0", output_index=0, arguments='{"a":1}'),
                   e("response.output_item.done", output_index=0,
                     item={"id": "fc_0", "type": "function_call", "call_id": "call_1", "name": "f"}),
                   completed()))
    assert [b["arguments"] for b in r["blocks"]] == ['{"a":1}']


def test_function_call_arguments_from_output_item_done_alone():
    items = [x for x in function_call(0, ['{"b":2}'], stream_done=False)
             if x["type"] != "response.function_call_arguments.delta"]
    r = decode(sse(*start(), *items, completed()))
    assert [b["arguments"] for b in r["blocks"]] == ['{"b":2}']


def test_streamed_arguments_are_not_doubled_by_done_events():
    r = decode(sse(*start(), *function_call(0, ['{"c":', "3}"]), completed()))
    assert [b["arguments"] for b in r["blocks"]] == ['{"c":3}']


def test_invalid_function_arguments_are_reported():
    r = decode(sse(*start(), *function_call(0, ['{"c": ']), completed()))
    bad = [d for d in r["diagnostics"] if d["code"] == "tool-arguments-invalid-json"]
    assert len(bad) == 1 and bad[0]["frame"] == 5  # the output_item.done frame


def test_two_function_calls_in_order():
    r = decode(sse(*start(), *function_call(0, ['{"a":1}'], "call_a", "f"), *function_call(1, ["{}"], "call_b", "g"),
                   completed()))
    assert [(b["id"], b["name"], b["arguments"]) for b in r["blocks"]] == [("call_a", "f", '{"a":1}'),
                                                                          ("call_b", "g", "{}")]


# -- reasoning -----------------------------------------------------------------------------------------------
def reasoning(oi: int, summaries: list[list[str]], rid="rs_1") -> list[dict]:
    item = {"id": rid, "type": "reasoning", "summary": [], "encrypted_content": "gAAA"}
    out = [e("response.output_item.added", output_index=oi, item=item)]
    for si, deltas in enumerate(summaries):
        out.append(e("response.reasoning_summary_part.added", item_id=rid, output_index=oi, summary_index=si,
                     part={"type": "summary_text", "text": ""}))
        out += [e("response.reasoning_summary_text.delta", item_id=rid, output_index=oi, summary_index=si, delta=d)
                for d in deltas]
        out.append(e("response.reasoning_summary_text.done", item_id=rid, output_index=oi, summary_index=si,
                     text="".join(deltas)))
        out.append(e("response.reasoning_summary_part.done", item_id=rid, output_index=oi, summary_index=si,
                     part={"type": "summary_text", "text": "".join(deltas)}))
    summary = [{"type": "summary_text", "text": "".join(d)} for d in summaries]
    out.append(e("response.output_item.done", output_index=oi, item=dict(item, summary=summary)))
    return out


def test_reasoning_summary_parts_joined_with_a_blank_line():
    d = decode_bytes(FORMAT, sse(*start(), *reasoning(0, [["**Plan**", "\n\nLook."], ["**Then**", " cross."]]),
                                 *message(1, ["Go."]), completed()))
    r = d.result()
    assert blocks(r) == [("thinking", "**Plan**\n\nLook.\n\n**Then** cross."), ("text", "Go.")]
    assert r["diagnostics"] == []
    assert d.reply.blocks[0].raw["encrypted_content"] == "gAAA"  # the item from output_item.done is kept


def test_encrypted_reasoning_without_summary_is_an_empty_thinking_block():
    r = decode(sse(*start(), *reasoning(0, []), *function_call(1, ["{}"]), completed()))
    assert blocks(r) == [("thinking", ""), ("tool_call", "{}")]


def test_summary_only_in_output_item_done_is_not_lost():
    items = [x for x in reasoning(0, [["A."], ["B."]]) if x["type"] != "response.reasoning_summary_text.delta"]
    r = decode(sse(*start(), *items, completed()))
    assert blocks(r) == [("thinking", "A.\n\nB.")]


def test_raw_reasoning_text_openrouter_gpt_oss():
    rid = "rs_tmp"
    items = [e("response.output_item.added", output_index=0, item={"type": "reasoning", "id": rid, "summary": []}),
             e("response.content_part.added", item_id=rid, output_index=0, content_index=0,
               part={"type": "reasoning_text", "text": ""}),
             e("response.reasoning_text.delta", output_index=0, item_id=rid, content_index=0, delta="The user"),
             e("response.reasoning_text.delta", output_index=0, item_id=rid, content_index=0, delta=" asks."),
             *message(1, ["4"]),
             e("response.reasoning_text.done", output_index=0, item_id=rid, content_index=0, text="The user asks."),
             e("response.content_part.done", item_id=rid, output_index=0, content_index=0,
               part={"type": "reasoning_text", "text": "The user asks."}),
             e("response.output_item.done", output_index=0,
               item={"type": "reasoning", "id": rid, "summary": [],
                     "content": [{"type": "reasoning_text", "text": "The user asks."}]}),
             completed()]
    r = decode(sse(*start(), *items, named=False) + b"data: [DONE]\n\n")
    assert blocks(r) == [("thinking", "The user asks."), ("text", "4")]
    assert codes(r) == ["event-after-terminator"]


def test_raw_reasoning_text_only_in_content_part_done():
    rid = "rs_y"
    r = decode(sse(*start(),
                   e("response.output_item.added", output_index=0, item={"type": "reasoning", "id": rid}),
                   e("response.content_part.done", item_id=rid, output_index=0, content_index=0,
                     part={"type": "reasoning_text", "text": "Think."}),
                   e("response.output_item.done", output_index=0, item={"type": "reasoning", "id": rid}),
                   completed()))
    assert blocks(r) == [("thinking", "Think.")]


def test_summary_and_raw_text_in_one_item_stay_apart():
    rid = "rs_x"
    r = decode(sse(*start(),
                   e("response.output_item.added", output_index=0, item={"type": "reasoning", "id": rid}),
                   e("response.reasoning_text.delta", output_index=0, item_id=rid, content_index=0, delta="raw"),
                   e("response.reasoning_summary_text.delta", output_index=0, item_id=rid, summary_index=0,
                     delta="summary"),
                   e("response.output_item.done", output_index=0, item={"type": "reasoning", "id": rid}),
                   completed()))
    assert blocks(r) == [("thinking", "raw"), ("thinking", "summary")]


# -- built-in tools and unknown events ----------------------------------------------------------------
def test_built_in_tool_items_are_other_blocks_with_the_final_item():
    added = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    done = {"id": "ws_1", "type": "web_search_call", "status": "completed",
            "action": {"type": "search", "query": "weather"}}
    r = decode(sse(*start(), e("response.output_item.added", output_index=0, item=added),
                   e("response.web_search_call.in_progress", output_index=0, item_id="ws_1"),
                   e("response.web_search_call.searching", output_index=0, item_id="ws_1"),
                   e("response.web_search_call.completed", output_index=0, item_id="ws_1"),
                   e("response.output_item.done", output_index=0, item=done),
                   *message(1, ["Sunny."]), completed()))
    other = r["blocks"][0]
    assert (other["type"], other["provider_type"], other["raw"]) == ("other", "web_search_call", done)
    assert blocks(r)[1] == ("text", "Sunny.")
    assert r["finish_reason"]["canonical"] == "stop"   # a built-in tool is not a function call
    assert r["diagnostics"] == []


@pytest.mark.parametrize("item_type", ["code_interpreter_call", "file_search_call", "image_generation_call",
                                       "mcp_call", "tool_search_call", "some_future_call"])
def test_other_item_types(item_type):
    item = {"id": "x_1", "type": item_type}
    r = decode(sse(*start(), e("response.output_item.added", output_index=0, item=item),
                   e("response.output_item.done", output_index=0, item=dict(item, status="completed")),
                   completed()))
    assert [(b["type"], b.get("provider_type")) for b in r["blocks"]] == [("other", item_type)]


def test_unknown_event_reported_once_per_name():
    r = decode(sse(*start(), e("response.brand_new.delta", delta="x"), e("response.brand_new.delta", delta="y"),
                   e("response.other_new"), *message(0, ["ok"]), completed()))
    unknown = [d for d in r["diagnostics"] if d["code"] == "unknown-event"]
    assert [d["frame"] for d in unknown] == [2, 4]
    assert blocks(r) == [("text", "ok")]


def test_new_progress_events_of_known_built_in_tool_families_are_not_unknown():
    r = decode(sse(*start(), e("response.web_search_call.reading", output_index=0),
                   e("response.code_interpreter_call.new_phase", output_index=0),
                   e("response.mcp_approval.requested", output_index=0), *message(0, ["ok"]), completed()))
    assert r["diagnostics"] == []


# -- ends: incomplete, failed, error, cut -----------------------------------------------------------------------
@pytest.mark.parametrize("reason,canonical", [("max_output_tokens", "length"), ("content_filter", "content_filter"),
                                              ("something_new", "other")])
def test_incomplete(reason, canonical):
    r = decode(sse(*start(), *message(0, ["Once upon"]),
                   e("response.incomplete", response=resp("incomplete", incomplete_details={"reason": reason},
                                                          usage=USAGE))))
    assert r["finish_reason"] == {"canonical": canonical, "raw": "incomplete"}
    assert r["terminated"] is True and r["usage"]["output_tokens"] == 9


def test_error_event_then_response_failed():
    err = {"type": "insufficient_quota", "code": "insufficient_quota", "message": "You exceeded your quota",
           "param": None}
    r = decode(sse(*start(), e("error", sequence_number=2, error=err),
                   e("response.failed", response=resp("failed", error={"code": "insufficient_quota",
                                                                       "message": "You exceeded your quota"}))))
    assert r["error"] == {"type": "insufficient_quota", "message": "You exceeded your quota", "raw": err}
    assert r["finish_reason"] == {"canonical": "error", "raw": "failed"}
    assert r["terminated"] is True
    assert codes(r) == ["in-band-error"]
    assert r["diagnostics"][0]["frame"] == 2


def test_response_failed_alone_carries_the_error():
    failure = {"code": "server_error", "message": "The model failed"}
    r = decode(sse(*start(), *message(0, ["Hal"]), e("response.failed", response=resp("failed", error=failure))))
    assert r["error"] == {"type": "server_error", "message": "The model failed", "raw": failure}
    assert blocks(r) == [("text", "Hal")]
    assert codes(r) == ["in-band-error"]


def test_error_event_in_the_older_flat_shape():
    r = decode(sse(*start(), e("error", code="rate_limit_exceeded", message="Slow down", param=None)))
    assert r["error"]["type"] == "rate_limit_exceeded" and r["error"]["message"] == "Slow down"
    assert codes(r) == ["in-band-error", "missing-terminator"]


def test_cut_stream_closes_blocks_and_reports_missing_terminator():
    d = decode_bytes(FORMAT, sse(*start(), *function_call(0, ['{"a":'])[:2]))
    r = d.result()
    assert codes(r) == ["tool-arguments-invalid-json", "missing-terminator"]
    assert r["terminated"] is False and r["finish_reason"] == {"canonical": None, "raw": None}
    assert all(b.complete for b in d.reply.blocks.values())


def test_data_not_json():
    r = decode(sse(*start()) + b"event: response.output_text.delta\ndata: {oops\n\n" + sse(*message(0, ["x"]),
                                                                                          completed()))
    bad = [d for d in r["diagnostics"] if d["code"] == "data-not-json"]
    assert len(bad) == 1 and bad[0]["frame"] == 2
    assert blocks(r) == [("text", "x")]


def test_malformed_fields_become_a_diagnostic_not_an_exception():
    r = decode(sse(*start(), e("response.output_item.added", output_index=0, item="not an object"),
                   e("response.content_part.added", output_index=1, content_index=0, part=["odd"]),
                   *message(2, ["fine"]), completed()))
    assert codes(r) == ["malformed-event", "malformed-event"]
    assert blocks(r) == [("text", "fine")]
    assert r["terminated"] is True


@pytest.mark.parametrize("size", [1, 2, 5, 7, 100])
def test_result_does_not_depend_on_chunk_size(size):
    body = sse(*start(), *reasoning(0, [["Ré", "sumé"], ["二"]]), *function_call(1, ['{"k":', '"ü"}']),
               *message(2, ["Grüße ", "👋"]), completed())
    assert decode(body, size) == decode(body)


# -- the real recordings -----------------------------------------------------------------------------------
_FILES = corpus_files(FORMAT)


@pytest.mark.skipif(not _FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", _FILES, ids=[f"{f.parent.name}/{f.stem}" for f in _FILES])
def test_corpus_stream(path):
    _exp, got = decode_recording(FORMAT, path)
    assert "data-not-json" not in codes(got) and "unknown-event" not in codes(got)


def test_corpus_has_responses_streams():
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    assert len(_FILES) >= 10


# -- robustness: arbitrary JSON in every field never raises ------------------------------------------------
_json = st.recursive(st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["type", "id", "text", "call_id", "name", "arguments", "summary",
                                          "content", "refusal", "usage", "error", "status"]), inner, max_size=3),
                     max_leaves=8)
_names = st.sampled_from(["response.created", "response.output_item.added", "response.output_item.done",
                          "response.content_part.added", "response.content_part.done",
                          "response.output_text.delta", "response.refusal.delta",
                          "response.function_call_arguments.delta", "response.function_call_arguments.done",
                          "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
                          "response.completed", "response.incomplete", "response.failed", "error", "response.x"])
_event = st.builds(lambda name, fields: {**fields, "type": name}, _names, st.fixed_dictionaries({}, optional={
    "output_index": st.sampled_from([0, 1, None, "a"]), "content_index": st.sampled_from([0, 1, None]),
    "summary_index": st.sampled_from([0, 1]), "delta": _json, "item": _json, "part": _json,
    "response": _json, "error": _json, "arguments": _json}))


@settings(max_examples=150, deadline=None)
@given(st.lists(_event, min_size=1, max_size=8))
@pytest.mark.slow
def test_arbitrary_events_never_raise_and_ignore_chunking(events):
    body = sse(*events)
    r = decode(body)
    json.dumps(r)  # the result is plain JSON
    assert decode(body, 3) == r


# -- arguments sent only at the end (LM Studio) -------------------------------------------------------------
def lmstudio_function_call(oi: int, args: str, call_id="call_7", name="get_weather") -> list[dict]:
    """LM Studio's shape: output_item.added with empty arguments, no arguments.delta at all, then .done and
    output_item.done carrying the whole arguments."""
    item = {"id": f"fc_{oi}", "type": "function_call", "call_id": call_id, "name": name, "arguments": "",
            "status": "in_progress"}
    return [e("response.output_item.added", output_index=oi, item=item),
            e("response.function_call_arguments.done", item_id=item["id"], output_index=oi, arguments=args),
            e("response.output_item.done", output_index=oi, item=dict(item, arguments=args, status="completed"))]


def test_arguments_only_in_done_events_are_used_and_diagnosed_once():
    args = '{"city":"Paris"}'
    r = decode(sse(*start(), *lmstudio_function_call(0, args), completed()))
    tool = r["blocks"][0]
    assert tool["type"] == "tool_call" and tool["arguments"] == args and tool["id"] == "call_7"
    assert codes(r) == ["arguments-only-at-end"]
    diag = r["diagnostics"][0]
    assert diag["frame"] == 3 and "function_call_arguments.done" in diag["message"]
    assert r["finish_reason"]["canonical"] == "tool_calls"


def test_arguments_only_in_output_item_done():
    args = '{"city":"Paris"}'
    events = [x for x in lmstudio_function_call(0, args) if x["type"] != "response.function_call_arguments.done"]
    r = decode(sse(*start(), *events, completed()))
    assert r["blocks"][0]["arguments"] == args
    assert codes(r) == ["arguments-only-at-end"] and "output_item.done" in r["diagnostics"][0]["message"]


def test_streamed_arguments_are_not_arguments_only_at_end():
    r = decode(sse(*start(), *function_call(0, ['{"a":', '1}']), completed()))
    assert r["blocks"][0]["arguments"] == '{"a":1}' and "arguments-only-at-end" not in codes(r)


def test_custom_tool_call_input_only_at_end():
    item = {"id": "ctc_0", "type": "custom_tool_call", "call_id": "call_c", "name": "sh", "input": ""}
    r = decode(sse(*start(), e("response.output_item.added", output_index=0, item=item),
                   e("response.custom_tool_call_input.done", item_id="ctc_0", output_index=0, input="ls -l"),
                   e("response.output_item.done", output_index=0, item=dict(item, input="ls -l")), completed()))
    assert r["blocks"][0]["arguments"] == "ls -l" and codes(r) == ["arguments-only-at-end"]


def test_output_count_leaving_reasoning_out_counts_it_back_in():
    usage = {"input_tokens": 288, "output_tokens": 27, "total_tokens": 628,
             "output_tokens_details": {"reasoning_tokens": 313}}
    d = decode_bytes(FORMAT, sse(*start(), *message(0, ["Hi"]), completed(usage=usage)))
    r = d.result()
    assert r["usage"]["output_tokens"] == 340 and codes(r) == ["usage-reasoning-excluded"]
    assert "output_tokens + reasoning_tokens" in d.reply.usage.rule
    assert decode(sse(*start(), *message(0, ["Hi"]), completed()))["usage"]["output_tokens"] == 9
