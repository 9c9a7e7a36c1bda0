"""The item models over core data: qtmodeltester, incremental growth, and what they show."""
from __future__ import annotations

import pytest

from core.wire import events as ev
from tests.gui.conftest import corpus_run

RECORDINGS = [
    "anthropic/thinking-then-tool-use-haiku-4.5.sse",
    "openai-chat/parallel-tool-calls-include-usage-gpt-4o-mini.sse",
    "openai-responses/" ,
    "gemini/usage-on-every-chunk-gemini-2.5-flash.sse",
]


def _first(folder: str) -> str:
    from tests.gui.conftest import CORPUS
    files = sorted((CORPUS / folder).glob("*.sse"))
    if not files:
        pytest.skip("corpus not available")
    return f"{folder}/{files[0].name}"


def _controller(run):
    from gui.controller import PaneController, RepaintScheduler

    c = PaneController(run, RepaintScheduler())
    c.refresh()
    return c


def check_models(request, *models) -> list:
    """qtmodeltester on each model, one tester per model (a tester follows the last model it checked, so one
    tester over several models would judge one model's signals against another's shape)."""
    from pytestqt.modeltest import ModelTester

    testers = []
    for model in models:
        t = ModelTester(request.config)
        t.check(model, force_py=True)
        testers.append(t)
    return testers


@pytest.mark.parametrize("rel", [r for r in RECORDINGS if r.endswith(".sse")] + ["openai-responses"])
@pytest.mark.slow
def test_models_pass_qtmodeltester(request, rel):
    if not rel.endswith(".sse"):
        rel = _first(rel)
    c = _controller(corpus_run(rel))
    check_models(request, c.frames, c.frames_proxy, c.blocks, c.usage, c.usage_history, c.diagnostics)


def test_provider_models_pass_qtmodeltester(request):
    from core.live.config import demo_providers
    from gui.models import ProviderListModel, ProviderTableModel

    providers = demo_providers("http://127.0.0.1:1")
    m = ProviderListModel(providers, {"demo-anthropic"})
    t = ProviderTableModel(providers)
    check_models(request, m, t)
    assert m.checked_names() == ["demo-anthropic"]
    from PySide6.QtCore import Qt
    assert m.setData(m.index(0), Qt.Checked, Qt.CheckStateRole)
    assert m.checked_names() == ["demo-openai-chat", "demo-anthropic"]
    row = t.append(providers[0].__class__("extra", "gemini", "http://x", "m", ""))
    t.replace(row, providers[1])
    t.remove(row)


def test_timeline_model_passes_qtmodeltester(qtmodeltester):
    from gui.timeline import TimelineModel

    m = TimelineModel()
    m.set_controllers([_controller(corpus_run("anthropic/text-sonnet-4.5.sse"))])
    qtmodeltester.check(m, force_py=True)


@pytest.mark.slow
def test_models_grow_incrementally_while_streaming(request, loop):
    """Replaying a capture chunk by chunk: rows are inserted as frames arrive, and the models stay valid."""
    from core.live.recorder import ProviderRun
    from core.live.replay import replay_into
    from gui.controller import PaneController, RepaintScheduler

    source = corpus_run("openai-chat/parallel-tool-calls-include-usage-gpt-4o-mini.sse", chunk=17,
                        step_ns=8_000_000)
    run = ProviderRun(source.provider, source.request)
    c = PaneController(run, RepaintScheduler())
    testers = check_models(request, c.frames, c.frames_proxy, c.blocks, c.usage, c.usage_history,  # noqa: F841
                           c.diagnostics)
    seen = []
    c.refreshed.connect(lambda: seen.append(c.frames.rowCount()))
    task = c.start(replay_into(run, source, speed=1.0))
    loop.run_until_complete(task)
    c.refresh()
    assert seen == sorted(seen) and len(set(seen)) > 2
    assert c.frames.rowCount() == len(source.decoder.items)
    assert c.view.frames_seen == source.decoder.frames
    assert [c.blocks.block(r).arguments for r in range(c.blocks.rowCount())] == \
        [b.arguments for b in source.decoder.reply.blocks.values()]
    assert run.status == "done"


def test_frames_model_columns_and_filter():
    from PySide6.QtCore import Qt
    from gui.models import FrameRole

    c = _controller(corpus_run("anthropic/thinking-then-tool-use-haiku-4.5.sse"))
    m = c.frames
    assert m.headerData(m.COL_CARRIES, Qt.Horizontal) == "carries" and m.COL_CARRIES == 0   # the first column
    assert m.index(0, m.COL_EVENT).data() == "message_start"
    assert m.index(0, m.COL_N).data() == "0"
    assert float(m.index(0, m.COL_MS).data()) > 0
    assert int(m.index(0, m.COL_BYTES).data()) == len(m.item(0).raw)
    assert m.index(0, m.COL_CARRIES).data().startswith("response start")
    c.frames_proxy.set_event("ping")
    assert c.frames_proxy.rowCount() == 1
    c.frames_proxy.set_event("")
    c.frames_proxy.set_text("fixed_version")
    assert 0 < c.frames_proxy.rowCount() < m.rowCount()
    c.frames_proxy.set_text("")
    assert c.frames_proxy.rowCount() == m.rowCount()
    assert c.frames_proxy.index(3, 0).data(FrameRole) == 3


def test_blocks_model_marks_tool_json_validity():
    c = _controller(corpus_run("anthropic/max-tokens-truncated-tool-json-sonnet-3.7.sse"))
    marks = [c.blocks.index(r, 7).data() for r in range(c.blocks.rowCount())]
    kinds = [c.blocks.index(r, 2).data() for r in range(c.blocks.rowCount())]
    assert "tool_call" in kinds
    c2 = _controller(corpus_run("openai-chat/parallel-tool-calls-include-usage-gpt-4o-mini.sse"))
    marks2 = [c2.blocks.index(r, 7).data() for r in range(c2.blocks.rowCount())]
    assert marks2 and all(m == "✓ valid" for m in marks2)
    # the truncated one never completed or is invalid: never marked valid
    tool_rows = [r for r, k in enumerate(kinds) if k == "tool_call"]
    assert all(marks[r] != "✓ valid" for r in tool_rows)


def test_usage_model_names_frame_and_reporting():
    c = _controller(corpus_run("anthropic/thinking-then-tool-use-haiku-4.5.sse"))
    u = c.usage
    rows = {u.index(r, 0).data(): r for r in range(u.rowCount())}
    r_in, r_out = rows["input"], rows["output"]
    assert u.index(r_in, 1).data() == "598"
    assert u.index(r_in, 2).data() == "0"            # message_start
    assert "up front" in u.index(r_in, 3).data()
    last_frame = c.view.frames_seen - 1
    assert int(u.index(r_out, 2).data()) < last_frame + 1
    assert "cumulative" in u.index(r_out, 3).data()
    assert c.usage_history.rowCount() == c.run.decoder.reply.usage_updates > 0
    assert [c.usage_history.index(r, 0).data() for r in range(c.usage_history.rowCount())] == [
        str(e.frame) for _t, e in c.run.events if isinstance(e, ev.UsageUpdated)]


def test_diagnostics_model_links_frames():
    from gui.models import FrameRole

    c = _controller(corpus_run("anthropic/error-api-error-midstream-FRAGMENT.sse"))
    d = c.diagnostics
    assert d.rowCount() >= 1
    codes = [d.index(r, 1).data() for r in range(d.rowCount())]
    assert "in-band-error" in codes or "missing-terminator" in codes
    for r in range(d.rowCount()):
        assert isinstance(d.index(r, 0).data(FrameRole), int)


def test_usage_model_says_which_rule_read_the_output():
    """xAI's completion count leaves reasoning out: the Usage tab's output row names the rule the core applied."""
    import json

    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run

    def chunk(**top):
        return "data: " + json.dumps({"id": "x", "model": "grok-3-mini", "choices": [], **top}) + "\n\n"
    usage = {"prompt_tokens": 288, "completion_tokens": 27, "total_tokens": 628,
             "completion_tokens_details": {"reasoning_tokens": 313}}
    body = (chunk(choices=[{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}])
            + chunk(usage=usage) + "data: [DONE]\n\n").encode()
    provider = ProviderConfig("xai", "openai-chat", "http://127.0.0.1:9/v1", "grok-3-mini", "")
    run = rebuild_run(provider, headers=(500_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=[(1_000_000, body)], end_ns=2_000_000, started_at=1_700_000_000.0)
    u = _controller(run).usage
    rows = {u.index(r, 0).data(): r for r in range(u.rowCount())}
    assert u.index(rows["output"], 1).data() == "340"
    assert "completion_tokens + reasoning_tokens" in u.index(rows["output"], 3).data()
    assert "completion_tokens" not in (u.index(rows["input"], 3).data() or "")


def test_frame_detail_of_deep_json_is_shown_as_sent():
    """A frame nested past every parser's limit (or just past the core's) is shown raw, never a RecursionError."""
    from core.wire.sse import SSEDecoder
    from gui.models import pretty_payload

    for depth in (300, 1000, 100_000):
        text = "[" * depth + "]" * depth
        (frame,) = SSEDecoder().feed(f"data: {text}\n\n".encode())
        assert pretty_payload(frame) == text
    (frame,) = SSEDecoder().feed(b'data: {"a":[1]}\n\n')
    assert pretty_payload(frame) == '{\n  "a": [\n    1\n  ]\n}'


def test_frames_not_kept_keep_the_raw_view_rows_by_frame_number(monkeypatch):
    """The GUI's frame -> row index stays right past the frames the decoder counted but did not keep."""
    import core.wire.pipeline as pl
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run

    monkeypatch.setattr(pl, "DIAGNOSTICS_PER_CODE", 1)
    monkeypatch.setattr(pl, "FRAMES_OF_COUNTED_FINDINGS_KEPT", 1)
    body = b"data: x\n\n" * 6 + b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}}]}\n\ndata: [DONE]\n\n'
    run = rebuild_run(ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m"),
                      headers=(1, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=[(2, body)], end_ns=3, started_at=0.0)
    assert run.decoder.frames_not_kept == 3 and [i.n for i in run.decoder.items] == [0, 1, 2, 6, 7]
    from gui.runview import RunView

    view = RunView(run)
    view.sync()
    assert view.frames_seen == 5
    assert [view.frame_row[n] for n in (0, 1, 2, 6, 7)] == [0, 1, 2, 3, 4]
    assert all(view.frame_row[n] == -1 for n in range(3, 6))
