"""The emulator's stored Responses (`core.servers.emulator.stored`): what a previous_response_id adds, and the bound."""
from __future__ import annotations

import json

import pytest

from core.servers.emulator import stored
from core.servers.emulator.providers import ProviderErrorResponse


def test_a_continuation_reads_the_stored_conversation_first_and_the_store_is_bounded(monkeypatch):
    monkeypatch.setattr(stored, "KEPT", 3)
    s = stored.StoredResponses()
    s.keep(b'{"input": "hi"}', lambda: {"id": "resp_1", "output": [{"type": "message", "role": "assistant"}]})
    got = json.loads(s.expand(b'{"previous_response_id": "resp_1", "input": [{"role": "user", "content": "more"}]}'))
    assert "previous_response_id" not in got
    assert got["input"] == [{"role": "user", "content": "hi"}, {"type": "message", "role": "assistant"},
                            {"role": "user", "content": "more"}]
    s.keep(b'{"input": "x", "store": false}', lambda: {"id": "resp_2", "output": []})
    assert s.get("resp_2") is None
    for i in range(3, 7):
        s.keep(b'{"input": "x"}', lambda i=i: {"id": f"resp_{i}", "output": []})
    assert s.get("resp_1") is None and s.get("resp_6") is not None      # the oldest dropped first
    with pytest.raises(ProviderErrorResponse):
        s.expand(b'{"previous_response_id": "resp_1", "input": "again"}')
    assert s.expand(b'{"input": "no previous"}') == b'{"input": "no previous"}'


def test_the_store_is_bounded_in_bytes_too(monkeypatch):
    monkeypatch.setattr(stored, "KEPT_BYTES", 1000)
    s = stored.StoredResponses()
    big = json.dumps({"input": "x" * 600}).encode()
    s.keep(big, lambda: {"id": "resp_a", "output": []})
    s.keep(big, lambda: {"id": "resp_b", "output": []})
    assert s.get("resp_a") is None and s.get("resp_b") is not None
    s.keep(big, lambda: {"id": "resp_b", "output": []})          # (the same id again: counted once)
    assert s.get("resp_b") is not None
