"""Where a tap forwards: `--upstream URL` maps the listen root onto one upstream; several are mounted by name.

    mounts = parse_upstreams(["anthropic", "local=http://127.0.0.1:11434"], allow_insecure=False)
    mounts.route("/anthropic/v1/messages")   # (Upstream anthropic, "/v1/messages")
    mounts.route("/v1/messages")             # None: nothing is mounted at the root

Forms: `URL` or a built-in `NAME` alone (one of them: mapped at the root), `NAME=URL` (mounted at `/NAME`), and
several built-in names (each mounted at its name). Built-in names: `openai`, `anthropic`, `gemini` (their
public API hosts, from the format registry) and `emulator` (the built-in emulator, started in-process; with
no `--upstream`, it is the root). A built-in name also says which wire format to fall back to when neither the
path nor the frames tell one.

A URL is `http(s)://host[:port][/path]` with no credentials, query or fragment; plain `http://` to a host that
is not loopback is refused unless `allow_insecure` (the client's key would cross the network in clear).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from core.live.config import base_url_problem
from core.live.request import is_loopback_host
from core.wire.formats import REGISTRY

EMULATOR = "emulator"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _host_of(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


#: built-in name -> (base URL, the wire format it falls back to); the emulator's URL is known once it runs
BUILTIN: dict[str, tuple[str | None, str | None]] = {
    "openai": (_host_of(REGISTRY["openai-chat"].default_base_url), None),    # two formats: the path tells
    "anthropic": (_host_of(REGISTRY["anthropic"].default_base_url), "anthropic"),
    "gemini": (_host_of(REGISTRY["gemini"].default_base_url), "gemini"),
    EMULATOR: (None, None),
}


class UpstreamSpecError(ValueError):
    """An `--upstream` value that cannot be used (the message says why)."""


@dataclass(frozen=True)
class Upstream:
    name: str
    url: str | None                    # base URL without a trailing slash; None: the emulator, not started yet
    fallback_format: str | None = None

    @property
    def label(self) -> str:
        """How messages name it: `upstream openai`, or `the upstream` for the one `--upstream URL` maps."""
        return "the upstream" if self.name == "upstream" else f"upstream {self.name}"

    def target(self, rest: str) -> str:
        """The upstream URL for a request path (and query) below the mount."""
        if rest == "/" or rest.startswith("/?"):
            return self.url + rest[1:]        # the mount itself: the upstream URL as given (no slash added)
        return self.url + (rest if rest.startswith("/") else "/" + rest)


@dataclass(frozen=True)
class Mounts:
    root: Upstream | None
    named: Mapping[str, Upstream]

    @property
    def all(self) -> list[Upstream]:
        return ([self.root] if self.root else []) + list(self.named.values())

    @property
    def needs_emulator(self) -> bool:
        return any(u.name == EMULATOR and u.url is None for u in self.all)

    def with_emulator(self, url: str) -> "Mounts":
        def fill(u: Upstream) -> Upstream:
            return replace(u, url=url.rstrip("/")) if u.name == EMULATOR and u.url is None else u

        return Mounts(None if self.root is None else fill(self.root), {k: fill(u) for k, u in self.named.items()})

    def route(self, path: str) -> tuple[Upstream, str] | None:
        """(upstream, the path below its mount) for a request path, or None when nothing is mounted there."""
        first = path.split("/", 2)[1] if path.startswith("/") and len(path) > 1 else ""
        if first in self.named:
            return self.named[first], path[len(first) + 1:] or "/"
        if self.root is not None:
            return self.root, path
        return None

    def describe(self) -> str:
        """For the first line: `URL` (root), or `/name: URL, ...` (mounted by name)."""
        parts = []
        if self.root is not None:
            parts.append(self._shown(self.root))
        parts += [f"/{n}: {self._shown(u)}" for n, u in self.named.items()]
        return ", ".join(parts)

    @staticmethod
    def _shown(u: Upstream) -> str:
        return f"{u.url} (the built-in emulator)" if u.name == EMULATOR else str(u.url)


def check_url(url: str, allow_insecure: bool = False) -> str | None:
    """Why `url` cannot be an upstream, or None."""
    p = urlsplit(url)
    if p.scheme not in ("http", "https") or not p.hostname:
        return f"{url!r} is not an http:// or https:// URL with a host"
    if p.query or p.fragment:
        return f"{url!r}: an upstream URL has no query or fragment"
    if base_url_problem(url):
        return "the upstream URL holds credentials (user:password@): remove them (the client's own key goes on)"
    if p.scheme == "http" and not is_loopback_host(p.hostname) and not allow_insecure:
        return (f"refusing to forward to plain http:// on {p.hostname}, which is not this machine: the client's "
                f"key would cross the network in clear (use https, or --allow-insecure if you mean it)")
    return None


def _upstream(name: str, url: str | None, allow_insecure: bool) -> Upstream:
    if url is None:
        if name not in BUILTIN:
            raise UpstreamSpecError(f"unknown upstream {name!r}: give a URL, NAME=URL, or a built-in name "
                                    f"({', '.join(BUILTIN)})")
        base, fallback = BUILTIN[name]
        return Upstream(name, base, fallback)
    why = check_url(url, allow_insecure)
    if why:
        raise UpstreamSpecError(why)
    return Upstream(name, url.rstrip("/"), BUILTIN.get(name, (None, None))[1])


def parse_upstreams(values: Sequence[str], allow_insecure: bool = False) -> Mounts:
    """The mounts for these `--upstream` values (none: the built-in emulator at the root)."""
    if not values:
        return Mounts(_upstream(EMULATOR, None, allow_insecure), {})
    specs = []
    for v in values:
        v = v.strip()
        name, sep, url = v.partition("=")
        if sep and "://" not in name:
            if not _NAME.fullmatch(name):
                raise UpstreamSpecError(f"{name!r} cannot name a mount (letters, digits, '.', '_', '-')")
            specs.append((name, url.strip(), True))
        elif "://" in v:
            specs.append(("upstream", v, False))
        else:
            specs.append((v, None, False))
    if len(specs) == 1 and not specs[0][2]:
        name, url, _ = specs[0]
        return Mounts(_upstream(name, url, allow_insecure), {})
    named: dict[str, Upstream] = {}
    for name, url, given in specs:
        if url is not None and not given:
            raise UpstreamSpecError(f"with several upstreams each is mounted by name: write NAME={url}")
        if name in named:
            raise UpstreamSpecError(f"the mount name {name!r} is used twice")
        named[name] = _upstream(name, url, allow_insecure)
    return Mounts(None, named)
