"""A pane and the timeline of a run opened from a recording that held no timing say so ("timing not recorded",
"TTFT n/a", a dash) instead of showing the 0 or the total its chunks were put at; a live run shows as before."""
from __future__ import annotations

from core.live.importers import parse_capture
from tests.core.live.test_importers import browser_har, cassette
from tests.core.live.test_timing import live_run
from tests.core.servers.tap.faulty import ANTHROPIC, BODY
from tests.gui.test_raw_view import controller


def test_the_pane_line_and_the_timeline_of_a_cassette_run(qtbot):
    from gui.panetext import metrics_text
    from gui.timeline import milestones, timing_note

    c = controller(parse_capture(cassette([("openai-chat", BODY)]), "c.yaml").runs[0])
    text = metrics_text(c.run, c.view)
    assert text.startswith("timing not recorded · ") and "TTFT" not in text and "0.00 s" not in text
    assert set(milestones(c).values()) == {None} and timing_note(c.run) == "timing not recorded"
    assert {c.frames.index(r, 2).data() for r in range(c.frames.rowCount())} == {"—"}   # the Raw tab's ms column


def test_the_pane_line_and_the_timeline_of_a_browsers_har_run(qtbot):
    from gui.panetext import metrics_text
    from gui.timeline import milestones, timing_note

    c = controller(parse_capture(browser_har([("anthropic", ANTHROPIC)]), "s.har").runs[0])
    assert metrics_text(c.run, c.view).startswith("TTFT n/a · 0.12 s · ")
    ms = milestones(c)
    assert (ms["headers"], ms["first content"], ms["end"]) == (100.5, None, 120.75)
    assert "per-chunk timing not recorded" in timing_note(c.run)


def test_a_live_run_shows_as_before(qtbot):
    from gui.panetext import metrics_text
    from gui.timeline import milestones, timing_note

    c = controller(live_run())
    assert metrics_text(c.run, c.view).startswith("TTFT 50 ms · 0.85 s · ")
    assert milestones(c)["first content"] == 50.0 and timing_note(c.run) is None
    assert c.frames.index(0, 2).data() == "50.0"


def test_the_timeline_paints_a_run_without_time(qtbot):
    from gui.timeline import TimelineModel, TimelineView

    runs = [parse_capture(cassette([("openai-chat", BODY)]), "c.yaml").runs[0], live_run()]
    model = TimelineModel()
    model.set_controllers([controller(r) for r in runs], replay=True)
    view = TimelineView(model)
    qtbot.addWidget(view)
    view.resize(600, 200)
    view.grab()      # (paints: the cassette's lane is its note, not frames at 0)
    assert "time not recorded" in view.describe(model.controller(0), 0)
    assert "ms" in view.describe(model.controller(1), 0)
