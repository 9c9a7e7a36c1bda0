"""Hostile recordings the importers must refuse or open in bounded memory: YAML alias bombs in cassettes, a raw
`.sse` whose first event is longer than 64 KiB, deep nesting in a HAR, a stray `run` record in a capture."""
from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import yaml

from core.live.capture import CaptureError, capture_lines, parse_jsonl
from core.live.importers import MAX_ALIASED_NODES, _load_yaml, is_event_stream, parse_capture, what_body_is
from core.wire.jsonfast import MAX_DEPTH, TOO_DEEP_MARKER
from tests.core.live.test_importers import url_for
from tests.core.servers.tap.faulty import ANTHROPIC, BODY

ROOT = Path(__file__).resolve().parents[3]
CHAT_URL = url_for("openai-chat")


def bomb(levels: int) -> str:
    """The anchors of a billion-laughs bomb: `*aN` expands to 10**(N+1) strings (the file stays ~1 KB)."""
    rows = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    rows += [f"a{n}: &a{n} [" + ",".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, levels)]
    return "\n".join(rows) + "\n"


def bomb_cassette(levels: int, *, method="POST", uri=CHAT_URL, req_headers="{x: y}",
                  body='{string: "data: [DONE]\\n\\n"}') -> bytes:
    return (bomb(levels) + f"""interactions:
- request:
    method: {method}
    uri: {uri}
    headers: {req_headers}
    body: ""
  response:
    status: {{code: 200, message: OK}}
    headers: {{content-type: [text/event-stream]}}
    body: {body}
""").encode()


def limited_run(args: list[str], memory: int = 1 << 30) -> subprocess.CompletedProcess:
    """`main.py ARGS` with its address space bounded (a regression fails with MemoryError, not gigabytes)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "main.py", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, preexec_fn=limit)


# -- 1. YAML alias bombs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", [{"method": "*a8"}, {"uri": "*a8"}, {"req_headers": "{x: *a8}"},
                                   {"body": "{string: *a8}"}, {"body": "{base64_string: *a8}"}])
def test_a_cassette_alias_bomb_is_refused_with_one_line_in_bounded_memory(tmp_path, where):
    """A ~1 KB cassette whose fields alias nine levels of ten-element lists (10**9 strings once expanded): it
    took 5 GB in 72 s, str() of the expanded list; now refused before anything is built."""
    path = tmp_path / "bomb.yaml"
    path.write_bytes(bomb_cassette(9, **where))
    assert len(path.read_bytes()) < 2000
    r = limited_run(["replay", "--headless", str(path)])
    assert r.returncode != 0 and r.stdout == "" and "Traceback" not in r.stderr and "MemoryError" not in r.stderr
    assert r.stderr.count("\n") == 1 and "bomb.yaml: the cassette is too large once its YAML aliases are expanded" \
        in r.stderr


def test_the_alias_bound_counts_without_expanding():
    tracemalloc.start()
    try:
        with pytest.raises(CaptureError, match="too large once its YAML aliases are expanded"):
            _load_yaml(bomb_cassette(30))            # 10**31 nodes once expanded: counted, never built
        assert tracemalloc.get_traced_memory()[1] < 20 << 20
    finally:
        tracemalloc.stop()
    with pytest.raises(CaptureError, match="too large"):
        _load_yaml(bomb_cassette(4), limit=1000)     # a small bound: 11,110 nodes added by the aliases
    assert _load_yaml(bomb_cassette(4), limit=100_000)["interactions"][0]["request"]["method"] == "POST"
    assert MAX_ALIASED_NODES >= 100_000


def test_a_yaml_alias_loop_is_refused():
    with pytest.raises(CaptureError, match="alias refers to a node that holds it"):
        _load_yaml(b"a: &a [1, *a]\ninteractions: []\n")


def test_ordinary_aliases_still_open():
    """PyYAML's dumper writes an anchor for an object met twice (the same headers in two interactions)."""
    headers = {"Content-Type": ["text/event-stream"]}
    one = {"request": {"method": "POST", "uri": CHAT_URL, "body": "", "headers": {}},
           "response": {"status": {"code": 200, "message": "OK"}, "headers": headers,
                        "body": {"string": BODY.decode()}}}
    two = {**one, "response": {**one["response"], "headers": headers}}
    text = yaml.safe_dump({"version": 1, "interactions": [one, two]})
    assert "&id" in text
    opened = parse_capture(text.encode(), "c.yaml", kind="cassette")
    assert len(opened.runs) == 2 and not opened.skipped


@pytest.mark.parametrize("where, why", [
    ({"method": "*a5"}, "interaction 1: its request method is not a string (a list)"),
    ({"uri": "*a5"}, "interaction 1: its request uri is not a string (a list)"),
    ({"body": "{base64_string: *a5}"}, "a base64_string body that is not a string (a list)"),
    ({"body": "{string: *a5}"}, "a body of type list"),
    ({"method": "{a: *a5}"}, "its request method is not a string (a dict)"),
])
def test_a_field_that_must_be_a_scalar_is_never_made_text(monkeypatch, where, why):
    """Past the alias bound (lifted here), a list or mapping where a string must be skips the interaction, with
    why; it is never str()'d (a 10**6-string list here, 10**9 in the bomb)."""
    data = bomb_cassette(6, **where)
    with pytest.raises(CaptureError, match="too large"):
        parse_capture(data, "c.yaml", kind="cassette")
    monkeypatch.setattr("core.live.importers.MAX_ALIASED_NODES", 10 ** 12)
    monkeypatch.setattr("core.live.importers._load_yaml.__defaults__", (10 ** 12,))
    opened = parse_capture(data, "c.yaml", kind="cassette")
    assert opened.runs == () and len(opened.skipped) == 1
    assert why in f"{opened.skipped[0].entry}: {opened.skipped[0].why}" and len(opened.skipped[0].why) < 200


def test_header_names_and_values_that_are_not_scalars_are_ignored_with_a_note(monkeypatch):
    monkeypatch.setattr("core.live.importers._load_yaml.__defaults__", (10 ** 12,))
    data = bomb_cassette(6, req_headers="{x: *a5, y: [ok, *a4], accept: text/event-stream}")
    [run] = parse_capture(data, "c.yaml", kind="cassette").runs
    assert run.request.headers.get("accept") == "text/event-stream" and run.request.headers.get("y") == "ok"
    assert all(len(v) < 100 for v in run.request.headers.values())
    assert any("request headers whose name or value is not a string" in n for n in run.notes)
    har = {"log": {"entries": [{
        "request": {"method": "POST", "url": CHAT_URL, "headers": [{"name": "a", "value": ["x"] * 5},
                                                                   {"name": {"k": 1}, "value": "v"}]},
        "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                     "content": {"text": BODY.decode()}}}]}}
    [run] = parse_capture(json.dumps(har).encode(), "x.har").runs
    assert "a" not in run.request.headers and any("2 request headers" in n for n in run.notes)


# -- 2. a first event longer than 64 KiB ---------------------------------------------------------------------------
def big_first_event() -> bytes:
    pad = "x" * 70_000
    first = ('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
             '"role":"assistant","content":[],"model":"c","usage":{"input_tokens":1,"output_tokens":0},'
             f'"metadata":{{"pad":"{pad}"}}}}}}\n\n').encode()
    rest = ANTHROPIC.split(b"\n\n", 1)[1]
    return first + rest


@pytest.mark.parametrize("fmt", [None, "anthropic"])
def test_a_raw_sse_whose_first_event_passes_64_kib_opens(fmt):
    data = big_first_event()
    assert data.index(b"\n\n") > 65536
    assert is_event_stream(data) and what_body_is(data) is None
    [run] = parse_capture(data, "bigfirst.sse", kind="sse", format=fmt).runs
    assert run.format == "anthropic" and run.result()["blocks"][0]["text"]
    assert run.result()["usage"]["input_tokens"] == 1 and run.result()["terminated"]


def test_one_unfinished_data_line_longer_than_64_kib_is_an_event_stream():
    data = b"data: " + b"y" * 100_000
    assert is_event_stream(data) and is_event_stream(b"\xef\xbb\xbf" + data) and what_body_is(data) is None
    assert not is_event_stream(b"y" * 100_000) and what_body_is(b"y" * 100_000) is not None


def test_with_a_format_a_body_with_a_data_line_anywhere_is_decoded():
    data = b"y" * 70_000 + b"\n" + BODY          # (no frame in the first 64 KiB: refused without a format)
    with pytest.raises(CaptureError, match="not an event stream"):
        parse_capture(data, "late.sse", kind="sse")
    [run] = parse_capture(data, "late.sse", kind="sse", format="openai-chat").runs
    assert run.result()["blocks"][0]["text"]


def test_replay_and_decode_of_a_big_first_event(tmp_path):
    path = tmp_path / "bigfirst.sse"
    path.write_bytes(big_first_event())
    for extra in ([], ["--format", "anthropic"]):
        r = limited_run(["replay", "--headless", *extra, str(path)])
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert json.loads(r.stdout)["format"] == "anthropic"
    r = limited_run(["decode", "--format", "anthropic", str(path)])
    assert r.returncode == 0 and "not an event stream" not in r.stderr
    assert json.loads(r.stdout)["blocks"]


# -- 3. deep nesting in a HAR --------------------------------------------------------------------------------------
def har_entry(text: str = BODY.decode(), **extra) -> dict:
    return {"startedDateTime": "2026-01-01T12:00:00.000Z",
            "request": {"method": "POST", "url": CHAT_URL, "headers": [],
                        "postData": {"mimeType": "application/json", "text": '{"model": "m", "stream": true}'}},
            "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                         "content": {"text": text}},
            "timings": {"wait": 1, "receive": 2}, **extra}


def test_a_deep_part_of_one_har_entry_loses_no_other_entry():
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps({"log": {"entries": [har_entry(), har_entry()]}})
    at = text.index('"timings"', text.index('"timings"') + 1)
    data = (text[:at] + f'"x": {deep}, "y": "[[[{{", ' + text[at:]).encode()   # (brackets in a string: text)
    with pytest.raises(RecursionError):
        json.loads(data)
    opened = parse_capture(data, "deep.har")
    assert [r.name for r in opened.runs] == ["deep#1", "deep#2"] and not opened.skipped
    assert all(r.result()["blocks"][0]["text"] for r in opened.runs)
    assert not any("nested deeper" in n for n in opened.runs[0].notes)
    assert any(f"nested deeper than {MAX_DEPTH} levels were not read" in n for n in opened.runs[1].notes)


def test_a_har_entry_nested_too_deep_where_it_matters_is_skipped_alone():
    text = json.dumps({"log": {"entries": [har_entry(), "@"]}})
    data = text.replace('"@"', '{"request": ' + "[" * 5000 + "]" * 5000 + ', "response": {}}').encode()
    opened = parse_capture(data, "deep.har")
    assert [r.name for r in opened.runs] == ["deep#1"]
    assert [s.entry for s in opened.skipped] == ["entry 2"]


def test_deep_bodies_in_a_har_entry_affect_that_entry_alone():
    deep_obj = '{"a":' * 100_000 + "1" + "}" * 100_000
    entries = [har_entry(), har_entry(), har_entry(), har_entry("data: " + "[" * 100_000 + "\n\n")]
    entries[1]["request"]["postData"]["text"] = deep_obj
    entries[2]["response"]["content"]["text"] = '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"
    entries[2]["response"]["headers"] = [{"name": "content-type", "value": "application/json"}]
    opened = parse_capture(json.dumps({"log": {"entries": entries}}).encode(), "b.har")
    assert len(opened.runs) == 4 and not opened.skipped
    for r in opened.runs:
        json.dumps(r.result())
    assert opened.runs[0].result()["blocks"][0]["text"] and opened.runs[1].result()["blocks"][0]["text"]
    assert "json-too-deep" in [d["code"] for d in opened.runs[3].result()["diagnostics"]]


@pytest.mark.parametrize("data", [b"[" * 100_000 + b"]" * 100_000,
                                  b'{"log": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                                  b'{"log": {"entries": ' + b"{" * 1 + b'"a":' + b"[" * 100_000 + b"]" * 100_000
                                  + b"}}}",
                                  b"[" * 100_000])
def test_a_har_nested_too_deep_as_a_whole_says_so(data):
    with pytest.raises(CaptureError, match=f"x.har: nested too deep \\(limit {MAX_DEPTH} levels\\)"):
        parse_capture(data, "x.har", kind="har")


def test_not_json_is_still_not_json():
    with pytest.raises(CaptureError, match="not JSON"):
        parse_capture(b'{"log": {"entries": [}', "x.har", kind="har")


def test_a_json_cassette_with_a_deep_part_opens():
    doc = {"version": 1, "interactions": [
        {"request": {"method": "POST", "uri": CHAT_URL, "body": "", "headers": {}, "x": "@"},
         "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": BODY.decode()}}}]}
    data = json.dumps(doc).replace('"@"', "[" * 100_000 + "]" * 100_000).encode()
    [run] = parse_capture(data, "c.json", kind="cassette").runs
    assert run.result()["blocks"][0]["text"] and TOO_DEEP_MARKER not in json.dumps(run.result())


# -- 4. a stray run record in a capture ---------------------------------------------------------------------------
def capture_of_one_run() -> list[str]:
    [run] = parse_capture(BODY, "one.sse", kind="sse", format="openai-chat").runs
    return capture_lines([run])


@pytest.mark.parametrize("stray", ['{"type":"run","run":0}', '{"type":"run","run":0,"provider":null}',
                                   '{"type":"run","run":0,"provider":{"name":"x","format":"nope"}}',
                                   '{"type":"run","run":0,"provider":{"format":"anthropic"},"spec":[1]}'])
def test_a_stray_run_record_before_the_real_one_does_not_lose_the_run(stray):
    lines = capture_of_one_run()
    problems: list[tuple[str, str]] = []
    [back] = parse_jsonl("\n".join([lines[0], stray, *lines[1:]]).encode(), "cap", problems)
    want = parse_jsonl("\n".join(lines).encode(), "cap")[0]
    assert back.result() == want.result()
    assert len(problems) == 1 and problems[0][0] == "line 2" and "a run record" in problems[0][1] \
        and "skipped" in problems[0][1] and "appears twice" not in problems[0][1]
    assert any("capture line 2: a run record" in n for n in back.notes)


def test_a_run_whose_only_run_record_is_unusable_is_left_out_once():
    lines = capture_of_one_run()
    other = [ln.replace('"run":0', '"run":1', 1) for ln in lines[1:]]
    bad = [lines[1].split(',"provider"')[0] + "}", *lines[2:]]        # run 0: its run record lost its provider
    problems: list[tuple[str, str]] = []
    back = parse_jsonl("\n".join([lines[0], *bad, *other]).encode(), "cap", problems)
    assert len(back) == 1
    assert problems == [("line 2", f"run 0 cannot be rebuilt (a run record without a provider object); it was "
                                   f"left out, and its {len(bad) - 1} other records with it")]


def test_a_good_run_record_twice_is_still_reported():
    lines = capture_of_one_run()
    problems: list[tuple[str, str]] = []
    parse_jsonl("\n".join([lines[0], lines[1], *lines[1:]]).encode(), "cap", problems)
    assert problems[0] == ("line 3", "run 0 appears twice; the record was skipped")


def test_a_deep_har_whose_last_string_never_closes_is_refused_in_one_pass():
    """Escaped quotes with no closing one after the deep opening: the cut's string pattern scanned from each of
    them to the end (quadratic: a 200 KB file took 134 s)."""
    data = b'{"log":' + b"[" * 2000 + b'"' + b'\\"' * 100_000
    with pytest.raises(CaptureError) as e:
        parse_capture(data, "deep.har", kind="har")
    assert "deep.har" in str(e.value)
