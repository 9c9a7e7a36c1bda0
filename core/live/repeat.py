"""Repeated runs: the prompt k times per provider, one after another or a few at once, cancellable (Qt-free).

    loop = RepeatLoop(providers, spec, repeat=20, concurrency=4, on_progress=show)
    results = await loop.run()            # list[RepeatResult], in the order the runs finished
    loop.cancel()                         # from a callback or another task: stops taking new runs and cancels
                                          #   those in flight (they end "cancelled" and are kept)

Runs go in rounds (each provider's 1st run, then each one's 2nd, ...), so a change in the network or the
servers' load over the minutes of a bench touches every provider alike. `concurrency` runs are in flight at a
time (1: strictly one after another); each is a `ProviderRun` of its own, sent through the same transport as
`run` (`core.live.transport.stream_provider`, one shared HTTP client).

`on_started(run)` is called as each run is prepared (a view that shows runs live attaches here);
`on_progress(progress, run)` as each ends: `progress.text()` is "run 7/20", `progress.result` the
`RepeatResult`, and `run` the finished `ProviderRun`, valid during the call (write it out there; keep it only
if you show it). The loop itself keeps, per run, only its figures (`RunMetrics`), its inter-chunk gaps and its
capture (`CapturedRun`: the exchange as recorded, rebuilt on demand with `to_run()`); no decoder, frames or
events outlive a run, so a long bench grows by about the captures' own bytes.

Nothing is lost when it is stopped halfway: every run that finished is in `loop.results` (and was passed to
`on_progress`), and the runs in flight when it was cancelled are kept too, as "cancelled", with what they had
received. Runs never started are not made up.
"""
from __future__ import annotations

import asyncio
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.live.config import ProviderConfig, resolve_key
from core.live.metrics import MetricsTracker, RunMetrics
from core.live.recorder import ProviderRun, prepare_run, rebuild_run
from core.live.request import HttpRequest, PromptSpec
from core.live.transport import new_client, stream_provider

MAX_REPEAT = 100
MAX_CONCURRENCY = 64


@dataclass(frozen=True, slots=True)
class CapturedRun:
    """A finished run as its capture holds it: the request (redacted), the response and every chunk's bytes
    with its arrival time. `to_run()` rebuilds the full `ProviderRun` through the same recorder."""

    provider: ProviderConfig
    request: HttpRequest | None
    spec: PromptSpec | None
    started_at: float | None
    sent: bool
    headers: tuple | None          # (t_ns, status, http_version, reason, [(name, value), ...]) or None
    chunks: list                   # [(t_ns, bytes), ...], the run's own list (keys already masked)
    end_ns: int
    transport_error: dict | None
    notes: tuple[str, ...]

    @classmethod
    def of(cls, run: ProviderRun) -> "CapturedRun":
        return cls(run.provider, run.request, run.spec, run.started_at, run.sent, run._headers_tuple(), run.chunks,
                   run.metrics.t_total_ns or 0, run.transport_error, tuple(run.notes))

    @property
    def body_bytes(self) -> int:
        return sum(len(c) for _, c in self.chunks)

    def to_run(self) -> ProviderRun:
        return rebuild_run(self.provider, request=self.request, spec=self.spec, started_at=self.started_at,
                           sent=self.sent, headers=self.headers, chunks=self.chunks, end_ns=self.end_ns,
                           transport_error=self.transport_error, notes=self.notes)


@dataclass(frozen=True, slots=True)
class RepeatResult:
    number: int            # 1-based, in the order the runs finished
    provider: str
    repeat: int            # this provider's 1..k
    metrics: RunMetrics
    gaps: array            # the run's inter-chunk gaps in ns, sorted (int64)
    capture: CapturedRun


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int
    result: RepeatResult

    def text(self) -> str:
        return f"run {self.done}/{self.total}"


class RepeatLoop:
    """See the module docstring."""

    def __init__(self, providers: Sequence[ProviderConfig], spec: PromptSpec, *, repeat: int,
                 concurrency: int = 1, connect_timeout: float = 10.0, read_timeout: float = 60.0,
                 on_started: Callable[[ProviderRun], None] | None = None,
                 on_progress: Callable[[Progress, ProviderRun], None] | None = None,
                 key_resolver: Callable[[ProviderConfig], str | None] = resolve_key, client=None) -> None:
        if not providers:
            raise ValueError("no providers to run")
        if not 1 <= repeat <= MAX_REPEAT:
            raise ValueError(f"the repeat count must be 1 to {MAX_REPEAT} (got {repeat})")
        if not 1 <= concurrency <= MAX_CONCURRENCY:
            raise ValueError(f"the concurrency must be 1 to {MAX_CONCURRENCY} (got {concurrency})")
        self.providers = list(providers)
        self.spec = spec
        self.repeat = repeat
        self.concurrency = concurrency
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.on_started = on_started
        self.on_progress = on_progress
        self.key_resolver = key_resolver
        self.client = client
        self.results: list[RepeatResult] = []
        self.cancelled = False
        self._jobs = iter([(k, p) for k in range(1, repeat + 1) for p in self.providers])
        self._workers: list[asyncio.Task] = []
        self._failure: BaseException | None = None   # a callback's exception: stops the loop, raised by run()

    @property
    def total(self) -> int:
        return self.repeat * len(self.providers)

    def cancel(self) -> None:
        """Stop: no new run starts, and the runs in flight are cancelled (and kept)."""
        self.cancelled = True
        for t in self._workers:
            t.cancel()

    async def run(self) -> list[RepeatResult]:
        own = self.client is None
        client = new_client(max_connections=max(self.concurrency, 4)) if own else self.client
        try:
            width = min(self.concurrency, self.total)
            self._workers = [asyncio.ensure_future(self._worker(client)) for _ in range(width)]
            if self.cancelled:   # cancelled before it began
                self.cancel()
            try:
                await asyncio.gather(*self._workers, return_exceptions=True)
            except asyncio.CancelledError:   # the task running the loop was cancelled: stop, keep what ran
                self.cancel()
                await asyncio.gather(*self._workers, return_exceptions=True)
                raise
        finally:
            if own:
                await client.aclose()
        if self._failure is not None:
            raise self._failure
        return self.results

    async def _worker(self, client) -> None:
        for k, provider in self._jobs:   # a shared iterator: each worker takes the next run in the plan
            if self.cancelled:
                return
            run = prepare_run(provider, self.spec, key_resolver=self.key_resolver)
            if self.on_started is not None:
                self.on_started(run)
            try:
                await stream_provider(run, client, connect_timeout=self.connect_timeout,
                                      read_timeout=self.read_timeout)
            except asyncio.CancelledError:
                if run.finished:   # it was under way: it ended "cancelled", with what it had received
                    self._keep(k, run)
                return
            self._keep(k, run)

    def _keep(self, k: int, run: ProviderRun) -> None:
        tracker = MetricsTracker(run)
        result = RepeatResult(len(self.results) + 1, run.name, k, tracker.snapshot(), tracker.gaps(),
                              CapturedRun.of(run))
        self.results.append(result)
        if self.on_progress is not None:
            try:
                self.on_progress(Progress(result.number, self.total, result), run)
            except Exception as exc:  # noqa: BLE001 - e.g. the export's disk is full: stop, keep what ran
                if self._failure is None:
                    self._failure = exc
                self.cancel()
