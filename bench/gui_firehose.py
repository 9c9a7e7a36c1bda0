"""GUI firehose benchmark: four panes on the emulator's `firehose` scenario, measuring the Qt event loop's lag.

    QT_QPA_PLATFORM=offscreen python bench/gui_firehose.py [--panes 4] [--in-process] [--compare] [--replay]
                                                           [--screenshot PNG]

The emulator runs as a separate process (`main.py emulate`) by default, as a remote provider would; with
`--in-process` it runs in a thread of this process (as the GUI's demo providers do), sharing the GIL. With
`--compare` the Compare view (View > Compare view) is open during the stream, taking its snapshots (at most 10 a
second; their count is printed). With `--replay`, the run is then exported (.jsonl) and opened as File > Open does
(read on another thread, replayed instantly): `replay: frames=N shown=N seconds=S lag_p99_ms=X lag_max_ms=Y` is
printed before the last line, whose figures stay the live stream's (the exit status counts both).
A precise 5 ms QTimer on the GUI thread measures the event loop's lag (how late each tick fires). The last
line printed is:

    firehose: frames=N shown=N lag_p99_ms=X lag_max_ms=Y rss_mb=Z

frames: SSE frames the core decoded over all panes; shown: frame rows in the panes' Raw tables; lag: of the
ticks while streaming; rss_mb: the process's peak resident memory. Targets: shown == frames, p99 < 30 ms,
max < 100 ms. Exit status 0 when every pane finished and shown == frames, else 1.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_MS = 5


def start_emulator_process():
    proc = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "emulate", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        proc.kill()
        raise SystemExit(f"gui_firehose: the emulator did not start: {line!r} {proc.stderr.read()[:500]}")
    return proc, line.split("listening on ", 1)[1].strip()


class LagMeter:
    """A precise timer on the GUI thread; each tick's lateness is one lag sample."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.samples: list[float] = []
        self.when: list[float] = []      # when each sample was taken (perf_counter)
        self.recording = False
        self._last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        if self.recording:
            self.samples.append(max(0.0, (now - self._last) * 1000 - TICK_MS))
            self.when.append(now)
        self._last = now

    def percentile(self, p: float) -> float:
        return _percentile(self.samples, p)


def _percentile(samples: list[float], p: float) -> float:
    if not samples:
        return 0.0
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--panes", type=int, default=4,
                    help="how many panes (1-8; past 4 the demo providers repeat as demo-NAME-2; default 4)")
    ap.add_argument("--profile", type=int, nargs="?", const=20, default=0, metavar="N",
                    help="profile the GUI thread while it streams and print the N costliest functions")
    ap.add_argument("--in-process", action="store_true", help="run the emulator in a thread of this process")
    ap.add_argument("--screenshot", help="save a PNG of the window at the end")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--worst", type=int, default=0, help="also print the N worst lag samples and when")
    ap.add_argument("--compare", action="store_true", help="keep the Compare view open during the stream")
    ap.add_argument("--replay", action="store_true",
                    help="then export the run (.jsonl) and open it (File > Open) at full speed, measuring that too")
    args = ap.parse_args(argv)

    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from core.live.config import demo_providers
    from gui.main_window import MainWindow
    from gui.qtcompat import MainThreadGC

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = MainThreadGC()  # noqa: F841

    proc = server = None
    if args.in_process:
        from core.servers.emulator.server import EmulatorServer

        server = EmulatorServer()
        base = server.start()
    else:
        proc, base = start_emulator_process()

    settings_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"streamscope-bench-{os.getpid()}.ini"
    settings = QSettings(str(settings_path), QSettings.IniFormat)
    import dataclasses

    four = demo_providers(base)
    count = max(1, min(8, args.panes))
    demo = [p if i < 4 else dataclasses.replace(p, name=f"{p.name}-2")
            for i, p in enumerate((four * 2)[:count])]
    window = MainWindow([], settings=settings, demo_providers=demo, read_timeout=60.0)
    window.resize(1600, 1000)
    window.show()
    meter = LagMeter()
    result = {}
    samples = []
    if args.compare:
        window.compare_dock.sampled.connect(lambda: samples.append(1))
        window.act_compare.trigger()

    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()   # (the GUI thread only: the emulator runs in its own process)

    async def run() -> None:
        await asyncio.sleep(1.0)          # let the window settle (its warm-ups run in its first 0.6 s)
        meter.start()
        gc.collect()
        result["rss_before"] = current_rss_bytes()
        window.prompt.prompt.setPlainText("Firehose, please.")
        window.scenario.setCurrentText("firehose")
        window.prompt.max_tokens.setValue(100_000)   # all of it: every scenario stops at max tokens
        t0 = result["t0"] = time.perf_counter()
        meter.recording = True
        if profiler is not None:
            profiler.enable()
        window.send()
        deadline = t0 + args.timeout
        while not window.finished and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        meter.recording = False
        if profiler is not None:
            profiler.disable()
        result["elapsed"] = time.perf_counter() - t0
        window.scheduler.flush()
        await asyncio.sleep(0.1)
        gc.collect()
        result["rss_after"] = current_rss_bytes()
        result["live"] = tally()
        if args.replay:
            await replay_phase()
        await window.aclose()

    def tally() -> dict:
        """What the window's panes show now: frames decoded, frame rows shown, statuses, the frames' bytes."""
        shown = sum(p.raw_tab.table.model().rowCount() - p.controller.view.comments for p in window.panes)
        return {"frames": sum(c.run.decoder.frames for c in window.controllers), "shown": shown,
                "statuses": [c.status for c in window.controllers],
                "names": [f"{c.name}={c.status}" for c in window.controllers],
                "frame_bytes": sum(len(f.raw) for c in window.controllers for f in c.run.decoder.items),
                "flushes": window.scheduler.flushes}

    async def replay_phase() -> None:
        """File > Open of what was just streamed, instantly (speed None): the lag while the window replays it."""
        path = settings_path.with_suffix(".jsonl")
        result["replay_path"] = window.export_runs(path)
        await asyncio.sleep(0.5)
        meter.recording = True
        mark = len(meter.samples)
        t0 = time.perf_counter()
        await window.open_capture_in_background(path)      # as File > Open reads it
        print(f"replay: the file read in {time.perf_counter() - t0:.2f} s")
        deadline = t0 + args.timeout
        while not window.finished and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        meter.recording = False
        window.scheduler.flush()
        lags = meter.samples[mark:]
        result["replay"] = (time.perf_counter() - t0, lags, tally(), sorted(
            zip(lags, (w - t0 for w in meter.when[mark:])), reverse=True)[:args.worst])
        del meter.samples[mark:]                       # (the live figures stay the stream's alone)
        del meter.when[mark:]

    try:
        with loop:
            loop.run_until_complete(run())
    finally:
        if server is not None:
            server.stop()
        if proc is not None:
            proc.terminate()
            proc.wait(5)
        try:
            settings_path.unlink()
        except OSError:
            pass

    replay_line = None
    replay_ok = True
    if "replay" in result:
        seconds, lags, after, worst = result["replay"]
        replay_line = (f"replay: frames={after['frames']} shown={after['shown']} seconds={seconds:.2f} "
                       f"lag_p99_ms={_percentile(lags, 99):.1f} lag_max_ms={max(lags, default=0.0):.1f}")
        replay_ok = after["shown"] == after["frames"] == result["live"]["frames"] and all(
            st == "done" for st in after["statuses"])
        Path(result["replay_path"]).unlink(missing_ok=True)
        if args.worst:
            print("replay's worst lags: " + ", ".join(f"{lag:.0f} ms at +{w:.2f} s" for lag, w in worst))
    live = result.get("live") or tally()           # (the live run's, taken before any replay)
    frames, shown, statuses = live["frames"], live["shown"], live["statuses"]
    if args.screenshot:
        window.grab().save(args.screenshot)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"panes: {', '.join(live['names'])}")
    print(f"elapsed {result.get('elapsed', 0):.2f} s, {len(meter.samples)} lag samples, "
          f"{live['flushes']} repaint batches "
          f"({live['flushes'] / max(result.get('elapsed', 1), 0.001):.0f}/s)")
    if args.compare:
        print(f"compare view: open, {len(samples)} snapshots "
              f"({len(samples) / max(result.get('elapsed', 1), 0.001):.1f}/s)")
    if args.worst:
        worst = sorted(zip(meter.samples, meter.when), reverse=True)[:args.worst]
        print("worst lags: " + ", ".join(f"{lag:.0f} ms at +{(w - result['t0']):.2f} s" for lag, w in worst))
    if result.get("rss_before") and result.get("rss_after") and frames:
        frame_bytes = live["frame_bytes"]
        per_frame = (result["rss_after"] - result["rss_before"] - frame_bytes) / frames
        print(f"memory: {per_frame:.0f} bytes per frame beyond the frames' own {frame_bytes / 1e6:.1f} MB "
              f"(resident growth during the run; target < 1024)")
    if profiler is not None:
        import io
        import pstats

        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats(os.environ.get("FIREHOSE_PROFILE_SORT", "tottime")).print_stats(args.profile)
        print("profile of the GUI thread while streaming (own time per function, the costliest first):")
        print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))
    if replay_line:
        print(replay_line)
    print(f"firehose: frames={frames} shown={shown} lag_p99_ms={meter.percentile(99):.1f} "
          f"lag_max_ms={max(meter.samples, default=0.0):.1f} rss_mb={rss_mb:.0f}")
    return 0 if shown == frames and all(s == "done" for s in statuses) and replay_ok else 1


def current_rss_bytes() -> int | None:
    """Resident memory now (Linux /proc), or None where it cannot be read."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    sys.exit(main())
