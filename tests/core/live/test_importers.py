"""Opening any recording (`read_capture`): the corpus as raw `.sse`, as VCR cassettes and as HAR files decodes
exactly as `decode` does; browsers' HARs, vcrpy's gzip and base64 bodies; bad input is a clear error."""
from __future__ import annotations

import base64
import gzip
import json

import pytest
import yaml

from core.live.capture import CaptureError, export
from core.live.importers import kind_of, parse_capture, read_capture
from core.live.recorder import TIMING_NONE
from core.wire.formats import REGISTRY
from core.wire.pipeline import decode_bytes
from tests.corpus import CORPUS, expected
from tests.core.servers.tap.faulty import ANTHROPIC, BODY

CORPUS_FILES = sorted(CORPUS.glob("*/*.sse")) if CORPUS.is_dir() else []
needs_corpus = pytest.mark.skipif(not CORPUS_FILES, reason="the shared corpus is absent")


def decoded(run) -> dict:
    r = run.result()
    r.pop("provider")
    r.pop("http_status")
    return r


def url_for(fmt: str) -> str:
    f = REGISTRY[fmt]
    return f.default_base_url + f.endpoint.format(model="m")


def cassette(entries, gz=False) -> bytes:
    """A cassette as vcrpy writes one: bodies as text, or gzip bytes as !!binary when the response was gzipped."""
    interactions = []
    for fmt, body in entries:
        headers = {"Content-Type": ["text/event-stream"]}
        if gz:
            headers["Content-Encoding"] = ["gzip"]
            body = gzip.compress(body)
        interactions.append({
            "request": {"method": "POST", "uri": url_for(fmt), "body": '{"model": "m", "stream": true}',
                        "headers": {"Authorization": ["Bearer sk-cassette-secret-1"]}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": headers,
                         "body": {"string": body if gz else body.decode("utf-8", "surrogateescape")}}})
    return yaml.safe_dump({"version": 1, "interactions": interactions}, allow_unicode=True).encode("utf-8")


def browser_har(entries) -> bytes:
    """A HAR as browsers' developer tools write it (no StreamScope extensions), with a page asset among them."""
    def entry(method, url, mime, text, **content):
        return {"startedDateTime": "2026-01-01T12:00:00.000Z", "time": 12,
                "request": {"method": method, "url": url, "httpVersion": "h2", "headers": [
                    {"name": ":authority", "value": "x"}, {"name": "authorization", "value": "Bearer sk-har-1"}],
                    "queryString": [], "postData": {"mimeType": "application/json", "text": '{"stream": true}'}},
                "response": {"status": 200, "statusText": "", "httpVersion": "h2",
                             "headers": [{"name": "content-type", "value": mime}],
                             "content": {"size": len(text), "mimeType": mime, "text": text, **content}},
                "timings": {"wait": 100.5, "receive": 20.25}}
    rows = [entry("GET", "https://app.example.com/main.js", "application/javascript", "console.log(1)")]
    for fmt, body in entries:
        rows.append(entry("POST", url_for(fmt), "text/event-stream", base64.b64encode(body).decode(),
                          encoding="base64"))
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "WebInspector"}, "entries": rows}}).encode()


@pytest.mark.slow
@needs_corpus
def test_the_corpus_opens_as_sse_as_cassettes_and_as_har_and_decodes_as_decode_does(tmp_path):
    for f in CORPUS_FILES:
        fmt = expected(f)["wire_format"]
        data = f.read_bytes()
        want = decode_bytes(fmt, data).result()
        sse = read_capture(f)
        assert (sse.kind, decoded(sse.runs[0])) == ("sse", want), f
        cas = parse_capture(cassette([(fmt, data)]), "c.yaml", kind="cassette")
        assert decoded(cas.runs[0]) == want and cas.runs[0].format == fmt, f
        gz = parse_capture(cassette([(fmt, data)], gz=True), "c.yaml")
        assert decoded(gz.runs[0]) == want, f
        har = parse_capture(browser_har([(fmt, data)]), "b.har")
        assert [s.entry for s in har.skipped] == ["entry 1: GET https://app.example.com/main.js"]
        assert decoded(har.runs[0]) == want, f
        own = read_capture(export(list(har.runs), tmp_path / "own.har"))   # StreamScope's own HAR, back again
        assert decoded(own.runs[0]) == want and own.runs[0].chunks == har.runs[0].chunks, f


def test_a_browsers_har_entry_gives_its_timing_request_and_redacts_keys():
    opened = parse_capture(browser_har([("anthropic", ANTHROPIC)]), "session.har")
    run = opened.runs[0]
    assert (opened.kind, run.name, run.format, run.http_status) == ("har", "session#2", "anthropic", 200)
    assert run.metrics.t_headers_ns == 100_500_000 and run.metrics.t_total_ns == 120_750_000
    assert run.started_at == 1767268800.0
    assert run.request.headers["authorization"] == "[REDACTED]" and run.request.body == {"stream": True}
    assert run.result()["blocks"][0]["text"] == "Paris"
    assert "not an LLM exchange" in opened.skipped[0].why


def test_a_har_body_the_tool_did_not_keep_is_rebuilt_from_its_event_source_messages():
    doc = json.loads(browser_har([("openai-chat", BODY)]))
    e = doc["log"]["entries"][1]
    e["response"]["content"] = {"size": 0, "mimeType": "text/event-stream"}
    e["_eventSourceMessages"] = [{"time": 1.0, "eventName": "message", "eventId": "", "data": line[6:]}
                                 for line in BODY.decode().split("\n\n") if line]
    run = parse_capture(json.dumps(doc).encode(), "x.har").runs[0]
    assert run.body == BODY and run.result()["terminated"] is True


def test_a_cassette_with_vcrpys_other_body_forms():
    doc = yaml.safe_load(cassette([("openai-chat", BODY)]))
    doc["interactions"][0]["response"]["body"] = {"base64_string": base64.b64encode(BODY).decode()}
    assert parse_capture(yaml.safe_dump(doc).encode(), "x.yaml").runs[0].body == BODY
    doc["interactions"][0]["response"] = {"status_code": 200, "headers": {}, "content": BODY.decode()}   # older httpx
    run = parse_capture(yaml.safe_dump(doc).encode(), "x.yaml").runs[0]
    assert run.body == BODY and "sk-cassette-secret-1" not in repr(run.request.to_json())


def test_a_format_can_be_forced_and_a_raw_body_that_says_nothing_needs_one():
    body = b"data: {\"unknown\": 1}\n\n"
    with pytest.raises(CaptureError, match="tells the wire format"):
        parse_capture(body, "x.sse", kind="sse")
    run = parse_capture(body, "x.sse", kind="sse", format="openai-chat").runs[0]
    assert run.format == "openai-chat"
    forced = parse_capture(cassette([("openai-chat", BODY)]), "x.yaml", format="anthropic").runs[0]
    assert forced.format == "anthropic"
    assert any(d["code"] == "format-mismatch" for d in forced.result()["diagnostics"])
    with pytest.raises(CaptureError, match="unknown wire format"):
        parse_capture(BODY, "x.sse", format="cobol")


def test_the_kind_comes_from_the_content_when_the_extension_does_not_say(tmp_path):
    assert kind_of(b'{"format":"streamscope-capture","version":1}\n') == "jsonl"
    assert kind_of(b'\n {"log": {"entries": []}}') == "har"
    assert kind_of(b"interactions:\n- request: {}\n") == "cassette"
    assert kind_of(BODY) == "sse"
    p = tmp_path / "recording.txt"
    p.write_bytes(cassette([("anthropic", ANTHROPIC)]))
    assert read_capture(p).kind == "cassette"


@pytest.mark.parametrize("data, kind, message", [
    (b"not json", "har", "not JSON"),
    (b'{"log": {}}', "har", "no log.entries"),
    (b"interactions: [", "cassette", "not a YAML cassette"),
    (b"interactions: 3", "cassette", "no interactions list"),
    (b"!!python/object/apply:os.system ['true']", "cassette", "not a YAML cassette"),
    (b"", "jsonl", "empty file"),
])
def test_bad_recordings_are_clear_errors(data, kind, message):
    with pytest.raises(CaptureError, match=message):
        parse_capture(data, "bad", kind=kind)


def test_entries_that_are_not_exchanges_are_listed_not_fatal():
    doc = {"log": {"entries": [3, {"request": {}, "response": {}}]}}
    opened = parse_capture(json.dumps(doc).encode(), "x.har")
    assert opened.runs == () and [s.entry for s in opened.skipped] == ["entry 1", "entry 2: GET "]


def test_a_broken_entry_is_listed_with_why_and_the_others_open():
    """One entry that cannot be read (a body that says base64 but is not, a URL that does not parse, a body of
    no known form) costs that entry, not the file; its label keeps a ?key= out."""
    har = json.loads(browser_har([("openai-chat", BODY)]))
    bad = json.loads(json.dumps(har["log"]["entries"][1]))
    bad["request"]["url"] += "?alt=sse&key=AIzaLeakedInALabel1"
    bad["response"]["content"] = {"text": "%%%", "encoding": "base64"}
    unparsable = json.loads(json.dumps(har["log"]["entries"][1]))
    unparsable["request"]["url"] = "https://[api.openai.com/v1/chat/completions"
    har["log"]["entries"] += [bad, unparsable]
    opened = parse_capture(json.dumps(har).encode(), "x.har")
    assert [r.body for r in opened.runs] == [BODY]
    why = {s.entry: s.why for s in opened.skipped}
    assert why["entry 3: POST " + url_for("openai-chat") + "?alt=sse&key=[REDACTED]"] == \
        "content.text says base64 but is not"
    assert why["entry 4: POST https://[api.openai.com/v1/chat/completions"].startswith("its URL cannot be read")
    assert "AIzaLeakedInALabel1" not in repr(opened.skipped)

    doc = yaml.safe_load(cassette([("openai-chat", BODY), ("anthropic", ANTHROPIC)]))
    doc["interactions"][0]["response"]["body"] = {"base64_string": "%%%"}
    opened = parse_capture(yaml.safe_dump(doc).encode(), "x.yaml")
    assert [r.body for r in opened.runs] == [ANTHROPIC]
    assert [(s.entry.split(":")[0], s.why) for s in opened.skipped] == [
        ("interaction 1", "a base64_string body is not base64")]


def test_vcrpys_json_cassettes_open(tmp_path):
    doc = yaml.safe_load(cassette([("anthropic", ANTHROPIC)]))
    data = json.dumps(doc, indent=4).encode()            # vcrpy's serializer="json": interactions, then version
    assert kind_of(data) == "cassette" and kind_of(json.dumps({"version": 1, **doc}).encode()) == "cassette"
    p = tmp_path / "fixture.json"
    p.write_bytes(data)
    opened = read_capture(p)
    assert opened.kind == "cassette" and [r.body for r in opened.runs] == [ANTHROPIC]
    with pytest.raises(CaptureError, match="not a JSON cassette"):
        parse_capture(b'{"interactions": [', "x.json", kind="cassette")


def test_chunk_sizes_that_are_not_sizes_leave_the_body_whole(tmp_path):
    from core.live.recorder import rebuild_run
    from core.live.config import ProviderConfig

    run = rebuild_run(ProviderConfig("p", "anthropic", "https://api.anthropic.com", "m"),
                      headers=(1, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=[(2, ANTHROPIC[:10]), (3, ANTHROPIC[10:])], end_ns=4)
    doc = json.loads(export([run], tmp_path / "own.har").read_text())
    for sizes in ([[0.1, "ten"], [0.2, len(ANTHROPIC) - 10]], [[0.1, None]], [[0.1, -1], [0.2, 1]]):
        doc["log"]["entries"][0]["_streamscope"]["chunks"] = sizes
        back = parse_capture(json.dumps(doc).encode(), "own.har").runs[0]
        assert back.body == ANTHROPIC and len(back.chunks) == 1


def test_a_missing_or_huge_file(tmp_path, monkeypatch):
    with pytest.raises(CaptureError, match="cannot read"):
        read_capture(tmp_path / "nope.har")
    from core.live import importers

    monkeypatch.setattr(importers, "MAX_CAPTURE_BYTES", 10)
    p = tmp_path / "big.sse"
    p.write_bytes(BODY)
    with pytest.raises(CaptureError, match="more than a recording"):
        read_capture(p)


def test_streamscopes_own_har_gives_back_the_prompt_and_conversation(tmp_path):
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run
    from core.live.request import PromptSpec
    from core.live.tool_loop import exchange_index, follow_up

    provider = ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m")
    first_spec = PromptSpec(user="What is the capital of France?", system="Be brief.", temperature=0.2)
    headers = (1, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    first = rebuild_run(provider, spec=first_spec, headers=headers, chunks=[(2, BODY)], end_ns=3, started_at=1.0)
    second_spec = follow_up(first_spec, first, user="And of Italy?")
    second = rebuild_run(provider, spec=second_spec, headers=headers, chunks=[(2, BODY)], end_ns=3, started_at=2.0)
    path = export([first, second], tmp_path / "two.har")
    runs = read_capture(path).runs
    assert [r.spec.to_json() for r in runs] == [first_spec.to_json(), second_spec.to_json()]
    assert [exchange_index(r.spec) for r in runs] == [0, 1]


@pytest.mark.parametrize("bad", [{"user": 5}, {"tools": "x"}, {"history": 5}, {"conversation": "x"}, "spec", 7])
def test_a_har_whose_spec_cannot_be_read_still_opens_without_it(tmp_path, bad):
    from core.live.config import ProviderConfig
    from core.live.recorder import rebuild_run
    from core.live.request import PromptSpec

    provider = ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m")
    run = rebuild_run(provider, spec=PromptSpec(user="hi"), headers=(1, 200, "HTTP/1.1", "OK",
                      [("content-type", "text/event-stream")]), chunks=[(2, BODY)], end_ns=3, started_at=1.0)
    path = export([run], tmp_path / "one.har")
    doc = json.loads(path.read_text())
    doc["log"]["entries"][0]["_streamscope"]["spec"] = bad
    path.write_text(json.dumps(doc))
    [opened] = read_capture(path).runs
    assert opened.spec is None and decoded(opened)["blocks"] == decoded(run)["blocks"]


def chrome_entry(url: str, status: int, text: str | None, error: str | None, mime="text/event-stream") -> dict:
    """An entry as Chrome's developer tools write it: `_error` in the response (null when the request was fine),
    status 0 and an empty content for a request that never got a response."""
    content = {"size": len(text or ""), "mimeType": mime if status else "x-unknown"}
    if text is not None:
        content["text"] = text
    return {"_resourceType": "fetch", "startedDateTime": "2026-01-01T12:00:00.000Z", "time": 900,
            "request": {"method": "POST", "url": url, "httpVersion": "h2", "cookies": [], "queryString": [],
                        "headers": [{"name": "authorization", "value": "Bearer sk-har-1"}], "headersSize": -1,
                        "bodySize": 16, "postData": {"mimeType": "application/json", "text": '{"stream": true}'}},
            "response": {"status": status, "statusText": "", "httpVersion": "h2" if status else "",
                         "headers": [{"name": "content-type", "value": mime}] if status else [], "cookies": [],
                         "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1,
                         "_transferSize": 0, "_error": error},
            "cache": {}, "timings": {"blocked": -1, "dns": -1, "ssl": -1, "connect": -1, "send": 0,
                                     "wait": 300 if status else 0, "receive": 600 if status else 0}}


def har_of(*entries) -> bytes:
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                               "pages": [], "entries": list(entries)}}).encode()


def test_aborted_har_entries_end_dropped_not_done():
    url = url_for("anthropic")
    part = ANTHROPIC.decode()[:len(ANTHROPIC) // 2]
    opened = parse_capture(har_of(chrome_entry(url, 200, part, "net::ERR_ABORTED"),    # aborted after headers
                                  chrome_entry(url, 0, part, None),                     # status 0, body partial
                                  chrome_entry(url, 0, None, "net::ERR_ABORTED"),       # never answered
                                  chrome_entry(url, 200, ANTHROPIC.decode(), None)), "x.har")
    by = {r.name: r for r in opened.runs}
    aborted, partial, fine = by["x#1"], by["x#2"], by["x#4"]
    assert aborted.http_status == 200 and aborted.status == "error"
    assert aborted.error["type"] == "connection_dropped"
    assert aborted.error["message"] == "the recording says the request failed: net::ERR_ABORTED"
    assert partial.http_status is None and partial.error["type"] == "connection_dropped"
    assert "status 0" in partial.error["message"]
    assert (fine.status, fine.error) == ("done", None)
    assert [(s.entry.split(":")[0], s.why) for s in opened.skipped] == [
        ("entry 3", "the recording says the request failed: net::ERR_ABORTED")]


@pytest.mark.parametrize("ext", ["jsonl", "har", "md", "sse", "yaml"])
def test_credentials_in_a_url_never_reach_the_run_or_an_export(tmp_path, ext):
    """A HAR of a basic-auth gateway (`https://bob:PASSWORD@host/...`, as proxies write them) and a token as the
    user name: neither is in the run's request, its provider's base URL, the skipped list or any export."""
    password, token = "HARSECRETpw123456", "sk-HARSECRETuserinfo0123"
    rows = [chrome_entry(f"https://bob:{password}@gateway.example.com/v1/chat/completions", 200, BODY.decode(), None),
            chrome_entry(f"https://{token}@gateway.example.com/v1/chat/completions", 200, BODY.decode(), None),
            chrome_entry(f"https://bob:{password}@gateway.example.com/health", 200, "ok", None, mime="text/plain")]
    opened = parse_capture(har_of(*rows), "gw.har")
    assert [r.request.url for r in opened.runs] == ["https://bob:****@gateway.example.com/v1/chat/completions",
                                                     "https://****@gateway.example.com/v1/chat/completions"]
    assert [r.provider.base_url for r in opened.runs] == ["https://bob:****@gateway.example.com",
                                                           "https://****@gateway.example.com"]
    assert password not in repr(opened.skipped) and "bob:****@" in opened.skipped[0].entry
    path = export(list(opened.runs), tmp_path / f"out.{ext}")
    for f in [path, *tmp_path.iterdir()]:
        text = f.read_bytes()
        assert password.encode() not in text and token.encode() not in text, f
    if ext in ("jsonl", "har", "yaml"):
        assert [r.request.url for r in read_capture(path).runs] == [r.request.url for r in opened.runs]


@pytest.mark.parametrize("timings", [{"send": 0, "wait": float("inf"), "receive": 1},      # Python's json.dumps
                                     {"send": 0, "wait": 1e300, "receive": 1},
                                     {"send": 0, "wait": 9.3e12, "receive": 1},
                                     {"send": 0, "wait": 1, "receive": float("nan")},
                                     {"send": 0, "wait": 1, "receive": float("-inf")}])
def test_out_of_range_har_timings_are_ignored_with_a_note(tmp_path, timings):
    e = chrome_entry(url_for("openai-chat"), 200, BODY.decode(), None)
    e["timings"] = timings
    e["startedDateTime"] = "0001-01-01T00:00:00+01:00"
    path = tmp_path / "odd.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [e]}}), encoding="utf-8")   # Infinity, NaN
    run = read_capture(path).runs[0]
    assert run.status == "done" and run.result()["blocks"] == decode_bytes("openai-chat", BODY).result()["blocks"]
    # (a timing ignored: the time to the headers and the total are not known, rather than 0 or the other one)
    assert run.timing == TIMING_NONE and run.metrics.t_total_ns is None and run.metrics.t_headers_ns is None
    assert any("is out of range: ignored" in n for n in run.notes)
    assert read_capture(export([run], tmp_path / "back.jsonl")).runs[0].result() == run.result()


def test_a_given_format_overrides_the_llm_exchanges_only_and_whole_replies_at_other_paths_open():
    """`--format` changes how the LLM exchanges decode, not which entries are ones: a page, an image and
    `GET /v1/models` stay skipped. A whole JSON reply at a path that names no format opens, told by its shape."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
    page = chrome_entry("https://app.example.com/", 200, "<!doctype html><p>hi</p>", None, mime="text/html")
    image = chrome_entry("https://app.example.com/logo.png", 200, png, None, mime="image/png")
    image["response"]["content"]["encoding"] = "base64"
    models = chrome_entry("https://api.openai.com/v1/models", 200, '{"object": "list", "data": []}', None,
                          mime="application/json")
    models["request"]["method"] = "GET"
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": "Paris"}], "usage": {"input_tokens": 3, "output_tokens": 1}}
    whole = chrome_entry("https://gateway.example.com/proxy/chat", 200, json.dumps(message), None,
                         mime="application/json")
    whole["request"]["postData"]["text"] = '{"model": "claude", "max_tokens": 9, "messages": []}'   # (not streamed)
    stream = chrome_entry(url_for("openai-chat"), 200, BODY.decode(), None)
    data = har_of(page, image, models, whole, stream)
    plain = parse_capture(data, "x.har")
    assert [(r.name, r.format) for r in plain.runs] == [("x#4", "anthropic"), ("x#5", "openai-chat")]
    assert plain.runs[0].result()["blocks"][0]["text"] == "Paris" and plain.runs[0].status == "done"
    forced = parse_capture(data, "x.har", format="openai-chat")
    assert [r.name for r in forced.runs] == ["x#4", "x#5"] and {r.format for r in forced.runs} == {"openai-chat"}
    assert [s.entry.split(":")[0] for s in forced.skipped] == ["entry 1", "entry 2", "entry 3"]


@pytest.mark.parametrize("data, why", [
    (gzip.compress(BODY), "it is gzip-compressed: decompress it"),                # curl without --compressed
    ("\ufeff".encode("utf-16-le") + BODY.decode().encode("utf-16-le"), "it is UTF-16 text"),  # PowerShell's >
    (BODY.decode().encode("utf-16-be"), "it is UTF-16 text"),
    (har_of(chrome_entry(url_for("openai-chat"), 200, BODY.decode(), None)), "it is a HAR file"),
    (cassette([("openai-chat", BODY)]), "it is a VCR cassette"),
    (b"<!DOCTYPE html><html><body>Bad gateway</body></html>", "it is an HTML page"),
    (b'{"error": {"message": "Invalid API key", "type": "invalid_request_error"}}', "it is JSON"),
])
@pytest.mark.parametrize("fmt", [None, "openai-chat"])
def test_a_raw_body_that_is_not_an_event_stream_says_what_it_is(tmp_path, data, why, fmt):
    path = tmp_path / "body.sse"
    path.write_bytes(data)
    with pytest.raises(CaptureError, match=f"body.sse: not an event stream: {why}"):
        read_capture(path, format=fmt)


def test_a_raw_whole_json_reply_opens_and_the_sse_export_of_a_non_streamed_reply_reopens(tmp_path):
    reply = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"},
                          "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}
    url = url_for("openai-chat")
    e = chrome_entry(url, 200, json.dumps(reply, indent=2), None, mime="application/json")
    e["request"]["postData"]["text"] = '{"model": "gpt-4o-mini", "messages": []}'
    run = parse_capture(har_of(e), "x.har").runs[0]
    assert run.result()["blocks"][0]["text"] == "Paris"
    sse = export([run], tmp_path / "reply.sse")
    back = read_capture(sse).runs[0]
    want = run.result()
    got = back.result()
    assert (got["format"], got["blocks"], got["usage"], got["finish_reason"], got["error"]) == \
        (want["format"], want["blocks"], want["usage"], want["finish_reason"], None)
    assert read_capture(sse, format="openai-chat").runs[0].result()["blocks"] == want["blocks"]
    with pytest.raises(CaptureError, match="not an event stream"):
        read_capture(sse, format="anthropic")           # (not that format's reply)


def test_a_ruby_vcr_cassette_opens():
    """Ruby's VCR (whose shape vcrpy copied): `http_interactions`, a lowercase method, bodies as
    `{encoding, string}` or `{encoding: ASCII-8BIT, base64_string}`, `recorded_at`."""
    key = "sk-ruby-vcr-secret-0123456789"
    doc = {"http_interactions": [
        {"request": {"method": "post", "uri": "https://api.openai.com/v1/chat/completions",
                     "body": {"encoding": "UTF-8", "string": '{"model":"gpt-4o","stream":true}'},
                     "headers": {"Authorization": [f"Bearer {key}"]}},
         "response": {"status": {"code": 200, "message": "OK"},
                      "headers": {"Content-Type": ["text/event-stream"]},
                      "body": {"encoding": "ASCII-8BIT", "base64_string": base64.b64encode(BODY).decode()}},
         "recorded_at": "Wed, 01 May 2024 10:00:01 GMT"}],
        "recorded_with": "VCR 6.2.0"}
    [run] = parse_capture(yaml.safe_dump(doc).encode(), "spec.yml").runs
    assert run.body == BODY and run.format == "openai-chat" and run.request.method == "POST"
    assert run.result()["blocks"] == decode_bytes("openai-chat", BODY).result()["blocks"]
    assert key not in json.dumps(run.request.to_json())


def test_a_har_body_kept_as_received_gzip_is_decoded_as_its_header_says():
    """HAR bodies are stored decoded, but some writers (Fiddler) keep them as received: gzip's bytes, base64."""
    doc = json.loads(browser_har([("anthropic", gzip.compress(ANTHROPIC))]))
    entry = doc["log"]["entries"][1]
    entry["response"]["headers"].append({"name": "content-encoding", "value": "gzip"})
    [run] = parse_capture(json.dumps(doc).encode(), "x.har").runs
    assert run.body == ANTHROPIC and run.status == "done" and run.error is None
    plain = json.loads(browser_har([("anthropic", ANTHROPIC)]))      # stored decoded, the header kept: as it is
    plain["log"]["entries"][1]["response"]["headers"].append({"name": "content-encoding", "value": "gzip"})
    assert parse_capture(json.dumps(plain).encode(), "x.har").runs[0].body == ANTHROPIC
