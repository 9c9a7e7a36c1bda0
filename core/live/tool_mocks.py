"""The tool presets (their JSON Schemas) and a mock implementation of each, so an agent loop runs with no real tool.

    TOOL_PRESETS                       name -> list of tool definitions (what the GUI's preset menu offers)
    run_mock(name, arguments) -> ToolOutcome(text, is_error)
    mock_results(calls) -> tuple of tool_result parts answering each call (core.live.conversation.Part)

The mocks are deterministic: the calculator really computes (a small arithmetic evaluator over Python's `ast`;
nothing is ever `eval`ed, and sizes are bounded), the clock answers a fixed instant (2026-01-15 09:00 UTC) in the
asked time zone, and the weather is a forecast derived from the city's name. A call the mocks cannot answer (an
unknown tool, bad arguments, a division by zero) gets an error result saying why, as a real tool would.
"""
from __future__ import annotations

import ast
import hashlib
import json
import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from core.live.conversation import Part, tool_result
from core.wire.jsonfast import loads as parse_json   # a ValueError, never a RecursionError, on deep input

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
CALCULATOR_TOOL = {
    "name": "calculator",
    "description": "Evaluate an arithmetic expression.",
    "parameters": {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "e.g. 2 * (3 + 4)"}},
        "required": ["expression"],
    },
}
TIME_TOOL = {
    "name": "get_time",
    "description": "Get the current time in a time zone.",
    "parameters": {
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA name, e.g. Europe/Paris"}},
        "required": ["timezone"],
    },
}
TOOL_PRESETS = {
    "weather": [WEATHER_TOOL],
    "calculator": [CALCULATOR_TOOL],
    "weather + calculator": [WEATHER_TOOL, CALCULATOR_TOOL],
    "weather + calculator + time": [WEATHER_TOOL, CALCULATOR_TOOL, TIME_TOOL],
}
FIXED_NOW = datetime(2026, 1, 15, 9, 0, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class ToolOutcome:
    text: str
    is_error: bool = False


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


# -- calculator ------------------------------------------------------------------------------------------------
MAX_EXPRESSION = 500          # characters
MAX_NODES = 200               # syntax nodes
MAX_DIGITS = 1000             # an integer result (or intermediate) may have at most this many digits


class CalcError(ValueError):
    pass


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {"sqrt": math.sqrt, "abs": abs, "round": round, "min": min, "max": max, "floor": math.floor,
              "ceil": math.ceil, "log": math.log, "log10": math.log10, "exp": math.exp, "sin": math.sin,
              "cos": math.cos, "tan": math.tan}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _checked(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CalcError("the result is not a number")
    if isinstance(v, float) and not math.isfinite(v):
        raise CalcError("the result is too large (or not a number)")
    if isinstance(v, int) and v.bit_length() > MAX_DIGITS * 3.33:
        raise CalcError(f"the result has more than {MAX_DIGITS} digits")
    return v


def _pow(a, b):
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        if b * math.log10(abs(a)) > MAX_DIGITS:   # decided before computing: 9**9**9 is never attempted
            raise CalcError(f"the result has more than {MAX_DIGITS} digits")
    elif abs(a) > 1 and abs(b) > 10_000:
        raise CalcError("the exponent is too large")
    return a ** b


def _eval(node):
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise CalcError(f"{node.value!r} is not a number")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        a, b = _eval(node.left), _eval(node.right)
        try:
            if isinstance(node.op, ast.Pow):
                return _checked(_pow(a, b))
            return _checked(_BINARY[type(node.op)](a, b))
        except ZeroDivisionError:
            raise CalcError("division by zero") from None
        except OverflowError:
            raise CalcError("the result is too large") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise CalcError(f"unknown name {node.id!r}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = _FUNCTIONS.get(node.func.id)
        if fn is None:
            raise CalcError(f"unknown function {node.func.id!r} (known: {', '.join(sorted(_FUNCTIONS))})")
        args = [_eval(a) for a in node.args]
        try:
            return _checked(fn(*args))
        except (ValueError, TypeError, OverflowError) as exc:
            raise CalcError(f"{node.func.id}: {exc}") from None
    raise CalcError(f"unsupported syntax: {type(node).__name__}")


def calculate(expression: str) -> int | float:
    """The value of an arithmetic expression: numbers, + - * / // % ** (or ^), parentheses, pi, e and a few
    functions (sqrt, abs, round, min, max, floor, ceil, log, log10, exp, sin, cos, tan). `CalcError` says why an
    expression is refused (syntax, size, division by zero, a result of more than 1000 digits)."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalcError("the expression is empty")
    if len(expression) > MAX_EXPRESSION:
        raise CalcError(f"the expression is longer than {MAX_EXPRESSION} characters")
    text = expression.replace("^", "**").replace("×", "*").replace("÷", "/").replace("−", "-")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise CalcError(f"not an arithmetic expression: {expression!r}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalcError(f"the expression has more than {MAX_NODES} parts")
    return _eval(tree)


def _number(v) -> int | float:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return int(v)
    if isinstance(v, float):
        return float(f"{v:.12g}")
    return v


def _calculator(args: dict) -> ToolOutcome:
    expr = args.get("expression")
    try:
        value = calculate(expr)
    except CalcError as exc:
        return ToolOutcome(_dumps({"expression": expr, "error": str(exc)}), True)
    return ToolOutcome(_dumps({"expression": expr, "result": _number(value)}))


# -- clock -----------------------------------------------------------------------------------------------------
def _clock(args: dict) -> ToolOutcome:
    name = args.get("timezone") or "UTC"
    if not isinstance(name, str):
        return ToolOutcome(_dumps({"error": "timezone must be a string"}), True)
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    except ImportError:   # pragma: no cover - Python without zoneinfo
        ZoneInfo = None
    if name.upper() in ("UTC", "Z", "GMT"):
        tz = timezone.utc
    elif ZoneInfo is None:
        return ToolOutcome(_dumps({"timezone": name, "error": "no time zone database here"}), True)
    else:
        try:
            tz = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            return ToolOutcome(_dumps({"timezone": name, "error": f"unknown time zone {name!r}"}), True)
    local = FIXED_NOW.astimezone(tz)
    return ToolOutcome(_dumps({"timezone": name, "time": local.isoformat(), "weekday": local.strftime("%A"),
                               "note": "a fixed time (mock clock)"}))


# -- weather ---------------------------------------------------------------------------------------------------
_CONDITIONS = ("sunny", "partly cloudy", "overcast", "light rain", "showers", "clear skies", "foggy", "windy")


def forecast(city: str, unit: str = "celsius") -> dict:
    """A deterministic forecast for `city` (the same city always gets the same weather)."""
    h = hashlib.sha256(city.strip().lower().encode("utf-8")).digest()
    celsius = -5 + h[0] % 36
    conditions = _CONDITIONS[h[1] % len(_CONDITIONS)]
    humidity = 30 + h[2] % 66
    wind = 3 + h[3] % 40
    fahrenheit = unit == "fahrenheit"
    temp = round(celsius * 9 / 5 + 32) if fahrenheit else celsius
    sym = "°F" if fahrenheit else "°C"
    return {"city": city, "unit": "fahrenheit" if fahrenheit else "celsius", "temperature": temp,
            "conditions": conditions, "humidity": humidity, "wind_kph": wind,
            "forecast": f"{conditions}, {temp} {sym}, humidity {humidity}%, wind {wind} km/h"}


def _weather(args: dict) -> ToolOutcome:
    city = args.get("city") or args.get("location")
    if not isinstance(city, str) or not city.strip():
        return ToolOutcome(_dumps({"error": "a city is required"}), True)
    unit = args.get("unit") if args.get("unit") in ("celsius", "fahrenheit") else "celsius"
    return ToolOutcome(_dumps(forecast(city.strip(), unit)))


MOCKS = {"calculator": _calculator, "get_time": _clock, "get_weather": _weather}


def run_mock(name: str | None, arguments: str | None) -> ToolOutcome:
    """The mock result of one call (an error result when there is no mock or the arguments are not JSON)."""
    fn = MOCKS.get(name or "")
    if fn is None:
        return ToolOutcome(_dumps({"error": f"no mock implementation for the tool {name!r} (mocks exist for "
                                            f"{', '.join(sorted(MOCKS))})"}), True)
    try:
        args = parse_json(arguments or "{}")
    except (ValueError, RecursionError):
        return ToolOutcome(_dumps({"error": "the arguments are not valid JSON", "arguments": arguments}), True)
    if not isinstance(args, dict):
        return ToolOutcome(_dumps({"error": "the arguments must be a JSON object"}), True)
    return fn(args)


def mock_results(calls: Iterable[Part]) -> tuple[Part, ...]:
    """One tool_result part per call, from the mocks."""
    out = []
    for c in calls:
        o = run_mock(c.name, c.arguments)
        out.append(tool_result(c, o.text, o.is_error))
    return tuple(out)
