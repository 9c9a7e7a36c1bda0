"""Which headers a reverse proxy passes on (RFC 9110 section 7.6.1): every end-to-end header, untouched.

Hop-by-hop headers describe one connection, not the message: `Connection` and the headers it names,
`Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding` and `Upgrade` are dropped each way
(each side's server frames its own connection: uvicorn chunks the body the tap sends its client). `Host` and
the request's `Content-Length` are set again for the upstream by the client library; a response's
`Content-Length` is kept, as the body is passed on byte for byte (`Content-Encoding` too: an encoded body
stays encoded for the client, and only the tap's own copy is decoded).
"""
from __future__ import annotations

from collections.abc import Iterable

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade"})
# set again by the client library for the upstream (Host: the upstream's; the body's length), or meant for the
# proxy itself (credentials for a proxy the tap is not)
_REQUEST_ONLY = frozenset({"host", "content-length", "proxy-authorization"})


def end_to_end(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """`headers` without the hop-by-hop ones (those `Connection` names included), in their order."""
    headers = list(headers)
    named = {t.strip().lower() for k, v in headers if k.lower() == "connection" for t in v.split(",")}
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() not in named]


def for_upstream(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The client's request headers as the tap sends them on."""
    return [(k, v) for k, v in end_to_end(headers) if k.lower() not in _REQUEST_ONLY]


def for_client(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """The upstream's response headers as the tap sends them back (ASGI's byte pairs)."""
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in end_to_end(headers)]
