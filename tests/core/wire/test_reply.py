"""The one reducer: events in, snapshot out."""
from __future__ import annotations

from core.wire import events as ev
from core.wire.reply import Reply, fold


def run(events):
    r = Reply()
    for e in events:
        fold(r, e)
    return r


def test_text_and_tool_blocks_fold_in_order_and_link_frames():
    r = run([
        ev.ResponseStarted(0, "r1", "m"),
        ev.BlockStarted(0, 0, "text"),
        ev.TextDelta(1, 0, "Hel"),
        ev.TextDelta(2, 0, "lo"),
        ev.BlockStarted(3, 1, "tool_call", id="call_1", name="get_weather"),
        ev.ToolArgsDelta(3, 1, '{"city":'),
        ev.ToolArgsDelta(4, 1, '"Paris"}'),
        ev.BlockStopped(5, 1),
    ])
    out = r.to_json()
    assert [(b["type"], b["text"], b["arguments"]) for b in out["blocks"]] == [
        ("text", "Hello", None), ("tool_call", None, '{"city":"Paris"}')]
    assert r.blocks[0].frames == [0, 1, 2]
    assert r.blocks[1].frames == [3, 4, 5] and r.blocks[1].complete
    assert r.response_id == "r1" and r.model == "m"


def test_usage_newest_wins_never_summed():
    r = run([ev.UsageUpdated(0, ev.Usage(10, 1), "cumulative"), ev.UsageUpdated(1, ev.Usage(10, 5), "cumulative")])
    assert r.usage.output_tokens == 5 and r.usage_frame == 1
    assert r.usage_updates == 2


def test_choices_get_their_own_ordinals():
    r = run([ev.BlockStarted(0, 0, "text", choice=0), ev.BlockStarted(0, 1, "text", choice=1),
             ev.BlockStarted(1, 2, "tool_call", choice=0, id="a", name="f"),
             ev.Finished(2, ev.FinishReason("stop", "stop"), choice=1),
             ev.Finished(2, ev.FinishReason("tool_calls", "tool_calls"), choice=0)])
    out = r.to_json()
    assert [(b["choice"], b["index"]) for b in out["blocks"]] == [(0, 0), (0, 1), (1, 0)]
    assert out["finish_reason"] == {"canonical": "tool_calls", "raw": "tool_calls"}
    assert r.finish_by_choice[1].canonical == "stop"


def test_delta_before_start_is_kept_and_reported():
    r = run([ev.TextDelta(0, 0, "x"), ev.BlockStarted(1, 0, "text")])
    assert r.blocks[0].text == "x"
    assert [d.code for d in r.diagnostics] == ["delta-without-block-start"]


def test_replaced_arguments_signature_redacted_error_and_terminator():
    r = run([ev.BlockStarted(0, 0, "tool_call", name="f"), ev.ToolArgsReplaced(0, 0, '{"a":"B'),
             ev.ToolArgsReplaced(1, 0, '{"a":"Bo"}'), ev.BlockStarted(2, 1, "thinking", redacted=True),
             ev.SignatureDelta(3, 1, "sig"), ev.InBandError(4, "overloaded_error", "Overloaded", {"x": 1}),
             ev.Keepalive(5), ev.Terminated(6, "message_stop")])
    out = r.to_json()
    assert out["blocks"][0]["arguments"] == '{"a":"Bo"}'
    assert out["blocks"][1]["redacted"] is True and out["blocks"][1]["text"] is None
    assert out["blocks"][1]["signature"] == "sig"
    assert out["error"] == {"type": "overloaded_error", "message": "Overloaded", "raw": {"x": 1}}
    assert out["terminated"] is True and r.keepalives == 1

