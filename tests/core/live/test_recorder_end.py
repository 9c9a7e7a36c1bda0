"""What the recorder says at a run's end about the stream's end marker: only when a response came."""
from __future__ import annotations

import pytest

from core.live.config import ProviderConfig
from core.live.errors import ErrorType, error_dict
from core.live.recorder import rebuild_run
from core.live.summary import findings_text

SSE = (0, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
CHUNK = b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'


def _codes(run) -> list[str]:
    return [d["code"] for d in run.result()["diagnostics"]]


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
@pytest.mark.parametrize("error", [error_dict(ErrorType.MISSING_KEY, "no API key; not sent"),
                                   error_dict(ErrorType.CONNECT_FAILED, "cannot connect"),
                                   error_dict(ErrorType.INSECURE_TRANSPORT, "refused: plain http")])
def test_a_request_never_answered_has_no_missing_terminator(fmt, error):
    """`findings missing-terminator` on a run that was never sent (or never connected) was noise: no stream
    started, so none ended without its marker."""
    run = rebuild_run(ProviderConfig("p", fmt, "http://127.0.0.1:9", "m"), end_ns=1000, transport_error=error)
    assert run.http_status is None and _codes(run) == [] and findings_text(run.reply.diagnostics) == ""
    assert run.error["type"] == error["type"]


def test_a_stream_that_started_and_stopped_without_its_marker_still_says_so():
    drop = error_dict(ErrorType.CONNECTION_DROPPED, "the connection was cut")
    provider = ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m")
    cut = rebuild_run(provider, headers=SSE, chunks=[(10, CHUNK)], end_ns=1000, transport_error=drop)
    assert "missing-terminator" in _codes(cut)
    headers_only = rebuild_run(provider, headers=SSE, end_ns=1000, transport_error=drop)   # a 200, then nothing
    assert "missing-terminator" in _codes(headers_only)
    no_headers = rebuild_run(provider, chunks=[(10, CHUNK)], end_ns=1000)   # a raw body imported without headers
    assert "missing-terminator" in _codes(no_headers)
    done = rebuild_run(provider, headers=SSE, chunks=[(10, CHUNK), (20, b"data: [DONE]\n\n")], end_ns=1000)
    assert "missing-terminator" not in _codes(done)
