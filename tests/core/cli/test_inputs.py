"""A command's input (`decode`, `translate`, `check-request`): read incrementally, bounded, cut as a whole would be."""
from __future__ import annotations

import pytest

import core.cli.inputs as inputs
import main
from core.cli import check_request
from core.live.importers import MAX_CAPTURE_BYTES


def test_the_bound_is_the_recordings_one():
    assert inputs.MAX_INPUT_BYTES == MAX_CAPTURE_BYTES


@pytest.mark.parametrize("argv", [["decode", "--format", "openai-chat"], ["decode", "--format", "auto"],
                                  ["decode", "--frames"], ["translate", "--from", "openai-chat", "--to", "gemini"],
                                  ["check-request", "--format", "anthropic"]])
def test_an_input_larger_than_the_bound_is_a_one_line_error(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 1 << 20)
    monkeypatch.setattr(check_request, "MAX_REQUEST_BYTES", 1 << 20)   # its own bound, lower than the default
    reads = []
    real = inputs.read_blocks

    def counted(*a, **kw):
        for b in real(*a, **kw):
            reads.append(len(b))
            yield b

    monkeypatch.setattr(inputs, "read_blocks", counted)
    f = tmp_path / "big.sse"
    f.write_bytes(b'data: {"choices":[]}\n\n' * 200000)   # 4.4 MB
    assert main.main(argv + [str(f)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"{argv[0]}: {f} is larger than 1 MiB", err
    assert sum(reads) <= (1 << 20) + inputs.BLOCK_BYTES   # it stopped there, not at the end of the file


def test_read_input_reads_everything_up_to_the_bound(tmp_path, capsys):
    f = tmp_path / "x"
    f.write_bytes(bytes(range(256)) * 10000)
    assert inputs.read_input(str(f), "t") == f.read_bytes()
    assert inputs.read_input(str(f), "t", limit=1000) is None
    assert capsys.readouterr().err.strip() == f"t: {f} is larger than 1000 bytes"
    assert inputs.read_input(str(tmp_path / "nope"), "t") is None
    assert "t: cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("size", [1, 3, 7, 64, 1000])
def test_pieces_are_cut_as_the_whole_would_be(size):
    data = bytes(range(256)) * 40
    blocks = [data[:5], data[5:6], data[6:900], data[900:]]
    pieces = list(inputs.pieces_of(blocks, size))
    assert pieces == [data[i:i + size] for i in range(0, len(data), size)]
