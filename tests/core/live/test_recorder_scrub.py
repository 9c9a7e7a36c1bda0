"""The recorder's look for echoed secrets, chunk by chunk, and the scrub it spares at a run's end."""
from __future__ import annotations

import json

import pytest

from core.live.config import ProviderConfig
from core.live.recorder import ProviderRun

KEY = "sk-live-ABCDEFGH12345"


def _chunk(text: str) -> bytes:
    obj = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def _run(body: bytes, step: int) -> ProviderRun:
    run = ProviderRun(ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m"))
    run._secrets = (KEY,)
    run._begin(0.0)
    run._on_headers(1, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    for i in range(0, len(body), step):
        run._on_chunk(2 + i, body[i:i + step])
    run._finish(10_000, None)
    run._scrub()
    return run


@pytest.mark.parametrize("step", [1, 5, 17, 10_000])
def test_a_key_straddling_two_chunks_is_still_found_and_masked(step):
    body = _chunk("your key is " + KEY + " ok") + b"data: [DONE]\n\n"
    run = _run(body, step)
    assert KEY.encode() not in run.body and len(run.body) == len(body)
    assert any("appeared" in n for n in run.notes)


def test_a_body_that_cannot_hold_the_key_is_not_scrubbed_again(monkeypatch):
    import core.live.recorder as recorder

    calls = []
    monkeypatch.setattr(recorder, "mask_secrets", lambda *a, **k: calls.append(a) or (a[1], 0))
    run = _run(_chunk("nothing to see") + b"data: [DONE]\n\n", 7)
    assert calls == [] and not run._body_may_hold_secret
    escaped = "".join("\\u%04x" % ord(c) for c in KEY)
    _run(b'data: {"choices": [{"index": 0, "delta": {"content": "' + escaped.encode() + b'"}}]}\n\n', 7)
    assert len(calls) == 1                      # a \u escape may hide it: the scrub looks
