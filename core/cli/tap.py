"""The `tap` subcommand: a reverse proxy in front of an application's provider, printing each exchange.

    python main.py tap [--listen 127.0.0.1:8788] [--upstream URL | --upstream NAME=URL ...] [--export PATH ...]
                       [--allow-remote] [--allow-insecure] [--emulator-speed X]

Prints `tapping on http://HOST:PORT -> UPSTREAM` first, then one line per exchange as it ends (its name,
method, path, format, status, HTTP status, time to first token, total, usage, finish, error). `--export x.jsonl`
appends each exchange as it ends (flushed: a crash loses nothing that had ended); the other exports (`.har`,
`.md`, `.sse`, `.yaml`) are written when the tap stops (Ctrl+C, SIGTERM). Nothing heavy is imported at module
level.
"""
from __future__ import annotations

import sys

DEFAULT_LISTEN = "127.0.0.1:8788"


def register(sub) -> None:
    t = sub.add_parser("tap", help="a reverse proxy in front of your application's provider: every exchange "
                                   "forwarded untouched, decoded and recorded",
                       description="Forward every request to its upstream and stream the response back chunk by "
                                   "chunk, byte for byte, while decoding and recording each exchange. One "
                                   "--upstream URL (or built-in name: openai, anthropic, gemini, emulator) maps "
                                   "the listen root onto it; several are mounted by name (NAME=URL, or the "
                                   "built-in names): /anthropic/v1/messages -> https://api.anthropic.com/v1/"
                                   "messages. Default: the built-in emulator, started in-process.")
    t.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where to listen (default {DEFAULT_LISTEN}; port 0 picks a free one)")
    t.add_argument("--upstream", action="append", default=[], metavar="URL|NAME=URL",
                   help="where to forward (repeatable; default: the built-in emulator)")
    t.add_argument("--export", action="append", default=[], metavar="PATH",
                   help="record the exchanges: .jsonl is appended as each one ends; .har, .md, .sse and .yaml "
                        "are written when the tap stops (repeatable)")
    t.add_argument("--allow-remote", action="store_true",
                   help="listen on an address other machines can reach (default: loopback only)")
    t.add_argument("--allow-insecure", action="store_true",
                   help="forward to a plain http:// upstream that is not this machine")
    t.add_argument("--emulator-speed", type=float, default=1.0, metavar="X",
                   help="pacing of the in-process emulator (0 = no delays; default 1)")
    t.set_defaults(func=cmd_tap)


def parse_listen(value: str) -> tuple[str, int]:
    """`HOST:PORT`, `[v6]:PORT` or `PORT` -> (host, port); ValueError when it is none of these."""
    host, port = "127.0.0.1", value.strip()
    if port.startswith("["):
        h, sep, p = port[1:].partition("]:")
        if not sep:
            raise ValueError(f"--listen {value!r}: expected [ADDRESS]:PORT")
        host, port = h, p
    elif ":" in port:
        host, port = port.rsplit(":", 1)
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise ValueError(f"--listen {value!r}: expected HOST:PORT with a port from 0 to 65535")
    return host, int(port)


def setup_snippets(url: str, mounts) -> list[tuple[str, str]]:
    """(client, what to paste) for each official SDK and curl: how to point it at this tap (the window shows
    these with a Copy button; the command prints them as `setup_hints`)."""
    root = mounts.root is not None
    named = {u.name: f"/{n}" for n, u in mounts.named.items()}

    def at(mount: str) -> str | None:
        prefix = "" if root else named.get(mount)
        return None if prefix is None else url + prefix

    out = []
    openai, anthropic, gemini = at("openai"), at("anthropic"), at("gemini")
    if openai is not None:
        out.append(("openai", f"export OPENAI_BASE_URL={openai}/v1"))
    if anthropic is not None:
        out.append(("anthropic", f"export ANTHROPIC_BASE_URL={anthropic}"))
    if gemini is not None:
        out.append(("google-genai", f"genai.Client(http_options={{'base_url': '{gemini}'}})"))
    if openai is not None:
        out.append(("curl", f"curl -N {openai}/v1/chat/completions -H \"Authorization: Bearer $OPENAI_API_KEY\" "
                            f"-H 'content-type: application/json' -d @body.json"))
    return out


def setup_hints(url: str, mounts) -> list[str]:
    """One line per official SDK (and curl): how to point it at this tap."""
    return [f"tap: {client}: {snippet}" for client, snippet in setup_snippets(url, mounts)]


def exchange_line(ex) -> str:
    """One exchange, as the tap prints it when it ends (secrets redacted)."""
    from core.cli.run import outcome_fields
    from core.live.config import redact_text
    from core.live.summary import plural

    fmt = ex.format if ex.format_source != "none" else "-"
    fields = [ex.name, ex.method, ex.path, fmt] + outcome_fields(ex.run)
    from core.wire.history import finding_totals

    errors = [f for f in ex.run.history_findings if f.severity == "error"]
    if errors:   # the client's request has a history its API would reject (core.wire.history)
        total = finding_totals(errors)[0]
        fields.append(f"history: {plural(total, 'error')} (first at {errors[0].path}: {errors[0].message})")
    return redact_text("  ".join(fields), ex.secrets)


def cmd_tap(args) -> int:
    from core.live.capture import EXPORT_EXTENSIONS, export_type

    def err(msg: str) -> int:
        print(f"tap: {msg}", file=sys.stderr)
        return 2

    try:
        host, port = parse_listen(args.listen)
    except ValueError as exc:
        return err(str(exc))
    for path in args.export:
        if export_type(path) is None:
            return err(f"--export {path}: the extension must be one of {', '.join(EXPORT_EXTENSIONS)}")
    if args.emulator_speed < 0:
        return err("--emulator-speed must be 0 (no delays) or more")
    from core.servers.tap.server import listen_problem
    from core.servers.tap.upstreams import UpstreamSpecError, parse_upstreams

    why = listen_problem(host, args.allow_remote)
    if why:
        return err(why)
    try:
        mounts = parse_upstreams(args.upstream, allow_insecure=args.allow_insecure)
    except UpstreamSpecError as exc:
        return err(f"--upstream: {exc}")
    return _serve(args, host, port, mounts)


def _serve(args, host: str, port: int, mounts) -> int:
    from core.cli.terminal import safe
    from core.live.capture import CaptureAppender, export
    from core.live.summary import plural
    from core.servers.tap.app import Tap
    from core.servers.tap.server import run_foreground

    live = [p for p in args.export if p.lower().endswith(".jsonl")]
    at_exit = [p for p in args.export if p not in live]
    try:
        appenders = [CaptureAppender(p) for p in live]
    except OSError as exc:
        print(f"tap: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    for a in appenders:
        if a.appended_to is not None:
            print(f"tap: {a.path} holds {plural(a.appended_to, 'exchange')} from before: the new ones are appended",
                  file=sys.stderr)
    tap = Tap(mounts, keep=bool(at_exit))

    def ended(ex) -> None:
        print(safe(exchange_line(ex)), flush=True)   # server text never reaches the terminal raw
        for a in appenders:
            try:
                a.add(ex.run)
            except OSError as exc:
                print(f"tap: cannot append to {a.path}: {exc.strerror or exc}", file=sys.stderr)

    tap.on_ended.append(ended)

    def listening(url: str, resolved) -> None:
        print(f"tapping on {url} -> {resolved.describe()}", flush=True)
        for line in setup_hints(url, resolved):
            print(line, file=sys.stderr)
        print("tap: Ctrl+C stops", file=sys.stderr, flush=True)

    try:
        code = run_foreground(tap, host, port, listening, emulator_speed=args.emulator_speed)
    except OSError as exc:
        print(f"tap: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1         # (the appenders are closed below all the same)
    finally:
        for a in appenders:
            a.close()
    if code != 0:
        print(f"tap: cannot listen on {host}:{port}", file=sys.stderr)
        return code
    for path in at_exit:
        try:
            export([ex.run for ex in tap.exchanges], path)
            print(f"wrote {path}", file=sys.stderr)
        except (OSError, ValueError) as exc:
            print(f"tap: cannot write {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            code = 1
    for a in appenders:
        print(f"wrote {a.path} ({plural(a.count, 'exchange')})", file=sys.stderr)
    return code
