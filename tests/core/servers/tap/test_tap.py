"""The tap as real servers on loopback: in front of the emulator (bytes, headers, formats, errors, routing) and in
front of a small upstream written for the faults (unreachable, drop, client hang-up, stall, gzip, echoed keys,
stopping the tap)."""
from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time

import httpx
import pytest

from core.servers.tap.server import TapServer
from core.servers.tap.upstreams import parse_upstreams
from tests.core.servers.tap.faulty import ANTHROPIC, BODY, PIECES

MSGS = [{"role": "user", "content": "What is the capital of France?"}]
REQUESTS = {   # one streaming request per wire format: (path, headers, body)
    "openai-chat": ("/v1/chat/completions", {"authorization": "Bearer sk-tap-test-0001"},
                    {"model": "tool-call", "messages": MSGS, "stream": True}),
    "openai-responses": ("/v1/responses", {"authorization": "Bearer sk-tap-test-0001"},
                         {"model": "thinking", "input": "hi", "stream": True}),
    "anthropic": ("/v1/messages", {"x-api-key": "sk-ant-tap-0001", "anthropic-version": "2023-06-01"},
                  {"model": "parallel-tools", "max_tokens": 256, "messages": MSGS, "stream": True}),
    "gemini": ("/v1beta/models/split-utf8:streamGenerateContent?alt=sse", {"x-goog-api-key": "AIza-tap-0001"},
               {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
}
SPEED0 = {"x-emulator-speed": "0"}


def wait_for(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


@pytest.fixture(scope="module")
def emulator_tap(emulator):
    server = TapServer(parse_upstreams([emulator]))
    base = server.start()
    yield base, server.tap, emulator
    server.stop()


@pytest.fixture()
def faulty_tap(faulty):
    url, app = faulty
    server = TapServer(parse_upstreams([url]))
    base = server.start()
    yield base, server.tap, app
    server.stop()


def ended(tap, n):
    assert wait_for(lambda: len(tap.exchanges) >= n and all(e.finished for e in tap.exchanges[:n]))
    return tap.exchanges[n - 1]


# -- in front of the emulator ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", list(REQUESTS))
def test_the_client_and_the_capture_get_exactly_the_upstreams_bytes(emulator_tap, fmt):
    base, tap, upstream = emulator_tap
    path, headers, body = REQUESTS[fmt]
    direct = httpx.post(upstream + path, json=body, headers={**headers, **SPEED0})
    before = len(tap.exchanges)
    tapped = httpx.post(base + path, json=body, headers={**headers, **SPEED0})
    assert tapped.status_code == direct.status_code == 200
    assert tapped.content == direct.content and len(direct.content) > 200
    drop = {"date", "x-request-id", "request-id", "transfer-encoding"}   # per response, and the framing
    assert {k: v for k, v in tapped.headers.items() if k not in drop} == \
        {k: v for k, v in direct.headers.items() if k not in drop}
    ex = ended(tap, before + 1)
    assert ex.run.body == direct.content
    assert (ex.format, ex.format_source, ex.run.status) == (fmt, "path", "done")
    from core.wire.pipeline import decode_bytes

    got = ex.run.result()
    assert {k: got[k] for k in ("blocks", "usage", "finish_reason", "diagnostics")} == \
        {k: v for k, v in decode_bytes(fmt, direct.content).result().items()
         if k in ("blocks", "usage", "finish_reason", "diagnostics")}
    key = next(iter(headers.values())).split()[-1]
    assert key not in json.dumps(ex.run.request.to_json()) and ex.run.request.url.startswith(upstream)


def test_http_errors_pass_through_untouched(emulator_tap, faulty):
    base, tap, upstream = emulator_tap
    path, headers, body = REQUESTS["anthropic"]
    body = {**body, "model": "http-429"}
    direct = httpx.post(upstream + path, json=body, headers=headers)
    tapped = httpx.post(base + path, json=body, headers=headers)
    assert tapped.status_code == direct.status_code == 429
    assert tapped.json()["error"] == direct.json()["error"]          # (the request id differs per request)
    assert tapped.headers["retry-after"] == direct.headers["retry-after"]
    ex = ended(tap, len(tap.exchanges))
    assert ex.run.http_status == 429 and ex.run.error["type"] == "http_error"
    url, app = faulty
    server = TapServer(parse_upstreams([url]))
    try:
        r = httpx.post(server.start() + "/v1/chat/completions", headers={"x-fault": "error"}, json={})
        assert (r.status_code, r.content, r.headers["retry-after"]) == (503, app.sent[max(app.sent)], "7")
        ex = ended(server.tap, 1)
        assert ex.run.error["type"] == "http_error" and "try later" in ex.run.error["message"]
    finally:
        server.stop()


def test_a_reply_that_is_no_stream_is_forwarded_and_recorded_without_an_error(emulator_tap):
    base, tap, _ = emulator_tap
    models = httpx.get(base + "/v1/models", headers={"authorization": "Bearer sk-x-0001"})
    assert models.status_code == 200 and models.json()["object"] == "list"
    ex = ended(tap, len(tap.exchanges))
    assert (ex.method, ex.path, ex.format_source, ex.run.status, ex.run.error) == ("GET", "/v1/models", "none",
                                                                                    "done", None)
    assert ex.run.body == models.content
    chat = httpx.post(base + "/v1/chat/completions", json={"model": "text", "messages": MSGS},
                      headers={"authorization": "Bearer sk-x-0001", **SPEED0})
    ex = ended(tap, len(tap.exchanges))
    assert chat.json()["object"] == "chat.completion"
    assert (ex.format, ex.run.status, ex.run.error) == ("openai-chat", "done", None)
    # read as the stream of the same reply: its text, usage and finish, and the body as the one frame
    reply, usage = ex.run.reply, chat.json()["usage"]
    assert reply.ordered_blocks()[0].text == chat.json()["choices"][0]["message"]["content"]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (usage["prompt_tokens"],
                                                                     usage["completion_tokens"])
    assert reply.finish.canonical == "stop" and ex.run.metrics.frames == 1 and ex.run.metrics.output_tokens
    from core.live.capture import har_document

    assert har_document([ex.run])["log"]["entries"][0]["_eventSourceMessages"] == []   # (no event stream came)


def test_named_mounts_route_by_their_first_segment(emulator):
    server = TapServer(parse_upstreams([f"emu={emulator}", f"other={emulator}/v1"]))
    base = server.start()
    try:
        r = httpx.post(base + "/emu/v1/chat/completions", json=REQUESTS["openai-chat"][2],
                       headers={"authorization": "Bearer k-0001", **SPEED0})
        assert r.status_code == 200 and b"[DONE]" in r.content
        r2 = httpx.post(base + "/other/chat/completions", json=REQUESTS["openai-chat"][2],
                        headers={"authorization": "Bearer k-0001", **SPEED0})
        assert r2.content == r.content
        ex = ended(server.tap, 2)
        assert (ex.name, ex.path, ex.format) == ("other#2", "/other/chat/completions", "openai-chat")
        assert ex.run.request.url == f"{emulator}/v1/chat/completions"
        missing = httpx.get(base + "/nowhere/v1/models")
        assert missing.status_code == 404
        assert "/emu, /other" in missing.json()["error"]["message"]
    finally:
        server.stop()


def test_the_format_comes_from_the_frames_when_the_path_names_none(faulty_tap):
    base, tap, app = faulty_tap
    r = httpx.post(base + "/custom/stream", headers={"x-fault": "anthropic"}, json={})
    assert r.content == ANTHROPIC
    ex = ended(tap, 1)
    assert (ex.format, ex.format_source, ex.run.status) == ("anthropic", "frames", "done")
    assert ex.run.result()["blocks"][0]["text"] == "Paris"
    assert ex.run.body == ANTHROPIC and ex.run.metrics.bytes == len(ANTHROPIC)   # held, then fed as they came
    assert ex.run.metrics.t_first_byte_ns <= ex.run.chunks[1][0]


# -- in front of the fault upstream ----------------------------------------------------------------------------
def test_an_unreachable_upstream_is_a_502_naming_it():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                           # nothing listens there now
    server = TapServer(parse_upstreams([f"gone=http://127.0.0.1:{port}"]))
    base = server.start()
    try:
        r = httpx.post(base + "/gone/v1/chat/completions", json={"model": "x", "stream": True},
                       headers={"authorization": "Bearer sk-gone-0001"})
        assert r.status_code == 502
        err = r.json()["error"]
        assert err["type"] == "tap_upstream_unreachable" and err["upstream"] == "gone"
        assert f"127.0.0.1:{port}" in err["message"]
        ex = ended(server.tap, 1)
        assert ex.run.http_status is None and ex.run.error["type"] == "connect_failed"
        assert ex.run.error["message"].startswith(f"upstream gone (http://127.0.0.1:{port}): ")
    finally:
        server.stop()
    only = TapServer(parse_upstreams([f"http://127.0.0.1:{port}"]))     # the one upstream: not "upstream upstream"
    base = only.start()
    try:
        assert httpx.post(base + "/v1/chat/completions", json={}).status_code == 502
        assert ended(only.tap, 1).run.error["message"].startswith(f"the upstream (http://127.0.0.1:{port}): ")
    finally:
        only.stop()


def test_an_upstream_that_drops_mid_stream_cuts_the_client_at_the_same_byte(faulty_tap):
    base, tap, app = faulty_tap
    got = bytearray()
    with pytest.raises(httpx.RemoteProtocolError):
        with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "drop"}, json={}) as r:
            for c in r.iter_raw():
                got += c
    assert bytes(got) == b"".join(PIECES[:2])
    ex = ended(tap, 1)
    assert ex.run.error["type"] == "connection_dropped" and ex.run.body == bytes(got)
    assert ex.run.status == "error" and [b["text"] for b in ex.run.result()["blocks"]] == ["The capital of France "]


def test_a_client_that_hangs_up_cancels_the_upstream_request(faulty_tap):
    base, tap, app = faulty_tap
    app.hung_up_event.clear()
    with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "stall"}, json={}) as r:
        pieces = r.iter_raw()           # (kept: a dropped iterator closes the connection)
        first = next(pieces)
        assert first == PIECES[0]
        assert wait_for(lambda: tap.exchanges and tap.exchanges[0].run.metrics.bytes == len(first))
        time.sleep(0.3)
        quiet = tap.exchanges[0].run.quiet_ns()   # a stalled upstream: the run says how long it is quiet
        assert quiet is not None and quiet >= 200_000_000
    assert app.hung_up_event.wait(5)               # the tap closed its request to the upstream
    ex = ended(tap, 1)
    assert (ex.run.status, ex.run.error["type"]) == ("cancelled", "client_cancelled")
    assert ex.run.body == PIECES[0]


def test_a_stall_is_the_clients_timeout_to_decide(faulty_tap):
    base, tap, app = faulty_tap
    got = bytearray()
    with pytest.raises(httpx.ReadTimeout):
        with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "stall"}, json={},
                          timeout=httpx.Timeout(5, read=0.5)) as r:
            for c in r.iter_raw():
                got += c
    assert bytes(got) == PIECES[0]
    ex = ended(tap, 1)
    assert ex.run.error["type"] == "client_cancelled" and ex.run.metrics.t_total_ns >= 500_000_000


def test_an_encoded_body_reaches_the_client_encoded_and_the_capture_decoded(faulty_tap):
    base, tap, app = faulty_tap
    r = httpx.post(base + "/v1/chat/completions", headers={"x-fault": "gzip", "accept-encoding": "gzip"}, json={})
    raw = gzip.compress(BODY)
    assert r.headers["content-encoding"] == "gzip" and r.content == BODY   # httpx decoded what it got
    assert app.requests[-1]["headers"]["accept-encoding"] == "gzip"
    ex = ended(tap, 1)
    assert ex.run.body == BODY and len(raw) != len(BODY)
    assert ex.run.result()["blocks"][0]["text"] == "The capital of France is Paris."
    assert any("gzip" in n for n in ex.run.notes)


def test_no_header_the_client_did_not_send_reaches_the_upstream_and_hop_by_hop_headers_stop(faulty_tap):
    base, tap, app = faulty_tap
    with socket.create_connection(tuple(base.rsplit("/", 1)[-1].split(":"))) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: tap\r\nContent-Length: 2\r\nX-Mine: 1\r\n"
                  b"Connection: keep-alive, X-Private\r\nX-Private: no\r\n\r\n{}")
        data = b""
        while b"0\r\n\r\n" not in data:
            data += s.recv(65536)
    seen = app.requests[-1]["headers"]
    assert seen["x-mine"] == "1" and "x-private" not in seen and "user-agent" not in seen
    assert "accept-encoding" not in seen and seen["host"] == tap.mounts.root.url.rsplit("/", 1)[-1]
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    assert b"x-upstream: faulty" in head and b"x-hop" not in head and b"server:" not in head
    assert head.count(b"date:") == 1     # the upstream's own, and none added by the tap


def test_an_echoed_key_reaches_the_client_but_is_masked_in_the_capture(faulty_tap, tmp_path):
    base, tap, app = faulty_tap
    key = "sk-planted-echo-7f3a9c"
    r = httpx.post(base + "/v1/chat/completions?api_key=qsecret-123456", json={},
                   headers={"x-fault": "echo", "authorization": f"Bearer {key}"})
    assert key in r.text
    ex = ended(tap, 1)
    from core.live.capture import export

    for ext in (".jsonl", ".har", ".md", ".sse", ".yaml"):
        text = export([ex.run], tmp_path / f"x{ext}").read_text()
        assert key not in text and "qsecret-123456" not in text, ext
    assert key not in json.dumps(ex.run.result()) and "qsecret" not in ex.path


def test_stopping_the_tap_ends_open_exchanges_on_both_sides(faulty):
    url, app = faulty
    server = TapServer(parse_upstreams([url]))
    base = server.start()
    app.hung_up_event.clear()
    box = {}

    def client():
        got = bytearray()
        try:
            with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "stall"}, json={},
                              timeout=20) as r:
                for c in r.iter_raw():
                    got += c
            box["ended"] = "cleanly"
        except httpx.HTTPError as exc:
            box["ended"] = repr(exc)
        box["got"] = bytes(got)

    t = threading.Thread(target=client)
    t.start()
    assert wait_for(lambda: server.tap.exchanges and server.tap.exchanges[0].run.metrics.bytes > 0)
    t0 = time.monotonic()
    server.stop()
    t.join(10)
    assert box == {"ended": "cleanly", "got": PIECES[0]} and time.monotonic() - t0 < 5
    assert app.hung_up_event.wait(5)
    ex = server.tap.exchanges[0]
    assert (ex.run.status, ex.run.error["type"]) == ("cancelled", "cancelled")


def test_a_broken_listener_does_not_disturb_forwarding(faulty_tap):
    base, tap, app = faulty_tap
    tap.on_started.append(lambda ex: 1 / 0)
    r = httpx.post(base + "/v1/chat/completions", json={})
    assert r.content == BODY
    assert ended(tap, 1).run.status == "done"


@pytest.mark.slow
def test_fifty_concurrent_exchanges(emulator_tap):
    base, tap, upstream = emulator_tap
    before = len(tap.exchanges)

    async def one(client, i):
        fmt = list(REQUESTS)[i % 4]
        path, headers, body = REQUESTS[fmt]
        async with client.stream("POST", base + path, json=body, headers=headers) as r:   # paced: all overlap
            return fmt, r.status_code, b"".join([c async for c in r.aiter_raw()])

    async def main():
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=100), timeout=60) as client:
            return await asyncio.gather(*(one(client, i) for i in range(50)))

    results = asyncio.run(main())
    assert all(status == 200 for _, status, _ in results)
    direct = {fmt: httpx.post(upstream + REQUESTS[fmt][0], json=REQUESTS[fmt][2],
                              headers={**REQUESTS[fmt][1], **SPEED0}).content for fmt in REQUESTS}
    assert all(body == direct[fmt] for fmt, _, body in results)
    assert wait_for(lambda: len(tap.exchanges) >= before + 50 and all(e.finished for e in tap.exchanges))
    mine = tap.exchanges[before:before + 50]
    assert all(e.run.status == "done" and e.run.error is None for e in mine)
    assert sorted(e.run.body for e in mine) == sorted(body for _, _, body in results)


def test_the_tap_accepts_connections_with_a_bounded_send_buffer():
    """A client slower than its upstream leaves the bytes in the upstream's connection, not megabytes queued in
    the tap's (core.servers.tap.server.SEND_BUFFER): the listening socket, which accepted ones copy, says so."""
    import socket

    from core.servers.tap.server import SEND_BUFFER, TapServer
    from core.servers.tap.upstreams import parse_upstreams

    server = TapServer(parse_upstreams([]))
    server.start()
    try:
        uv = server._server._server
        sizes = [s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) for s in uv.servers[0].sockets]
        assert sizes and all(SEND_BUFFER <= n <= 4 * SEND_BUFFER for n in sizes)   # (Linux reports twice it)
    finally:
        server.stop()


# -- a body past the capture's bound ------------------------------------------------------------------------------
BOUND = 64 << 10


@pytest.fixture()
def small_bound(monkeypatch):
    from core.live import exchange

    monkeypatch.setattr(exchange, "MAX_STREAM_BODY", BOUND, raising=False)
    return BOUND


def test_a_body_past_the_bound_is_forwarded_whole_and_recorded_up_to_it(faulty_tap, small_bound):
    """A stream without end was recorded byte by byte until memory ran out; the client still gets every byte."""
    from tests.core.servers.tap.faulty import big_body

    base, tap, _ = faulty_tap
    body = big_body(1 << 20)
    r = httpx.post(base + "/v1/chat/completions", headers={"x-fault": "big", "x-size": str(1 << 20)}, json={})
    assert r.content == body                              # forwarded untouched, past the bound too
    ex = ended(tap, 1)
    assert ex.run.body == body[:BOUND] and ex.run.metrics.bytes == BOUND
    assert ex.run.status == "done" and ex.run.error is None                # it ends as it would otherwise
    note = next(n for n in ex.run.notes if n.startswith("the capture stopped at 64 KiB"))
    assert f"{len(body) - BOUND:,} more bytes" in note and "forwarded it to its client untouched" in note
    assert ex.run.result()["blocks"][0]["text"].startswith("word word ")


def test_an_endless_stream_keeps_flowing_to_the_client_and_the_capture_stops_at_the_bound(faulty_tap, small_bound):
    base, tap, _ = faulty_tap
    got = 0
    with httpx.stream("POST", base + "/v1/chat/completions", headers={"x-fault": "endless-event"}, json={}) as r:
        pieces = r.iter_raw()           # (kept: a dropped iterator closes the connection)
        while got <= 40 * BOUND:
            got += len(next(pieces))
        seen = tap.exchanges[0]
        assert wait_for(lambda: any(n.startswith("the capture stopped at 64 KiB: the rest is not recorded")
                                    for n in seen.run.notes))      # said while it streams
        assert not seen.finished and seen.run.metrics.bytes == BOUND
    ex = ended(tap, 1)
    assert (ex.run.status, ex.run.error["type"]) == ("cancelled", "client_cancelled")
    assert ex.run.metrics.bytes == BOUND and ex.run.body == b"data: " + b"x" * (BOUND - 6)
    assert ex.not_kept >= 39 * BOUND and any(f"the rest, {ex.not_kept:,} more bytes, was not recorded" in n
                                             for n in ex.run.notes)


def test_an_encoded_body_is_recorded_decoded_up_to_the_bound(faulty_tap, small_bound):
    from tests.core.servers.tap.faulty import big_body

    base, tap, _ = faulty_tap
    body = big_body(1 << 20)
    r = httpx.post(base + "/v1/chat/completions", headers={"x-fault": "big-gzip", "x-size": str(1 << 20),
                                                           "accept-encoding": "gzip"}, json={})
    assert r.headers["content-encoding"] == "gzip" and r.content == body
    ex = ended(tap, 1)
    assert ex.run.body == body[:BOUND]
    note = next(n for n in ex.run.notes if n.startswith("the capture stopped at 64 KiB of decoded body"))
    assert "as received (gzip-encoded)" in note
