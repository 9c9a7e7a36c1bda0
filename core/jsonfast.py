"""JSON parsing for hot paths: orjson when installed, the standard library otherwise.

orjson rejects a few things the stdlib accepts (NaN, integers beyond 64 bits); those fall back to `json`.
"""
from __future__ import annotations

import json

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    _orjson = None


if _orjson is not None:
    _orjson_loads = _orjson.loads
    _JSONDecodeError = _orjson.JSONDecodeError

    def loads(text: str):
        try:
            return _orjson_loads(text)
        except _JSONDecodeError:
            return json.loads(text)
else:
    loads = json.loads


def dumps_compact(obj) -> str:
    """Compact JSON with non-ASCII kept (the contract's form for Gemini's whole `args` objects)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
