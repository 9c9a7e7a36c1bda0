"""Reading a command's input file: a path, or `-` for standard input, as raw bytes, read incrementally and bounded.

`read_blocks` yields the input piece by piece (a command can start on the first piece before the rest has come,
and never holds more than it needs); `read_input` is the whole of it. Either stops at `limit` bytes (by default
`MAX_INPUT_BYTES`, the bound on a recording the app opens): a hostile or runaway input (`yes | ... -`) ends with
`COMMAND: PATH is larger than N MiB` rather than filling the memory.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

from core.live.importers import MAX_CAPTURE_BYTES

MAX_INPUT_BYTES = MAX_CAPTURE_BYTES   # a recorded body is a recording: the same bound as opening one
BLOCK_BYTES = 1 << 20


class InputError(Exception):
    """The input cannot be read, or is larger than the bound; str() is the one-line message for stderr."""


def read_blocks(path: str, command: str, block: int = BLOCK_BYTES, limit: int | None = None) -> Iterator[bytes]:
    """The bytes of `path` (stdin for `-`) in blocks of at most `block` bytes, each as soon as it has come (a pipe
    is not waited on until a block is full; none for an empty input); InputError (`COMMAND: cannot read PATH:
    why`, `COMMAND: PATH is larger than N MiB`) when it cannot be read or holds more than `limit` bytes (default
    `MAX_INPUT_BYTES`)."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        f = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise InputError(f"{command}: cannot read {path}: {exc.strerror or exc}") from None
    try:
        total = 0
        while True:
            try:
                data = f.read1(block)   # what has come, up to a block
            except OSError as exc:
                raise InputError(f"{command}: cannot read {path}: {exc.strerror or exc}") from None
            if not data:
                return
            total += len(data)
            if total > limit:
                raise InputError(f"{command}: {path} is larger than {_size(limit)}")
            yield data
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


def pieces_of(blocks: Iterable[bytes], size: int) -> Iterator[bytes]:
    """The bytes of `blocks` cut into pieces of exactly `size` bytes (the last one shorter), as the whole would be
    cut."""
    rest = b""
    for b in blocks:
        if rest:
            b = rest + b     # rest is shorter than a piece
        end = len(b) - len(b) % size
        for i in range(0, end, size):
            yield b[i:i + size]
        rest = b[end:]
    if rest:
        yield rest


def read_input(path: str, command: str, limit: int | None = None) -> bytes | None:
    """The bytes of `path` (stdin for `-`), or None after printing `COMMAND: cannot read PATH: why` (or that it is
    larger than `limit` bytes, default `MAX_INPUT_BYTES`) on stderr."""
    try:
        return b"".join(read_blocks(path, command, limit=limit))
    except InputError as exc:
        print(exc, file=sys.stderr)
        return None
