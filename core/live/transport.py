"""The httpx transport: streams prepared `ProviderRun`s concurrently, one asyncio task each.

The only module that imports httpx. It never raises for network or HTTP trouble: the run ends with an error and
keeps everything received before it (see `core.live.recorder` for the run's fields).

`async stream_provider(run, client, *, connect_timeout=10, read_timeout=60, worker=None) -> ProviderRun`
    Streams one run with an `httpx.AsyncClient`. Never raises for network or HTTP trouble (the run ends with
    an error and keeps everything received before it); re-raises `asyncio.CancelledError` after marking the
    run "cancelled". No automatic retries. `read_timeout`: a stream that sends no bytes for that long ends as
    "stalled" (keepalives count as bytes, and are counted in `metrics.keepalives`). `worker`: a
    `core.live.decode_worker.DecodeWorker` that does the recording (decoding) on its own thread, in order,
    with each chunk's arrival time taken here as it is read; the run is final when this returns, as without.
    A body is read up to a bound: a non-stream body 1 MiB (`MAX_ERROR_BODY`, then cut with a note), an event
    stream `MAX_STREAM_BODY` (256 MiB): a stream that passes it is closed there and the run ends
    "body_too_large", keeping every byte received.

`Session(runs, *, connect_timeout=10, read_timeout=60, client=None, on_update=None, on_finished=None)`
    Runs many `ProviderRun`s concurrently, one task each: `await session.run()` (or `session.start()` for the
    task), `session.cancel(name)` cancels one provider alone, `session.cancel_all()` all of them.
    `on_finished(run)` is called as each provider ends. `session.tasks` maps name -> task.

`new_client()` an `httpx.AsyncClient` for `stream_provider` (no redirects, enough connections).
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence

from core.live.config import ProviderConfig, redact_text, resolve_key
from core.live.decode_worker import recorder_calls, settled
from core.live.errors import MAX_STREAM_BODY, ErrorType, error_dict, size_text
from core.live.proxy import proxy_for, proxy_mounts
from core.live.recorder import FINAL_STATUSES, MAX_ERROR_BODY, ProviderRun, prepare_runs
from core.live.request import PromptSpec
from core.live.summary import plural
from core.wire.scrub import mask_text, secret_list

_live_secrets: dict[str, int] = {}     # keys of the requests in flight (refcounted), masked in library logs
_LOGGERS = ("httpx", "httpcore", "httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy",
            "hpack", "hpack.hpack")
_log_filter_installed = False


class _SecretLogFilter:
    """Masks the keys of requests in flight in httpx / httpcore log records (their DEBUG logs print headers)."""

    def filter(self, record) -> bool:
        if not _live_secrets:
            return True
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken record is not ours to fix
            return True
        secrets = list(_live_secrets)
        masked = mask_text(msg, secrets)[0]
        masked = mask_text(masked, [repr(s.encode())[2:-1] for s in secrets])[0]   # as a bytes repr
        if masked != msg:
            record.msg, record.args = masked, None
        return True


def _register_secrets(secrets: Sequence[str], add: bool) -> None:
    global _log_filter_installed
    if add and not _log_filter_installed:
        import logging

        f = _SecretLogFilter()
        for name in _LOGGERS:
            logging.getLogger(name).addFilter(f)
        _log_filter_installed = True
    for s in secret_list(secrets):       # (a placeholder key such as `x` would mask every `x` of a log)
        if add:
            _live_secrets[s] = _live_secrets.get(s, 0) + 1
        elif s in _live_secrets:
            _live_secrets[s] -= 1
            if _live_secrets[s] <= 0:
                del _live_secrets[s]


def _transport_error(typ: ErrorType, message: str, secrets: Sequence[str]) -> dict:
    return error_dict(typ, redact_text(message, secrets))


def _exc_text(exc: BaseException) -> str:
    s = str(exc)
    return f"{type(exc).__name__}: {s}" if s else type(exc).__name__


async def stream_provider(run: ProviderRun, client, *, connect_timeout: float = 10.0,
                          read_timeout: float = 60.0, worker=None) -> ProviderRun:
    """Send the run's request and stream the response into it (see the module docstring)."""
    import httpx

    if run.status != "pending" or run._send is None:
        return run
    req = run._send
    secrets = run._secrets
    t0 = time.monotonic_ns()
    run._begin(time.time())
    run._clock_origin = t0

    def now() -> int:
        return time.monotonic_ns() - t0

    timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=max(connect_timeout, 30.0),
                            pool=connect_timeout)
    # A loopback target the client's mount patterns do not name (127.0.0.2, a *.localhost name resolving to
    # loopback) would still be routed to a proxy: give it a direct client of its own.
    own = new_client(4, direct=True) if proxy_for(req.url) is None and _mounts_route_through_proxy(req.url) else None
    _register_secrets(secrets, True)
    try:
        return await _stream(run, own or client, req, secrets, now, timeout, connect_timeout, read_timeout, worker)
    finally:
        _register_secrets(secrets, False)
        if own is not None:
            await own.aclose()


def _finish_run(run: ProviderRun, t: int, err: dict | None, failures=(), secrets=()) -> None:
    """The run's end; `failures`: what the recorder raised on the decode worker (reported as inline, where it
    would have ended the stream with an internal error)."""
    if failures and (err is None or err.get("type") == ErrorType.CANCELLED):
        err = _transport_error(ErrorType.INTERNAL_ERROR, _exc_text(failures[0]), secrets)
    run._finish(t, err)
    run._scrub()


async def _stream(run, client, req, secrets, now, timeout, connect_timeout, read_timeout, worker) -> ProviderRun:
    import httpx

    failures: list = []
    record = recorder_calls(worker, failures)   # (on the worker's thread when there is one, in order; else here)
    err: dict | None = None
    got_headers = False
    size = 0
    try:
        async with client.stream(req.method, req.url, headers=req.headers, content=req.content(),
                                 timeout=timeout) as resp:
            got_headers = True
            record(run._on_headers, now(), resp.status_code, resp.http_version, resp.reason_phrase,
                   list(resp.headers.multi_items()))
            if resp.headers.get("content-encoding", "identity").lower() not in ("identity", ""):
                record(run.notes.append, f"the response was {resp.headers['content-encoding']}-encoded; the "
                                         f"capture holds the decoded bytes")
            await settled(worker)     # (whether the body is a stream is the recorder's to say)
            feeding = run._feeding
            limit = MAX_STREAM_BODY if feeding else MAX_ERROR_BODY   # (read here: a test may set a small one)
            async for chunk in resp.aiter_bytes():
                record(run._on_chunk, now(), chunk)
                size += len(chunk)
                if size >= limit:
                    if not feeding:
                        record(run.notes.append, f"the non-stream body was cut after {size} bytes")
                    elif size > limit:    # (leaving the `async with` closes the connection)
                        err = _transport_error(ErrorType.BODY_TOO_LARGE, f"the stream passed {size_text(limit)}: "
                                               f"StreamScope stopped reading it after {size:,} bytes (everything "
                                               f"received is kept; the provider may still be sending)", secrets)
                    else:
                        continue
                    break
    except asyncio.CancelledError:
        record(_finish_run, run, now(), _transport_error(ErrorType.CANCELLED, "cancelled by the user", secrets),
               failures, secrets)
        await settled(worker)
        raise
    except httpx.ConnectTimeout:
        err = _transport_error(ErrorType.CONNECT_FAILED, f"no connection within {connect_timeout:g} s", secrets)
    except httpx.ConnectError as exc:
        err = _transport_error(ErrorType.CONNECT_FAILED, f"cannot connect: {_exc_text(exc)}", secrets)
    except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as exc:
        t = now()
        await settled(worker)         # (the keepalives counted so far are the recorder's)
        if not got_headers:
            msg = f"no response headers for {read_timeout:g} s"
        else:
            msg = f"no bytes for {read_timeout:g} s"
        if run.metrics.keepalives:
            msg += f" (after {plural(run.metrics.keepalives, 'keepalive')})"
        err = _transport_error(ErrorType.STALLED, msg if isinstance(exc, httpx.ReadTimeout) else _exc_text(exc),
                               secrets)
        record(_finish_run, run, t, err, failures, secrets)
        await settled(worker)
        return run
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        where = "before the response headers" if not got_headers else f"after {size} bytes"
        err = _transport_error(ErrorType.CONNECTION_DROPPED, f"the connection was dropped {where}: {_exc_text(exc)}",
                               secrets)
    except httpx.HTTPError as exc:
        err = _transport_error(ErrorType.TRANSPORT_ERROR, _exc_text(exc), secrets)
    except Exception as exc:  # noqa: BLE001 - one provider's failure never disturbs another
        err = _transport_error(ErrorType.INTERNAL_ERROR, _exc_text(exc), secrets)
    record(_finish_run, run, now(), err, failures, secrets)
    await settled(worker)
    return run


def _mounts_route_through_proxy(url: str) -> bool:
    """Whether a client from `new_client()` would send `url` through a proxy (its patterns, not resolution)."""
    from urllib.parse import urlsplit

    mounts = proxy_mounts()
    if not mounts:
        return False
    host = (urlsplit(url).hostname or "").lower()
    for pattern, proxy in mounts.items():
        if pattern.startswith("all://") and proxy is None:
            name = pattern[len("all://"):].strip("[]")
            if host == name or (name.startswith("*") and (host == name[1:].lstrip(".") or host.endswith(name[1:]))):
                return False
    return True


def new_client(max_connections: int = 64, *, direct: bool = False, transport=None):
    """An httpx.AsyncClient suited to streaming many providers at once (no redirects, no retries).

    Proxies come from `core.live.proxy` (the environment's, never for a loopback target), not from httpx's own
    reading of the environment (`trust_env=False`), so what the Request tab says is what happens.
    `direct=True`: no proxy at all. `transport`: the class of its transports (default httpx.AsyncHTTPTransport;
    the tap's forwarder gives its own)."""
    import httpx

    make = transport or httpx.AsyncHTTPTransport
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    mounts = {} if direct else {pattern: (None if proxy is None else make(limits=limits, proxy=proxy))
                                for pattern, proxy in proxy_mounts().items()}
    default = {} if transport is None else {"transport": make(limits=limits)}
    return httpx.AsyncClient(limits=limits, follow_redirects=False, timeout=httpx.Timeout(60.0, connect=10.0),
                             trust_env=False, mounts=mounts or None, **default)


class Session:
    """Many providers streamed concurrently, one asyncio task each; each can be cancelled alone."""

    def __init__(self, runs: Sequence[ProviderRun], *, connect_timeout: float = 10.0, read_timeout: float = 60.0,
                 client=None, on_update: Callable[[ProviderRun], None] | None = None,
                 on_finished: Callable[[ProviderRun], None] | None = None) -> None:
        names = [r.name for r in runs]
        if len(set(names)) != len(names):
            raise ValueError("provider names must be unique within a session")
        self.runs = list(runs)
        self.by_name = {r.name: r for r in self.runs}
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.client = client
        self.on_finished = on_finished
        self.tasks: dict[str, asyncio.Task] = {}
        self._task: asyncio.Task | None = None
        if on_update is not None:
            for r in self.runs:
                r.listeners.append(on_update)

    async def _one(self, run: ProviderRun, client) -> ProviderRun:
        try:
            return await stream_provider(run, client, connect_timeout=self.connect_timeout,
                                         read_timeout=self.read_timeout)
        finally:
            if run.status not in FINAL_STATUSES:   # cancelled before it began
                run._finish(0, _transport_error(ErrorType.CANCELLED, "cancelled before sending", ()))
            if self.on_finished is not None:
                self.on_finished(run)

    def start(self) -> asyncio.Task:
        """Start every run on the running loop; returns the task that ends when all have ended."""
        if self._task is None:
            self._task = asyncio.ensure_future(self.run())
        return self._task

    async def run(self) -> list[ProviderRun]:
        own = self.client is None
        client = new_client() if own else self.client
        try:
            for r in self.runs:
                self.tasks[r.name] = asyncio.ensure_future(self._one(r, client))
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        finally:
            if own:
                await client.aclose()
        return self.runs

    def cancel(self, name: str) -> bool:
        """Cancel one provider; the others keep streaming. False when it is unknown or already over."""
        t = self.tasks.get(name)
        if t is None or t.done():
            return False
        t.cancel()
        return True

    def cancel_all(self) -> None:
        for name in list(self.tasks):
            self.cancel(name)

    @property
    def done(self) -> bool:
        return all(r.finished for r in self.runs)


async def run_prompt(providers: Iterable[ProviderConfig], spec: PromptSpec, **kw) -> list[ProviderRun]:
    """Convenience: prepare and stream every provider; returns the finished runs."""
    key_resolver = kw.pop("key_resolver", resolve_key)
    session = Session(prepare_runs(providers, spec, key_resolver=key_resolver), **kw)
    return await session.run()
