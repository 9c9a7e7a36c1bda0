"""`emulate` and `translate` subcommands for main.py (registered via `register(subparsers)`).

Imports nothing heavy at module level: uvicorn, starlette and the encoders load only when a command runs, so
`main.py decode` stays fast.
"""
from __future__ import annotations

import argparse
import sys

from core.wire.formats import FORMATS


def _cmd_emulate(args: argparse.Namespace) -> int:
    recordings = None
    if args.format and not args.serve:
        print("emulate: --format only applies with --serve FILE", file=sys.stderr)
        return 2
    if args.format and args.format not in FORMATS:
        print(f"emulate: unknown format {args.format!r} (expected one of: {', '.join(FORMATS)})", file=sys.stderr)
        return 2
    if args.speed < 0:
        print("emulate: --speed must be 0 (no delays) or more", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:   # (as the tap's --listen: uvicorn would raise OverflowError)
        print(f"emulate: --port {args.port}: expected a port from 0 to 65535", file=sys.stderr)
        return 2
    if args.serve:
        from core.servers.emulator.recordings import RecordingError, load

        try:
            recordings = load(args.serve, args.format)
        except RecordingError as exc:
            print(f"emulate: {exc}", file=sys.stderr)
            return 2
    if args.scenario:
        from core.servers.emulator.scenarios import SCENARIOS

        if args.scenario not in SCENARIOS:
            print(f"emulate: unknown scenario {args.scenario!r} (expected one of: {', '.join(SCENARIOS)})",
                  file=sys.stderr)
            return 2
    from core.servers.emulator.server import run_foreground

    def announce(url: str) -> None:
        if args.quiet:
            return
        lines = [f"emulator: OpenAI base URL {url}/v1 (chat completions, responses); Anthropic and Gemini {url}",
                 "emulator: the model name picks the scenario (GET /scenarios); Ctrl+C stops"]
        for r in recordings or []:
            lines.append(f"emulator: serving {r.source} on the {r.format} endpoint")
        print("\n".join(lines), file=sys.stderr, flush=True)

    try:
        return run_foreground(args.host, args.port, speed=args.speed, scenario=args.scenario,
                              recordings=recordings, log_level=args.log_level, access_log=args.access_log,
                              announce=announce)
    except OSError as exc:
        print(f"emulate: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _cmd_translate(args: argparse.Namespace) -> int:
    for name, value in (("--from", args.src), ("--to", args.dst)):
        if value not in FORMATS:
            print(f"translate: unknown format {value!r} for {name} (expected one of: {', '.join(FORMATS)})",
                  file=sys.stderr)
            return 2
    from core.cli.inputs import read_input

    data = read_input(args.file, "translate")
    if data is None:
        return 2
    from core.wire.translate import translate_bytes

    out, notes = translate_bytes(args.src, args.dst, data)
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    if args.output:
        try:
            with open(args.output, "wb") as f:
                f.write(out)
        except OSError as exc:
            print(f"translate: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    return 0


def register(sub) -> None:
    e = sub.add_parser("emulate", help="run the built-in provider emulator (a real HTTP server)",
                       description="Serve the four wire formats on loopback. The request's model name selects the "
                                   "scenario (text, tool-call, parallel-tools, thinking, mid-stream-error, http-429, "
                                   "http-500, drop, stall, malformed-json, no-terminator, split-utf8, ping-heavy, "
                                   "firehose, long); any other name gets text.")
    e.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    e.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    e.add_argument("--speed", type=float, default=1.0,
                   help="pacing multiplier (2 = twice as fast, 0 = no delays); a request header "
                        "x-emulator-speed overrides it")
    e.add_argument("--scenario", default=None, help="force this scenario whatever the model name")
    e.add_argument("--serve", metavar="FILE", default=None,
                   help="answer with a recording instead: a .sse body (with --format) or a native .jsonl capture")
    e.add_argument("--format", default=None, help="wire format of the --serve .sse file (sniffed when omitted)")
    e.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    e.add_argument("--access-log", action="store_true", help="log every request on stderr")
    e.add_argument("--quiet", action="store_true", help="print only the listening line")
    e.set_defaults(func=_cmd_emulate)

    t = sub.add_parser("translate", help="re-encode a recorded stream in another provider's wire format",
                       description="Decode FILE with the core and re-encode it in another wire format; what the "
                                   "target cannot carry is printed as notes on stderr.")
    t.add_argument("--from", dest="src", required=True, help="the recording's wire format")
    t.add_argument("--to", dest="dst", required=True, help="the wire format to write")
    t.add_argument("-o", "--output", default=None, help="write here instead of stdout")
    t.add_argument("file", help="a .sse file of raw bytes, or - for stdin")
    t.set_defaults(func=_cmd_translate)
