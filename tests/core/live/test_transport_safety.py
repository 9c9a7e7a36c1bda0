"""Keys and proxies (issue 11, items 2, 3 and 6): a key never crosses a plain-http hop to another host, credentials
in a base URL are refused, key-like query values are redacted, and `*.localhost` is loopback by resolution only."""
from __future__ import annotations

import asyncio
import socket
import socketserver
import threading
import time

import pytest

from core.live import proxy as px
from core.live.config import ConfigError, ProviderConfig, demo_providers, parse_providers
from core.live.recorder import prepare_run
from core.live.request import PromptSpec, insecure_transport, is_loopback_host
from core.live.transport import Session, _mounts_route_through_proxy, new_client
from core.servers.emulator.server import EmulatorServer

SPEC = PromptSpec(user="What is the capital of France?")


# -- loopback is what a name resolves to --------------------------------------------------------------------------
def _resolving_to(monkeypatch, *addresses):
    calls = []

    def fake(host, *a, **k):
        calls.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0)) for a in addresses]
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return calls


def test_addresses_are_loopback_by_value():
    assert is_loopback_host("127.0.0.1") and is_loopback_host("127.8.9.10") and is_loopback_host("[::1]")
    assert not is_loopback_host("10.0.0.1") and not is_loopback_host("") and not is_loopback_host(None)
    # IPv4's short and hex forms, read as the system reads them (the tap refused `--listen 127.1:0`)
    assert is_loopback_host("127.1") and is_loopback_host("0x7f.1") and is_loopback_host("2130706433")
    assert not is_loopback_host("10.1") and not is_loopback_host("0xa.1") and not is_loopback_host("cafe.face")


def test_a_localhost_name_is_loopback_only_when_it_resolves_there(monkeypatch):
    _resolving_to(monkeypatch, "127.0.0.1")
    assert is_loopback_host("app.localhost")
    _resolving_to(monkeypatch, "203.0.113.7")
    assert not is_loopback_host("app.localhost")
    _resolving_to(monkeypatch, "127.0.0.1", "203.0.113.7")
    assert not is_loopback_host("localhost"), "one non-loopback address is enough to refuse"


def test_a_localhost_name_that_does_not_resolve_is_not_loopback(monkeypatch):
    def fail(*a, **k):
        raise socket.gaierror("no such name")
    monkeypatch.setattr(socket, "getaddrinfo", fail)
    assert not is_loopback_host("app.localhost")
    p = ProviderConfig("x", "openai-chat", "http://app.localhost:9/v1", "m", "K")
    assert insecure_transport(p, "http://app.localhost:9/v1/chat/completions", "sk-123456")


def test_other_names_are_never_resolved(monkeypatch):
    calls = _resolving_to(monkeypatch, "127.0.0.1")
    assert not is_loopback_host("api.example.com")
    assert calls == [], "no DNS look-up for a remote provider (it would block the window)"


# -- credentials and key-like values in URLs ----------------------------------------------------------------------
def test_credentials_in_base_url_are_refused_in_the_file_and_at_send():
    with pytest.raises(ConfigError, match=r"provider 'p'.*credentials"):
        parse_providers('[[provider]]\nname="p"\nformat="openai-chat"\nbase_url="http://u:pw@h.example/v1"\n'
                        'model="m"\n')
    run = prepare_run(ProviderConfig("p", "openai-chat", "http://u:secretpw@127.0.0.1:9/v1", "m", ""), SPEC)
    assert run.status == "error" and run.error["type"] == "bad_request"
    assert "credentials" in run.error["message"] and "secretpw" not in run.error["message"]
    assert run._send is None


def test_a_base_url_query_goes_after_the_endpoint_and_a_key_or_fragment_there_is_refused():
    """The endpoint's path was joined after a base URL's query (`/v1?api-version=1/chat/completions`, a 404), and a
    key written there was sent as it was."""
    from core.live.request import build_request

    azure = ProviderConfig("az", "openai-chat", "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
                           "m", "")
    assert build_request(azure, SPEC, None).url == \
        "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
    gw = ProviderConfig("gw", "gemini", "https://gw.example/?tenant=7", "gemini-2.5-flash", "")
    assert build_request(gw, SPEC, None).url == \
        "https://gw.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&tenant=7"
    for url, why in (("http://127.0.0.1:9/v1?api_key=sk-plain-SECRET-999", "key-like query parameter"),
                     ("http://127.0.0.1:9/v1?auth=zzz", "key-like query parameter"),
                     ("http://127.0.0.1:9/v1#frag", "fragment")):
        with pytest.raises(ConfigError, match=why):
            parse_providers(f'[[provider]]\nname="p"\nformat="openai-chat"\nbase_url="{url}"\nmodel="m"\n')


def test_key_like_query_values_in_base_url_are_redacted_in_the_capture():
    p = ProviderConfig("g", "gemini", "https://gw.example/?key=AIzaSECRET&api-key=zzz&alt=sse", "m", "")
    stored = p.to_json()["base_url"]
    assert "AIzaSECRET" not in stored and "zzz" not in stored and "alt=sse" in stored


# -- proxies ------------------------------------------------------------------------------------------------------
ENV = {"HTTPS_PROXY": "http://user:pw@proxy.example:3128", "http_proxy": "http://proxy.example:3128",
       "NO_PROXY": "internal.example,.corp"}


def test_proxy_choice_follows_the_environment_but_never_for_loopback():
    assert px.proxy_for("https://api.openai.com/v1/x", ENV) == "http://user:pw@proxy.example:3128"
    assert px.proxy_for("http://plain.example/v1", ENV) == "http://proxy.example:3128"
    assert px.proxy_for("http://127.0.0.1:8080/v1", ENV) is None
    assert px.proxy_for("http://localhost:8080/v1", ENV) is None
    assert px.proxy_for("https://internal.example/v1", ENV) is None
    assert px.proxy_for("https://a.b.corp/v1", ENV) is None
    assert px.proxy_for("https://api.openai.com/v1/x", {}) is None


def test_proxy_note_says_how_the_request_travels_and_hides_proxy_credentials():
    note = px.proxy_note("https://api.openai.com/v1/chat/completions", ENV)
    assert "proxy.example:3128" in note and "pw" not in note.replace("proxy", "")
    assert "loopback" in px.proxy_note("http://127.0.0.1:9/v1", ENV)
    assert px.proxy_note("https://api.openai.com/v1", {}) is None


def test_client_mounts_send_loopback_and_no_proxy_hosts_direct():
    mounts = px.proxy_mounts(ENV)
    assert mounts["https://"] == "http://user:pw@proxy.example:3128"
    for pattern in px.LOOPBACK_PATTERNS + ("all://*internal.example", "all://*corp"):
        assert pattern in mounts and mounts[pattern] is None
    assert px.proxy_mounts({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}) == {}


class _Recorder(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


@pytest.fixture
def fake_proxy():
    """A 'proxy' that records every connection it gets (and answers nothing useful)."""
    seen: list[bytes] = []

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.settimeout(2)
            try:
                seen.append(self.request.recv(65536))
            except OSError:
                pass
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")

    srv = _Recorder(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", seen
    srv.shutdown()
    srv.server_close()


def test_a_loopback_provider_never_goes_through_the_environment_proxy(monkeypatch, fake_proxy):
    proxy_url, seen = fake_proxy
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy_url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    server = EmulatorServer()
    base = server.start()
    try:
        runs = [prepare_run(p, SPEC) for p in demo_providers(base)]
        for r in runs:
            r._send.headers["x-emulator-speed"] = "0"

        async def go():
            client = new_client()
            try:
                await Session(runs, client=client, read_timeout=10).run()
            finally:
                await client.aclose()
        asyncio.run(go())
    finally:
        server.stop()
    assert [r.status for r in runs] == ["done"] * 4, [r.error for r in runs]
    assert seen == [], "the key went to the proxy"
    assert all(any("loopback" in n for n in r.notes) for r in runs)


def test_a_loopback_address_outside_the_mount_patterns_gets_a_direct_client(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert _mounts_route_through_proxy("http://127.0.0.5:9/v1")
    assert not _mounts_route_through_proxy("http://127.0.0.1:9/v1")
    assert px.proxy_for("http://127.0.0.5:9/v1") is None


# -- a stream without end is bounded -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def faulty():
    from tests.core.servers.tap.faulty import start_faulty

    server, app = start_faulty()
    yield server.base_url, app
    server.stop()


def _stream_fault(base: str, fault: str, worker=None):
    from core.live.transport import stream_provider

    run = prepare_run(ProviderConfig("endless", "openai-chat", base + "/v1", "m", ""), SPEC)
    run._send.headers["x-fault"] = fault
    if fault.startswith("big:"):
        run._send.headers.update({"x-fault": "big", "x-size": fault[4:]})

    async def go():
        client = new_client()
        try:
            await stream_provider(run, client, read_timeout=10, worker=worker)
        finally:
            await client.aclose()
    asyncio.run(go())
    return run


@pytest.mark.parametrize("fault", ["endless", "endless-event"])
@pytest.mark.parametrize("on_worker", [False, True])
def test_a_stream_that_never_ends_is_closed_at_the_bound_keeping_what_arrived(monkeypatch, faulty, fault,
                                                                             on_worker):
    """A server streaming without end (or one SSE event without end) was kept byte by byte until memory ran out."""
    from core.live import transport
    from core.live.decode_worker import DecodeWorker
    from tests.core.servers.tap.faulty import ENDLESS_LIMIT

    base, app = faulty
    limit = 256 << 10
    monkeypatch.setattr(transport, "MAX_STREAM_BODY", limit, raising=False)
    worker = DecodeWorker("test-bound") if on_worker else None
    try:
        run = _stream_fault(base, fault, worker)
    finally:
        if worker is not None:
            worker.stop()
    assert run.status == "error" and run.error["type"] == "body_too_large", run.error
    assert run.error["message"].startswith("the stream passed 256 KiB: StreamScope stopped reading it")
    assert "everything received is kept" in run.error["message"]
    assert limit < len(run.body) == run.metrics.bytes < limit + (1 << 20)
    n = len(app.requests)
    end = time.monotonic() + 5
    while n not in app.endless_sent and time.monotonic() < end:
        time.sleep(0.01)
    assert n in app.hung_up and app.endless_sent[n] < ENDLESS_LIMIT   # the connection closed: the server saw it
    if fault == "endless":
        assert run.result()["blocks"][0]["text"].startswith("word word ")   # what arrived is decoded and kept
        # a stream of just the bound is read to its end
        from tests.core.servers.tap.faulty import big_body
        size = len(big_body(limit - 100))
        assert size <= limit
        monkeypatch.setattr(transport, "MAX_STREAM_BODY", size)
        whole = _stream_fault(base, f"big:{limit - 100}")
        assert (whole.status, whole.error, whole.body) == ("done", None, big_body(limit - 100))
