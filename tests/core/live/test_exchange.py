"""Recording an exchange StreamScope did not send (a tap's client's, a recording's): format, content coding,
secrets, timing; and undoing content codings on their own."""
from __future__ import annotations

import gzip
import zlib

import pytest

from core.live import content_coding
from core.live.content_coding import decode_body, decoder_for
from core.live.exchange import HOLD_BYTES, Exchange
from tests.core.servers.tap.faulty import ANTHROPIC, BODY

SSE = [("content-type", "text/event-stream")]


def record(path="/v1/chat/completions", chunks=(BODY,), headers=SSE, status=200, **kw):
    ex = Exchange("t#1", "POST", "https://api.example.com" + path,
                  [("authorization", "Bearer sk-exch-secret-1"), ("content-type", "application/json")],
                  b'{"model": "m", "stream": true}', **kw)
    ex.begin(1.0)
    ex.on_headers(10, status, "HTTP/1.1", "OK", headers)
    for i, c in enumerate(chunks):
        ex.on_chunk(20 + i, c)
    ex.finish(100, None)
    return ex


def test_the_format_from_the_path_the_frames_or_the_fallback():
    assert (record().format, record().format_source) == ("openai-chat", "path")
    by_frames = record("/custom", (ANTHROPIC[:30], ANTHROPIC[30:]))
    assert (by_frames.format, by_frames.format_source) == ("anthropic", "frames")
    assert by_frames.run.chunks == [(20, ANTHROPIC[:30]), (21, ANTHROPIC[30:])]   # held, then fed with their times
    assert by_frames.run.result()["blocks"][0]["text"] == "Paris"
    unknown = record("/custom", (b"data: hello\n\n",), fallback_format="gemini")
    assert (unknown.format, unknown.format_source) == ("gemini", "none")
    assert any("neither the path nor the first frames" in n for n in unknown.run.notes)
    given = record(format="anthropic")
    assert (given.format, given.format_source) == ("anthropic", "given")


def test_a_stream_whose_frames_never_tell_is_held_back_only_so_long():
    ex = Exchange("t#1", "POST", "http://127.0.0.1/x", [], b"")
    ex.begin(1.0)
    ex.on_headers(0, 200, None, None, SSE)
    ex.on_chunk(1, b": " + b"x" * HOLD_BYTES + b"\n")
    assert ex.run.metrics.bytes == HOLD_BYTES + 3          # fed once the hold is full, format or not
    ex.finish(2, None)
    assert ex.run.status == "done"


def test_the_capture_holds_the_decoded_body_of_an_encoded_response():
    packed = gzip.compress(BODY)
    ex = record(chunks=(packed[:9], packed[9:]), headers=SSE + [("content-encoding", "gzip")])
    assert ex.run.body == BODY and ex.run.result()["blocks"][0]["text"] == "The capital of France is Paris."
    assert any("gzip-encoded" in n for n in ex.run.notes)
    stored = record(chunks=(packed,), headers=SSE + [("content-encoding", "gzip")])
    assert stored.run.body == BODY
    har_like = Exchange("t#1", "GET", "http://h/v1/chat/completions", [], b"")
    har_like.begin(None)
    har_like.on_headers(0, 200, None, None, SSE + [("content-encoding", "gzip")], body_decoded=True)
    har_like.on_chunk(1, BODY)
    assert har_like.finish(2, None).body == BODY


def test_the_clients_key_is_redacted_and_masked_where_echoed():
    echo = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"sk-exch-secret-1"}}]}\n\n'
    ex = record("/v1/chat/completions?key=AIzaQuerySecret9", (echo,))
    assert "sk-exch-secret-1" not in repr(ex.run.request.to_json()) and "AIzaQuerySecret9" not in ex.url
    assert "AIzaQuerySecret9" not in ex.path
    assert b"sk-exch-secret-1" not in ex.run.body and len(ex.run.body) == len(echo)
    assert "sk-exch-secret-1" not in repr(ex.run.result())
    assert set(ex.secrets) >= {"Bearer sk-exch-secret-1", "sk-exch-secret-1", "AIzaQuerySecret9"}


def test_every_header_named_like_a_key_is_redacted_and_its_value_masked_where_echoed():
    """Not only the providers' own headers: gateways take X-Auth-Token, apikey, api_key, Ocp-Apim-Subscription-Key,
    x-functions-key... (whole words of the name: a response's x-ratelimit-remaining-tokens stays)."""
    from core.live.config import REDACTED, secret_header

    named = {"X-Auth-Token": "tok-aaaa-1111", "apikey": "tok-bbbb-2222", "api_key": "tok-cccc-3333",
             "Ocp-Apim-Subscription-Key": "tok-dddd-4444", "x-functions-key": "tok-eeee-5555",
             "X-Amz-Security-Token": "tok-ffff-6666"}
    echo = b'data: {"choices":[{"index":0,"delta":{"content":"tok-aaaa-1111"}}]}\n\n'
    ex = Exchange("t#1", "POST", "https://h/v1/chat/completions", list(named.items()) + [("x-request-id", "r-1")],
                  b'{"stream": true}')
    ex.begin(1.0)
    ex.on_headers(1, 200, "HTTP/1.1", "OK", SSE + [("x-ratelimit-remaining-tokens", "999")])
    ex.on_chunk(2, echo)
    ex.finish(3, None)
    sent = dict(ex.run.request.headers)
    assert all(sent[k] == REDACTED for k in named) and sent["x-request-id"] == "r-1"
    assert all(v not in repr(ex.run.request.to_json()) for v in named.values())
    assert b"tok-aaaa-1111" not in ex.run.body
    assert dict(ex.run.response_headers)["x-ratelimit-remaining-tokens"] == "999"
    assert not any(secret_header(h) for h in ("x-ratelimit-remaining-tokens", "keep-alive", "content-type",
                                              "anthropic-version", "x-request-id"))


def test_a_json_reply_to_a_request_for_no_stream_is_no_error():
    ex = Exchange("t#1", "GET", "http://h/v1/models", [], b"")
    ex.begin(1.0)
    ex.on_headers(0, 200, None, None, [("content-type", "application/json")])
    ex.on_chunk(1, b'{"data": []}')
    ex.finish(2, None)
    assert (ex.run.status, ex.run.error, ex.run.body) == ("done", None, b'{"data": []}')
    gemini = Exchange("t#2", "POST", "http://h/v1beta/models/g:generateContent", [], b'{"contents": []}')
    gemini.begin(1.0)
    gemini.on_headers(0, 200, None, None, [("content-type", "application/json")])
    gemini.on_chunk(1, b'{"candidates": []}')
    gemini.finish(2, None)
    assert (gemini.format, gemini.format_source, gemini.run.status, gemini.run.error) == ("gemini", "path", "done",
                                                                                        None)
    assert gemini.run.provider.format == "gemini"     # (its capture says so too, not the fallback's)
    asked = record(chunks=(b'{"object": "chat.completion"}',), headers=[("content-type", "application/json")])
    assert asked.run.error["type"] == "not_event_stream"       # the request asked for a stream: still reported


def test_a_client_that_hung_up_ends_the_run_cancelled():
    ex = Exchange("t#1", "POST", "http://h/v1/chat/completions", [], b"{}")
    ex.begin(1.0)
    ex.on_headers(0, 200, None, None, SSE)
    ex.on_chunk(1, BODY[:40])
    ex.finish(5, {"type": "client_cancelled", "message": "the client disconnected", "raw": None})
    assert (ex.run.status, ex.run.error["type"], ex.run.body) == ("cancelled", "client_cancelled", BODY[:40])


def test_a_request_body_that_is_not_json_is_noted_not_stored():
    ex = Exchange("t#1", "POST", "http://h/upload", [], b"\x00\x01binary")
    assert ex.run.request.body == {} and "not JSON" in ex.run.request.notes[0]


# -- content codings ---------------------------------------------------------------------------------------------
def test_codings_are_undone_whole_or_in_pieces():
    data = b"event: x\ndata: hello\n\n" * 500
    deflate_raw = zlib.compressobj(wbits=-15)
    raw = deflate_raw.compress(data) + deflate_raw.flush()
    for coding, packed in (("gzip", gzip.compress(data)), ("x-gzip", gzip.compress(data)),
                           ("deflate", zlib.compress(data)), ("deflate", raw),
                           ("gzip", gzip.compress(data[:100]) + gzip.compress(data[100:])),
                           ("identity, gzip", gzip.compress(data)),
                           ("gzip, deflate", zlib.compress(gzip.compress(data)))):
        assert decode_body(coding, packed) == (data, None), coding
        d = decoder_for(coding)
        assert b"".join(d.decode(packed[i:i + 5]) for i in range(0, len(packed), 5)) + d.flush() == data, coding
    assert decoder_for(None) is None and decoder_for("identity") is None


def test_what_cannot_be_undone_is_kept_as_it_came_with_a_note():
    assert decode_body("zstd", b"\x28\xb5")[0] == b"\x28\xb5"
    assert "cannot decode" in decode_body("zstd", b"x")[1]
    out, note = decode_body("gzip", b"not gzip at all")      # (a body stored decoded under its header)
    assert out == b"not gzip at all" and "but the body is not gzip-encoded" in note
    damaged = gzip.compress(b"data: x\n\n")[:10] + b"\xff" * 20     # (a gzip header, then no deflate data)
    out, note = decode_body("gzip", damaged)
    assert out == damaged and "could not be decoded" in note


def test_a_decompression_bomb_stops_at_the_limit(monkeypatch):
    monkeypatch.setattr(content_coding, "MAX_DECODED", 1 << 16)
    bomb = gzip.compress(b"\0" * (1 << 22))
    d = decoder_for("gzip")
    out = d.decode(bomb)
    assert len(out) == len(bomb) and "passed" in d.note       # the encoded bytes kept, no 4 MiB of zeros


def test_what_a_bomb_leaves_as_it_came_is_recorded_up_to_the_bound_too(monkeypatch):
    """Past MAX_DECODED the body was recorded as it came, without end."""
    from core.live import exchange

    monkeypatch.setattr(content_coding, "MAX_DECODED", 4 << 10)
    monkeypatch.setattr(exchange, "MAX_STREAM_BODY", 8 << 10, raising=False)
    bomb = gzip.compress(b"data: " + b"\0" * (16 << 20), 1)
    chunks = [bomb[i:i + 1024] for i in range(0, len(bomb), 1024)]
    ex = record(chunks=chunks, headers=SSE + [("content-encoding", "gzip")])
    assert len(bomb) > 4 * (8 << 10) and ex.run.metrics.bytes == len(ex.run.body) == 8 << 10
    assert any("the decoded body passed 4 KiB" in n for n in ex.run.notes)
    note = next(n for n in ex.run.notes if n.startswith("the capture stopped at 8 KiB: the rest, "))
    assert f"{ex.not_kept:,} more bytes" in note and ex.kept + ex.not_kept < len(bomb) + (4 << 10)


def test_the_capture_is_bounded_and_counts_what_it_does_not_keep(monkeypatch):
    from core.live import exchange

    monkeypatch.setattr(exchange, "MAX_STREAM_BODY", 1000, raising=False)
    ex = record(chunks=[BODY] * 20)
    assert ex.run.body == (BODY * 20)[:1000] and ex.run.metrics.bytes == 1000
    assert ex.run.status == "done"
    assert any(n == f"the capture stopped at 1,000 bytes: the rest, {20 * len(BODY) - 1000:,} more bytes, was not "
                    f"recorded (a tap forwarded it to its client untouched)" for n in ex.run.notes), ex.run.notes
    whole = record(chunks=[BODY] * 2, max_body=None)
    assert whole.run.body == BODY * 2 and not any("capture stopped" in n for n in whole.run.notes)


@pytest.mark.parametrize("size", [0, 1, 17])
def test_a_short_body_in_any_coding(size):
    data = bytes(range(size))
    assert decode_body("gzip", gzip.compress(data))[0] == data


def test_a_tapped_request_gets_the_history_check():
    import json

    body = {"model": "m", "stream": True, "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
        {"role": "user", "content": "and?"}]}          # call_a never answered: OpenAI rejects this
    ex = Exchange("t#1", "POST", "https://api.example.com/v1/chat/completions",
                  [("content-type", "application/json")], json.dumps(body).encode())
    ex.begin(1.0)
    ex.on_headers(10, 200, "HTTP/1.1", "OK", SSE)
    ex.on_chunk(20, BODY)
    run = ex.finish(100, None)
    errors = [f for f in run.history_findings if f.severity == "error"]
    assert errors and "tool_call_id" in errors[0].message
    assert any(n.startswith("history error at ") for n in run.notes)
    assert record().run.history_findings == ()     # a one-turn request: nothing to say



def test_a_body_stored_decoded_under_a_gzip_header_has_one_note_saying_so():
    """vcrpy recording `requests` stores the body decoded and keeps `Content-Encoding: gzip`."""
    ex = Exchange("t#1", "POST", "http://h/v1/chat/completions", [], b"{}")
    ex.begin(1.0)
    ex.on_headers(0, 200, None, None, [*SSE, ("content-encoding", "gzip")])
    ex.on_chunk(1, BODY)
    run = ex.finish(2, None)
    assert run.body == BODY and run.status == "done" and run.result()["blocks"]
    assert run.notes == ["the content-encoding header says gzip, but the body is not gzip-encoded (a recorder that "
                         "stored it decoded): it is recorded as it came"]


def test_a_json_reply_too_large_to_read_whole_says_so(monkeypatch):
    from core.live import recorder

    body = b'{"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}'
    monkeypatch.setattr(recorder, "MAX_WHOLE_BODY", 10)
    monkeypatch.setattr("core.wire.pipeline.MAX_WHOLE_BODY", 10)
    ex = Exchange("t#1", "POST", "http://h/v1beta/models/g:generateContent", [], b'{"contents": []}')
    ex.begin(1.0)
    ex.on_headers(0, 200, None, None, [("content-type", "application/json")])
    ex.on_chunk(1, body)
    run = ex.finish(2, None)
    assert run.status == "done" and run.decoder.frames == 0 and run.body == body
    assert any("too large to be read as a whole reply" in n for n in run.notes)


def test_a_request_with_a_lone_surrogate_escape_is_appended_to_the_capture(tmp_path):
    """The tap's .jsonl appender raised UnicodeEncodeError on it, and that exchange was lost from the file."""
    from core.live.capture import CaptureAppender
    from core.live.importers import read_capture

    ex = Exchange("t#1", "POST", "https://api.example.com/v1/chat/completions",
                  [("content-type", "application/json")], b'{"model": "m\\ud800", "stream": true}')
    ex.begin(1.0)
    ex.on_headers(10, 200, "HTTP/1.1", "OK", SSE)
    ex.on_chunk(20, BODY)
    ex.finish(100, None)
    path = tmp_path / "tap.jsonl"
    appender = CaptureAppender(path)
    appender.add(ex.run)
    appender.close()
    [run] = read_capture(path).runs
    assert run.request.body["model"] == "m\ufffd"


def test_a_request_body_nested_600_deep_is_recorded_cut_with_a_note():
    """orjson reads 1024 levels, and redacting the body recursed per level: a RecursionError in the tap."""
    from core.wire.jsonfast import TOO_DEEP_MARKER

    body = b'{"model": "m", "stream": true, "x": ' + b'{"a":' * 600 + b"1" + b"}" * 600 + b"}"
    ex = Exchange("t#1", "POST", "https://api.example.com/v1/chat/completions",
                  [("authorization", "Bearer sk-exch-secret-1")], body)
    assert ex.run.request.body["model"] == "m"
    assert TOO_DEEP_MARKER in ex.run.request.content().decode()
    assert any("deeper than 250 levels" in n for n in ex.run.request.notes)
