"""Memory per byte received: what a run keeps while a server sends hostile (and ordinary) streams.

    .venv/bin/python bench/memory_bench.py            # 50 MB a shape, as issue 11 measured (~2 min)
    .venv/bin/python bench/memory_bench.py --quick    # 5 MB a shape (~15 s)

Each shape is fed, in 64 KiB chunks, to a fresh `core.live.recorder.ProviderRun` (what a live run, a replay and
a pane keep: the chunks themselves, the decoder with its SSE items, the normalized events, the frame times) in
its own child process, so that every figure starts from the same interpreter. It prints the peak resident memory
the run added, divided by the bytes received (1.0 would be the chunks alone), the wall time, and what was kept.

Shapes: `comments` (`:x\\n` lines: counted past `pipeline.COMMENTS_KEPT`), `broken-cr-frames` (`data: x\\r\\r`: a
non-JSON frame each, CR line ends; the `data-not-json` findings counted past `pipeline.DIAGNOSTICS_PER_CODE`),
`invalid-utf8` (`data: \\xff\\n\\n`: a framing diagnostic each), and `ordinary` (an OpenAI chat stream of
one-word deltas, ~60 bytes a frame) for comparison.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHAPES = {
    "comments": b":x\n",
    "broken-cr-frames": b"data: x\r\r",
    "invalid-utf8": b"data: \xff\n\n",
    "ordinary": b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":'
                b'{"content":" word"},"finish_reason":null}]}\n\n',
}
CHUNK = 65536


def _child(shape: str, total: int) -> dict:
    import resource

    from core.live.config import ProviderConfig
    from core.live.recorder import ProviderRun

    unit = SHAPES[shape]
    chunk = unit * (CHUNK // len(unit))

    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    run = ProviderRun(ProviderConfig("bench", "openai-chat", "http://127.0.0.1:9/v1", "m"))
    run._begin(0.0)
    run._on_headers(0, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    base = rss()
    peak = base
    sent = 0
    t0 = time.perf_counter()
    t = 0
    while sent < total:
        data = bytes(chunk)   # (a fresh object a chunk, as a socket read gives)
        t += 1000
        run._on_chunk(t, data)
        sent += len(data)
        if t % 64000 == 0:
            peak = max(peak, rss())
    run._finish(t, None)
    took = time.perf_counter() - t0
    peak = max(peak, rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    dec = run.decoder
    return {"shape": shape, "bytes": sent, "peak_per_byte": (peak - base) / sent, "seconds": took,
            "items": len(dec.items), "frames": dec.frames, "comments": dec.comments,
            "diagnostics": len(dec.reply.diagnostics), "events": len(run.events)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 MB a shape instead of 50 MB")
    ap.add_argument("--mb", type=float, help="megabytes (10^6 bytes) a shape")
    ap.add_argument("--child", nargs=2, metavar=("SHAPE", "BYTES"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], int(args.child[1]))))
        return 0
    total = int((args.mb or (5 if args.quick else 50)) * 1_000_000)
    print(f"# memory_bench: Python {sys.version.split()[0]}, {total / 1e6:g} MB a shape in {CHUNK // 1024} KiB "
          f"chunks, one child process a shape; peak resident memory added by the run / bytes received")
    print(f"{'shape':18} {'bytes':>12} {'memory/byte':>12} {'seconds':>8} {'items kept':>11} {'frames':>9} "
          f"{'comments':>10} {'diagnostics':>12}")
    for shape in SHAPES:
        out = subprocess.run([sys.executable, __file__, "--child", shape, str(total)], capture_output=True,
                             text=True, check=True, cwd=ROOT).stdout
        r = json.loads(out)
        print(f"{shape:18} {r['bytes']:>12,} {r['peak_per_byte']:>11.1f}x {r['seconds']:>8.1f} {r['items']:>11,} "
              f"{r['frames']:>9,} {r['comments']:>10,} {r['diagnostics']:>12,}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
