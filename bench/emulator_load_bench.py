"""The emulator under load: `/health` latency while it serves a 1 MiB prompt, and while it serves 50 firehoses.

    .venv/bin/python bench/emulator_load_bench.py            # 50 firehose clients, 4 huge prompts (~1 min)
    .venv/bin/python bench/emulator_load_bench.py --quick    # 10 clients, 1 huge prompt

The emulator runs as `main.py emulate` in its own process on a free loopback port (nothing leaves 127.0.0.1);
this process is the clients (httpx, asyncio), and a child of it asks `/health` every 20 ms: first for 2 s with
nothing else to do (the baseline), then while the huge-prompt requests are answered (1 MiB of distinct words each, `text` scenario,
every format in turn), then while the firehose clients stream (the four formats in turn, each client reading its
whole stream). Every phase ends when its requests end or after --limit seconds. It prints the latency
percentiles of each phase and their ratio to the baseline, the firehoses' time to first byte (they are sent as
they are encoded) and throughput.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile_inputs import distinct_words  # noqa: E402  (the checkout's own, after the path is set)

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")


def request_for(fmt: str, model: str, prompt: str) -> tuple[str, dict, dict]:
    limit = 100_000 if model in ("firehose", "long") else 64   # (every scenario stops at max_tokens)
    if fmt == "openai-chat":
        return "/v1/chat/completions", {"authorization": "Bearer bench"}, {
            "model": model, "stream": True, "messages": [{"role": "user", "content": prompt}]}
    if fmt == "openai-responses":
        return "/v1/responses", {"authorization": "Bearer bench"}, {"model": model, "stream": True, "input": prompt}
    if fmt == "anthropic":
        return "/v1/messages", {"x-api-key": "bench", "anthropic-version": "2023-06-01"}, {
            "model": model, "stream": True, "max_tokens": limit, "messages": [{"role": "user", "content": prompt}]}
    return f"/v1beta/models/{model}:streamGenerateContent?alt=sse", {"x-goog-api-key": "bench"}, {
        "contents": [{"role": "user", "parts": [{"text": prompt}]}]}


def _poller(base: str) -> None:
    """The child that asks /health every 20 ms until its stdin closes, then prints the latencies (JSON). A process
    of its own: the clients' work in this one must not be counted as the emulator's."""
    import threading

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    lat = []
    with httpx.Client(trust_env=False) as client:
        while not stop.is_set():
            t = time.perf_counter()
            client.get(base + "/health", timeout=60).raise_for_status()
            lat.append(time.perf_counter() - t)
            stop.wait(0.02)
    print(json.dumps(lat))


async def during(base: str, work, limit: float) -> tuple[list[float], object, float]:
    """(the /health latencies, work's result, seconds) while `work` runs (at most `limit` seconds)."""
    poller = await asyncio.create_subprocess_exec(sys.executable, __file__, "--poller", base, cwd=ROOT,
                                                  stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    await asyncio.sleep(0.5)   # (its start-up is not the phase)
    t0 = time.perf_counter()
    try:
        result = await asyncio.wait_for(work, limit)
    except asyncio.TimeoutError:
        result = None
    took = time.perf_counter() - t0
    out, _ = await poller.communicate(b"")
    return json.loads(out), result, took


def huge_requests(count: int) -> list[tuple[str, dict, bytes]]:
    """Made before the phase: building them is this process's work, not the emulator's."""
    out = []
    for k in range(count):
        path, headers, body = request_for(FORMATS[k % len(FORMATS)], "text", distinct_words(1 << 20, seed=k))
        out.append((path, headers | {"content-type": "application/json"}, json.dumps(body).encode()))
    return out


async def huge_prompts(client: httpx.AsyncClient, base: str, requests: list[tuple[str, dict, bytes]]) -> list[int]:
    statuses = []
    for path, headers, content in requests:
        r = await client.post(base + path, headers=headers, content=content, timeout=120)
        statuses.append(r.status_code)
    return statuses


async def firehoses(client: httpx.AsyncClient, base: str, count: int) -> tuple[list[float], int]:
    first: list[float] = []
    total = 0

    async def one(k: int) -> None:
        nonlocal total
        path, headers, body = request_for(FORMATS[k % len(FORMATS)], "firehose", f"bench firehose {k % 8}")
        t0 = time.perf_counter()
        async with client.stream("POST", base + path, headers=headers, json=body, timeout=120) as r:
            got_first = False
            async for data in r.aiter_bytes():
                if not got_first:
                    first.append(time.perf_counter() - t0)
                    got_first = True
                total += len(data)

    await asyncio.gather(*(one(k) for k in range(count)))
    return first, total


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def row(name: str, lat: list[float], base_p50: float) -> str:
    p50, p99, mx = pct(lat, 0.5), pct(lat, 0.99), max(lat) if lat else float("nan")
    return (f"{name:34} {len(lat):>6} {p50 * 1e3:>9.1f} {p99 * 1e3:>9.1f} {mx * 1e3:>9.1f}   "
            f"{p50 / base_p50:>7.1f}x {mx / base_p50:>8.1f}x")


async def bench(base: str, clients: int, prompts: int, limit: float) -> None:
    limits = httpx.Limits(max_connections=clients + 8, max_keepalive_connections=clients + 8)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as client:
        idle, _, _ = await during(base, asyncio.sleep(2.0), limit)
        base_p50 = statistics.median(idle)
        requests = huge_requests(prompts)
        lat_prompt, statuses, t_prompt = await during(base, huge_prompts(client, base, requests), limit)
        lat_fire, fire, t_fire = await during(base, firehoses(client, base, clients), limit)
    print(f"{'/health while ...':34} {'asked':>6} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}   "
          f"{'p50/idle':>8} {'max/idle':>9}")
    print(row("idle (baseline)", idle, base_p50))
    print(row(f"{prompts} x 1 MiB prompt", lat_prompt, base_p50))
    print(row(f"{clients} firehose clients", lat_fire, base_p50))
    print()
    if statuses is None:
        print(f"1 MiB prompts: not all answered within {limit:g} s")
    else:
        print(f"1 MiB prompts: {prompts} answered (HTTP {sorted(set(statuses))}) in {t_prompt:.2f} s, "
              f"{t_prompt / prompts:.2f} s each")
    if fire is None:
        print(f"firehoses: not all finished within {limit:g} s")
    else:
        first, total = fire
        print(f"firehoses: {clients} streams, {total / 1e6:.1f} MB in {t_fire:.2f} s ({total / 1e6 / t_fire:.0f} MB/s); "
              f"first byte after p50 {pct(first, 0.5) * 1e3:.0f} ms, max {max(first) * 1e3:.0f} ms "
              f"(streamed as encoded)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 firehose clients and one huge prompt")
    ap.add_argument("--clients", type=int, help="firehose clients (default 50; --quick 10)")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds a phase may take at most")
    ap.add_argument("--poller", metavar="BASE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.poller:
        _poller(args.poller)
        return 0
    clients = args.clients or (10 if args.quick else 50)
    prompts = 1 if args.quick else 4
    emu = subprocess.Popen([sys.executable, "main.py", "emulate", "--host", "127.0.0.1", "--port", "0"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = emu.stdout.readline()
        if not line.startswith("listening on "):
            print(f"the emulator did not start: {line!r}", file=sys.stderr)
            return 1
        base = line.split()[-1]
        print(f"# emulator_load_bench: Python {sys.version.split()[0]}, emulator (main.py emulate) at {base}, "
              f"{clients} firehose clients, {prompts} x 1 MiB prompt; /health every 20 ms")
        asyncio.run(bench(base, clients, prompts, args.limit))
    finally:
        emu.terminate()
        try:
            emu.wait(15)
        except subprocess.TimeoutExpired:
            emu.kill()
            emu.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
