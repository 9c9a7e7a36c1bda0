"""Tap benchmark: the emulator's `firehose` through a tap vs straight from the emulator, in the same run.

    python bench/tap_bench.py [--rounds 10] [--scenario firehose] [--speed 0]

Four processes on loopback (five with socat): the emulator (`main.py emulate --speed 0`), a tap in front of it (`main.py tap
--export T.jsonl`, which records, decodes and appends every exchange as it would for a user), the peer: a bare
TCP relay in front of it (`bench/bare_relay.py`: one more hop with nothing parsed or recorded, in Python with the
tap's read size and send buffer) and this client (httpx, reading the raw body); and where `socat` is on PATH
(Debian's package), a second peer: socat relaying with 256 KiB reads and the system's socket buffers (a relay in
C: two copies of each byte and no interpreter). Each round streams the scenario once directly and once through
each of the others, each path first in turn, and prints:

- throughput: body bytes per second from the first byte to the last (the stream's own rate; target: tapped >=
  0.8x direct), and from sending the request to the last byte (which adds the emulator's time to the first
  byte, the same on every path, and the extra hop), per path (medians over the rounds) and as ratios to direct;
- added latency per chunk: for every chunk the tap read from the emulator (the capture's arrival time), the
  time until this client held that chunk's last byte (p50 / p99 over all rounds; target p99 < 2 ms). It is
  what the tap adds: its own work on the chunk plus the second loopback hop. Both clocks are this machine's
  wall clock (the tap's capture stores its start as epoch seconds and chunk times in ns from it). The same for
  the relay, per read it made of the emulator (it logs them: `bare_relay.py --log`), as the peer's figure.

The last line is `tap: throughput_ratio=R exchange_ratio=E latency_p50_ms=A latency_p99_ms=B
relay_throughput_ratio=R2 relay_exchange_ratio=E2 relay_latency_p50_ms=C relay_latency_p99_ms=D` and, with socat,
`socat_throughput_ratio=R3 socat_exchange_ratio=E3`. Bounded: loopback only, a fixed number of rounds, each
stream given at most 120 s; the child processes are stopped at the end.
"""
from __future__ import annotations

import argparse
import base64
import bisect
import json
import os
import shutil
import signal
import socket
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


def start(args: list[str], prefix: str, script: Path = ROOT / "main.py") -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    line = proc.stdout.readline().strip()
    if not line.startswith(prefix):
        proc.kill()
        raise SystemExit(f"tap_bench: {script.name} {args[0]} did not start: {line!r}")
    return proc, line.split()[2] if prefix == "tapping on" else line.split()[-1]


def start_socat(upstream_port: str) -> tuple[subprocess.Popen, str] | None:
    """socat relaying a free loopback port to the emulator, once it accepts; None without socat."""
    exe = shutil.which("socat")
    if exe is None:
        return None
    with socket.socket() as s:            # a free port (socat cannot print the one it picked)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "-b", "262144", f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,nodelay",
                             f"TCP:127.0.0.1:{upstream_port},nodelay"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("tap_bench: socat did not start")


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


class CaptureTail:
    """The tap's capture, read as it grows: per ended exchange its start (epoch s) and every chunk's (t_ns, size).
    Each look reads only what was appended since the last (the file grows by the whole body every round)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.runs: dict[int, dict] = {}
        self.ended: list[int] = []
        self.header_seen = False

    def exchanges(self) -> list[dict]:
        if self.path.exists():
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
            done = data[:data.rfind(b"\n") + 1]   # a line still being written is left for the next look
            self.offset += len(done)
            for line in done.splitlines():
                if not self.header_seen:            # the file's first line describes the capture
                    self.header_seen = True
                    continue
                rec = json.loads(line)
                if rec["type"] == "run":
                    self.runs[rec["run"]] = {"started_at": rec["started_at"], "chunks": []}
                elif rec["type"] == "chunk":
                    size = len(rec["text"].encode("utf-8")) if "text" in rec else len(base64.b64decode(rec["b64"]))
                    self.runs[rec["run"]]["chunks"].append((rec["t_ns"], size))
                elif rec["type"] == "end":
                    self.ended.append(rec["run"])
        return [self.runs[i] for i in sorted(self.ended)]


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--scenario", default="firehose")
    ap.add_argument("--speed", type=float, default=0.0,
                    help="the emulator's pacing (0: no delays; `--scenario long --speed 20`: a paced stream, "
                         "where the added latency is what a user's real streams see)")
    args = ap.parse_args()
    if not 1 <= args.rounds <= 50:
        raise SystemExit("tap_bench: --rounds from 1 to 50")
    REQUEST["model"] = args.scenario
    REQUEST["max_tokens"] = 100_000            # (`long` and `firehose` stop at max tokens)
    HEADERS["x-emulator-speed"] = f"{args.speed:g}"
    import httpx

    tmp = Path(tempfile.mkdtemp(prefix="tap-bench-"))
    capture = tmp / "tap.jsonl"
    emulator, emu_url = start(["emulate", "--port", "0", "--speed", "0", "--quiet"], "listening on")
    tap, tap_url = start(["tap", "--listen", "127.0.0.1:0", "--upstream", emu_url, "--export", str(capture)],
                         "tapping on")
    relay_log = tmp / "relay.jsonl"
    relay, relay_url = start([emu_url.rsplit(":", 1)[1], "--log", str(relay_log)], "relaying on",
                             ROOT / "bench" / "bare_relay.py")
    socat = None
    times = {"direct": [], "tap": [], "relay": [], "socat": []}   # (whole exchange, first to last byte) per round
    latencies, sizes = [], set()
    relay_arrivals = []                              # the client's arrivals, per relay round
    tail = CaptureTail(capture)
    try:
        socat = start_socat(emu_url.rsplit(":", 1)[1])   # (in the try: should it fail, the others are stopped)
        with httpx.Client(timeout=httpx.Timeout(120.0), trust_env=False) as client:
            paths = [("direct", emu_url), ("tap", tap_url), ("relay", relay_url)]
            if socat is not None:
                paths.append(("socat", socat[1]))
            for _, url in paths:        # warm every path (the emulator caches the big schedule)
                stream(client, url)
            for rnd in range(args.rounds):
                k = rnd % len(paths)
                order = paths[k:] + paths[:k]   # each path first, second, ... in turn
                for kind, url in order:
                    whole, streaming, arrivals = stream(client, url)
                    sizes.add(arrivals[-1][1])
                    times[kind].append((whole, streaming))
                    if kind == "relay":
                        relay_arrivals.append(arrivals)
                    if kind == "tap":
                        deadline = time.monotonic() + 30   # the tap appends the exchange once it has ended
                        while time.monotonic() < deadline:
                            exchanges = tail.exchanges()
                            if len(exchanges) >= rnd + 2:
                                break
                            time.sleep(0.05)
                        latencies += added_latencies(exchanges[rnd + 1], arrivals)
    finally:
        for proc in (relay, tap, emulator) + ((socat[0],) if socat is not None else ()):
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    if len(sizes) != 1:
        print(f"tap_bench: the bodies differ in size between paths and rounds: {sorted(sizes)}")
        return 1
    size = sizes.pop()
    print(f"body: {size} bytes; {args.rounds} rounds of each path, in turn")
    ratios, relay_ratios, socat_ratios = [], [], []
    for i, what in enumerate(("request to last byte", "first to last byte")):
        d, t, r = (statistics.median(x[i] for x in times[k]) for k in ("direct", "tap", "relay"))
        ratios.append(d / t)
        relay_ratios.append(d / r)
        print(f"throughput, {what}: direct {size / d / 1e6:.1f} MB/s ({d * 1e3:.1f} ms), "
              f"tapped {size / t / 1e6:.1f} MB/s ({t * 1e3:.1f} ms): {d / t:.2f}x; "
              f"bare TCP relay {size / r / 1e6:.1f} MB/s ({r * 1e3:.1f} ms): {d / r:.2f}x")
        if socat is not None:
            c = statistics.median(x[i] for x in times["socat"])
            socat_ratios.append(d / c)
            print(f"    socat {size / c / 1e6:.1f} MB/s ({c * 1e3:.1f} ms): {d / c:.2f}x")
    p50, p99 = percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3
    print(f"added latency per chunk over {len(latencies)} chunks: p50 {p50:.3f} ms, p99 {p99:.3f} ms, "
          f"max {max(latencies) * 1e3:.3f} ms")
    # the relay's, measured the same way: from each read it made of the emulator to the client holding its bytes
    relayed = [json.loads(line) for line in relay_log.read_text().splitlines()][1:]   # (after the warm-up)
    if len(relayed) != len(relay_arrivals):
        print(f"tap_bench: the relay logged {len(relayed)} responses for {len(relay_arrivals)} rounds")
        return 1
    relay_lat = [x for ex, arr in zip(relayed, relay_arrivals) for x in added_latencies(ex, arr)]
    r50, r99 = percentile(relay_lat, 50) * 1e3, percentile(relay_lat, 99) * 1e3
    print(f"the bare relay's added latency per read over {len(relay_lat)} reads: p50 {r50:.3f} ms, "
          f"p99 {r99:.3f} ms, max {max(relay_lat) * 1e3:.3f} ms; the tap's p99 is {p99 / r99:.2f}x the relay's")
    print(f"tap: throughput_ratio={ratios[1]:.2f} exchange_ratio={ratios[0]:.2f} latency_p50_ms={p50:.3f} "
          f"latency_p99_ms={p99:.3f} relay_throughput_ratio={relay_ratios[1]:.2f} "
          f"relay_exchange_ratio={relay_ratios[0]:.2f} relay_latency_p50_ms={r50:.3f} "
          f"relay_latency_p99_ms={r99:.3f}"
          + (f" socat_throughput_ratio={socat_ratios[1]:.2f} socat_exchange_ratio={socat_ratios[0]:.2f}"
             if socat_ratios else ""))
    for f in tmp.iterdir():
        f.unlink()
    os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
