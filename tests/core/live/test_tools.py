"""Tool definitions (core/live/tools.py): the shapes accepted and the check the GUI's tools editor and
`run --tools` share."""
from __future__ import annotations

import json

import pytest

from core.live.request import PromptSpec, build_request
from core.live.config import ProviderConfig
from core.live.tools import normalize_tool, validate_tools

WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def test_valid_tools_in_every_accepted_shape():
    shapes = [WEATHER, {"type": "function", "function": dict(WEATHER, name="openai_shaped")},
              {"name": "anthropic_shaped", "input_schema": WEATHER["parameters"]},
              {"name": "gemini_shaped", "parametersJsonSchema": WEATHER["parameters"]},
              {"name": "no_parameters"}]
    tools, msg = validate_tools(json.dumps(shapes))
    assert tools == shapes and msg == "5 tools, valid"
    assert [normalize_tool(t)["name"] for t in shapes] == ["get_weather", "openai_shaped", "anthropic_shaped",
                                                            "gemini_shaped", "no_parameters"]
    assert all(normalize_tool(t)["parameters"] == WEATHER["parameters"] for t in shapes[:4])
    assert normalize_tool(shapes[4]) == {"name": "no_parameters", "description": "",
                                         "parameters": {"type": "object", "properties": {}}}


def test_one_tool_object_and_an_empty_text():
    assert validate_tools(json.dumps(WEATHER)) == ([WEATHER], "1 tool, valid")
    assert validate_tools("  \n") == ([], "no tools")


def test_tuple_form_items_are_checked_position_by_position():
    ok = {"name": "t", "parameters": {"type": "object", "properties": {
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}}}
    assert validate_tools(json.dumps([ok]))[0] == [ok]
    bad = json.loads(json.dumps(ok))
    bad["parameters"]["properties"]["pair"]["items"][1] = {"type": "int"}
    assert validate_tools(json.dumps([bad])) == (None, "tool 't': parameters.pair[1]: unknown type 'int'")


@pytest.mark.parametrize("text, message", [
    ('[{"name": "a",}]', "not JSON: line 1, column 15: Expecting property name enclosed in double quotes"),
    ('"get_weather"', "expected a list of tools"),
    ("[1]", "tool 1: expected an object"),
    ('[{"description": "x"}]', 'tool 1: needs a "name"'),
    ('[{"name": "a"}, {"name": "a"}]', "tool 'a': the name is used twice"),
    ('[{"name": "a", "description": 3}]', "tool 'a': \"description\" must be a string"),
    ('[{"name": "a", "parameters": {"type": "array"}}]', "tool 'a': parameters must be a schema of type \"object\""),
    ('[{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "str"}}}}]',
     "tool 'a': parameters.x: unknown type 'str'"),
    ('[{"name": "a", "parameters": {"type": "object", "properties": {}, "required": ["x"]}}]',
     "tool 'a': parameters: required 'x' is not among the properties"),
    ('[{"name": "a", "parameters": {"type": "object", "properties": {"x": {"enum": "abc"}}}}]',
     "tool 'a': parameters.x: \"enum\" must be a list"),
    ('[{"name": "a", "parameters": []}]', "tool 'a': parameters: a JSON Schema must be an object"),
])
def test_invalid_tools_say_what_is_wrong_in_one_line(text, message):
    assert validate_tools(text) == (None, message)


def test_tools_nested_too_deep_are_refused_in_one_line():
    """Not a RecursionError here, nor later in the redaction of the request (a 3,000-line traceback)."""
    assert validate_tools("[" * 100000 + "]" * 100000) == (None, "not JSON: JSON nested too deep to parse")
    deep = '{"x":' * 900 + "1" + "}" * 900
    text = f'[{{"name": "f", "parameters": {{"type": "object", "properties": {{"a": {deep}}}}}}}]'
    assert validate_tools(text) == (None, "nested deeper than 250 levels")
    ok = '{"x":' * 240 + "1" + "}" * 240
    assert validate_tools(f'[{{"name": "f", "parameters": {{"type": "object", "properties": {{"a": {ok}}}}}}}]')[0]


def test_the_request_builder_normalizes_through_the_same_function():
    p = ProviderConfig("p", "anthropic", "http://127.0.0.1:9", "m", "")
    req = build_request(p, PromptSpec(user="x", tools=({"type": "function", "function": WEATHER},)), None)
    assert req.body["tools"] == [{"name": "get_weather", "description": "Weather for a city",
                                  "input_schema": WEATHER["parameters"]}]
    with pytest.raises(ValueError, match="needs a name"):
        normalize_tool({"description": "nameless"})
