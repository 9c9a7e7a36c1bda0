"""Compare and bench figures: what the per-run metrics cost while streaming, and what a long bench keeps.

    python bench/compare_bench.py [--repeat 100] [--concurrency 8] [--skip-memory] [--skip-metrics]

1. Metrics while streaming. A `firehose` reply of the emulator (tens of thousands of deltas) is fed chunk by
   chunk into a fresh `ProviderRun` while its figures are taken after every chunk, as a view repainting far more
   often than 10 times a second would: once with `MetricsTracker.snapshot()` (incremental) and once with
   `run_metrics()` from scratch. Printed: the cost per snapshot, the ratio, and the share of one core that
   eight panes at 10 snapshots a second would take.
2. Memory of a bench. `RepeatLoop` runs the prompt `--repeat` times on each of the four demo providers at
   `--concurrency` (the emulator in a separate process, paced as a model, so this process's memory is the
   client's alone). Printed: every run captured or not, and the resident memory growth per run beyond the
   captures' own bytes (a capture's bytes: its `.jsonl` records). Target: under 1 MB per run.

The last line is `compare_bench: snapshot_us=X scratch_us=Y ratio=Z runs=N/M growth_per_run_kb=W`.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui_firehose import start_emulator_process  # noqa: E402 - bench/ is this script's folder


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def firehose_run(base: str):
    from core.live.config import demo_providers
    from core.live.recorder import prepare_run
    from core.live.request import PromptSpec
    from core.live.transport import new_client, stream_provider

    provider = demo_providers(base, "firehose")[0]
    run = prepare_run(provider, PromptSpec(user="go", max_tokens=100_000))

    async def go():
        client = new_client()
        try:
            return await stream_provider(run, client)
        finally:
            await client.aclose()

    return asyncio.run(go())


def metrics_cost(base: str) -> tuple[float, float]:
    from core.live.metrics import MetricsTracker, run_metrics
    from core.live.recorder import ProviderRun

    source = firehose_run(base)
    chunks = source.chunks
    events = len(source.events)

    def replay(measure) -> float:
        run = ProviderRun(source.provider, source.request, source.spec)
        run._begin(source.started_at)
        run._on_headers(source.metrics.t_headers_ns or 0, source.http_status, source.http_version,
                        source.reason_phrase, source.response_headers)
        take = measure(run)
        spent = 0.0
        for t, data in chunks:
            run._on_chunk(t, data)
            t0 = time.perf_counter()
            take()
            spent += time.perf_counter() - t0
        run._finish(source.metrics.t_total_ns or 0, None)
        return spent / len(chunks)

    incremental = replay(lambda run: MetricsTracker(run).snapshot)
    scratch = replay(lambda run: (lambda: run_metrics(run)))
    print(f"metrics: a firehose reply of {len(chunks)} chunks, {events} events, {source.metrics.frames} frames")
    print(f"  snapshot after every chunk: incremental {incremental * 1e6:.1f} us, from scratch "
          f"{scratch * 1e6:.1f} us (x{scratch / incremental:.1f})")
    print(f"  eight panes at 10 snapshots/s: {8 * 10 * incremental * 100:.3f}% of one core "
          f"(from scratch on a finished firehose: {8 * 10 * scratch * 100:.1f}%)")
    return incremental, scratch


def memory_growth(base: str, repeat: int, concurrency: int) -> tuple[int, int, float]:
    from core.live.capture import run_lines
    from core.live.config import demo_providers
    from core.live.repeat import RepeatLoop
    from core.live.request import PromptSpec

    spec = PromptSpec(user="What is the capital of France?", max_tokens=256)
    providers = demo_providers(base)
    asyncio.run(RepeatLoop(providers, spec, repeat=2, concurrency=concurrency).run())   # warm: imports, pools
    gc.collect()
    before = rss_bytes()
    capture_bytes = 0
    last = time.monotonic()

    def on_progress(progress, run) -> None:
        nonlocal capture_bytes, last
        capture_bytes += sum(len(line.encode()) + 1 for line in run_lines(progress.done - 1, run, ()))
        if time.monotonic() - last > 5:
            last = time.monotonic()
            print(f"  {progress.text()}", flush=True)

    loop = RepeatLoop(providers, spec, repeat=repeat, concurrency=concurrency, on_progress=on_progress)
    t0 = time.perf_counter()
    results = asyncio.run(loop.run())
    took = time.perf_counter() - t0
    gc.collect()
    growth = rss_bytes() - before
    n = len(results)
    ok = sum(r.metrics.ok for r in results)
    beyond = (growth - capture_bytes) / n
    print(f"memory: {n}/{loop.total} runs captured ({ok} completed) in {took:.1f} s at concurrency {concurrency}")
    print(f"  resident growth {growth / 1e6:.2f} MB, the captures' own bytes {capture_bytes / 1e6:.2f} MB "
          f"({capture_bytes / n / 1e3:.1f} KB per run)")
    print(f"  growth per run: {growth / n / 1e3:.1f} KB in all; beyond the captures' bytes {beyond / 1e3:.1f} KB "
          f"(target < 1024 KB; negative: the kept captures take less room than their .jsonl text, and freed "
          f"decoders' memory is reused)")
    del results
    return n, loop.total, beyond


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=100, help="runs per demo provider (default 100)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-metrics", action="store_true")
    args = ap.parse_args()
    proc, base = start_emulator_process()
    try:
        inc = scratch = float("nan")
        n = total = 0
        beyond = float("nan")
        if not args.skip_metrics:
            inc, scratch = metrics_cost(base)
        if not args.skip_memory:
            n, total, beyond = memory_growth(base, args.repeat, args.concurrency)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"compare_bench: snapshot_us={inc * 1e6:.1f} scratch_us={scratch * 1e6:.1f} ratio={scratch / inc:.1f} "
          f"runs={n}/{total} growth_per_run_kb={beyond / 1e3:.1f}")
    return 0 if (args.skip_memory or (n == total and beyond < 1_000_000)) else 1


if __name__ == "__main__":
    sys.exit(main())
