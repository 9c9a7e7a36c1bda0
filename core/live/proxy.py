"""Which proxy a request goes through: the environment's (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`),
except that a loopback target never goes through one.

Why loopback is always direct: a key for `http://127.0.0.1` (the emulator, a local Ollama, a tap) is sent in
clear, which is fine on the machine itself but not through a proxy that may sit on another host. A non-loopback
`http://` target with a key is refused anyway (`core.live.request.insecure_transport`), and an `https://` target
reaches the proxy only as an encrypted CONNECT tunnel, so the key never crosses a plain-http hop to another host.

The transport builds its client from `proxy_mounts()` (httpx with `trust_env=False`, so this module is the one
place that reads the proxy environment) and a run records `proxy_note(url)`, which the Request tab shows.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from core.live.config import redact_url
from core.live.request import is_loopback_host

# Names that always mean this machine (mounted as direct in the client; resolution is not needed to bypass a proxy).
LOOPBACK_PATTERNS = ("all://localhost", "all://*.localhost", "all://127.0.0.1", "all://[::1]")


def environment_proxies(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """scheme -> proxy URL from the environment ('http', 'https', 'all'), and 'no' for NO_PROXY.

    As curl and the stdlib read them: `<scheme>_proxy` in either case, the lowercase name winning."""
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    for name in sorted(env, key=lambda n: n.islower()):   # uppercase first, so lowercase overwrites
        if name.lower().endswith("_proxy") and env[name].strip():
            out[name[:-6].lower()] = env[name].strip()
    return out


def _no_proxy_entries(no_proxy: str) -> list[str]:
    """Host names of NO_PROXY ('*' kept; '.x' and '*.x' as 'x'; ports and CIDR ranges left out)."""
    out = []
    for e in (e.strip().lower() for e in no_proxy.split(",")):
        if not e or "/" in e:
            continue
        if e == "*":
            out.append("*")
            continue
        e = e[2:] if e.startswith("*.") else e.lstrip(".")
        out.append(e.rsplit(":", 1)[0] if e.count(":") == 1 else e)
    return out


def _bypassed(host: str, no_proxy: str) -> bool:
    h = host.lower().strip("[]")
    return any(e == "*" or h == e or h.endswith("." + e) for e in _no_proxy_entries(no_proxy))


def proxy_for(url: str, env: Mapping[str, str] | None = None) -> str | None:
    """The proxy URL a request to `url` goes through, or None when it goes direct."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host or is_loopback_host(host) or host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return None
    proxies = environment_proxies(env)
    if _bypassed(host, proxies.get("no", "")):
        return None
    return proxies.get(parts.scheme.lower()) or proxies.get("all") or None


def proxy_note(url: str, env: Mapping[str, str] | None = None) -> str | None:
    """One line for the Request tab on how the request travels when the environment names a proxy (credentials
    redacted); None when it names none (every request then goes direct, which needs no note)."""
    proxies = environment_proxies(env)
    if not any(k != "no" for k in proxies):
        return None
    proxy = proxy_for(url, env)
    if proxy is not None:
        return f"sent through the proxy {redact_userinfo(proxy)} (from the environment)"
    host = urlsplit(url).hostname or ""
    if is_loopback_host(host) or host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return "sent directly: a loopback target never goes through the environment's proxy"
    return "sent directly: the host is in NO_PROXY"


def redact_userinfo(url: str) -> str:
    """`http://user:pass@host:3128` -> `http://[REDACTED]@host:3128` (a proxy's credentials are secrets)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return redact_url(url)
    host = parts.netloc.rsplit("@", 1)[1]
    return redact_url(parts._replace(netloc=f"[REDACTED]@{host}").geturl())


def proxy_mounts(env: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """URL pattern -> proxy URL (None: direct), in httpx's mount-pattern syntax, for the client's transports."""
    proxies = environment_proxies(env)
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https"):
        p = proxies.get(scheme) or proxies.get("all")
        if p:
            mounts[f"{scheme}://"] = p if "://" in p else f"http://{p}"
    if not mounts:
        return {}
    for entry in _no_proxy_entries(proxies.get("no", "")):
        if entry == "*":
            return {}
        mounts[f"all://*{entry}"] = None     # httpx: "*x" matches x and its subdomains, as NO_PROXY means
    for pattern in LOOPBACK_PATTERNS:
        mounts[pattern] = None
    return mounts
