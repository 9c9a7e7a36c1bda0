"""StreamScope's one entry point: the GUI by default, subcommands for the headless jobs.

The command-line layer (`core.cli`) never imports Qt; this module is the one place that chooses between the
window and a headless command. Headless subcommands import neither Qt nor httpx unless they need them (decode
imports only the wire layer).
"""
from __future__ import annotations

import argparse
import sys

from core.cli import bench, check_request, decode, diff, emulate, run, tap


def _size(text: str) -> tuple[int, int]:
    """"1280x800" -> (1280, 800)."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (e.g. 1280x800)") from None
    if not (200 <= w <= 10_000 and 200 <= h <= 10_000):
        raise argparse.ArgumentTypeError(f"{text!r}: width and height go from 200 to 10000")
    return w, h


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="streamscope", description="Compare and inspect LLM streaming responses.")
    p.add_argument("--send", metavar="TEXT", help="GUI: send this prompt at start")
    p.add_argument("--screenshot", metavar="PATH", help="GUI: when every pane has finished, save a PNG and exit")
    p.add_argument("--scenario", metavar="NAME", help="GUI: the demo providers' emulator scenario at start")
    p.add_argument("--size", metavar="WxH", type=_size, help="GUI: the window's size at start (e.g. 1280x800)")
    p.add_argument("--theme", choices=("light", "dark"), help="GUI: the theme at start")
    p.add_argument("--config", metavar="PATH", help="providers file (TOML)")
    sub = p.add_subparsers(dest="command")
    for command_module in (decode, emulate, run, check_request, tap, diff, bench):
        command_module.register(sub)
    return p


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


def _wants_window(args: argparse.Namespace) -> bool:
    return args.command is None or (args.command == "replay" and not args.headless)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_reorder_option_values(sys.argv[1:] if argv is None else argv))
    if _wants_window(args):
        try:
            from gui import app
        except ModuleNotFoundError as exc:   # PySide6 or qasync is not installed
            print(f"streamscope: the GUI is not available ({exc}); the headless commands still work "
                  f"(replay --headless prints a capture's results)", file=sys.stderr)
            return 2
        except ImportError as exc:   # Qt is installed, but a system library it links is missing
            from core.cli import qt_system

            print(qt_system.hint(f"Qt cannot be loaded ({exc})"), file=sys.stderr)
            return 2
        if args.command == "replay":
            return app.run_gui_replay(args.file, speed=1.0 if args.speed is None else args.speed, args=args)
        return app.run_gui(args)
    return args.func(args)


def entry() -> None:
    """The `streamscope` console command (`[project.scripts]`): the same as `python main.py`."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
