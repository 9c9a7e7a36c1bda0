"""The shared wording (core/live/summary.py), the error types and provider error bodies (core/live/errors.py) and
the routine-diagnostic classification (core/wire/events.py): plain functions, no Qt, no server."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.live.errors import ErrorType, error_dict, provider_error
from core.live.summary import duration, error_line, findings_text, finish_text, plural, usage_figures
from core.wire import events as ev
from tests.corpus import ROOT


# -- durations, plurals, figures ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ns, text", [(None, "–"), (0, "0 ms"), (849_600_000, "850 ms"),
                                      (9_999_000_000, "9999 ms"), (10_000_000_000, "10.00 s"),
                                      (12_345_678_901, "12.35 s")])
def test_duration_is_milliseconds_under_ten_seconds_then_seconds(ns, text):
    assert duration(ns) == text


def test_duration_takes_the_callers_mark_for_unknown():
    assert duration(None, "-") == "-" and duration(5_000_000, "-") == "5 ms"


@pytest.mark.parametrize("n, text", [(0, "0 tools"), (1, "1 tool"), (2, "2 tools")])
def test_plural(n, text):
    assert plural(n, "tool") == text


def test_plural_with_an_irregular_form():
    assert plural(1, "reply", "replies") == "1 reply" and plural(3, "reply", "replies") == "3 replies"


def test_usage_figures_show_unreported_values_as_missing_never_as_none():
    assert usage_figures(ev.Usage(12, 40, 52)) == "in=12 out=40 total=52"
    assert usage_figures(ev.Usage(input_tokens=7)) == "in=7 out=– total=–"
    assert usage_figures(ev.Usage(12, 40, 52), "cumulative") == "in=12 out=40 total=52"
    assert "up front" in usage_figures(ev.Usage(12, 1, 13), "up-front")


def test_tokens_text_marks_estimates():
    from core.live.summary import tokens_text

    assert tokens_text(1234, False) == "1,234" and tokens_text(1234, True) == "~1,234 (est.)"
    assert tokens_text(None, True) == "–"


@pytest.mark.parametrize("finish, text", [
    (None, ""),
    (ev.FinishReason("stop", "stop"), "stop"),                      # the provider's own word adds nothing
    (ev.FinishReason("tool_calls", "tool_use"), "tool_calls (tool_use)"),
    (ev.FinishReason("stop", None), "stop"),
    (ev.FinishReason(None, "weird"), "? (weird)"),
    (ev.FinishReason("other", {"kind": "x"}), 'other ({"kind": "x"})'),  # a non-string raw value, as JSON
])
def test_finish_text(finish, text):
    assert finish_text(finish) == text


def test_error_line():
    assert error_line(None) is None
    assert error_line(error_dict(ErrorType.STALLED, "no bytes for 60 s")) == "stalled: no bytes for 60 s"


# -- findings -----------------------------------------------------------------------------------------------------
def diag(frame: int, code: str) -> ev.Diagnostic:
    return ev.Diagnostic(frame, code, f"{code} at {frame}")


def test_routine_diagnostics_are_not_findings():
    ds = [diag(0, "keepalive"), diag(1, "usage-only-chunk"), diag(2, "cumulative-usage-repeated"),
          diag(3, "unknown-event"), diag(4, "data-not-json"), diag(-1, "missing-terminator")]
    assert [d.code for d in ev.findings(ds)] == ["data-not-json", "missing-terminator"]
    assert ev.findings(ds[:4]) == [] and findings_text(ds[:4]) == ""


def test_findings_text_groups_by_code_with_their_frames():
    ds = [diag(3, "data-not-json"), diag(0, "keepalive"), diag(7, "data-not-json"), diag(-1, "missing-terminator"),
          diag(9, "tool-call-id-changed")]
    assert findings_text(ds) == "data-not-json (frames 3, 7); missing-terminator; tool-call-id-changed (frame 9)"


def test_findings_text_lists_at_most_four_frames_per_code():
    ds = [diag(n, "data-not-json") for n in range(6)]
    assert findings_text(ds) == "data-not-json (frames 0, 1, 2, 3…)"


# -- error types and provider error bodies ------------------------------------------------------------------------
def test_error_types_are_the_strings_captures_hold():
    """A StrEnum: equal to, hashed like and serialized as the plain strings, so no capture file changes."""
    assert {e.value for e in ErrorType} == {
        "http_error", "not_event_stream", "unframed_error", "connect_failed", "connection_dropped", "stalled",
        "transport_error", "cancelled", "client_cancelled", "missing_key", "bad_request", "insecure_transport",
        "history_rejected", "internal_error", "body_too_large",
        "capture_truncated"}
    e = error_dict(ErrorType.CONNECTION_DROPPED, "cut")
    assert json.dumps(e) == '{"type": "connection_dropped", "message": "cut", "raw": null}'
    assert e["type"] == "connection_dropped" and {"connection_dropped": 1}[e["type"]] == 1
    assert ErrorType("stalled") is ErrorType.STALLED and f"{ErrorType.STALLED}" == "stalled"


@pytest.mark.parametrize("body, expected", [
    ({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},   # Anthropic
     ("rate_limit_error", "slow down")),
    ({"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}},   # OpenAI
     ("invalid_request_error", "bad key")),
    ([{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}],   # Gemini: a list
     ("RESOURCE_EXHAUSTED", "quota")),
    ({"error": {"code": 500, "detail": "boom"}}, ("500", "boom")),
    ({"error": "plain text"}, (None, "plain text")),
    ({"message": "top-level", "code": "E1"}, ("E1", "top-level")),
    ({"unrelated": 1}, (None, None)),
    ("not json at all", (None, None)),
    ([], (None, None)),
    (None, (None, None)),
    ({"error": 42}, (None, None)),
])
def test_provider_error_reads_every_shape(body, expected):
    assert provider_error(body) == expected


def test_the_shared_modules_import_no_qt_and_no_http_client():
    code = ("import sys, core.live.summary, core.live.errors, core.live.tools; "
            "print([m for m in ('PySide6', 'httpx') if m in sys.modules])")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert p.stdout.strip() == "[]", p.stdout + p.stderr


def test_error_line_never_says_none():
    assert error_line({"type": None, "message": None}) == "–: –"
