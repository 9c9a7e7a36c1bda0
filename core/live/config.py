"""The providers file, API keys (environment or OS keyring) and secret redaction.

The providers file is TOML (`CONTRACTS.md`, "Provider configuration"):

    [[provider]]
    name = "openai-4o-mini"
    format = "openai-chat"
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"
    # allow_insecure = true   # optional: allow sending the key over plain http:// to a non-loopback host
    # price_as = "openai/gpt-4o-mini"   # optional: price replies as this database model (provider id/model)

    [provider.price]          # optional: this provider's own prices, USD per million tokens (beats the database)
    input = 0.15
    cached_input = 0.075      # optional: defaults to input
    output = 0.60

    [provider.headers]        # optional: extra request headers (`core.live.provider_extras`)
    api-key = { env = "AZURE_OPENAI_API_KEY" }   # read from the environment (or keyring): a secret
    [provider.query]          # optional: extra query parameters, values as in headers
    api-version = "2024-10-21"
    [provider.extra_body]     # optional: merged into the top level of the JSON body
    seed = 42

Keys are never read from or written into this file: `resolve_key` takes them from the environment variable the
provider names, else from the OS keyring (service `streamscope`, user name = the variable's name). Where the OS
offers no keyring (`keyring.errors.NoKeyringError`, e.g. a headless Linux box), keys come from the environment
alone and `keyring_available()` says why.

`tomllib` only reads TOML, so `save_providers` has its own small writer (strings, booleans, integers, floats).
"""
from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.live.provider_extras import (EnvRef, ExtrasError, parse_extra_body, parse_values, values_from_json,
                                      values_to_toml)
from core.wire.formats import FORMATS
from core.wire.scrub import mask_plain_bytes, mask_text, secret_list

KEYRING_SERVICE = "streamscope"
DEMO_KEY = "streamscope-demo-key"   # the emulator accepts any non-empty key; this one is no secret
REDACTED = "[REDACTED]"
#: request/response header names whose values are always secrets (lower case)
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
                            "cookie", "set-cookie", "openai-organization", "openai-project"})
# ... and every header whose name has a key-like word among its parts (X-Auth-Token, apikey, api_key,
# Ocp-Apim-Subscription-Key, x-functions-key, x-amz-security-token); whole words, so that a response's
# x-ratelimit-remaining-tokens stays readable
_SECRET_HEADER_WORDS = frozenset({"key", "apikey", "token", "secret", "password", "passwd", "auth", "signature",
                                  "credential", "credentials"})
_HEADER_WORD = re.compile(r"[-_.\s]+")


def secret_header(name: str) -> bool:
    """Whether a header of this name carries a key: redacted whole in every capture, export and view."""
    low = str(name).lower()
    return low in SECRET_HEADERS or any(w in _SECRET_HEADER_WORDS for w in _HEADER_WORD.split(low))


# every query value named like a key (key, api_key, api-key, access_token, token, secret, password, sig, ...)
_SECRET_QUERY = re.compile(r"([?&][\w.-]*(?:key|token|secret|passw(?:or)?d|auth|sig(?:nature)?)[\w.-]*=)([^&#\s\"']*)",
                           re.I)


class ConfigError(ValueError):
    """The providers file cannot be read or holds something invalid."""


@dataclass(frozen=True, slots=True)
class ProviderPrice:
    """A provider's own prices from `[provider.price]`, in USD per million tokens (`core.live.cost` uses them).

    `cached_input` (cache reads) defaults to `input`; cache writes and reasoning are priced as input and output."""

    input: Decimal
    output: Decimal
    cached_input: Decimal | None = None

    FIELDS = ("input", "cached_input", "output")

    def to_json(self) -> dict[str, str]:
        """Decimal strings ("0.15"), so a price survives a capture without binary-float noise."""
        return {k: format(getattr(self, k), "f") for k in self.FIELDS if getattr(self, k) is not None}

    @classmethod
    def parse(cls, table: Any, where: str = "price") -> "ProviderPrice":
        """From a TOML table or a capture's JSON object; raises ConfigError naming what is wrong."""
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: 'price' must be a table ([provider.price]) with input, output and "
                              f"optionally cached_input, in USD per million tokens")
        unknown = sorted(set(table) - set(cls.FIELDS))
        if unknown:
            raise ConfigError(f"{where}: price: unknown setting(s): {', '.join(map(str, unknown))} "
                              f"(expected {', '.join(cls.FIELDS)})")
        values: dict[str, Decimal] = {}
        for k in cls.FIELDS:
            v = table.get(k)
            if v is None:
                if k != "cached_input":
                    raise ConfigError(f"{where}: price: '{k}' is required (USD per million tokens)")
                continue
            try:
                d = Decimal(str(v)) if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None
            except InvalidOperation:
                d = None
            if d is None or not d.is_finite() or d < 0:
                raise ConfigError(f"{where}: price: '{k}' must be a number of dollars, 0 or more (got {v!r})")
            values[k] = d
        return cls(**values)


def parse_price_as(value: Any, where: str) -> str:
    """`price_as`: "provider-id/model", a model of the price database (the first "/" splits them)."""
    if not isinstance(value, str) or not re.match(r"^[^/\s]+/\S+$", value.strip()):
        raise ConfigError(f"{where}: 'price_as' must be \"provider/model\" as the price database names them, "
                          f"e.g. \"openai/gpt-4o-mini\" (got {value!r})")
    return value.strip()


@dataclass
class ProviderConfig:
    name: str
    format: str
    base_url: str
    model: str
    api_key_env: str = ""            # empty: the provider needs no key (a local Ollama, vLLM, ...)
    allow_insecure: bool = False     # allow a key over plain http:// to a host that is not loopback
    #: a fixed, non-secret key for the built-in demo providers only; never read from or written to the file
    builtin_key: str | None = field(default=None, repr=False, compare=False)
    price: ProviderPrice | None = None   # `[provider.price]`: the provider's own prices (core.live.cost)
    price_as: str = ""                   # "provider/model" priced from the database instead of `model`
    #: `[provider.headers]` / `[provider.query]`: extra request headers and query parameters, each value a string
    #: or an `EnvRef` (read from the environment when the request is built: a secret)
    headers: dict[str, str | EnvRef] = field(default_factory=dict)
    query: dict[str, str | EnvRef] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)   # merged into the top level of the JSON body

    @property
    def is_demo(self) -> bool:
        return self.builtin_key is not None

    def env_refs(self) -> list[tuple[str, str, EnvRef]]:
        """("headers" | "query", name, EnvRef) for each value read from the environment."""
        return [(kind, k, v) for kind, table in (("headers", self.headers), ("query", self.query))
                for k, v in table.items() if isinstance(v, EnvRef)]

    def to_toml_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "format": self.format, "base_url": self.base_url, "model": self.model,
             "api_key_env": self.api_key_env}
        if self.allow_insecure:
            d["allow_insecure"] = True
        if self.price_as:
            d["price_as"] = self.price_as
        if self.price is not None:
            d["price"] = {k: Decimal(v) for k, v in self.price.to_json().items()}
        if self.headers:
            d["headers"] = values_to_toml(self.headers)
        if self.query:
            d["query"] = values_to_toml(self.query)
        if self.extra_body:
            d["extra_body"] = dict(self.extra_body)
        return d

    def to_json(self) -> dict[str, Any]:
        """The provider as a capture stores it (no key, ever)."""
        return {"name": self.name, "format": self.format, "base_url": redact_url(self.base_url), "model": self.model,
                "api_key_env": self.api_key_env, "allow_insecure": self.allow_insecure, "demo": self.is_demo,
                "price": None if self.price is None else self.price.to_json(), "price_as": self.price_as,
                "headers": values_to_toml(self.headers), "query": values_to_toml(self.query),
                "extra_body": self.extra_body}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ProviderConfig":
        try:   # a capture's price is informational: an unreadable one is dropped, the capture still reads
            price = None if d.get("price") is None else ProviderPrice.parse(d["price"])
        except ConfigError:
            price = None
        return cls(name=str(d.get("name", "")), format=str(d.get("format", "")),
                   base_url=str(d.get("base_url", "")), model=str(d.get("model", "")),
                   api_key_env=str(d.get("api_key_env") or ""), allow_insecure=bool(d.get("allow_insecure")),
                   price=price, price_as=str(d.get("price_as") or ""), headers=values_from_json(d.get("headers")),
                   query=values_from_json(d.get("query")),
                   extra_body=dict(d["extra_body"]) if isinstance(d.get("extra_body"), Mapping) else {})


# -- paths ---------------------------------------------------------------------------------------------------
def default_config_path() -> Path:
    """`providers.toml` in the user's config folder (XDG on Linux, Application Support on macOS, APPDATA)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "streamscope" / "providers.toml"


_KEY_PREFIXES = ("sk-", "sk_", "AIza", "xai-", "gsk_", "hf_", "r8_", "pplx-", "nvapi-")


def _looks_like_key(name: str) -> bool:
    """Whether an `api_key_env` value is a pasted key rather than a variable's name: a provider's key prefix, or a
    long run of mixed-case letters and digits (names are words: OPENAI_API_KEY, openai-key)."""
    if name.startswith(_KEY_PREFIXES):
        return True
    return (len(name) >= 32 and re.fullmatch(r"[A-Za-z0-9_\-]+", name) is not None and any(c.isdigit() for c in name)
            and any(c.islower() for c in name) and any(c.isupper() for c in name))


def base_url_problem(url: str) -> str | None:
    """Why a base URL cannot be used, or None. Credentials in it (`http://user:pass@host`) are refused: httpx
    would send them as Basic auth in place of the provider's key, and they would end up in captures."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        return ("base_url holds credentials (user:password@); remove them and put the key in the environment "
                "variable named by api_key_env")
    if parts.fragment or url.rstrip().endswith("#"):
        return "base_url holds a fragment (#...), which no request carries: remove it"
    if _SECRET_QUERY.search("?" + parts.query):
        # (written in the file, it would be sent and kept as it is: a key belongs in the environment)
        return ("base_url holds a key-like query parameter; put it in the provider's [provider.query] table as "
                "{ env = \"NAME\" }")
    return None


# -- reading -------------------------------------------------------------------------------------------------
_KNOWN_KEYS = {"name", "format", "base_url", "model", "api_key_env", "allow_insecure", "price", "price_as",
               "headers", "query", "extra_body"}
_KEY_LIKE = {"api_key", "key", "apikey", "token", "secret", "password"}
# an extra_body field that holds a key: one of those, or a name with a secret's word among its parts (access_token,
# client_secret, metadata.auth_token; not max_tokens), or one ending in a key's name (aws_secret_access_key; not
# OpenAI's prompt_cache_key)
_KEY_LIKE_WORDS = frozenset({"token", "secret", "password", "passwd", "apikey", "credential", "credentials"})
_KEY_LIKE_ENDINGS = ("api_key", "api-key", "access_key", "secret_key", "private_key")


def _key_like_field(name: str) -> bool:
    low = str(name).lower()
    return (low in _KEY_LIKE or low.endswith(_KEY_LIKE_ENDINGS)
            or any(w in _KEY_LIKE_WORDS for w in _HEADER_WORD.split(low)))


# C0 controls and DEL: never part of a URL or variable name; in a name or model only a tab is let through (NUL,
# CR and LF break the request line, a header or the environment lookup later, far from the file)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_BUT_TAB = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def decode_providers_file(data: bytes, source: str) -> str:
    """The text of a providers file: UTF-8, a leading byte-order mark dropped; else a one-line ConfigError
    saying where the first byte that is not UTF-8 is."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"{source}: not UTF-8: byte 0x{data[exc.start]:02x} at line {line}, column {col} "
                          f"(save the file as UTF-8)") from None
    return text[1:] if text.startswith("\ufeff") else text


def _check_base_url(where: str, url: str) -> None:
    """A one-line ConfigError unless `url` is an http(s) URL with a host and a valid port, and nothing else odd."""
    if _CONTROL.search(url) or any(c.isspace() for c in url):
        raise ConfigError(f"{where}: base_url holds a control character or white space ({url!r})")
    if not re.match(r"^https?://[^/\s]+", url, re.I):
        raise ConfigError(f"{where}: base_url must start with http:// or https:// and name a host")
    try:
        parts = urlsplit(url)
        port = parts.port   # (ValueError when it is not a number in 0-65535)
    except ValueError as exc:
        why = "the port is not a number in 1-65535" if "port" in str(exc).lower() else _one_line(exc)
        raise ConfigError(f"{where}: base_url: {why} ({url!r})") from None
    if not parts.hostname:
        raise ConfigError(f"{where}: base_url names no host ({url!r})")
    if port == 0:
        raise ConfigError(f"{where}: base_url: port 0 is not a port one can connect to ({url!r})")


def parse_providers(text: str, source: str = "providers file") -> list[ProviderConfig]:
    """The providers in the TOML `text`, each checked: a one-line ConfigError naming the provider and the field
    for the first thing wrong. Linear in the number of providers."""
    import tomllib

    if text.startswith("\ufeff"):   # a byte-order mark (Windows editors write one): not TOML, and no content
        text = text[1:]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {_one_line(exc)}") from None
    except RecursionError:   # (tomllib recurses once a level of nested arrays or inline tables)
        raise ConfigError(f"{source}: not valid TOML: arrays or tables nested too deeply") from None
    rows = data.get("provider", [])
    if not isinstance(rows, list):
        raise ConfigError(f"{source}: 'provider' must be an array of tables ([[provider]])")
    out: list[ProviderConfig] = []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        where = f"{source}: provider #{i + 1}"
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: not a table")
        secret_keys = sorted(k for k in row if k.lower() in _KEY_LIKE)
        if secret_keys:
            raise ConfigError(f"{where}: {', '.join(secret_keys)}: keys never go in the providers file; name an "
                              f"environment variable in api_key_env{keyring_hint()}")
        for req in ("name", "format", "base_url", "model"):
            if not isinstance(row.get(req), str) or not row[req].strip():
                raise ConfigError(f"{where}: '{req}' is required (a non-empty string)")
        name = row["name"].strip()
        where = f"{source}: provider {name!r}"
        if _CONTROL_BUT_TAB.search(name):
            raise ConfigError(f"{where}: name holds a control character")
        if name in seen:
            raise ConfigError(f"{where}: the name is used twice")
        seen.add(name)
        if row["format"] not in FORMATS:
            raise ConfigError(f"{where}: unknown format {row['format']!r} (expected one of: {', '.join(FORMATS)})")
        base_url = row["base_url"].strip()
        _check_base_url(where, base_url)
        if base_url_problem(base_url):
            raise ConfigError(f"{where}: {base_url_problem(base_url)}")
        if _CONTROL_BUT_TAB.search(row["model"].strip()):
            raise ConfigError(f"{where}: model holds a control character ({row['model']!r})")
        env = row.get("api_key_env", "")
        if not isinstance(env, str):
            raise ConfigError(f"{where}: 'api_key_env' must be a string")
        if _CONTROL.search(env) or "=" in env:   # (not echoed: it may be a key pasted with its line end)
            raise ConfigError(f"{where}: api_key_env is no environment variable name")
        if _looks_like_key(env.strip()):
            raise ConfigError(f"{where}: api_key_env looks like a key itself, not the name of the environment "
                              f"variable (or keyring entry) that holds one: put the key in a variable and name "
                              f"that here (the file never holds keys)")
        insecure = row.get("allow_insecure", False)
        if not isinstance(insecure, bool):
            raise ConfigError(f"{where}: 'allow_insecure' must be true or false")
        unknown = sorted(set(row) - _KNOWN_KEYS)
        if unknown:
            raise ConfigError(f"{where}: unknown setting(s): {', '.join(unknown)}")
        price = None if "price" not in row else ProviderPrice.parse(row["price"], where)
        price_as = "" if "price_as" not in row else parse_price_as(row["price_as"], where)
        headers, query, extra_body = parse_extras(row, where)
        out.append(ProviderConfig(name=name, format=row["format"], base_url=base_url, model=row["model"].strip(),
                                  api_key_env=env.strip(), allow_insecure=insecure, price=price, price_as=price_as,
                                  headers=headers, query=query, extra_body=extra_body))
    return out


def secret_named(kind: str, name: str) -> bool:
    """Whether a header or query parameter of this name carries a key (its value must come from the
    environment, never the providers file)."""
    if kind == "headers":
        return secret_header(name)
    return bool(_SECRET_QUERY.match("?" + name + "="))


def parse_extras(row: Mapping[str, Any], where: str):
    """(headers, query, extra_body) of one provider's table; a ConfigError names what is wrong. A key-like
    header or query parameter (`api-key`, `Authorization`, `?key=`, ...) must name an environment variable."""
    try:
        headers = parse_values(row.get("headers", {}), "headers")
        query = parse_values(row.get("query", {}), "query")
        extra_body = parse_extra_body(row.get("extra_body", {}))
    except ExtrasError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    for kind, table in (("headers", headers), ("query", query)):
        for k, v in table.items():
            if isinstance(v, str) and secret_named(kind, k):
                raise ConfigError(f"{where}: {kind}.{k}: keys never go in the providers file; write "
                                  f'{k} = {{ env = "NAME" }} to read it from an environment variable')
    leaked = sorted(_key_like_paths(extra_body))
    if leaked:
        raise ConfigError(f"{where}: extra_body: {', '.join(leaked)}: keys never go in the providers file (send a "
                          f"key in a header or query value read from the environment)")
    return headers, query, extra_body


def _key_like_paths(obj: Any, path: str = "") -> Iterable[str]:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            here = f"{path}.{k}" if path else str(k)
            if _key_like_field(k):
                yield here
            yield from _key_like_paths(v, here)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _key_like_paths(v, f"{path}[{i}]")


def load_providers(path: str | os.PathLike | None = None) -> list[ProviderConfig]:
    """The providers in `path` (default: `default_config_path()`).

    A missing default file is no error (no providers configured yet: `[]`); a missing explicit path is."""
    explicit = path is not None
    p = Path(path) if explicit else default_config_path()
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"{p}: no such file") from None
        return []
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return parse_providers(decode_providers_file(data, str(p)), str(p))


# -- writing -------------------------------------------------------------------------------------------------
def _toml_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, Decimal):   # a price: "0.15", never "1E-7" (not TOML)
        return format(v, "f")
    if isinstance(v, Mapping):   # an inline table: `price = {input = 0.15, output = 0.6}` is [provider.price]
        return "{" + ", ".join(f"{k if _BARE_KEY.match(k) else _toml_string(k)} = {toml_value(x)}"
                               for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as a TOML value")


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else _toml_string(k)


def dumps_providers(providers: Iterable[ProviderConfig]) -> str:
    lines = ["# StreamScope providers. Keys are never stored here: api_key_env names the environment variable",
             "# (or OS keyring entry) that holds each provider's key; a header or query value written",
             "# { env = \"NAME\" } is read from that environment variable.", ""]
    for p in providers:
        lines.append("[[provider]]")
        tables = []
        for k, v in p.to_toml_dict().items():
            if k in ("headers", "query", "extra_body"):   # their own sections, one entry a line
                tables.append((k, v))
            else:
                lines.append(f"{_key(k)} = {toml_value(v)}")
        for k, table in tables:
            lines.append("")
            lines.append(f"[provider.{k}]")
            lines += [f"{_key(name)} = {toml_value(v)}" for name, v in table.items()]
        lines.append("")
    return "\n".join(lines)


def save_providers(providers: Iterable[ProviderConfig], path: str | os.PathLike | None = None) -> Path:
    """Write the providers file atomically (validated by reading it back first); returns the path."""
    providers = [p for p in providers if not p.is_demo]
    text = dumps_providers(providers)
    parse_providers(text, "providers to save")  # the same rules as loading: names unique, formats known
    p = Path(path) if path is not None else default_config_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, p)
    return p


# -- demo providers ------------------------------------------------------------------------------------------
#: what each demo provider's replies are priced as: a real model of the price database speaking that format
#: (the demo "models" are emulator scenario names such as `text`, which no price list knows)
DEMO_PRICE_AS = {"demo-openai-chat": "openai/gpt-4o-mini", "demo-openai-responses": "openai/gpt-4.1-mini",
                 "demo-anthropic": "anthropic/claude-haiku-4-5", "demo-gemini": "google/gemini-2.5-flash"}


def demo_providers(base_url: str, model: str = "text",
                   price_as: Mapping[str, str] = DEMO_PRICE_AS) -> list[ProviderConfig]:
    """The four built-in demo providers on the emulator at `base_url` ("http://127.0.0.1:PORT"), each priced
    as the reference model `price_as` names for it."""
    base = base_url.rstrip("/")
    return [dataclasses.replace(p, price_as=price_as.get(p.name, "")) for p in [
        ProviderConfig("demo-openai-chat", "openai-chat", base + "/v1", model, "", builtin_key=DEMO_KEY),
        ProviderConfig("demo-openai-responses", "openai-responses", base + "/v1", model, "", builtin_key=DEMO_KEY),
        ProviderConfig("demo-anthropic", "anthropic", base, model, "", builtin_key=DEMO_KEY),
        ProviderConfig("demo-gemini", "gemini", base, model, "", builtin_key=DEMO_KEY),
    ]]


DEMO_NAMES = ("demo-openai-chat", "demo-openai-responses", "demo-anthropic", "demo-gemini")


# -- keys ----------------------------------------------------------------------------------------------------
_keyring_state: tuple[bool, str] | None = None


def keyring_available(refresh: bool = False) -> tuple[bool, str]:
    """(True, backend name) when the OS keyring can be used, else (False, why: keys come from the environment)."""
    global _keyring_state
    if _keyring_state is not None and not refresh:
        return _keyring_state
    try:
        import keyring
        import keyring.errors
    except ImportError:
        _keyring_state = (False, "the keyring package is not installed; keys come from environment variables only")
        return _keyring_state
    try:
        kr = keyring.get_keyring()
        name = f"{type(kr).__module__}.{type(kr).__name__}"
        if "fail" in type(kr).__module__ or getattr(kr, "priority", 1) <= 0:
            _keyring_state = (False, "no OS keyring is available here (no Secret Service / Keychain / Credential "
                                     "Manager); keys come from environment variables only")
        else:
            _keyring_state = (True, name)
    except Exception as exc:  # noqa: BLE001 - any backend failure means: environment only
        _keyring_state = (False, f"the OS keyring failed ({type(exc).__name__}: {exc}); keys come from "
                                 f"environment variables only")
    return _keyring_state


def _keyring_get(user: str) -> str | None:
    ok, _ = keyring_available()
    if not ok:
        return None
    try:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, user) or None
    except Exception:  # noqa: BLE001 - NoKeyringError, locked keyring, D-Bus failure: environment only
        return None


def set_keyring_key(api_key_env: str, key: str) -> None:
    """Store a key in the OS keyring under `api_key_env` (for the settings dialog). Raises when unavailable."""
    ok, why = keyring_available()
    if not ok:
        raise ConfigError(why)
    import keyring

    keyring.set_password(KEYRING_SERVICE, api_key_env, key)


def delete_keyring_key(api_key_env: str) -> None:
    ok, _ = keyring_available()
    if not ok:
        return
    import keyring
    import keyring.errors

    try:
        keyring.delete_password(KEYRING_SERVICE, api_key_env)
    except keyring.errors.PasswordDeleteError:
        pass


def keyring_hint(what: str = "the key") -> str:
    """" (or store the key in the OS keyring)" where there is an OS keyring; "" where there is none, so that no
    message suggests a keyring that cannot be used."""
    return f" (or store {what} in the OS keyring)" if keyring_available()[0] else ""


def resolve_env_value(name: str) -> str | None:
    """The value of the environment variable `name` (surrounding white space dropped), else the OS keyring
    entry of that name; None when neither holds one. Keys and `{ env = "NAME" }` values are read this way."""
    value = os.environ.get(name)
    if value and value.strip():
        return value.strip()
    return _keyring_get(name)


def resolve_extras(provider: ProviderConfig) -> tuple[dict[tuple[str, str], str], list[str]]:
    """({("headers" | "query", name): value} for each `{ env = "NAME" }` value that resolves, [the variables
    that are not set]). The values are secrets."""
    values: dict[tuple[str, str], str] = {}
    missing: list[str] = []
    for kind, name, ref in provider.env_refs():
        v = resolve_env_value(ref.name)
        if v is None:
            missing.append(ref.name)
        else:
            values[(kind, name)] = v
    return values, list(dict.fromkeys(missing))


def resolve_key(provider: ProviderConfig) -> str | None:
    """The provider's key: the demo's fixed key, else the named environment variable, else the OS keyring.

    None when the provider names no variable or nothing holds a key (the provider is then not sent)."""
    if provider.builtin_key:
        return provider.builtin_key
    env = provider.api_key_env
    if not env:
        return None
    return resolve_env_value(env)


def key_source(provider: ProviderConfig) -> str:
    """Where the key would come from: "demo", "env", "keyring", "none" (no key needed) or "missing"."""
    if provider.builtin_key:
        return "demo"
    if not provider.api_key_env:
        return "none"
    if (os.environ.get(provider.api_key_env) or "").strip():
        return "env"
    if _keyring_get(provider.api_key_env):
        return "keyring"
    return "missing"


# -- redaction -----------------------------------------------------------------------------------------------
def request_secrets(headers, url: str = "") -> list[str]:
    """The secrets a client's own request carries (a tap forwards them untouched and masks them everywhere
    else): the values of the secret headers (`Authorization` also without its scheme word) and of key-like
    query parameters."""
    pairs = list(headers.items()) if isinstance(headers, Mapping) else [tuple(p) for p in headers]
    out: list[str] = []
    for k, v in pairs:
        if secret_header(k) and str(v).strip():
            v = str(v).strip()
            out.append(v)
            scheme, _, rest = v.partition(" ")
            if rest.strip() and scheme.isalpha():
                out.append(rest.strip())
    out += [m.group(2) for m in _SECRET_QUERY.finditer(url) if m.group(2)]
    return list(dict.fromkeys(out))


def redact_text(text: str, secrets: Iterable[str] | str | None = ()) -> str:
    text = mask_text(text, secret_list(secrets), REDACTED)[0]
    return _SECRET_QUERY.sub(lambda m: m.group(1) + REDACTED if m.group(2) else m.group(0), text)


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/?#\s]*)@")    # scheme://userinfo@ (to the last @)
USERINFO_REDACTED = "****"    # (not "[REDACTED]": brackets in a URL's authority make it unreadable, as an IPv6 host)


def _redact_userinfo(m: re.Match) -> str:
    user, colon, password = m.group(2).partition(":")
    if not colon or not password:       # a lone name there is a token (`https://TOKEN@host`, as git takes one)
        return m.group(0) if user in ("", USERINFO_REDACTED) else f"{m.group(1)}{USERINFO_REDACTED}{colon}@"
    if _looks_like_key(user) or REDACTED in user:
        user = USERINFO_REDACTED
    return f"{m.group(1)}{user}:{USERINFO_REDACTED}@"


def redact_url(url: str, secrets: Iterable[str] | str | None = ()) -> str:
    """`url` with the secrets, key-like query values and the credentials of its userinfo part redacted
    (`https://user:****@host`; a lone name there, `https://TOKEN@host`, is taken for a token: `https://****@host`).
    The result still parses as a URL."""
    return _USERINFO.sub(_redact_userinfo, redact_text(url, secrets))


def redact_headers(headers, secrets: Iterable[str] | str | None = ()):
    """Headers (a mapping or a list of pairs) with secret header values replaced; same shape back."""
    pairs = list(headers.items()) if isinstance(headers, Mapping) else [tuple(p) for p in headers]
    out = []
    for k, v in pairs:
        if secret_header(k):
            v = REDACTED
        else:
            v = redact_text(str(v), secrets)
        out.append((k, v))
    return dict(out) if isinstance(headers, Mapping) else out


def redact_json(obj: Any, secrets: Iterable[str] | str | None = ()) -> Any:
    """A JSON value with every secret removed from every string (keys included)."""
    secrets = secret_list(secrets)
    if isinstance(obj, str):
        return redact_text(obj, secrets) if secrets else obj
    if isinstance(obj, Mapping):
        return {redact_json(k, secrets): redact_json(v, secrets) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_json(x, secrets) for x in obj]
    return obj


def mask_bytes(data: bytes, secrets: Iterable[str] | str | None = ()) -> tuple[bytes, int]:
    """`data` with each secret's bytes overwritten by `*` of the same length (offsets survive); and the count.
    A secret quoted cut short is masked too (`core.wire.scrub.secret_spans`)."""
    return mask_plain_bytes(data, secrets)


def redact(value, secrets: Iterable[str] | str | None = ()):
    """Redact a string, bytes, a header mapping / list of pairs, or any JSON value.

    Secret header values (Authorization, x-api-key, x-goog-api-key, ...) and `?key=` query values are always
    replaced; every string in `secrets` is removed wherever it occurs."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, (bytes, bytearray)):
        return mask_bytes(bytes(value), secrets)[0]
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        return redact_headers(value, secrets)
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in value):
        return redact_headers(value, secrets)
    return redact_json(value, secrets)


__all__ = ["EnvRef", "keyring_hint", "resolve_env_value", "resolve_extras", "parse_extras", "secret_named",
           "ProviderConfig", "ProviderPrice", "DEMO_PRICE_AS", "ConfigError", "DEMO_NAMES", "DEMO_KEY", "default_config_path",
           "load_providers", "save_providers", "parse_providers", "dumps_providers", "demo_providers",
           "resolve_key", "key_source", "keyring_available", "set_keyring_key", "delete_keyring_key", "redact",
           "redact_text", "redact_url", "redact_headers", "redact_json", "mask_bytes", "request_secrets"]
