"""The `run` and `replay` subcommands (registered by main.py). Nothing heavy is imported at module level.

    python main.py run --prompt TEXT [--provider NAME ...] [--export PATH ...] [--config PATH]
                       [--read-timeout S] [--connect-timeout S] [--model M] [--system TEXT] [--temperature T]
                       [--max-tokens N] [--thinking] [--thinking-budget N] [--tools FILE.json] [--tool-choice C]
                       [--conversation FILE.json] [--auto-tools N]
    python main.py replay FILE [--headless] [--speed X] [--provider NAME ...] [--format F]
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

MAX_CONVERSATION_BYTES = 64 << 20   # a conversation file is read whole: bounded


def register(sub) -> None:
    r = sub.add_parser("run", help="send one prompt to several providers concurrently, headless",
                       description="Send one prompt to the named providers concurrently (the built-in demo "
                                   "providers on an in-process emulator by default), print one line per provider "
                                   "as it finishes, and write every --export file (.jsonl, .har, .md).")
    add_prompt_arguments(r)
    r.add_argument("--auto-tools", type=int, default=0, metavar="N",
                   help="run up to N tool rounds per provider with the presets' mock implementations (calculator, "
                        "clock, weather); every exchange is printed and exported. A --conversation that ends with "
                        "tool calls (and no --prompt) has them answered first")
    r.add_argument("--export", action="append", default=[], metavar="PATH",
                   help="write the capture; the extension picks the format: .jsonl, .har or .md (repeatable)")
    add_provider_arguments(r)
    r.add_argument("--json", action="store_true",
                   help="also print each provider's decoded result as one JSON line (the replay shape)")
    r.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="replay a recording: .jsonl, .har, .sse or a VCR cassette (in the GUI, "
                                      "or --headless)",
                       description="Replay a recording through the same pipeline with its original timing "
                                   "(or --speed X): a native .jsonl capture, a HAR 1.2 file (StreamScope's, a "
                                   "browser's, a proxy's), a raw .sse body or a VCR cassette (.yaml). With "
                                   "--headless, print each provider's decoded result as one JSON object per line "
                                   "(as fast as possible unless --speed is given); entries that are not LLM "
                                   "exchanges are listed on stderr and skipped.")
    p.add_argument("file", help="a .jsonl capture, .har, .sse or .yaml cassette (the kind is told by the "
                                "extension, else by the content)")
    p.add_argument("--format", default=None, metavar="F",
                   help="decode every exchange as this wire format (a raw .sse body is otherwise told by its "
                        "frames; the others by their path, then their frames)")
    p.add_argument("--headless", action="store_true", help="print results instead of starting the GUI")
    p.add_argument("--speed", type=float, default=None, metavar="X",
                   help="replay speed factor (2 = twice as fast; 0 = no delays)")
    p.add_argument("--provider", action="append", default=[], metavar="NAME", help="replay only these")
    p.set_defaults(func=cmd_replay)


def add_prompt_arguments(r) -> None:
    """The prompt and how it is shaped (`run` and `bench` take the same)."""
    r.add_argument("--prompt", metavar="TEXT", help="the user message (required unless --conversation ends with "
                                                     "the user's turn)")
    r.add_argument("--system", default="", metavar="TEXT", help="a system prompt")
    r.add_argument("--temperature", type=float, default=None)
    r.add_argument("--max-tokens", type=int, default=1024, metavar="N")
    r.add_argument("--stop", action="append", default=[], metavar="S",
                   help="a stop sequence (repeatable, at most 4; `|` separates several in one, `\\n` is a line "
                        "break); not sent to the Responses API, which takes none")
    r.add_argument("--top-p", type=float, default=None, metavar="P", help="nucleus sampling, 0 to 1")
    r.add_argument("--seed", type=int, default=None, metavar="N",
                   help="a sampling seed (OpenAI Chat and Gemini; the others take none, and the Request says so)")
    r.add_argument("--thinking", action="store_true", help="ask for thinking / reasoning")
    r.add_argument("--thinking-budget", type=int, default=1024, metavar="N")
    r.add_argument("--tools", metavar="FILE", help="a JSON file: a list of {name, description, parameters}")
    r.add_argument("--tool-choice", metavar="C", help="auto, none, required, or a tool's name")
    r.add_argument("--conversation", metavar="FILE", help="start from a provider-neutral conversation (JSON, see "
                                                           "docs/conversation-format.md); --prompt is the next "
                                                           "user message")


def add_provider_arguments(r) -> None:
    """Which providers, and the timeouts (`run` and `bench` take the same)."""
    r.add_argument("--provider", action="append", default=[], metavar="NAME",
                   help="a provider from the providers file (or a demo-* provider); repeat for several; "
                        "default: the four built-in demo providers")
    r.add_argument("--all", action="store_true", help="every provider in the providers file")
    r.add_argument("--config", dest="run_config", metavar="PATH", help="providers file (TOML)")
    r.add_argument("--read-timeout", type=float, default=60.0, metavar="S",
                   help="a stream that sends no bytes for S seconds ends as stalled (default 60)")
    r.add_argument("--connect-timeout", type=float, default=10.0, metavar="S", help="default 10")
    r.add_argument("--model", metavar="M", help="override every selected provider's model (for the demo "
                                                "providers: the emulator scenario, e.g. tool-call, stall)")


# -- run ---------------------------------------------------------------------------------------------------------
def outcome_fields(run) -> list[str]:
    """How a run ended, as the one-line summaries print it: status, HTTP status, time to first token, total
    time (`n/a` where the run's recording held none: a cassette's), usage, finish reason; then its error, and
    the findings a strict client would trip on, where there are any."""
    from core.live.recorder import TIMING_NONE, TIMING_RECORDED
    from core.live.summary import duration, error_line, findings_text, usage_figures

    m = run.metrics
    u = run.reply.usage
    http = f"HTTP {run.http_status}" if run.http_status is not None else "HTTP ---"
    timing = getattr(run, "timing", TIMING_RECORDED)    # n/a: a time the recording (a cassette, ...) did not hold
    ttft = "n/a" if timing != TIMING_RECORDED else duration(m.t_first_content_ns, '-')
    total = "n/a" if timing == TIMING_NONE else duration(m.t_total_ns, '-')
    parts = [f"{run.status:<9}", http, f"ttft {ttft}", f"total {total}",
             "usage " + (usage_figures(u, run.reply.usage_reporting) if u is not None else "-")]
    f = run.reply.finish
    if f is not None:
        parts.append(f"finish {f.canonical}")
    if run.error is not None:
        parts.append("error " + error_line(run.error))
    found = findings_text(run.reply.diagnostics)
    if found:
        parts.append("findings " + found)
    return parts


def summary_line(run, width: int = 22) -> str:
    """One provider's line as it finishes: its name, then `outcome_fields`."""
    return "  ".join([f"{run.name:<{width}}"] + outcome_fields(run))


def _select_providers(args, err):
    """(providers, needs_emulator): each provider a configured `ProviderConfig` or a demo provider's name (the
    demo ones are built once the emulator's address is known); err() raises SystemExit(2) for a bad selection."""
    from core.live.config import DEMO_NAMES, ConfigError, load_providers

    config = getattr(args, "run_config", None) or getattr(args, "config", None)
    command = getattr(args, "command", None) or "run"
    names = list(dict.fromkeys(args.provider))
    configured = []
    if config is not None or names or args.all:
        try:
            configured = load_providers(config)
        except ConfigError as exc:
            err(f"{command}: {exc}")
    by_name = {p.name: p for p in configured}
    if args.all:
        named = set(names)   # (a set: `not in` a list made --all quadratic in the providers)
        names = names + [p.name for p in configured if p.name not in named]
        if not names:
            err(f"{command}: --all: the providers file lists no providers")
    if not names:
        names = list(DEMO_NAMES)
    chosen, demo = [], []
    for n in names:
        if n in by_name:
            chosen.append(by_name[n])
        elif n in DEMO_NAMES:
            chosen.append(n)
            demo.append(n)
        else:
            known = ", ".join(list(by_name) + list(DEMO_NAMES))
            err(f"{command}: unknown provider {n!r} (known: {known})")
    return chosen, bool(demo)


def _read_tools(path: str, err, command: str = "run") -> list:
    """The tool definitions of a `--tools` file, checked as the GUI's tools editor checks them; err() (exit 2,
    one line) for a file that cannot be read or does not hold valid tools."""
    from core.live.tools import validate_tools

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        err(f"{command}: --tools {path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    if not text.strip():
        err(f"{command}: --tools {path}: the file is empty")
    tools, message = validate_tools(text)
    if tools is None:
        err(f"{command}: --tools {path}: {message}")
    return tools


def cmd_run(args) -> int:
    def err(msg: str):
        print(msg, file=sys.stderr)
        raise SystemExit(2)

    from core.live.capture import EXPORT_EXTENSIONS, export_type

    for path in args.export:
        if export_type(path) is None:
            err(f"run: --export {path}: the extension must be one of {', '.join(EXPORT_EXTENSIONS)}")
    if args.auto_tools < 0:
        err("run: --auto-tools must be 0 or more")
    spec = prompt_spec(args, err)
    with selected_providers(args, err) as providers:
        return _run_and_export(args, providers, spec)


def prompt_spec(args, err):
    """The `PromptSpec` of the prompt arguments (`add_prompt_arguments`); err() (exit 2, one line) for bad ones."""
    command = getattr(args, "command", None) or "run"
    tools = _read_tools(args.tools, err, command) if args.tools else []
    conversation = None
    if args.conversation:
        from core.live.conversation import ConversationError, load_conversation
        from core.wire.jsonfast import MAX_DEPTH, bounded

        try:
            with open(args.conversation, "rb") as f:
                data = f.read(MAX_CONVERSATION_BYTES + 1)
            if len(data) > MAX_CONVERSATION_BYTES:
                err(f"{command}: --conversation {args.conversation}: larger than {MAX_CONVERSATION_BYTES >> 20} MiB")
            conversation = load_conversation(data)
            if bounded(as_json := conversation.to_json()) is not as_json:   # its tools, a block's raw object, ...
                raise ConversationError(f"nested deeper than {MAX_DEPTH} levels")   # (as --tools refuses them)
        except OSError as exc:
            err(f"{command}: --conversation {args.conversation}: cannot read: {exc.strerror or exc}")
        except ConversationError as exc:
            err(f"{command}: --conversation {args.conversation}: {exc}")
        if not args.tools and conversation.tools:
            tools = list(conversation.tools)
    pending = conversation.pending_tool_calls() if conversation is not None else ()
    if args.prompt is None and pending and getattr(args, "auto_tools", 0) > 0:
        # the calls the conversation ends with are answered first, by the same mock tools as the rounds after
        from core.live.tool_mocks import mock_results

        conversation = conversation.add_tool_results(mock_results(pending))
    if args.prompt is None and (conversation is None or conversation.last is None
                                or conversation.last.role != "user"):
        err(f"{command}: --prompt is required (unless --conversation ends with the user's turn, or with tool calls "
            f"that --auto-tools answers)")

    from core.live.request import PromptSpec, check_sampling, parse_stop_text

    try:
        spec = PromptSpec(user=args.prompt or "", system=args.system or (conversation.system if conversation else ""),
                          temperature=args.temperature, max_tokens=args.max_tokens, tools=tuple(tools),
                          tool_choice=args.tool_choice, thinking=args.thinking,
                          thinking_budget=args.thinking_budget, conversation=conversation,
                          stop=tuple(s for text in args.stop for s in parse_stop_text(text)), top_p=args.top_p,
                          seed=args.seed)
        check_sampling(spec)
        spec.dialogue()   # a conversation that cannot be mapped is a usage error here, not a failed run
    except ValueError as exc:
        err(f"{command}: {exc}")
    return spec


@contextmanager
def selected_providers(args, err):
    """The `ProviderConfig`s the provider arguments name (`add_provider_arguments`), `--model` applied; the
    built-in emulator runs in-process while the block runs when a demo provider is among them."""
    import dataclasses

    from core.live.config import demo_providers

    command = getattr(args, "command", None) or "run"
    if args.read_timeout <= 0 or args.connect_timeout <= 0:
        err(f"{command}: timeouts must be positive")
    chosen, needs_emulator = _select_providers(args, err)
    server = None
    if needs_emulator:
        try:
            from core.servers.emulator.server import EmulatorServer
        except ImportError as exc:
            err(f"{command}: the built-in emulator is not available ({exc}); name configured providers with "
                f"--provider")
        server = EmulatorServer()
        base = server.start()
    try:
        demo = {p.name: p for p in demo_providers(base)} if server is not None else {}
        providers = []
        for c in chosen:
            p = demo[c] if isinstance(c, str) else c
            if args.model:
                p = dataclasses.replace(p, model=args.model)
            providers.append(p)
        yield providers
    finally:
        if server is not None:
            server.stop()


async def cancelled_on_sigterm(coro, terminated: list):
    """Await `coro`; a SIGTERM cancels it as Ctrl+C cancels `asyncio.run`'s main task (the runs in flight end
    "cancelled", and what ran is still printed and exported): `terminated` then gets an entry and the
    `CancelledError` propagates. A second SIGTERM kills the process (the handler is removed by the first)."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def on_sigterm() -> None:
        terminated.append(signal.SIGTERM)
        loop.remove_signal_handler(signal.SIGTERM)
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):   # not on this platform, or not the main thread
        return await coro
    try:
        return await coro
    finally:
        try:
            loop.remove_signal_handler(signal.SIGTERM)
        except (NotImplementedError, RuntimeError, ValueError):
            pass


def _run_and_export(args, providers, spec) -> int:
    import asyncio
    import json

    from core.live.capture import export
    from core.cli.terminal import safe
    from core.live.config import redact_text
    from core.live.tool_loop import exchange_index, pending_calls, run_tool_loop

    width = max(len(p.name) for p in providers)
    runs: list = []        # every exchange, in the order it was sent
    secrets: list[str] = []
    multi = args.auto_tools > 0 or exchange_index(spec) > 0

    def out(line: str) -> None:   # server text (error messages, ...) never reaches the terminal raw
        print(safe(redact_text(line, secrets)), flush=True)

    printed: set[int] = set()

    def on_finished(run) -> None:
        if id(run) not in printed:
            printed.add(id(run))
            out(summary_line(run, width) + (f"  turn {exchange_index(run.spec)}" if multi else ""))

    def on_prepared(run) -> None:
        runs.append(run)
        secrets.extend(run._secrets)
        for n in run.notes:   # what the request mapping adapted (Gemini schema keywords, dropped signatures, ...)
            print(safe(redact_text(f"note: {run.name}: {n}", secrets)), file=sys.stderr)
        if run.finished:      # refused before sending (missing key, insecure transport, a rejected history)
            on_finished(run)

    terminated = []

    async def main() -> None:
        await run_tool_loop(providers, spec, args.auto_tools, on_prepared=on_prepared, on_finished=on_finished,
                            connect_timeout=args.connect_timeout, read_timeout=args.read_timeout)

    interrupted = False
    try:
        asyncio.run(cancelled_on_sigterm(main(), terminated))
    except KeyboardInterrupt:
        interrupted = True
    except asyncio.CancelledError:   # SIGTERM: as Ctrl+C
        if not terminated:
            raise
    interrupted = interrupted or bool(terminated)
    if interrupted:
        for r in runs:
            on_finished(r)
    if args.auto_tools:
        last = {r.name: r for r in runs}
        for r in last.values():
            if pending_calls(r):
                print(f"note: {r.name}: stopped after {args.auto_tools} tool round(s) with tool calls pending",
                      file=sys.stderr)
    if args.json:
        for r in runs:
            out(json.dumps(r.result(), ensure_ascii=False))
    code = 0
    for path in args.export:
        try:
            export(runs, path)
            print(f"wrote {path}", file=sys.stderr)
        except (OSError, ValueError) as exc:
            print(f"run: cannot write {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            code = 1
    if interrupted:
        return 130
    if any(not r.ok for r in runs):
        return 1
    return code


# -- replay ------------------------------------------------------------------------------------------------------
def cmd_replay(args) -> int:
    """Headless replay (main.py opens the window for a replay without --headless)."""
    import asyncio
    import json

    from core.live.capture import CaptureError
    from core.live.importers import no_exchange_message, read_capture
    from core.live.replay import replay_runs

    try:
        opened = read_capture(args.file, format=args.format)
    except CaptureError as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a reader's bug on odd input: one line, never a traceback
        print(f"replay: {args.file}: cannot be read ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2
    for s in opened.skipped:
        print(f"replay: skipped {s.entry}: {s.why}", file=sys.stderr)
    runs = list(opened.runs)
    if not runs:
        print(f"replay: {no_exchange_message(args.file, opened)}", file=sys.stderr)
        return 1
    if args.provider:
        unknown = [n for n in args.provider if n not in {r.name for r in runs}]
        if unknown:
            print(f"replay: not in the capture: {', '.join(unknown)}", file=sys.stderr)
            return 2
        runs = [r for r in runs if r.name in args.provider]
    if args.speed is not None and args.speed < 0:
        print("replay: --speed must be 0 or more", file=sys.stderr)
        return 2
    if args.speed:
        runs = asyncio.run(replay_runs(runs, speed=args.speed))
    from core.live.capture import is_conversation
    from core.live.tool_loop import exchange_index
    from core.wire.jsonfast import dumps_standard

    turns = is_conversation(runs)   # a conversation: every exchange says which turn it was
    for r in runs:
        result = r.result()
        if turns:
            result["turn"] = exchange_index(r.spec)
        sys.stdout.write(dumps_standard(result) + "\n")     # (standard JSON: a peer's NaN is written null)
    sys.stdout.flush()
    return 0
