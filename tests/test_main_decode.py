"""`python main.py decode` as the contract gives it: exit codes, --frames, chunk-size invariance, no Qt."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.corpus import CORPUS, expected
from tests.corpus import ROOT



def run(*args, stdin=None):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), "decode", *args], capture_output=True,
                          input=stdin, cwd=ROOT, timeout=60)


def test_frames_mode_prints_events_and_comments(tmp_path):
    f = tmp_path / "x.sse"
    f.write_bytes(b": hi\n\nevent: e\nid: 3\ndata: a\ndata: b\n\n")
    p = run("--frames", str(f))
    assert p.returncode == 0
    lines = [json.loads(line) for line in p.stdout.decode().splitlines()]
    assert lines == [{"n": 0, "offset": 0, "comment": "hi"},
                     {"n": 0, "offset": 6, "event": "e", "data": "a\nb", "id": "3", "retry": None}]


def test_stdin_and_result_shape():
    body = (b'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},'
            b'"finish_reason":null}]}\n\n'
            b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    p = run("--format", "openai-chat", "-", stdin=body)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) == {"format", "blocks", "finish_reason", "usage", "error", "terminated", "frames",
                        "diagnostics"}
    assert out["blocks"][0]["text"] == "Hi" and out["frames"] == 3 and out["terminated"] is True
    assert out["finish_reason"] == {"canonical": "stop", "raw": "stop"}


def test_usage_errors_exit_2_with_one_line(tmp_path):
    p = run("--format", "nope", str(tmp_path / "x"))
    assert p.returncode == 2 and p.stderr.decode().strip().count("\n") == 0
    p = run("--format", "anthropic", str(tmp_path / "missing.sse"))
    assert p.returncode == 2 and b"cannot read" in p.stderr
    p = run("--format", "anthropic", "--chunk-size", "0", str(tmp_path / "x"))
    assert p.returncode == 2


def test_decode_path_imports_no_qt_httpx_or_sdk(tmp_path):
    f = tmp_path / "x.sse"
    f.write_bytes(b"data: [DONE]\n\n")
    code = ("import sys, runpy; sys.argv=['main.py','decode','--format','openai-chat',%r];"
            "import main; main.main(sys.argv[1:]);"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('PySide6','httpx','openai','anthropic','google','uvicorn')];"
            "print('BAD', bad, file=sys.stderr) if bad else None; sys.exit(1 if bad else 0)") % str(f)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()


@pytest.mark.slow
def test_corpus_streams_do_not_depend_on_chunk_size():
    files = sorted(CORPUS.glob("*/*.sse"))
    if not files:
        pytest.skip("../shared/corpus is absent")
    for f in files[::6]:  # a spread of formats through the real CLI; every file is covered in-process elsewhere
        fmt = expected(f)["wire_format"]
        whole = run("--format", fmt, str(f))
        assert whole.returncode == 0, (f, whole.stderr)
        assert run("--format", fmt, "--chunk-size", "5", str(f)).stdout == whole.stdout, f


def test_chunk_size_inserted_between_format_and_its_value(tmp_path):
    """The acceptance check builds `decode --format --chunk-size 7 FORMAT FILE`; it must work as intended."""
    f = tmp_path / "x.sse"
    f.write_bytes(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
    p = run("--format", "--chunk-size", "7", "anthropic", str(f))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["format"] == "anthropic"


def _proc(*args):
    return subprocess.Popen([sys.executable, str(ROOT / "main.py"), "decode", *args], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_frames_are_printed_as_the_input_comes():
    """`--frames` prints one line per item, so it streams: the first frame is out before the input has ended."""
    import select

    proc = _proc("--frames", "-")
    try:
        proc.stdin.write(b"data: one\n\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "nothing printed before the end of the input"
        assert json.loads(proc.stdout.readline())["data"] == "one"
        proc.stdin.write(b"data: two\n\n")
        proc.stdin.close()
        assert json.loads(proc.stdout.readline())["data"] == "two"
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stderr.close()


def test_format_auto_gives_up_after_64_kib_without_reading_the_rest():
    """`yes | decode --format auto -` used to read (and hold) everything before sniffing; the input is never
    closed here, so only giving up at 64 KiB ends the command."""
    proc = _proc("--format", "auto", "-")
    try:
        proc.stdin.write(b"y\n" * 40000)   # 80 KB, and the pipe stays open
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 2
        assert b"no frame in the first 64 KiB" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                f.close()
            except BrokenPipeError:
                pass


def test_a_body_that_is_no_event_stream_is_said_to_be_what_it_is(tmp_path):
    import gzip

    f = tmp_path / "x.sse"
    f.write_bytes(gzip.compress(b'data: {"choices": []}\n\ndata: [DONE]\n\n'))
    auto = run("--format", "auto", str(f))
    assert auto.returncode == 2 and b"it is gzip-compressed: decompress it" in auto.stderr
    assert auto.stderr.count(b"\n") == 1
    given = run("--format", "openai-chat", str(f))                  # decoded, as the contract says, with a word
    assert given.returncode == 0 and json.loads(given.stdout)["frames"] == 0
    assert given.stderr == f"decode: warning: {f} is not an event stream: it is gzip-compressed: decompress it " \
                           f"(gunzip, or record it with curl --compressed)\n".encode()
    f.write_bytes(b'data: {"choices": []}\n\n')
    assert run("--format", "openai-chat", str(f)).stderr == b""


def test_format_auto_reads_on_inside_a_first_event_longer_than_64_kib(tmp_path):
    """A 70 KiB `message_start` (a long system prompt echoed, a big metadata object) said "no frame in the first
    64 KiB tells the format"."""
    from tests.core.wire.test_formats import LONG_START

    f = tmp_path / "long.sse"
    f.write_bytes(LONG_START)
    r = run("--format", "auto", str(f))
    assert r.returncode == 0, r.stderr
    assert b"decode: format anthropic: frame 0" in r.stderr
    assert json.loads(r.stdout)["frames"] == 2
