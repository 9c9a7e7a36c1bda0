"""StreamScope's one entry point: the GUI by default, subcommands for the headless jobs.

Headless subcommands import neither Qt nor httpx unless they need them (decode imports only the core).
"""
from __future__ import annotations

import argparse
import sys


def _cmd_decode(args: argparse.Namespace) -> int:
    import json

    from core.errors import ProtocolError
    from core.formats import FORMATS

    if args.chunk_size is not None and args.chunk_size < 1:
        print("decode: --chunk-size must be at least 1", file=sys.stderr)
        return 2
    if args.format is None and not args.frames:
        print("decode: give --format FORMAT or --frames", file=sys.stderr)
        return 2
    if args.format is not None and args.format not in FORMATS:
        print(f"decode: unknown format {args.format!r} (expected one of: {', '.join(FORMATS)})", file=sys.stderr)
        return 2
    from core.inputs import read_input

    data = read_input(args.file, "decode")
    if data is None:
        return 2
    pieces = [data] if not args.chunk_size else [data[i:i + args.chunk_size]
                                                  for i in range(0, len(data), args.chunk_size)]
    out = sys.stdout
    try:
        if args.frames:
            from core.sse import SSEComment, SSEFrame, SSEDecoder

            dec = SSEDecoder()
            items = []
            for p in pieces:
                items.extend(dec.feed(p))
            items.extend(dec.end())
            for item in items:
                if isinstance(item, (SSEFrame, SSEComment)):
                    out.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
            return 0
        from core.pipeline import StreamDecoder

        d = StreamDecoder(args.format, keep_items=False)
        for p in pieces:
            d.feed(p)
        d.end()
        out.write(json.dumps(d.result(), ensure_ascii=False) + "\n")
    except ProtocolError as exc:
        print(f"decode: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="streamscope", description="Compare and inspect LLM streaming responses.")
    p.add_argument("--send", metavar="TEXT", help="GUI: send this prompt at start")
    p.add_argument("--screenshot", metavar="PATH", help="GUI: when every pane has finished, save a PNG and exit")
    p.add_argument("--config", metavar="PATH", help="providers file (TOML)")
    sub = p.add_subparsers(dest="command")

    d = sub.add_parser("decode", help="decode one recorded SSE body and print one JSON object")
    g = d.add_mutually_exclusive_group()
    g.add_argument("--format", help="openai-chat | openai-responses | anthropic | gemini")
    g.add_argument("--frames", action="store_true", help="print the raw event-stream layer, one JSON per line")
    d.add_argument("--chunk-size", type=int, default=None, metavar="N", help="feed the bytes in pieces of N")
    d.add_argument("file", help="a .sse file of raw bytes, or - for stdin")
    d.set_defaults(func=_cmd_decode)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return p


def _register_optional(sub) -> None:
    """Subcommands implemented in other modules register themselves here when present."""
    import importlib

    for module_name in ("core.emulator.cli", "core.cli"):
        try:
            mod = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue
            raise
        mod.register(sub)


_EXTRA_COMMANDS = [_register_optional]


def _reorder_option_values(argv: list[str]) -> list[str]:
    """Accept `--format --chunk-size N FORMAT` (an option inserted between `--format` and its value).

    Scripts that build a command by inserting `--chunk-size N` right after `--format` produce this order;
    argparse would take `--chunk-size` as the missing value. We move the inserted option behind the value.
    """
    out = list(argv)
    for i in range(len(out) - 3):
        if out[i] == "--format" and out[i + 1] == "--chunk-size":
            out[i + 1:i + 4] = [out[i + 3], out[i + 1], out[i + 2]]
            break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_reorder_option_values(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        from gui.app import run_gui

        return run_gui(args)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
