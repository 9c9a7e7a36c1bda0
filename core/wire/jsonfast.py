"""JSON parsing for hot paths: orjson when installed, the standard library otherwise.

orjson rejects a few things the stdlib accepts (NaN, integers beyond 64 bits); `loads` falls back to `json` for
those. `loads_fast` is the bare parser (no wrapper call per frame): a caller catches its ValueError and then asks
`loads`, as the adapters do through `Adapter.parse_json`.
"""
from __future__ import annotations

import json

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    _orjson = None


if _orjson is not None:
    _orjson_loads = _orjson.loads
    #: orjson's own loads, for hot paths that catch ValueError and then call `loads` (the stdlib's leniency)
    loads_fast = _orjson_loads
    _JSONDecodeError = _orjson.JSONDecodeError

    def loads(text: str):
        try:
            return _orjson_loads(text)
        except _JSONDecodeError:
            return json.loads(text)
else:
    loads = loads_fast = json.loads


def dumps_compact(obj) -> str:
    """Compact JSON with non-ASCII kept (the contract's form for Gemini's whole `args` objects)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
