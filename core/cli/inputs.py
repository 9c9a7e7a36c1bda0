"""Reading a command's input file: a path, or `-` for standard input, as raw bytes."""
from __future__ import annotations

import sys


def read_input(path: str, command: str) -> bytes | None:
    """The bytes of `path` (stdin for `-`), or None after printing `COMMAND: cannot read PATH: why` on stderr."""
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        print(f"{command}: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return None
