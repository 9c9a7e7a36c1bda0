"""Replay: a captured run fed again through a fresh recorder with its original timing (or faster).

`async replay_run(source, *, speed=1.0, on_update=None) -> ProviderRun`
    Feeds a captured run's chunks through a fresh `StreamDecoder` at their original times divided by `speed`
    (`speed=None` or 0: as fast as possible), calling the same update callbacks; the new run's `t_ns` values
    are the original ones, so its metrics and result equal the capture's. `replay_runs(runs, ...)` does many
    concurrently. A run whose recording held no times (`ProviderRun.timing`, a cassette's) has them all at 0, so
    it plays at once, and the replayed run keeps the flag: its unknown times end as None, as the source's. Cancelling the task marks the replayed run "cancelled".

`replay_target(source) -> ProviderRun` + `async replay_into(run, source, *, speed=1.0, worker=None)`
    The same in two steps, so a pane can own the run (and its `on_update`) before the replay starts. `worker`:
    a `core.live.decode_worker.DecodeWorker` that decodes on its own thread (as the window's live streams are);
    the run is final when this returns, as without.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from core.live.decode_worker import recorder_calls, settled
from core.live.errors import ErrorType, error_dict
from core.live.recorder import ProviderRun
from core.live.request import PromptSpec, recorded_spec


async def replay_run(source: ProviderRun, *, speed: float | None = 1.0,
                     on_update: Callable[[ProviderRun], None] | None = None,
                     listeners: Sequence[Callable[[ProviderRun], None]] = ()) -> ProviderRun:
    """Replay a captured run through a fresh decoder with its original timing (divided by `speed`)."""
    run = replay_target(source)
    run.on_update = on_update
    run.listeners.extend(listeners)
    return await replay_into(run, source, speed=speed)


def captured_spec(runs: Sequence[ProviderRun]) -> PromptSpec | None:
    """The prompt a replayed capture shows: the first run's own spec (a StreamScope capture), else what the first
    recorded request carries (a cassette, a browser's HAR, a tap's exchange: `recorded_spec`), else None."""
    spec = next((r.spec for r in runs if r.spec is not None), None)
    if spec is not None:
        return spec
    for r in runs:
        if r.request is not None:
            found = recorded_spec(r.provider.format, r.request.body)
            if found is not None:
                return found
    return None


def replay_target(source: ProviderRun) -> ProviderRun:
    """A fresh, pending run for replaying `source` into (attach `on_update` / a pane, then `replay_into`)."""
    run = ProviderRun(source.provider, source.request, source.spec)
    run.notes = list(source.notes)
    run.set_timing(source.timing)   # (a recording that held no times replays at once, and says so once ended)
    return run


async def replay_into(run: ProviderRun, source: ProviderRun, *, speed: float | None = 1.0,
                      worker=None) -> ProviderRun:
    """Replay `source` into a fresh `run` the caller made (so it can attach callbacks and panes first)."""
    failures: list = []
    record = recorder_calls(worker, failures)
    fast = not speed or speed <= 0
    origin = time.monotonic_ns()

    async def at(t_ns: int) -> None:
        if fast:
            await asyncio.sleep(0)
            return
        delay = (t_ns / speed - (time.monotonic_ns() - origin)) / 1e9
        await asyncio.sleep(delay if delay > 0 else 0)

    run._begin(source.started_at, sent=source.sent)
    run._clock_origin = origin
    run._clock_speed = 1.0 if fast else speed
    try:
        if source.http_status is not None:
            await at(source.metrics.t_headers_ns or 0)
            record(run._on_headers, source.metrics.t_headers_ns or 0, source.http_status, source.http_version,
                   source.reason_phrase, source.response_headers)
        for t, data in source.chunks:
            await at(t)
            record(run._on_chunk, t, data)
        end = source.metrics.t_total_ns or 0
        await at(end)
    except asyncio.CancelledError:
        t = run.clock()
        record(_end, run, t, error_dict(ErrorType.CANCELLED, "replay cancelled"), failures)
        await settled(worker)
        raise
    record(_end, run, end, source.transport_error, failures)
    await settled(worker)
    return run


def _end(run: ProviderRun, t: int, error: dict | None, failures) -> None:
    """The replayed run's end; `failures`: what the recorder raised on the decode worker (inline, it would have
    ended the replay's task with that exception)."""
    if failures:
        error = error_dict(ErrorType.INTERNAL_ERROR, f"{type(failures[0]).__name__}: {failures[0]}")
    run._finish(t, error)


async def replay_runs(sources: Sequence[ProviderRun], *, speed: float | None = 1.0,
                      on_update: Callable[[ProviderRun], None] | None = None) -> list[ProviderRun]:
    """Replay many captured runs concurrently; returns the replayed runs in the same order."""
    return list(await asyncio.gather(*(replay_run(s, speed=speed, on_update=on_update) for s in sources)))
