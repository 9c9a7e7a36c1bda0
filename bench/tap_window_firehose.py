"""Tap window benchmark: firehoses through a tap started from the window (Run > Tap…), measuring the Qt event
loop's lag while its panes show them live, and what the tap's clients got.

    QT_QPA_PLATFORM=offscreen python bench/tap_window_firehose.py [--streams 4] [--rounds 2]

The emulator runs as its own process (`main.py emulate`), as a user's provider would; the window taps it
(`TapWindow`, its tap forwarding in a process of its own); a client process (httpx) streams `--streams` firehoses
at once through the tap, `--rounds` times. The same 5 ms timer as `gui_firehose.py` measures the GUI thread's
lag while the client runs. Printed: the client's throughput through the tap (body bytes per second over its
whole run), per exchange whether the capture holds exactly the bytes the client got, and the last line

    tap_window: exchanges=N intact=N lag_p99_ms=X lag_max_ms=Y

Targets (the window's, as for `gui_firehose.py`): p99 < 30 ms, max < 100 ms. Exit status 0 when every exchange
ended `done` with the client's bytes intact in its capture, else 1. Bounded: loopback only, every stream given at
most 120 s.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gui_firehose import LagMeter, start_emulator_process  # noqa: E402  (bench/ is this script's directory)

CLIENT = r"""
import asyncio, hashlib, json, sys, time
import httpx
base, streams, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
REQUEST = {"model": "firehose", "messages": [{"role": "user", "content": "Go."}], "stream": True,
           "max_tokens": 100000, "stream_options": {"include_usage": True}}
HEADERS = {"authorization": "Bearer sk-bench-window", "x-emulator-speed": "0"}

async def one(c):
    h, n = hashlib.sha256(), 0
    async with c.stream("POST", base + "/v1/chat/completions", json=REQUEST, headers=HEADERS) as r:
        async for chunk in r.aiter_raw():
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()

async def main():
    out = []
    t0 = time.perf_counter()
    async with httpx.AsyncClient(timeout=120, trust_env=False) as c:
        for _ in range(rounds):
            out += await asyncio.gather(*(one(c) for _ in range(streams)))
    print(json.dumps({"seconds": time.perf_counter() - t0, "bodies": out}))

asyncio.run(main())
"""


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=4, help="firehoses at once (1-8)")
    ap.add_argument("--rounds", type=int, default=2, help="how many times (1-10)")
    ap.add_argument("--worst", type=int, default=0, help="also print the N worst lag samples and when")
    args = ap.parse_args(argv)
    if not (1 <= args.streams <= 8 and 1 <= args.rounds <= 10):
        raise SystemExit("tap_window_firehose: --streams 1-8, --rounds 1-10")

    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from core.servers.tap.upstreams import parse_upstreams
    from gui.main_window import MainWindow
    from gui.qtcompat import MainThreadGC
    from gui.tap_window import TapWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = MainThreadGC()  # noqa: F841

    proc, emulator = start_emulator_process()
    settings_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"streamscope-tapbench-{os.getpid()}.ini"
    settings = QSettings(str(settings_path), QSettings.IniFormat)
    # the main window first, as Run > Tap… has it: it sets the process up for the window's thread (the decode
    # gate, the interpreter's switch interval)
    main_window = MainWindow([], settings=settings)
    window = TapWindow(parse_upstreams([emulator]), "127.0.0.1", 0, settings=settings)
    window.resize(1600, 1000)
    window.show()
    meter = LagMeter()
    result: dict = {}

    async def run() -> None:
        base = await window.start()
        if base is None:
            raise SystemExit(f"tap_window_firehose: {window.listen_error}")
        await asyncio.sleep(1.0)
        meter.start()
        meter.recording = True
        result["t0"] = time.perf_counter()
        client = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLIENT, base, str(args.streams), str(args.rounds),
            stdout=asyncio.subprocess.PIPE, cwd=str(ROOT))
        out, _ = await asyncio.wait_for(client.communicate(), 120 * args.rounds)
        meter.recording = False
        result["client"] = json.loads(out)
        n = args.streams * args.rounds
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                len(window.exchanges()) >= n and all(ex.finished for ex in window.exchanges())):
            await asyncio.sleep(0.05)
        window.scheduler.flush()
        await window.aclose()
        await main_window.aclose()

    try:
        with loop:
            loop.run_until_complete(run())
    finally:
        proc.terminate()
        proc.wait(5)
        settings_path.unlink(missing_ok=True)

    client = result["client"]
    got = sorted(tuple(b) for b in client["bodies"])
    captured = sorted((len(ex.run.body), hashlib.sha256(ex.run.body).hexdigest()) for ex in window.exchanges())
    statuses = [ex.run.status for ex in window.exchanges()]
    intact = sum(1 for a, b in zip(got, captured) if a == b)
    total = sum(n for n, _ in got)
    print(f"{len(window.exchanges())} exchanges ({args.streams} at once, {args.rounds} rounds): "
          f"{', '.join(sorted(set(statuses)))}; the client got {total / 1e6:.1f} MB in {client['seconds']:.2f} s "
          f"({total / client['seconds'] / 1e6:.1f} MB/s through the tap)")
    print(f"lag: {len(meter.samples)} samples while the client ran; panes shown {len(window.panes)}")
    if args.worst:
        worst = sorted(zip(meter.samples, meter.when), reverse=True)[:args.worst]
        print("worst lags: " + ", ".join(f"{lag:.0f} ms at +{(w - result['t0']):.2f} s" for lag, w in worst))
    print(f"tap_window: exchanges={len(window.exchanges())} intact={intact} lag_p99_ms={meter.percentile(99):.1f} "
          f"lag_max_ms={max(meter.samples, default=0.0):.1f}")
    ok = intact == len(got) == len(window.exchanges()) and all(s == "done" for s in statuses)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
