"""The Responses API's stored responses: `previous_response_id`, `store`, and `GET /v1/responses/{id}`.

The real API stores every response unless the request says `store: false`, and a request naming a
`previous_response_id` continues from it: its `input` is read after that response's own input and output, so an
application may send only the new items (a `function_call_output` for the call the stored response made, as
OpenAI's guide shows). Here each stored response keeps the whole conversation it ended (every input item, then
its output items) and the response object, in memory, for the last `KEPT` responses and at most `KEPT_BYTES`
of their requests (a loopback test server, not a database): a `previous_response_id` that is unknown, was not stored or has been dropped is the API's 400.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable

from core.servers.emulator import providers as pv
from core.wire.jsonfast import loads as parse_json

#: responses kept, and the most bytes of request bodies they may hold together (the oldest dropped first: a
#: request may be 32 MiB)
KEPT = 512
KEPT_BYTES = 128 << 20


class StoredResponses:
    def __init__(self) -> None:
        self._kept: OrderedDict[str, tuple[list, dict, int]] = OrderedDict()
        self._bytes = 0

    def expand(self, raw: bytes) -> bytes:
        """The request body with the stored conversation of its `previous_response_id` put before its `input`
        (unchanged when it names none); the API's 400 when that response is not stored."""
        if b"previous_response_id" not in raw:
            return raw               # (the usual case: no second parse of the body)
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):
            return raw               # (the parser says what is wrong with it: not JSON, nested too deep)
        if not isinstance(body, dict) or body.get("previous_response_id") is None:
            return raw
        prev = body.pop("previous_response_id")
        kept = self._kept.get(prev) if isinstance(prev, str) else None
        if kept is None:
            raise pv.openai_error(400, f"Previous response with id '{prev}' not found.",
                                  param="previous_response_id", code="previous_response_not_found")
        self._kept.move_to_end(prev)
        body["input"] = kept[0] + _items(body.get("input"))
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def keep(self, raw: bytes, response_of: Callable[[], dict]) -> None:
        """Store the response a request got (`response_of()` makes the whole response object, only when it is
        kept) unless the request said `store: false`."""
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):
            return
        if not isinstance(body, dict) or body.get("store") is False:
            return
        response = response_of()
        if not isinstance(response.get("id"), str):
            return
        old = self._kept.pop(response["id"], None)
        if old is not None:
            self._bytes -= old[2]
        self._kept[response["id"]] = (_items(body.get("input")) + list(response.get("output") or []), response,
                                      len(raw))
        self._bytes += len(raw)
        while self._kept and (len(self._kept) > KEPT or self._bytes > KEPT_BYTES):
            self._bytes -= self._kept.popitem(last=False)[1][2]

    def get(self, response_id: str) -> dict | None:
        kept = self._kept.get(response_id)
        return None if kept is None else kept[1]


def _items(inp) -> list:
    """A request's `input` as a list of items (a string is one user message)."""
    if isinstance(inp, str):
        return [{"role": "user", "content": inp}]
    return list(inp) if isinstance(inp, list) else []
