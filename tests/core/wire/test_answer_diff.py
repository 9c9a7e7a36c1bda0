"""The Qt-free answer diff (core.wire.answer_diff) on known texts, tool arguments and replies."""
from __future__ import annotations

import json

from core.wire import answer_diff as ad
from core.wire import events as ev
from core.wire.answer_diff import diff_json, diff_replies, diff_text, tokens
from core.wire.reply import Reply, fold


def reply(*parts, finish=("stop", "stop"), usage=None) -> Reply:
    """A reply from (kind, text-or-(name, arguments)) parts, folded from events as an adapter would emit them."""
    r = Reply()
    for i, (kind, content) in enumerate(parts):
        if kind == "tool_call":
            name, args = content
            fold(r, ev.BlockStarted(i, i, "tool_call", id=f"call_{i}", name=name))
            fold(r, ev.ToolArgsDelta(i, i, args))
        else:
            fold(r, ev.BlockStarted(i, i, kind))
            fold(r, (ev.ThinkingDelta if kind == "thinking" else ev.TextDelta)(i, i, content))
        fold(r, ev.BlockStopped(i, i))
    if finish is not None:
        fold(r, ev.Finished(99, ev.FinishReason(*finish)))
    if usage is not None:
        fold(r, ev.UsageUpdated(99, usage))
    return r


def sides(d) -> tuple[str, str]:
    return "".join(o.a for o in d.ops), "".join(o.b for o in d.ops)


def test_word_diff_of_known_texts():
    a, b = "The capital of France is Paris.", "The capital of France is Lyon, not Paris."
    d = diff_text(a, b)
    assert sides(d) == (a, b) and not d.same
    assert [(o.op, o.a, o.b) for o in d.ops] == [("equal", "The capital of France is ", "The capital of France is "),
                                                 ("insert", "", "Lyon, not "),
                                                 ("equal", "Paris.", "Paris.")]
    # A has 7 tokens ("The ", "capital ", ..., "Paris", "."), B 10, and all 7 of A's match: 2 * 7 / 17
    assert d.similarity == 2 * 7 / 17
    swap = diff_text("one two three", "one 2 three")
    assert [(o.op, o.a, o.b) for o in swap.ops] == [("equal", "one ", "one "), ("replace", "two ", "2 "),
                                                    ("equal", "three", "three")]
    same = diff_text("same text", "same text")
    assert same.same and same.similarity == 1.0 and [o.op for o in same.ops] == ["equal"]
    assert diff_text("", "").same and diff_text("", "").ops == ()
    assert [o.op for o in diff_text("", "new").ops] == ["insert"]


def test_tokens_keep_the_text_whole_across_scripts():
    s = "Größe: 3,5 m — 東京は大きい。\n\tDone!"
    assert "".join(tokens(s)) == s
    assert tokens("Hi, you.") == ["Hi", ", ", "you", "."]


def test_a_large_differing_middle_is_bounded_and_says_it_is_not_exact(monkeypatch):
    monkeypatch.setattr(ad, "MAX_DIFF_TOKENS", 50)
    a = "start " + " ".join(f"a{i}" for i in range(100)) + " end"
    b = "start " + " ".join(f"b{i}" for i in range(100)) + " end"
    d = diff_text(a, b)
    assert not d.exact and sides(d) == (a, b)
    assert [o.op for o in d.ops] == ["equal", "replace", "equal"]
    # the same size around a one-word change is exact: the common head and tail are set aside first
    c = a.replace("a50", "zz")
    assert diff_text(a, c).exact and [o.op for o in diff_text(a, c).ops] == ["equal", "replace", "equal"]


def test_json_arguments_compared_key_by_key_with_paths():
    a = {"city": "Paris", "units": "c", "opts": {"days": [1, 2, 3], "hourly": True}, "n": 1, "odd key": 0}
    b = {"city": "Lyon", "opts": {"days": [1, 2.0], "hourly": 1}, "n": 1.0, "odd key": 0, "lang": "fr"}
    found, more = diff_json(a, b)
    assert more == 0
    assert [(d.path, d.kind) for d in found] == [("$.city", "changed"), ("$.units", "only_a"),
                                                 ("$.opts.days[2]", "only_a"), ("$.opts.hourly", "type"),
                                                 ("$.lang", "only_b")]
    assert found[0].to_json() == {"path": "$.city", "kind": "changed", "a": "Paris", "b": "Lyon"}
    assert found[4].to_json() == {"path": "$.lang", "kind": "only_b", "b": "fr"}
    assert diff_json({"a b": 1}, {"a b": 2})[0][0].path == '$["a b"]'
    assert diff_json([1, {"x": None}], [1, {"x": False}])[0][0].kind == "type"


def test_hostile_arguments_are_bounded(monkeypatch):
    monkeypatch.setattr(ad, "MAX_DIFFERENCES", 5)
    found, more = diff_json({f"k{i}": i for i in range(20)}, {})
    assert len(found) == 5 and more == 15
    deep_a = json.loads("[" * 200 + "1" + "]" * 200)
    deep_b = json.loads("[" * 200 + "2" + "]" * 200)
    found, _ = diff_json(deep_a, deep_b)
    assert len(found) == 1 and found[0].path.count("[0]") == ad.MAX_JSON_DEPTH   # compared whole below the cap


def test_tool_calls_paired_by_name_first_then_by_position():
    a = reply(("tool_call", ("get_weather", '{"city": "Paris", "units": "c"}')),
              ("tool_call", ("get_time", '{"tz": "Europe/Paris"}')),
              ("tool_call", ("search", "{not json")))
    b = reply(("tool_call", ("get_time", '{"tz": "Europe/Paris"}')),
              ("tool_call", ("get_weather", '{"city": "Lyon", "units": "c"}')),
              ("tool_call", ("lookup", "{}")), ("tool_call", ("extra", '{"x": 1}')), finish=("tool_calls", "tool_use"))
    d = diff_replies(a, b)
    weather, time_, mismatch, extra = d.tool_calls
    assert weather.same_tool and not weather.same_arguments
    assert [(x.path, x.a, x.b) for x in weather.differences] == [("$.city", "Paris", "Lyon")]
    assert time_.same_tool and time_.same_arguments
    assert (mismatch.a_name, mismatch.b_name, mismatch.same_tool) == ("search", "lookup", False)
    assert mismatch.a_valid is False and mismatch.b_valid is True and not mismatch.same_arguments
    assert (extra.a_name, extra.b_name, extra.b_arguments) == (None, "extra", '{"x": 1}')
    assert not d.same and d.finish.a == "stop" and d.finish.b == "tool_calls" and d.finish_raw.b == "tool_use"


def test_reply_diff_compares_thinking_finish_and_usage():
    a = reply(("thinking", "Let me think."), ("text", "Paris."),
              usage=ev.Usage(input_tokens=10, output_tokens=20, total_tokens=30, reasoning_tokens=5))
    b = reply(("text", "Paris."), finish=("stop", "end_turn"),
              usage=ev.Usage(input_tokens=12, output_tokens=8, total_tokens=20))
    d = diff_replies(a, b)
    assert d.text.same and d.finish.same and not d.finish_raw.same and d.same
    assert (d.thinking_chars.a, d.thinking_chars.b, d.thinking_blocks.a, d.thinking_blocks.b) == (13, 0, 1, 0)
    rows = {u.field: (u.a, u.b, u.delta) for u in d.usage}
    assert rows["input_tokens"] == (10, 12, 2) and rows["output_tokens"] == (20, 8, -12)
    assert rows["reasoning_tokens"] == (5, None, None)
    j = d.to_json()
    assert j["same"] is True and j["thinking"]["chars"] == {"a": 13, "b": 0, "same": False}
    assert json.loads(json.dumps(j)) == j


def test_texts_of_several_blocks_and_choices():
    r = Reply()
    for i, (choice, t) in enumerate([(0, "first"), (0, "second"), (1, "other choice")]):
        fold(r, ev.BlockStarted(i, i, "text", choice=choice))
        fold(r, ev.TextDelta(i, i, t))
    assert ad.answer_text(r) == "first\n\nsecond" and ad.answer_text(r, 1) == "other choice"
    d = diff_replies(r, reply(("text", "first\n\nsecond")), choice=1)   # B has no choice 1
    assert [(o.op, o.a, o.b) for o in d.text.ops] == [("delete", "other choice", "")]
    assert diff_replies(r, reply(("text", "first\n\nsecond"))).text.same
