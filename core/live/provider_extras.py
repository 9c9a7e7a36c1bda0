"""A provider's extra request headers, query parameters and body fields (`headers`, `query`, `extra_body` in the
providers file), checked and written back (no I/O, no secrets of its own).

    [provider.headers]
    api-key = { env = "AZURE_OPENAI_API_KEY" }   # a value read from an environment variable: a secret
    HTTP-Referer = "https://example.com/my-app"  # a plain value: not a secret, stored and shown as it is

    [provider.query]
    api-version = "2024-10-21"

    [provider.extra_body]                        # merged into the top level of the JSON body
    seed = 42
    response_format = { type = "json_object" }

A header or query value is a string, or `{ env = "NAME" }`: the value of that environment variable (else the OS
keyring entry of that name, as for keys), read when the request is built. Such a value is a secret: it is
redacted like the key everywhere (`core.live.config`). `extra_body` holds plain JSON values only (TOML has no
null); its tables are merged key by key into what the request builder made (`merge_body`), so
`generationConfig = { seed = 7 }` adds to Gemini's generationConfig instead of replacing it.

The settings dialog edits each table as lines of `name = value` (`table_text` / `parse_table_text`): a value
is TOML (`"text"`, `42`, `["a", "b"]`, `{ env = "NAME" }`) or, in `extra_body`, JSON (`{"type": "json_object"}`);
a header or query value that is neither is taken as plain text. `extra_body` names may be dotted
(`generationConfig.seed = 7`).

Checks raise `ExtrasError` (a ValueError) naming the table and the entry; `core.live.config` adds the provider.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TABLES = ("headers", "query", "extra_body")
MAX_DEPTH = 32                  # extra_body nesting: far beyond any real parameter, far below any recursion limit
# header names are RFC 9110 tokens
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# C0 controls but tab, and DEL: never in a header value (CR/LF would split the header), nor a query name/value
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: headers the HTTP client owns: a value from the providers file would corrupt the framing
RESERVED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "te", "upgrade",
                              "trailer", "keep-alive"})


class ExtrasError(ValueError):
    """A headers / query / extra_body entry that cannot be used."""


@dataclass(frozen=True, slots=True)
class EnvRef:
    """A header or query value taken from the environment variable `name` (or the OS keyring entry of that name)
    when the request is built; a secret."""

    name: str

    def to_json(self) -> dict[str, str]:
        return {"env": self.name}


def is_env_ref(value: Any) -> bool:
    return isinstance(value, EnvRef)


def _env_ref(value: Mapping, where: str) -> EnvRef:
    if set(value) != {"env"} or not isinstance(value.get("env"), str) or not _ENV_NAME.match(value["env"].strip()):
        raise ExtrasError(f"{where}: a value taken from the environment is {{ env = \"NAME\" }} with a variable "
                          f"name (letters, digits, _), got {_short(value)}")
    return EnvRef(value["env"].strip())


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def parse_values(table: Any, kind: str) -> dict[str, str | EnvRef]:
    """The `headers` or `query` table: each value a string or `{ env = "NAME" }`."""
    if not isinstance(table, Mapping):
        raise ExtrasError(f"'{kind}' must be a table of name = value ([provider.{kind}])")
    out: dict[str, str | EnvRef] = {}
    seen: dict[str, str] = {}
    for name, value in table.items():
        where = f"{kind}.{name}"
        if not isinstance(name, str) or not name.strip():
            raise ExtrasError(f"{kind}: a name is empty")
        if kind == "headers":
            if not _TOKEN.match(name):
                raise ExtrasError(f"{where}: not a header name (letters, digits and !#$%&'*+.^_`|~-)")
            if name.lower() in RESERVED_HEADERS:
                raise ExtrasError(f"{where}: the HTTP client sets this header itself")
            if name.lower() in seen:
                raise ExtrasError(f"{where}: the header is named twice ({seen[name.lower()]!r} and {name!r})")
            seen[name.lower()] = name
        elif _CONTROL.search(name):
            raise ExtrasError(f"{where}: the name holds a control character")
        if isinstance(value, Mapping):
            out[name] = _env_ref(value, where)
        elif isinstance(value, str):
            if _CONTROL.search(value):
                raise ExtrasError(f"{where}: the value holds a control character (a line break would split the "
                                  f"request)")
            out[name] = value
        else:
            raise ExtrasError(f"{where}: must be a string or {{ env = \"NAME\" }} (got {_short(value)})")
    return out


def parse_extra_body(table: Any) -> dict[str, Any]:
    """The `extra_body` table: JSON values only (no dates, no NaN), nested at most `MAX_DEPTH` levels."""
    if not isinstance(table, Mapping):
        raise ExtrasError("'extra_body' must be a table of body fields ([provider.extra_body])")
    return {str(k): _json_value(v, f"extra_body.{k}", 1) for k, v in table.items()}


def _json_value(v: Any, where: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ExtrasError(f"{where}: nested more than {MAX_DEPTH} levels")
    if isinstance(v, bool) or v is None or isinstance(v, (str, int)):
        if v is None:
            raise ExtrasError(f"{where}: null cannot be written in TOML; leave the field out")
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ExtrasError(f"{where}: {v} is not a JSON number")
        return v
    if isinstance(v, Mapping):
        return {str(k): _json_value(x, f"{where}.{k}", depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
    raise ExtrasError(f"{where}: a {type(v).__name__} is not a JSON value (write it as a string)")


def values_to_toml(values: Mapping[str, str | EnvRef]) -> dict[str, Any]:
    return {k: (v.to_json() if isinstance(v, EnvRef) else v) for k, v in values.items()}


def values_from_json(d: Any) -> dict[str, str | EnvRef]:
    """A capture's headers / query (lenient: what cannot be read is dropped, the capture still reads)."""
    out: dict[str, str | EnvRef] = {}
    if not isinstance(d, Mapping):
        return out
    for k, v in d.items():
        if isinstance(v, str):
            out[str(k)] = v
        elif isinstance(v, Mapping) and isinstance(v.get("env"), str):
            out[str(k)] = EnvRef(v["env"])
    return out


# -- merging into a request ---------------------------------------------------------------------------------
def merge_body(body: dict, extra: Mapping[str, Any], path: str = "") -> list[str]:
    """Merge `extra` into `body` in place: tables key by key, anything else replaces. Returns the paths whose
    built value was replaced (for the request's notes)."""
    replaced: list[str] = []
    for k, v in extra.items():
        here = f"{path}.{k}" if path else k
        if isinstance(v, Mapping) and isinstance(body.get(k), dict):
            replaced += merge_body(body[k], v, here)
        else:
            if k in body and body[k] != v:
                replaced.append(here)
            body[k] = json.loads(json.dumps(v))   # a copy: the provider's table is never shared with a request
    return replaced


# -- the dialog's text form ---------------------------------------------------------------------------------
def _toml_key(k: str) -> str:
    from core.live.config import toml_value

    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else toml_value(k)


def table_text(table: Mapping[str, Any]) -> str:
    """A table as the dialog shows it: one `name = value` line per entry (values in TOML)."""
    from core.live.config import toml_value

    lines = []
    for k, v in table.items():
        lines.append(f"{_toml_key(k)} = {toml_value(v.to_json() if isinstance(v, EnvRef) else v)}")
    return "\n".join(lines)


def _toml_line(line: str) -> dict | None:
    import tomllib

    try:
        return tomllib.loads(line)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


def parse_table_text(text: str, kind: str) -> dict[str, Any]:
    """The dialog's lines back into a table (checked as the providers file is): `# comment` and blank lines are
    skipped; ExtrasError names the line."""
    out: dict[str, Any] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        if not eq:
            raise ExtrasError(f"{kind}, line {no}: write name = value")
        name, value = name.strip(), value.strip()
        if not name:
            raise ExtrasError(f"{kind}, line {no}: the name is missing")
        if kind == "extra_body":
            parsed = _toml_line(line)
            if parsed is None:
                key = _toml_line(f"{name} = 0")
                try:
                    v = json.loads(value)
                except ValueError:
                    v = None
                if key is None or v is None:
                    raise ExtrasError(f"{kind}, line {no}: the value is neither TOML nor JSON ({_short(value)}); "
                                      f"quote text: {name} = \"...\"")
                parsed = _replace_leaf(key, v)
            _merge_new(out, parsed, kind, no)
            continue
        key_doc = _toml_line(f"{name} = 0") if name.startswith(('"', "'")) else None
        key = next(iter(key_doc)) if key_doc else name
        doc = _toml_line(f"v = {value}")
        v = doc["v"] if doc is not None else value
        if isinstance(v, Mapping) and set(v) != {"env"} or (
                not isinstance(v, (str, Mapping))):
            v = value   # a header / query value that is some other TOML value: its text, as written
        if key in out:
            raise ExtrasError(f"{kind}, line {no}: {key} is given twice")
        out[key] = v
    if kind == "extra_body":
        return parse_extra_body(out)
    return parse_values(out, kind)


def _replace_leaf(doc: dict, value: Any) -> dict:
    """`{"a": {"b": 0}}` with its one leaf replaced by `value` (a dotted name given a JSON value)."""
    k = next(iter(doc))
    return {k: _replace_leaf(doc[k], value) if isinstance(doc[k], dict) else value}


def _merge_new(out: dict, new: Mapping, kind: str, no: int, path: str = "") -> None:
    for k, v in new.items():
        here = f"{path}.{k}" if path else k
        if k in out:
            if isinstance(out[k], dict) and isinstance(v, Mapping):
                _merge_new(out[k], v, kind, no, here)
                continue
            raise ExtrasError(f"{kind}, line {no}: {here} is given twice")
        out[k] = v


__all__ = ["EnvRef", "ExtrasError", "TABLES", "RESERVED_HEADERS", "is_env_ref", "parse_values", "parse_extra_body",
           "values_to_toml", "values_from_json", "merge_body", "table_text", "parse_table_text"]
