"""Where a tap forwards (`--upstream` forms, mounts, refusals) and which headers pass (RFC 9110 hop-by-hop)."""
from __future__ import annotations

import pytest

from core.servers.tap.headers import end_to_end, for_client, for_upstream
from core.servers.tap.server import listen_problem
from core.servers.tap.upstreams import BUILTIN, UpstreamSpecError, parse_upstreams


def test_no_upstream_is_the_emulator_at_the_root():
    m = parse_upstreams([])
    assert m.root.name == "emulator" and m.needs_emulator and m.named == {}
    m = m.with_emulator("http://127.0.0.1:9/")
    assert not m.needs_emulator and m.route("/v1/messages") == (m.root, "/v1/messages")
    assert m.describe() == "http://127.0.0.1:9 (the built-in emulator)"


def test_one_url_or_builtin_name_maps_the_root():
    m = parse_upstreams(["https://llm.example.com/openai/v1/"])
    up, rest = m.route("/chat/completions?x=1")
    assert up.target(rest) == "https://llm.example.com/openai/v1/chat/completions?x=1"
    assert up.target(m.route("/")[1]) == "https://llm.example.com/openai/v1"
    a = parse_upstreams(["anthropic"]).root
    assert (a.url, a.fallback_format) == ("https://api.anthropic.com", "anthropic")
    assert BUILTIN["gemini"][0] == "https://generativelanguage.googleapis.com"
    assert BUILTIN["openai"] == ("https://api.openai.com", None)


def test_several_are_mounted_by_name():
    m = parse_upstreams(["openai", "anthropic", "local=http://127.0.0.1:11434"])
    assert m.root is None and list(m.named) == ["openai", "anthropic", "local"]
    up, rest = m.route("/anthropic/v1/messages")
    assert (up.name, up.target(rest)) == ("anthropic", "https://api.anthropic.com/v1/messages")
    assert m.route("/local")[1] == "/" and m.route("/v1/messages") is None and m.route("/") is None
    assert parse_upstreams(["x=http://127.0.0.1:1"]).named["x"].url == "http://127.0.0.1:1"   # a name: mounted
    assert m.describe().startswith("/openai: https://api.openai.com, /anthropic: ")


@pytest.mark.parametrize("values, message", [
    (["nosuch"], "unknown upstream"),
    (["http://example.com"], "refusing to forward to plain http://"),
    (["https://u:p@example.com"], "credentials"),
    (["https://example.com/v1?key=1"], "no query"),
    (["ftp://example.com"], "not an http"),
    (["https://a.example.com", "https://b.example.com"], "NAME=https://a.example.com"),
    (["a=https://a.example.com", "a=https://b.example.com"], "used twice"),
    (["bad name=https://a.example.com"], "cannot name a mount"),
])
def test_upstreams_that_are_refused(values, message):
    with pytest.raises(UpstreamSpecError, match=message):
        parse_upstreams(values)


def test_plain_http_off_this_machine_only_when_told():
    assert parse_upstreams(["http://gpu-box.lan:8000"], allow_insecure=True).root.url == "http://gpu-box.lan:8000"
    assert parse_upstreams(["http://localhost:8000"]).root.url == "http://localhost:8000"


def test_the_tap_listens_on_loopback_unless_told():
    assert listen_problem("127.0.0.1", False) is None and listen_problem("::1", False) is None
    assert "--allow-remote" in listen_problem("0.0.0.0", False)
    assert listen_problem("0.0.0.0", True) is None


def test_hop_by_hop_headers_stop_at_the_tap():
    h = [("Connection", "keep-alive, X-Secret-Hop"), ("X-Secret-Hop", "1"), ("Keep-Alive", "timeout=5"),
         ("Transfer-Encoding", "chunked"), ("TE", "trailers"), ("Upgrade", "h2c"), ("Trailer", "x"),
         ("Proxy-Connection", "keep-alive"), ("Authorization", "Bearer k"), ("Host", "tap"),
         ("Content-Length", "2"), ("Content-Encoding", "gzip"), ("X-Mine", "a"), ("X-Mine", "b")]
    assert end_to_end(h) == [("Authorization", "Bearer k"), ("Host", "tap"), ("Content-Length", "2"),
                             ("Content-Encoding", "gzip"), ("X-Mine", "a"), ("X-Mine", "b")]
    assert for_upstream(h) == [("Authorization", "Bearer k"), ("Content-Encoding", "gzip"), ("X-Mine", "a"),
                               ("X-Mine", "b")]
    assert for_client(h) == [(b"authorization", b"Bearer k"), (b"host", b"tap"), (b"content-length", b"2"),
                             (b"content-encoding", b"gzip"), (b"x-mine", b"a"), (b"x-mine", b"b")]
