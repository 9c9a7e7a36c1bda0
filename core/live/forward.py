"""The tap's client to its upstreams: a request forwarded as it came, the response streamed back as it arrives.

Besides the transport, the one module that imports httpx (the layer contract in pyproject.toml names who may
not). The tap server (`core.servers.tap`) sees no httpx: it gets an `UpstreamResponse` and `UpstreamError`s.

    forwarder = Forwarder()
    resp = await forwarder.open("POST", url, headers, body)   # UpstreamError("connect_failed", ...) if unreachable
    resp.status, resp.reason, resp.http_version, resp.headers # headers as received: [(name, value), ...]
    async for chunk in resp.chunks(): ...                     # the raw bytes (content-encoding kept), as read
    await resp.pump(deliver)                                  # or: await deliver([chunk, ...]) per read (below)
    await resp.aclose()                                       # early: the upstream request is cancelled
    await forwarder.aclose()

The request carries exactly the headers given (httpx adds only `Host` and the body's `Content-Length`: none of
its own defaults, so no `Accept-Encoding` the client did not ask for). No read timeout: the client's own decides
(a stalled upstream is the client's to give up on, and the tap sees it hang up). Proxies are the environment's
as for every request StreamScope sends (`core.live.proxy`), never for a loopback upstream.

No cookie jar: a `Set-Cookie` from an upstream is passed to the client that got it and kept nowhere else (httpx's
client jar would keep it across the tap's clients, and its bookkeeping costs time quadratic in a request's header
count). Idle connections are dropped after `KEEPALIVE_EXPIRY` (4 s), before common servers close theirs (uvicorn
after 5 s, nginx and Node after 5 s or more), and a request that fails on a reused connection at once, before any
byte of a response came back (the server closed it as the request went out), is sent again, once, on another
(`Forwarder.open`, `RETRY_WITHIN_S`): its body is held whole, and nothing of it was answered.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import httpcore
import httpx

from core.live.errors import ErrorType
from core.live.transport import new_client

MAX_CONNECTIONS = 512
# httpcore asks its network stream for at most 64 KiB per read; asyncio hands a socket's data over in pieces of
# up to 256 KiB. A firehose upstream read 64 KiB at a time costs the tap four trips through httpx, h11 and the
# client's send per piece the socket already had: forwarding reads take all of it (see `_WideReads`).
READ_BYTES = 256 * 1024
# shorter than the keep-alive timeouts of common servers (uvicorn's 5 s), so that the tap seldom picks a
# connection its upstream is closing at that moment
KEEPALIVE_EXPIRY = 4.0


class UpstreamError(Exception):
    """The upstream could not be reached, or its response broke off. `kind`: connect_failed,
    connection_dropped, stalled, transport_error (the capture's transport-error types)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _text(exc: BaseException) -> str:
    s = str(exc)
    return f"{type(exc).__name__}: {s}" if s else type(exc).__name__


def _error(exc: httpx.HTTPError, started: bool) -> UpstreamError:
    if isinstance(exc, httpx.ConnectTimeout):
        return UpstreamError(ErrorType.CONNECT_FAILED, f"no connection within the connect timeout ({_text(exc)})")
    if isinstance(exc, (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.ProxyError)):
        return UpstreamError(ErrorType.CONNECT_FAILED, f"cannot connect: {_text(exc)}")
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamError(ErrorType.STALLED, _text(exc))
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        where = "after the response headers" if started else "before the response headers"
        return UpstreamError(ErrorType.CONNECTION_DROPPED,
                             f"the upstream dropped the connection {where}: {_text(exc)}")
    return UpstreamError(ErrorType.TRANSPORT_ERROR, _text(exc))


class _WideStream(httpcore.AsyncNetworkStream):
    """A network stream whose reads take up to READ_BYTES, whatever httpcore asks for (it asks 64 KiB), and
    which calls `before_read` (when set: `UpstreamResponse.pump`) before each read."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self.before_read: Callable[[], Awaitable[None]] | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.before_read is not None:
            await self.before_read()
        return await self._stream.read(max(max_bytes, READ_BYTES), timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(self, ssl_context, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return _WideStream(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str):
        return self._stream.get_extra_info(info)


class _WideReads(httpcore.AsyncNetworkBackend):
    """httpcore's network backend (its documented extension point) with `_WideStream`s."""

    def __init__(self, backend: httpcore.AsyncNetworkBackend) -> None:
        self._backend = backend

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _WideStream(await self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _WideStream(await self._backend.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class ForwardingTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with wide reads. httpx takes no network backend, so its pool's is wrapped after it is
    made; should a later httpcore name it differently, reads stay 64 KiB (slower, the same bytes)."""

    def __init__(self, **kwargs) -> None:
        limits = kwargs.get("limits") or httpx.Limits(max_connections=MAX_CONNECTIONS,
                                                      max_keepalive_connections=MAX_CONNECTIONS)
        kwargs["limits"] = httpx.Limits(max_connections=limits.max_connections,
                                        max_keepalive_connections=limits.max_keepalive_connections,
                                        keepalive_expiry=KEEPALIVE_EXPIRY)
        super().__init__(**kwargs)
        pool = getattr(self, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _WideReads):
            pool._network_backend = _WideReads(backend)


class UpstreamResponse:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.reason = response.reason_phrase
        self.http_version = response.http_version
        self.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they are read from the upstream, undecoded; `UpstreamError` if it breaks off."""
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx.HTTPError as exc:
            raise _error(exc, True) from None

    async def pump(self, deliver: Callable[[list[tuple[int, bytes]]], Awaitable[None]]) -> None:
        """Read the body to its end, handing `deliver` [(arrival ns, chunk), ...]: every chunk the bytes of one
        read held, just before the next read (which may wait for the upstream) and at the end. The same bytes as
        `chunks()` in fewer, larger pieces: a firehose's 33 KB HTTP chunks arrive eight to a read, and one write
        of all of them costs the tap a fraction of eight (each write is a trip through uvicorn, h11 and a send;
        with a send buffer that fits them, the client's reads grow to match). Nothing waits for more bytes: a
        slow stream's chunk is delivered before the read that waits for the next. `UpstreamError` if the body
        breaks off (what was read before is delivered first); an exception from `deliver` ends the pump."""
        # the connection's own stream: over HTTP/1.1 (all the forwarder speaks) it carries this response alone
        # while the body is read, so its hook is this pump's
        stream = self._response.extensions.get("network_stream")
        pending: list[tuple[int, bytes]] = []

        async def flush() -> None:
            if pending:
                batch = pending.copy()
                pending.clear()
                await deliver(batch)

        wide = isinstance(stream, _WideStream)
        if wide:
            stream.before_read = flush
        try:
            async for chunk in self.chunks():
                pending.append((time.monotonic_ns(), chunk))
                if not wide:                  # (no hook: one chunk at a time, as `chunks()`)
                    await flush()
        finally:
            if wide:
                stream.before_read = None
            # what was read before an error or the end is forwarded, not lost
            if pending and not _cancelling():
                await flush()

    async def aclose(self) -> None:
        await self._response.aclose()


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _NoCookies(httpx.Cookies):
    """A client cookie jar that keeps nothing: what an upstream sets is its client's alone (and httpx's
    `extract_cookies` copies the request's headers into a dict, a lookup per header: quadratic in their count)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass

    def set_cookie_header(self, request: httpx.Request) -> None:
        pass


# errors of a request whose connection broke before any of the response came back
_DROPPED_EARLY = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
#: ... and only this soon after the request went out: the keep-alive race fails at once, while an upstream that
#: read the request and worked on it before it dropped the connection may have done it (a second send would be
#: a second billed call)
RETRY_WITHIN_S = 0.25


class Forwarder:
    """An httpx client for forwarding (one per tap: its connections to each upstream are kept and reused)."""

    def __init__(self, connect_timeout: float = 10.0, max_connections: int = MAX_CONNECTIONS) -> None:
        self.connect_timeout = connect_timeout
        self._client = new_client(max_connections, transport=ForwardingTransport)
        # (httpx's `cookies` setter would wrap the jar in a plain `Cookies`: the attribute it sets is replaced)
        self._client._cookies = _NoCookies()
        self._timeout = httpx.Timeout(connect=connect_timeout, read=None, write=60.0, pool=None).as_dict()
        self.retried = 0            # requests sent again after a reused connection broke (see `open`)

    async def open(self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> UpstreamResponse:
        """Send the request; returns once the response headers arrived (`UpstreamError` when none came).
        A request whose connection was a reused one and broke before any of the response came back is sent once
        more (the upstream closed that idle connection as the request went out: nothing was answered)."""
        fresh = False               # did this attempt open a connection of its own?

        async def trace(name: str, info: dict) -> None:
            nonlocal fresh
            if name.endswith((".connect_tcp.started", ".connect_unix_socket.started")):
                fresh = True

        for attempt in (1, 2):
            fresh = False
            sent_at = time.monotonic()
            try:
                # built directly, not with client.build_request, which would add the client's default headers
                request = httpx.Request(method, url, headers=list(headers), content=body if body else None,
                                        extensions={"timeout": self._timeout, "trace": trace})
                return UpstreamResponse(await self._client.send(request, stream=True, follow_redirects=False))
            except httpx.InvalidURL as exc:
                raise UpstreamError(ErrorType.CONNECT_FAILED, f"not a URL the tap can forward to: {exc}") from None
            except _DROPPED_EARLY as exc:
                if attempt == 1 and not fresh and time.monotonic() - sent_at < RETRY_WITHIN_S:
                    self.retried += 1
                    continue
                raise _error(exc, False) from None
            except httpx.HTTPError as exc:
                raise _error(exc, False) from None
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._client.aclose()
