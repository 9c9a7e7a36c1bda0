"""The big scenarios start at once: the response headers and first bytes leave before the reply is made whole
(a pane used to say "connecting" for 3-6 s while the firehose was encoded)."""
from __future__ import annotations

import time

import httpx
import pytest

import core.servers.emulator.server as srv
from core.wire.formats import FORMATS

from tests.core.servers.emulator.test_server import request_for


@pytest.mark.parametrize("fmt, scenario", [(f, "firehose") for f in FORMATS] + [("anthropic", "long")])
def test_headers_and_first_bytes_come_before_the_reply_is_made(emulator, monkeypatch, fmt, scenario):
    made = []
    real = srv.iter_schedule

    def counting(*args):
        for w in real(*args):
            made.append(len(w[1]))
            yield w

    monkeypatch.setattr(srv, "iter_schedule", counting)
    extra = {"max_tokens": 100_000} if fmt == "anthropic" else {}
    path, headers, body = request_for(fmt, scenario, prompt=f"a prompt no other test sends {time.time_ns()}",
                                      **extra)
    with httpx.Client(timeout=60) as client, client.stream("POST", emulator + path, headers=headers,
                                                           json=body) as r:
        assert r.status_code == 200
        at_headers = len(made)
        chunks = r.iter_raw()
        first = next(chunks)
        at_first = len(made)
        rest = sum(1 for _ in chunks)
    total = len(made)
    assert first and rest > 0
    assert at_headers < total and at_first < total, (at_headers, at_first, total)
