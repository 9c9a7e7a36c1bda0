"""The `bench` subcommand: the prompt k times per provider, a line per finished run, then statistics.

    python main.py bench --prompt TEXT --repeat K [--concurrency C] [--provider NAME ...] [--export runs.jsonl]
                         [--csv runs.csv] [--price-as PROVIDER/MODEL] [--json] (and `run`'s prompt, provider and
                         timeout options)

Providers are chosen as `run` chooses them (the four demo providers on an in-process emulator by default). The
loop is `core.live.repeat.RepeatLoop`; the statistics `core.live.stats`; the figures and how they are measured
`core.live.metrics` (the methods are printed under the table). `--export` writes the native capture and
`--csv` one row per run, both as each run ends, so a bench stopped with Ctrl+C keeps every finished run (and the
ones in flight, as cancelled); SIGTERM stops it the same way. Exit status: 0 when every run completed, 1 when any
failed, 130 when interrupted (Ctrl+C or SIGTERM), 2 for usage errors.
"""
from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    from core.cli.run import add_prompt_arguments, add_provider_arguments

    b = sub.add_parser("bench", help="send the prompt K times per provider and print latency statistics",
                       description="Send the prompt K times to each provider (one after another, or C at a "
                                   "time), print a line per finished run and, at the end, per provider: TTFT, "
                                   "total time, output tokens/s and inter-chunk gaps as p50 / p95 / min / max, "
                                   "errors by type and cost.")
    add_prompt_arguments(b)
    b.add_argument("--repeat", type=int, required=True, metavar="K", help="runs per provider, 1 to 100")
    b.add_argument("--concurrency", type=int, default=1, metavar="C",
                   help="runs in flight at a time (default 1: one after another)")
    b.add_argument("--export", metavar="PATH.jsonl", help="write every run to a native .jsonl capture")
    b.add_argument("--csv", metavar="PATH.csv", help="write one row per run with every figure")
    b.add_argument("--price-as", metavar="PROVIDER/MODEL",
                   help="price every run as this model of the price database (e.g. openai/gpt-4o)")
    b.add_argument("--json", action="store_true", help="print the statistics as one JSON object at the end")
    add_provider_arguments(b)
    b.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    import dataclasses

    from core.cli.run import prompt_spec, selected_providers
    from core.live.repeat import MAX_CONCURRENCY, MAX_REPEAT

    def err(msg: str):
        print(msg, file=sys.stderr)
        raise SystemExit(2)

    if not 1 <= args.repeat <= MAX_REPEAT:
        err(f"bench: --repeat must be 1 to {MAX_REPEAT}")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        err(f"bench: --concurrency must be 1 to {MAX_CONCURRENCY}")
    if args.export and not args.export.lower().endswith(".jsonl"):
        err(f"bench: --export {args.export}: a bench writes a native capture, PATH.jsonl")
    if args.price_as:
        from core.live.config import ConfigError, parse_price_as

        try:
            parse_price_as(args.price_as, "--price-as")
        except ConfigError as exc:
            err(f"bench: {exc}")
    spec = prompt_spec(args, err)
    with selected_providers(args, err) as providers:
        if args.price_as:
            providers = [dataclasses.replace(p, price=None, price_as=args.price_as) for p in providers]
        return _bench(args, providers, spec)


def _bench(args, providers, spec) -> int:
    import asyncio
    import json
    import signal

    from core.cli.terminal import safe
    from core.live.capture import CaptureAppender
    from core.live.config import redact_text
    from core.live.repeat import RepeatLoop
    from core.live.runs_csv import RunsCsv
    from core.live.stats import provider_stats

    width = max(len(p.name) for p in providers)
    noted: set[str] = set()
    try:
        capture = CaptureAppender(args.export, args.repeat * len(providers)) if args.export else None
        table = RunsCsv(args.csv) if args.csv else None
    except OSError as exc:
        print(f"bench: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2

    def on_started(run) -> None:
        if run.name not in noted:   # what the request mapping adapted, once per provider
            noted.add(run.name)
            for n in run.notes:
                print(safe(redact_text(f"note: {run.name}: {n}", run._secrets)), file=sys.stderr)

    def on_progress(progress, run) -> None:
        line = f"{progress.text():<{len(str(progress.total)) * 2 + 5}}  " + run_line(progress.result, width)
        print(safe(redact_text(line, run._secrets)), flush=True)
        if capture is not None:
            capture.add(run)
        if table is not None:
            table.add(progress.result)

    loop_obj = RepeatLoop(providers, spec, repeat=args.repeat, concurrency=args.concurrency,
                          connect_timeout=args.connect_timeout, read_timeout=args.read_timeout,
                          on_started=on_started, on_progress=on_progress)

    async def main():
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:   # Ctrl+C or SIGTERM stops the bench and keeps every run (the ones in flight end "cancelled")
                loop.add_signal_handler(sig, loop_obj.cancel)
            except (NotImplementedError, RuntimeError):   # not on this platform: Ctrl+C interrupts as usual
                pass
        try:
            return await loop_obj.run()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.remove_signal_handler(sig)
                except (NotImplementedError, RuntimeError):
                    pass

    code = 0
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        loop_obj.cancelled = True
    except OSError as exc:   # writing the export or the CSV failed: what ran so far is kept there
        print(f"bench: cannot write: {exc}", file=sys.stderr)
        code = 1
    finally:
        for sink, path in ((capture, args.export), (table, args.csv)):
            if sink is not None:
                try:
                    sink.close()
                    print(f"wrote {path}", file=sys.stderr)
                except OSError as exc:
                    print(f"bench: cannot write {path}: {exc}", file=sys.stderr)
                    code = 1
    results = loop_obj.results
    stats = provider_stats(results)
    print()
    if loop_obj.cancelled:
        print(f"stopped after {len(results)} of {loop_obj.total} runs")
    print(render_stats(stats))
    if args.json:
        print(json.dumps({"runs": len(results), "planned": loop_obj.total, "stopped": loop_obj.cancelled,
                          "providers": [s.to_json() for s in stats]}, ensure_ascii=False))
    if loop_obj.cancelled:
        return 130
    if any(not r.metrics.ok for r in results):
        return 1
    return code


def run_line(result, width: int) -> str:
    """One finished run: provider and repeat, status, TTFT, total, tokens/s, gap p50, cost, error."""
    from core.live.compare_table import duration_text

    m = result.metrics
    parts = [f"{result.provider:<{width}} #{result.repeat:<3}", f"{m.status:<9}",
             f"ttft {duration_text(m.ttft_ns)}", f"total {duration_text(m.total_ns)}"]
    if m.tokens_per_s is not None:
        parts.append(f"{m.tokens_per_s:.1f} tok/s" + ("" if m.tokens_per_s_exact else " (est.)"))
    if m.gap_p50_ns is not None:
        parts.append(f"gap p50 {duration_text(m.gap_p50_ns)}")
    if m.cost is not None:
        parts.append(m.cost.text())
    if not m.ok and m.error_type:
        parts.append(f"error {m.error_type}: {m.error_message}")
    return "  ".join(parts)


def render_stats(stats) -> str:
    """The statistics table (aligned columns), then the methods the figures follow."""
    from core.live.metrics import METHODS
    from core.live.stats import stats_table

    header, rows = stats_table(stats)
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines += ["", "Methods: latency and rate figures over the runs that completed; failed runs are counted under "
                  "their error type. Percentiles interpolate between the closest ranks; gap figures pool every "
                  "inter-chunk gap of those runs."]
    lines += [f"- {m}" for m in METHODS]
    notes = {s.provider: s.cost_label for s in stats if s.cost_label}
    if notes:
        lines.append("- Demo providers' costs are what the named real model would have cost for the same usage "
                     "(a demo provider's model is an emulator scenario).")
    return "\n".join(lines)
