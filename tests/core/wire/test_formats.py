"""Telling a wire format from a request path and from a body's frames, and the decoder noticing that it was
given the wrong one."""
from __future__ import annotations

import json

import pytest

from core.wire.formats import (FormatProbe, asks_for_stream, format_for_path, model_from_request, sniff,
                               sniff_format)
from core.wire.pipeline import decode_bytes
from tests.corpus import CORPUS, expected


@pytest.mark.parametrize("path, fmt", [
    ("/v1/chat/completions", "openai-chat"), ("/chat/completions", "openai-chat"),
    ("/openai/v1/chat/completions", "openai-chat"), ("/api/v1/chat/completions", "openai-chat"),
    ("/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21", "openai-chat"),
    ("/v1/responses", "openai-responses"), ("/responses", "openai-responses"),
    ("/openai/v1/responses", "openai-responses"),
    ("/v1/messages", "anthropic"), ("/messages", "anthropic"), ("/anthropic/v1/messages", "anthropic"),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini"),
    ("/v1/models/gemini-2.5-flash:streamGenerateContent", "gemini"),
    ("/v1/projects/p/locations/us/publishers/google/models/gemini-2.5-pro:streamGenerateContent", "gemini"),
    ("/v1/responses/resp_123", None), ("/v1/threads/thread_1/messages", None), ("/v1/models", None),
    ("/v1beta/models/gemini:generateContent", "gemini"),      # (not streamed: the same API and wire format)
    ("/v1beta/models/gemini:countTokens", None), ("/", None), ("", None), ("/v1/messages/count_tokens", None),
])
def test_the_format_a_path_names(path, fmt):
    assert format_for_path(path) == fmt


def test_whether_a_request_asks_for_a_stream_and_its_model():
    assert asks_for_stream("/v1/chat/completions", {"stream": True})
    assert not asks_for_stream("/v1/chat/completions", {"stream": "yes"})
    assert not asks_for_stream("/v1/models", None)
    assert asks_for_stream("/v1beta/models/g:streamGenerateContent", {})
    assert model_from_request("/v1beta/models/g-2:streamGenerateContent", {}) == "g-2"
    assert model_from_request("/v1/messages", {"model": "claude"}) == "claude"
    assert model_from_request("/v1/messages", {"model": 3}) == ""


def test_every_corpus_recording_is_told_its_own_format():
    files = sorted(CORPUS.glob("*/*.sse")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip("the shared corpus is absent")
    for f in files:
        found = sniff(f.read_bytes())
        assert found is not None and found.format == expected(f)["wire_format"], f
        assert found.reason.startswith(f"frame {found.frame} ")


def test_text_that_mentions_another_format_does_not_fool_it():
    text = 'event: message_start \\n data: {"type":"response.created"} content_block_delta candidates'
    body = ("data: " + json.dumps({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": text}}]}) + "\n\ndata: [DONE]\n\n").encode()
    found = sniff(body)
    assert (found.format, found.frame, found.reason) == ("openai-chat", 0,
                                                         'frame 0 has "object": "chat.completion.chunk"')


def test_what_says_nothing_is_none():
    assert sniff(b"") is None and sniff(b"hello\n\n") is None and sniff(b"data: [DONE]\n\n") is None
    assert sniff(b'data: {"x": 1}\n\n' * 40 + b'data: {"choices": []}\n\n') is None   # only the first frames
    assert sniff_format(b'data: {"candidates": []}\n\n') == "gemini"
    assert sniff(b'data: {"type": "ping"}') .format == "anthropic"     # an unterminated last event still counts
    assert sniff(b"data: {" + b"[" * 100000 + b"\n\n") is None           # hostile JSON: no crash


def test_a_probe_stops_once_it_knows():
    probe = FormatProbe()
    from core.wire.sse import SSEDecoder

    items = SSEDecoder().feed(b": comment\n\nevent: response.created\ndata: {}\n\nevent: message_start\ndata: {}\n\n")
    assert probe.see(items) is False
    assert probe.found.format == "openai-responses" and probe.found.frame == 0
    assert probe.mismatch("openai-responses") is None
    frame, message = probe.mismatch("anthropic")
    assert frame == 0 and "look like openai-responses" in message and "response.created" in message


def test_a_wrong_format_is_named_in_a_diagnostic_and_the_right_one_is_not():
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","content":[],'
            b'"usage":{"input_tokens":1}}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n')
    wrong = decode_bytes("openai-chat", body).result()
    mismatch = [d for d in wrong["diagnostics"] if d["code"] == "format-mismatch"]
    assert len(mismatch) == 1 and mismatch[0]["frame"] == 0 and "anthropic" in mismatch[0]["message"]
    assert decode_bytes("openai-chat", body, 3).result() == wrong          # in any pieces
    right = decode_bytes("anthropic", body).result()
    assert not [d for d in right["diagnostics"] if d["code"] == "format-mismatch"]


# -- a first event longer than 64 KiB ------------------------------------------------------------------------
LONG_START = (b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "type": "message", '
              b'"role": "assistant", "content": [], "model": "c", "metadata": {"pad": "' + b"x" * 70_000 +
              b'"}}}\n\nevent: message_stop\ndata: {"type": "message_stop"}\n\n')


@pytest.mark.parametrize("size", [1000, 4096, 65536, len(LONG_START)])
def test_a_first_event_longer_than_64_kib_tells_its_format_in_any_pieces(size):
    from core.wire.formats import sniff_pieces

    assert sniff(LONG_START) is None          # (64 KiB of it tell nothing)
    pieces = [LONG_START[i:i + size] for i in range(0, len(LONG_START), size)]
    found, read = sniff_pieces(iter(pieces))
    assert found.format == "anthropic" and found.frame == 0
    assert read == pieces[:len(read)] and sum(map(len, read)) >= 70_000


def test_what_is_no_event_stream_or_never_ends_is_given_up_and_nothing_taken_is_dropped():
    import itertools

    from core.wire.formats import SNIFF_BYTES, SNIFF_LONG_EVENT, sniff_pieces

    taken = []

    def endless(piece):
        while True:
            taken.append(piece)
            yield piece

    found, read = sniff_pieces(endless(b"y\n" * 2048))          # no field line: 64 KiB, then given up
    assert found is None and read == taken and SNIFF_BYTES < sum(map(len, read)) <= SNIFF_BYTES + 4096
    taken.clear()
    first = b'data: {"a": "'                                    # one data line that never ends: up to 16 MiB
    found, read = sniff_pieces(itertools.chain([first], endless(b"z" * 65536)))
    assert found is None and read[1:] == taken
    assert SNIFF_LONG_EVENT <= sum(map(len, read)) <= SNIFF_LONG_EVENT + 2 * 65536 + len(first)


@pytest.mark.parametrize("size", [997, 4096, 65536, 1 << 20])
def test_sniffing_gives_the_same_answer_however_the_body_is_cut(size):
    """A 1 MiB read looked at every frame in it, 64 KiB slices only at the first 64 KiB: decode of a file and
    of a pipe (and the importers) disagreed."""
    from core.wire.formats import sniff_pieces

    frame = b'event: message_start\ndata: {"type": "message_start", "message": {}}\n\n'
    bodies = {b": keepalive\n\n" * 16_000 + frame: "anthropic",      # a comment-led stream: read on
              b"y\n" * 40_000 + frame: None,                            # no event stream: given up at 64 KiB
              b": ping\n\n" + LONG_START: "anthropic"}
    for body, want in bodies.items():
        pieces = [body[i:i + size] for i in range(0, len(body), size)]
        found, read = sniff_pieces(iter(pieces))
        assert (found and found.format) == want, (size, body[:12])
        assert read == pieces[:len(read)]
