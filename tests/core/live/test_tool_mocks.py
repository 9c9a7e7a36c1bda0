"""The tool presets' mock implementations: the calculator computes (without eval), the clock and weather are fixed."""
from __future__ import annotations

import json

import pytest

from core.live.conversation import Part
from core.live.tool_mocks import (TOOL_PRESETS, CalcError, calculate, forecast, mock_results, run_mock)


@pytest.mark.parametrize("expr, value", [("2 * (3 + 4)", 14), ("1 + 2 * 3", 7), ("2 ^ 10", 1024), ("7 / 2", 3.5),
                                         ("-3 ** 2", -9), ("sqrt(16) + abs(-2)", 6.0), ("10 // 3 + 10 % 3", 4),
                                         ("round(pi, 2)", 3.14), ("max(1, 5, 3) × 2", 10), ("6 ÷ 4", 1.5)])
def test_calculator_computes(expr, value):
    assert calculate(expr) == value


@pytest.mark.parametrize("expr, why", [
    ("__import__('os').system('true')", "unsupported syntax"), ("__import__('os')", "unknown function"), ("open('x')", "unknown function"),
    ("(1).__class__", "unsupported syntax"), ("x + 1", "unknown name"), ("1 / 0", "division by zero"),
    ("9 ** 9 ** 9", "more than 1000 digits"), ("2 ** 5000", "more than 1000 digits"), ("'a' * 3", "not a number"),
    ("1 +", "not an arithmetic expression"), ("", "empty"), ("1+" * 300 + "1", "longer than"),
    ("sqrt(-1)", "sqrt"), ("True + 1", "not a number"), ("10.0 ** 400", "too large"),
])
def test_calculator_refuses_what_is_not_bounded_arithmetic(expr, why):
    with pytest.raises(CalcError, match=why):
        calculate(expr)


def test_run_mock_results_and_errors():
    ok = run_mock("calculator", '{"expression": "2 * (3 + 4)"}')
    assert not ok.is_error and json.loads(ok.text) == {"expression": "2 * (3 + 4)", "result": 14}
    bad = run_mock("calculator", '{"expression": "1/0"}')
    assert bad.is_error and "division by zero" in json.loads(bad.text)["error"]
    assert run_mock("nope", "{}").is_error and "no mock implementation" in run_mock("nope", "{}").text
    assert run_mock("get_weather", "not json").is_error
    assert run_mock("get_weather", "[1]").is_error


def test_clock_is_fixed_and_follows_the_time_zone():
    paris = json.loads(run_mock("get_time", '{"timezone": "Europe/Paris"}').text)
    tokyo = json.loads(run_mock("get_time", '{"timezone": "Asia/Tokyo"}').text)
    assert paris["time"] == "2026-01-15T10:00:00+01:00" and tokyo["time"] == "2026-01-15T18:00:00+09:00"
    assert json.loads(run_mock("get_time", '{"timezone": "UTC"}').text)["time"] == "2026-01-15T09:00:00+00:00"
    assert run_mock("get_time", '{"timezone": "Mars/Olympus"}').is_error


def test_weather_is_deterministic_per_city_and_unit():
    a = json.loads(run_mock("get_weather", '{"city": "Paris"}').text)
    assert a == json.loads(run_mock("get_weather", '{"city": "paris "}').text) | {"city": "Paris"}
    assert a == forecast("Paris") and a["forecast"].endswith("km/h") and "°C" in a["forecast"]
    f = forecast("Paris", "fahrenheit")
    assert f["temperature"] == round(a["temperature"] * 9 / 5 + 32) and "°F" in f["forecast"]
    assert {forecast(c)["forecast"] for c in ("Paris", "Rome", "Tokyo", "Lima")} != {a["forecast"]}
    assert run_mock("get_weather", "{}").is_error


def test_mock_results_answer_each_call_by_id():
    calls = [Part("tool_call", id="c1", name="get_weather", arguments='{"city":"Rome"}'),
             Part("tool_call", id="c2", name="calculator", arguments='{"expression":"1/0"}')]
    results = mock_results(calls)
    assert [(r.type, r.id, r.name, r.is_error) for r in results] == [
        ("tool_result", "c1", "get_weather", False), ("tool_result", "c2", "calculator", True)]
    assert json.loads(results[0].text)["forecast"] == forecast("Rome")["forecast"]


def test_presets_are_tool_definitions_with_a_mock_each():
    names = {t["name"] for tools in TOOL_PRESETS.values() for t in tools}
    assert names == {"get_weather", "calculator", "get_time"}
    for tools in TOOL_PRESETS.values():
        for t in tools:
            assert t["parameters"]["type"] == "object" and t["parameters"]["required"]
