"""The exports beside the native capture: the raw `.sse` body and a VCR cassette that vcrpy replays (a capture
becomes a test fixture); one list of export formats; a native capture written as it goes."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from core.live.capture import (EXPORT_EXTENSIONS, EXPORT_TYPES, CaptureAppender, cassette_document, export,
                               export_type, parse_jsonl, sse_paths, write_jsonl)
from core.live.config import ProviderConfig, demo_providers
from core.live.importers import read_capture
from core.live.recorder import rebuild_run
from core.live.request import PromptSpec
from core.live.transport import run_prompt
from tests.corpus import ROOT

vcr = pytest.importorskip("vcr")


@pytest.fixture(scope="module")
def runs(emulator):
    return asyncio.run(run_prompt(demo_providers(emulator, "split-utf8"), PromptSpec("What is the capital?")))


def made_run(body: bytes, url="https://api.example.com/v1/chat/completions?key=AIzaInUrl123", name="made"):
    from core.live.request import HttpRequest

    req = HttpRequest("POST", url, {"Authorization": "[REDACTED]", "Content-Type": "application/json"},
                      {"model": "m", "stream": True})
    return rebuild_run(ProviderConfig(name, "openai-chat", "https://api.example.com/v1", "m"), request=req,
                       headers=(5, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream"),
                                                         ("content-encoding", "gzip"), ("x-kept", "1")]),
                       chunks=[(7, body)], end_ns=9)


def test_the_sse_export_is_each_raw_body(runs, tmp_path):
    one = export(runs[:1], tmp_path / "one.sse")
    assert one == tmp_path / "one.sse" and one.read_bytes() == runs[0].body
    first = export(runs, tmp_path / "all.sse")
    paths = sse_paths(runs, tmp_path / "all.sse")
    assert first == paths[0] and [p.name for p in paths] == [f"all.{r.name}.sse" for r in runs]
    for r, p in zip(runs, paths):
        assert p.read_bytes() == r.body
        back = read_capture(p)                      # and it opens again, told by its own frames
        assert back.runs[0].format == r.format and back.runs[0].result()["blocks"] == r.result()["blocks"]


def test_vcrpy_replays_the_exported_cassette_with_the_same_bytes(runs, tmp_path):
    path = export(runs, tmp_path / "fixture.yaml")
    with vcr.use_cassette(str(path), record_mode="none"):
        for r in runs:
            req = r.request
            got = httpx.request(req.method, req.url, headers=req.headers, content=req.content())
            assert (got.status_code, got.content) == (200, r.body)
            assert got.headers["content-type"] == dict(r.response_headers)["content-type"]
    back = read_capture(path)
    assert [x.result()["blocks"] for x in back.runs] == [r.result()["blocks"] for r in runs]


def test_a_cassette_holds_binary_bodies_drops_the_coding_and_leaves_keys_out(tmp_path):
    body = b'data: {"choices":[{"index":0,"delta":{"content":"\xff"}}]}\n\n'     # not UTF-8
    run = made_run(body)
    path = export([run], tmp_path / "bin.yml")
    text = path.read_text()
    assert "!!binary" in text and "AIzaInUrl123" not in text and "key=" not in text
    doc = cassette_document([run])["interactions"][0]
    assert "content-encoding" not in doc["response"]["headers"] and doc["response"]["headers"]["x-kept"] == ["1"]
    with vcr.use_cassette(str(path), record_mode="none", filter_query_parameters=["key"]):
        got = httpx.post("https://api.example.com/v1/chat/completions?key=AIzaRealKey999", json={})
        assert got.content == body
    with pytest.raises(ValueError, match="no run got a response"):
        export([rebuild_run(ProviderConfig("x", "gemini", "", ""), chunks=[(0, b"x")])], tmp_path / "none.yaml")


def _export_all(run, tmp_path, stem):
    return {ext: export([run], tmp_path / f"{stem}{ext}") for ext in (".jsonl", ".har", ".yaml", ".md")}


def test_a_placeholder_key_masks_nothing_and_every_export_reads_back(tmp_path):
    """Local servers take keys like `e`, `x` or `none`: too short to be looked for (they would overwrite every
    `e` of an export and break its JSON), while the secret headers are still redacted whole."""
    body = b'data: {"choices":[{"index":0,"delta":{"content":"the reply, none the less"}}]}\n\ndata: [DONE]\n\n'
    run = made_run(body)
    run._secrets = ("e", "x", "none")
    paths = _export_all(run, tmp_path, "short")
    assert '"version"' in paths[".jsonl"].read_text() and "the reply, none the less" in paths[".md"].read_text()
    for ext in (".jsonl", ".har", ".yaml"):
        back = read_capture(paths[ext]).runs
        assert [r.result()["blocks"] for r in back] == [run.result()["blocks"]], ext
        assert back[0].body == body, ext


def test_a_key_left_in_a_run_is_masked_inside_the_documents_strings_and_they_read_back(tmp_path):
    """The exports' last safety net masks a key the run still holds (here in a response header, where a YAML
    scalar would start with it, and in the reply's text) inside the document's strings, so what is written
    parses again: a `*` at a YAML scalar's start is an alias."""
    key = "sk-planted-0123456789"
    body = (b'data: {"choices":[{"index":0,"delta":{"content":"echo ' + key.encode() + b' end"}}]}\n\n'
            b"data: [DONE]\n\n")
    run = made_run(body)
    run.response_headers = [("content-type", "text/event-stream"), ("x-echo", key)]
    run._secrets = (key,)
    paths = _export_all(run, tmp_path, "long")
    for ext, path in paths.items():
        assert key not in path.read_text(), ext
    for ext in (".jsonl", ".har", ".yaml"):
        back = read_capture(paths[ext]).runs[0]
        assert back.result()["blocks"][0]["text"] == "echo " + "*" * len(key) + " end", ext
    assert yaml.safe_load(paths[".yaml"].read_text())["interactions"][0]["response"]["headers"]["x-echo"] == [
        "*" * len(key)]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_text_body_survives_the_cassette_exactly(text):
    run = made_run(text.encode("utf-8"))
    doc = yaml.safe_load(yaml.dump(cassette_document([run]), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                                   allow_unicode=True, sort_keys=False, width=120))
    body = doc["interactions"][0]["response"]["body"]["string"]
    assert (body.encode("utf-8") if isinstance(body, str) else body) == text.encode("utf-8")


def test_one_list_of_export_formats():
    assert EXPORT_EXTENSIONS == tuple(t.extension for t in EXPORT_TYPES) == (".jsonl", ".har", ".md", ".sse",
                                                                             ".yaml")
    assert export_type("x.YML").write is export_type("x.yaml").write
    with pytest.raises(ValueError, match=r"\.jsonl, \.har, \.md, \.sse, \.yaml"):
        export([], "x.csv")
    p = subprocess.run([sys.executable, "main.py", "run", "--prompt", "x", "--export", "x.csv"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and ".yaml" in p.stderr and ".sse" in p.stderr


def test_a_capture_written_as_it_goes_is_readable_at_every_step(runs, tmp_path):
    path = tmp_path / "live.jsonl"
    out = CaptureAppender(path)
    assert json.loads(path.read_text().splitlines()[0])["runs"] is None
    for i, r in enumerate(runs, 1):
        out.add(r)
        back = parse_jsonl(path.read_bytes())          # before closing: everything appended is there
        assert [b.result() for b in back] == [x.result() for x in runs[:i]]
    assert out.close() == path and out.close() == path            # closing twice is harmless
    assert out.count == len(runs)
    assert [p.name for p in tmp_path.iterdir()] == ["live.jsonl"]  # written in place: no `.part` beside it
    assert json.loads(path.read_text().splitlines()[0])["runs"] is None   # the count stays unknown


def test_a_growing_capture_started_again_on_the_same_path_goes_on_after_its_runs(runs, tmp_path):
    """The tap's `--export x.jsonl` run again on the same file appends (numbered on, a line a crash cut left
    apart); any other file there is replaced, as every export replaces one."""
    path = tmp_path / "live.jsonl"
    first = CaptureAppender(path)
    first.add(runs[0])
    first.close()
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"type":"chunk","run":0,"t_ns":1,"te')         # a crash in the middle of a line
    again = CaptureAppender(path)
    assert again.appended_to == 1
    again.add(runs[1])
    again.close()
    problems: list = []
    back = parse_jsonl(path.read_bytes(), "live.jsonl", problems)
    assert [b.result() for b in back] == [runs[0].result(), runs[1].result()] and len(problems) == 1
    write_jsonl(runs[:1], path)                                   # a capture whose runs are counted ...
    fresh = CaptureAppender(path)                                 # ... is no growing one: replaced
    fresh.add(runs[2])
    fresh.close()
    assert fresh.appended_to is None and [b.result() for b in parse_jsonl(path.read_bytes())] == [runs[2].result()]
    # a line nested too deep to parse (a file anyone may have edited) is no run, and no crash at the tap's start
    from core.live.capture import header_line

    path.write_text(header_line(None) + "\n" + '{"type":"run","run":' + "[" * 100000 + "]" * 100000 + "}\n")
    deep = CaptureAppender(path)
    assert deep.appended_to == 0
    deep.close()


def test_a_capture_with_its_runs_planned_grows_beside_its_path_and_counts_what_it_holds(runs, tmp_path):
    path = tmp_path / "bench.jsonl"
    out = CaptureAppender(path, planned=len(runs) + 2)
    out.add(runs[0])
    assert not path.exists() and [b.result() for b in parse_jsonl((tmp_path / "bench.jsonl.part").read_bytes())] \
        == [runs[0].result()]
    assert out.close() == path                         # stopped early: the header says what the file holds
    assert [p.name for p in tmp_path.iterdir()] == ["bench.jsonl"]
    assert json.loads(path.read_text().splitlines()[0])["runs"] == 1
    assert [b.result() for b in parse_jsonl(path.read_bytes())] == [runs[0].result()]
