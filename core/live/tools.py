"""Tool definitions: the shapes a tool may be given in, and checking a list of them before anything is sent.

A tool is `{"name", "description", "parameters": <JSON Schema of an object>}`; the OpenAI-shaped
`{"type": "function", "function": {...}}`, an Anthropic-shaped `input_schema` and Gemini's `parametersJsonSchema`
are accepted too.

`normalize_tool(t)` gives the plain shape, which the request builder maps to each format (it raises ValueError
for a tool without a name). `validate_tools(text)` checks a JSON text of tools the way the GUI's tools editor does
as you type and `run --tools FILE` does before sending: `(tools, message)`, tools None when they are not valid
(tools nested deeper than `core.wire.jsonfast.MAX_DEPTH` levels among them: no API takes them, and everything
that handles them after, the redaction included, recurses per level).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.live.summary import plural
from core.wire.jsonfast import MAX_DEPTH, bounded, loads

SCHEMA_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def _unwrapped(t: Mapping[str, Any]) -> Mapping[str, Any]:
    """The tool itself, out of an OpenAI `{"type": "function", "function": {...}}` wrapper."""
    if t.get("type") == "function" and isinstance(t.get("function"), Mapping):
        return t["function"]
    return t


def _parameters(t: Mapping[str, Any]) -> Any:
    """The tool's parameter schema, under whichever key its shape uses (an empty object schema when none)."""
    params = t.get("parameters", t.get("input_schema", t.get("parametersJsonSchema")))
    return {"type": "object", "properties": {}} if params is None else params


def normalize_tool(t: Mapping[str, Any]) -> dict:
    """{"name", "description", "parameters"} from any accepted shape; ValueError for a tool without a name."""
    t = _unwrapped(t)
    name = t.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"a tool needs a name: {t!r}")
    return {"name": name, "description": t.get("description") or "", "parameters": _parameters(t)}


def validate_tools(text: str) -> tuple[list | None, str]:
    """(tools, message): a JSON text of tools (a list, or one tool) as a list, or None and what is wrong with
    it, in one line. An empty text is no tools."""
    if not text.strip():
        return [], "no tools"
    try:
        data = loads(text)   # too deep to parse is a ValueError (JSONTooDeep), never a RecursionError
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        where = f"line {line}, column {col}: " if line else ""
        return None, f"not JSON: {where}{getattr(exc, 'msg', str(exc))}"
    if bounded(data) is not data:   # every consumer (the redaction, the checks below, json.dumps) recurses per level
        return None, f"nested deeper than {MAX_DEPTH} levels"
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None, "expected a list of tools"
    names = set()
    for i, t in enumerate(data):
        where = f"tool {i + 1}"
        if not isinstance(t, dict):
            return None, f"{where}: expected an object"
        t = _unwrapped(t)
        name = t.get("name")
        if not isinstance(name, str) or not name.strip():
            return None, f"{where}: needs a \"name\""
        where = f"tool {name!r}"
        if name in names:
            return None, f"{where}: the name is used twice"
        names.add(name)
        if "description" in t and not isinstance(t["description"], str):
            return None, f"{where}: \"description\" must be a string"
        params = _parameters(t)
        msg = _check_schema(params, f"{where}: parameters")
        if msg:
            return None, msg
        if params.get("type") != "object":
            return None, f"{where}: parameters must be a schema of type \"object\""
    return data, f"{plural(len(data), 'tool')}, valid"


def _check_schema(s: Any, where: str) -> str | None:
    """What is wrong with a JSON Schema (the parts a provider would reject the request for), or None."""
    if not isinstance(s, dict):
        return f"{where}: a JSON Schema must be an object"
    t = s.get("type")
    types = t if isinstance(t, list) else [t] if t is not None else []
    for x in types:
        if x not in SCHEMA_TYPES:
            return f"{where}: unknown type {x!r}"
    props = s.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            return f"{where}: \"properties\" must be an object"
        for k, v in props.items():
            msg = _check_schema(v, f"{where}.{k}")
            if msg:
                return msg
    req = s.get("required")
    if req is not None:
        if not isinstance(req, list) or not all(isinstance(x, str) for x in req):
            return f"{where}: \"required\" must be a list of names"
        missing = [x for x in req if props is not None and x not in props]
        if missing:
            return f"{where}: required {missing[0]!r} is not among the properties"
    if "items" in s:
        items = s["items"]
        subs = ([(f"{where}[{i}]", x) for i, x in enumerate(items)] if isinstance(items, list)   # tuple form
                else [(f"{where}[]", items)])
        for at, sub in subs:
            msg = _check_schema(sub, at)
            if msg:
                return msg
    if "enum" in s and not isinstance(s["enum"], list):
        return f"{where}: \"enum\" must be a list"
    return None
