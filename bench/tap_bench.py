"""Tap benchmark: the emulator's `firehose` through a tap vs straight from the emulator, in the same run.

    python bench/tap_bench.py [--rounds 10] [--scenario firehose]

Three processes on loopback: the emulator (`main.py emulate --speed 0`), a tap in front of it (`main.py tap
--export T.jsonl`, which records, decodes and appends every exchange as it would for a user) and this client
(httpx, reading the raw body). Each round streams the scenario once directly and once through the tap, in
alternating order, and prints:

- throughput: body bytes per second from the first byte to the last (the stream's own rate; target: tapped >=
  0.8x direct), and from sending the request to the last byte (which adds the emulator's time to the first
  byte, the same on both paths, and the tap's extra hop), direct and tapped (medians over the rounds);
- added latency per chunk: for every chunk the tap read from the emulator (the capture's arrival time), the
  time until this client held that chunk's last byte (p50 / p99 over all rounds; target p99 < 2 ms). It is
  what the tap adds: its own work on the chunk plus the second loopback hop. Both clocks are this machine's
  wall clock (the tap's capture stores its start as epoch seconds and chunk times in ns from it).

The last line is `tap: throughput_ratio=R exchange_ratio=E latency_p50_ms=A latency_p99_ms=B`. Bounded: loopback only, a fixed
number of rounds, each stream given at most 120 s; the child processes are stopped at the end.
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REQUEST = {"model": "firehose", "messages": [{"role": "user", "content": "Go."}], "stream": True,
           "stream_options": {"include_usage": True}}
HEADERS = {"authorization": "Bearer sk-bench", "x-emulator-speed": "0"}


def start(args: list[str], prefix: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    line = proc.stdout.readline().strip()
    if not line.startswith(prefix):
        proc.kill()
        raise SystemExit(f"tap_bench: {args[0]} did not start: {line!r}")
    return proc, line.split()[2] if prefix == "tapping on" else line.split()[-1]


def stream(client, url: str) -> tuple[float, float, list[tuple[float, int]]]:
    """(seconds from sending to the last byte, seconds from the first byte to the last,
    [(wall time, bytes so far), ...] per chunk read)."""
    arrivals = []
    size = 0
    t0 = time.perf_counter()
    first = None
    with client.stream("POST", url + "/v1/chat/completions", json=REQUEST, headers=HEADERS) as r:
        r.raise_for_status()
        for chunk in r.iter_raw():
            if first is None:
                first = time.perf_counter()
            size += len(chunk)
            arrivals.append((time.time(), size))
    end = time.perf_counter()
    return end - t0, end - first, arrivals


def added_latencies(exchange: dict, arrivals: list[tuple[float, int]]) -> list[float]:
    """Per chunk the tap read: seconds from its arrival at the tap to the client holding its last byte."""
    ends = [n for _, n in arrivals]
    out = []
    offset = 0
    for t_ns, size in exchange["chunks"]:
        offset += size
        i = bisect.bisect_left(ends, offset)
        if i < len(arrivals):
            out.append(arrivals[i][0] - (exchange["started_at"] + t_ns / 1e9))
    return out


def read_exchanges(path: Path) -> list[dict]:
    """The tap's capture: per exchange its start (epoch s) and every chunk's (t_ns, size)."""
    runs: dict[int, dict] = {}
    text = path.read_text(encoding="utf-8")
    done = text[:text.rfind("\n") + 1]         # a line still being written is left for the next look
    ended = {json.loads(x)["run"] for x in done.splitlines()[1:] if '"type":"end"' in x}
    for line in done.splitlines()[1:]:
        rec = json.loads(line)
        if rec["type"] == "run":
            runs[rec["run"]] = {"started_at": rec["started_at"], "chunks": []}
        elif rec["type"] == "chunk":
            data = rec.get("text", "").encode("utf-8") if "text" in rec else b"x" * (len(rec["b64"]) * 3 // 4)
            runs[rec["run"]]["chunks"].append((rec["t_ns"], len(data)))
    return [runs[i] for i in sorted(runs) if i in ended]


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--scenario", default="firehose")
    args = ap.parse_args()
    if not 1 <= args.rounds <= 50:
        raise SystemExit("tap_bench: --rounds from 1 to 50")
    REQUEST["model"] = args.scenario
    import httpx

    tmp = Path(tempfile.mkdtemp(prefix="tap-bench-"))
    capture = tmp / "tap.jsonl"
    emulator, emu_url = start(["emulate", "--port", "0", "--speed", "0", "--quiet"], "listening on")
    tap, tap_url = start(["tap", "--listen", "127.0.0.1:0", "--upstream", emu_url, "--export", str(capture)],
                         "tapping on")
    times = {"direct": [], "tap": []}          # (whole exchange, first to last byte) per round
    latencies, sizes = [], set()
    try:
        with httpx.Client(timeout=httpx.Timeout(120.0), trust_env=False) as client:
            stream(client, emu_url)                  # warm both paths (the emulator caches the big schedule)
            stream(client, tap_url)
            for rnd in range(args.rounds):
                order = [("direct", emu_url), ("tap", tap_url)]
                if rnd % 2:
                    order.reverse()
                for kind, url in order:
                    whole, streaming, arrivals = stream(client, url)
                    sizes.add(arrivals[-1][1])
                    times[kind].append((whole, streaming))
                    if kind == "tap":
                        deadline = time.monotonic() + 30   # the tap appends the exchange once it has ended
                        while time.monotonic() < deadline:
                            exchanges = read_exchanges(capture) if capture.exists() else []
                            if len(exchanges) >= rnd + 2:
                                break
                            time.sleep(0.05)
                        latencies += added_latencies(exchanges[rnd + 1], arrivals)
    finally:
        for proc in (tap, emulator):
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    if len(sizes) != 1:
        print(f"tap_bench: the bodies differ in size between paths and rounds: {sorted(sizes)}")
        return 1
    size = sizes.pop()
    print(f"body: {size} bytes; {args.rounds} rounds of each path, alternating")
    ratios = []
    for i, what in enumerate(("request to last byte", "first to last byte")):
        d = statistics.median(x[i] for x in times["direct"])
        t = statistics.median(x[i] for x in times["tap"])
        ratios.append(d / t)
        print(f"throughput, {what}: direct {size / d / 1e6:.1f} MB/s ({d * 1e3:.1f} ms), "
              f"tapped {size / t / 1e6:.1f} MB/s ({t * 1e3:.1f} ms): {d / t:.2f}x")
    p50, p99 = percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3
    print(f"added latency per chunk over {len(latencies)} chunks: p50 {p50:.3f} ms, p99 {p99:.3f} ms, "
          f"max {max(latencies) * 1e3:.3f} ms")
    print(f"tap: throughput_ratio={ratios[1]:.2f} exchange_ratio={ratios[0]:.2f} latency_p50_ms={p50:.3f} "
          f"latency_p99_ms={p99:.3f}")
    for f in tmp.iterdir():
        f.unlink()
    os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
