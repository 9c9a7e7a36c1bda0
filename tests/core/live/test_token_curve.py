"""The cumulative-tokens curve of a run (core.live.token_curve), against hand-computed points."""
from __future__ import annotations

from core.live.token_curve import token_curve
from tests.core.live.test_metrics import END, MS, rebuilt, text


def test_one_point_per_content_chunk_from_the_request_sent():
    c = token_curve(rebuilt())
    # content "Hel" at 100 ms, "lo" at 110, " wor" at 150, "ld" at 250; the ping at 140 and the end carry none
    # nothing until the first content chunk (a flat stretch), then what each chunk brought
    assert list(c.t_ms) == [0.0, 100.0, 100.0, 110.0, 150.0, 250.0]
    assert list(c.tokens) == [0.0, 0.0, 3 / 4, 5 / 4, 9 / 4, 11 / 4]


def test_a_long_stream_keeps_at_most_max_points_with_the_last():
    chunks = [((10 + i) * MS, text("ab")) for i in range(1000)] + [(2000 * MS, END)]
    c = token_curve(rebuilt(chunks=chunks, end_ns=2001 * MS), max_points=50)
    assert len(c) == 50
    assert list(c.t_ms[:3]) == [0.0, 10.0, 10.0] and list(c.tokens[:3]) == [0.0, 0.0, 0.5] and c.t_ms[-1] == 1009.0
    assert c.tokens[-1] == 2000 / 4
    assert list(c.t_ms) == sorted(c.t_ms) and list(c.tokens) == sorted(c.tokens)


def test_a_run_without_content_is_the_origin_alone():
    c = token_curve(rebuilt(chunks=[(100 * MS, b": ping\n\n"), (110 * MS, END)]))
    assert (list(c.t_ms), list(c.tokens)) == ([0.0], [0.0])
