"""One prompt spec, four request shapes.

`build_request(provider, spec, key)` maps a `PromptSpec` to the HTTP request of the provider's wire format:

- `openai-chat`: `POST {base}/chat/completions`, `messages` (system first), `tools: [{type: function, function}]`,
  `stream: true` and always `stream_options.include_usage: true`; thinking -> `reasoning_effort`.
- `openai-responses`: `POST {base}/responses`, `instructions`, `input` (a list of role messages), flat `tools`
  (`strict: false`: the Responses API otherwise defaults function tools to strict mode), `max_output_tokens`;
  thinking -> `reasoning: {effort, summary: auto}`.
- `anthropic`: `POST {base}/v1/messages`, top-level `system`, `max_tokens` (required), tools with
  `input_schema`, `thinking: {type: enabled, budget_tokens}`.
- `gemini`: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, `systemInstruction`, `contents`
  with roles `user` / `model`, `tools: [{functionDeclarations}]`, `generationConfig` (thinking ->
  `thinkingConfig`). JSON-Schema keywords Gemini rejects are adapted or dropped, and each change is noted.

Every adaptation is explained in `HttpRequest.notes`, so the GUI can show it beside the request. The key goes in
the format's own header (`Authorization: Bearer`, `x-api-key`, `x-goog-api-key`), never in the URL.
"""
from __future__ import annotations

import copy
import ipaddress
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from core.wire.formats import REGISTRY, unknown_format_message
from core.live.config import ProviderConfig, redact_headers, redact_json, redact_url
from core.live.tools import normalize_tool

USER_AGENT = "StreamScope/0.1"
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class PromptSpec:
    """What the user asks, once, for every provider.

    history: earlier turns, each `(role, text)` or `{"role": ..., "content": ...}` with role `user` or
    `assistant`. tools: each `{"name", "description", "parameters": <JSON Schema>}` (an OpenAI-shaped
    `{"type": "function", "function": {...}}` or an Anthropic-shaped `input_schema` is accepted too).
    tool_choice: None (the provider's default), "auto", "none", "required" (any tool), or a tool's name.
    """

    user: str
    system: str = ""
    history: Sequence[Any] = ()
    temperature: float | None = None
    max_tokens: int | None = 1024
    tools: Sequence[Mapping[str, Any]] = ()
    tool_choice: str | None = None
    thinking: bool = False
    thinking_budget: int = 1024
    choices: int = 1          # several replies to the one prompt: OpenAI Chat Completions' `n`

    def to_json(self) -> dict:
        return {"user": self.user, "system": self.system, "history": [list(t) if isinstance(t, tuple) else t
                                                                      for t in self.history],
                "temperature": self.temperature, "max_tokens": self.max_tokens,
                "tools": [dict(t) for t in self.tools], "tool_choice": self.tool_choice,
                "thinking": self.thinking, "thinking_budget": self.thinking_budget, "choices": self.choices}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "PromptSpec":
        return cls(user=d.get("user", ""), system=d.get("system", "") or "",
                   history=tuple(tuple(t) if isinstance(t, list) else t for t in d.get("history") or ()),
                   temperature=d.get("temperature"), max_tokens=d.get("max_tokens", 1024),
                   tools=tuple(d.get("tools") or ()), tool_choice=d.get("tool_choice"),
                   thinking=bool(d.get("thinking")), thinking_budget=int(d.get("thinking_budget") or 1024),
                   choices=int(d.get("choices") or 1))


@dataclass
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: dict
    notes: list[str] = field(default_factory=list)

    def content(self) -> bytes:
        """The exact bytes sent as the request body."""
        return json.dumps(self.body, ensure_ascii=False).encode("utf-8")

    def redacted(self, secrets: Sequence[str] = ()) -> "HttpRequest":
        """A copy safe to show, store and export: secret headers, `?key=` and every given secret removed."""
        return HttpRequest(self.method, redact_url(self.url, secrets), redact_headers(self.headers, secrets),
                           redact_json(self.body, secrets), [redact_url(n, secrets) for n in self.notes])

    def to_json(self) -> dict:
        return {"method": self.method, "url": self.url, "headers": [[k, v] for k, v in self.headers.items()],
                "body": self.body, "notes": list(self.notes)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "HttpRequest":
        h = d.get("headers") or []
        headers = dict(h.items()) if isinstance(h, Mapping) else {k: v for k, v in h}
        return cls(d.get("method", "POST"), d.get("url", ""), headers, d.get("body") or {}, list(d.get("notes") or []))


# -- normalizing the spec --------------------------------------------------------------------------------------
def _turns(spec: PromptSpec) -> list[tuple[str, str]]:
    out = []
    for item in spec.history:
        if isinstance(item, Mapping):
            role, text = item.get("role"), item.get("content")
        else:
            role, text = item
        role = {"model": "assistant", "ai": "assistant"}.get(str(role), str(role))
        if role not in ("user", "assistant"):
            raise ValueError(f"a history turn's role must be user or assistant, not {role!r}")
        out.append((role, str(text)))
    out.append(("user", spec.user))
    return out


def _effort(budget: int) -> str:
    return "low" if budget < 2048 else "medium" if budget < 8192 else "high"


def _choice_kind(choice: str | None, tools: list[dict]) -> tuple[str | None, str | None]:
    """(kind, tool name): kind in None, auto, none, required, tool."""
    if choice is None or choice == "":
        return None, None
    c = choice.strip()
    if c.lower() in ("auto", "none"):
        return c.lower(), None
    if c.lower() in ("required", "any"):
        return "required", None
    if not any(t["name"] == c for t in tools):
        raise ValueError(f"tool_choice names {c!r}, which is not one of the tools")
    return "tool", c


# -- the four shapes -------------------------------------------------------------------------------------------
def build_request(provider: ProviderConfig, spec: PromptSpec, key: str | None) -> HttpRequest:
    """The HTTP request for one provider (with its key in the format's header; `key=None` sends none)."""
    tools = [normalize_tool(t) for t in spec.tools]
    notes: list[str] = []
    kind, tool_name = _choice_kind(spec.tool_choice, tools)
    if kind is not None and not tools:
        notes.append(f"tool_choice {spec.tool_choice!r} left out: no tools are defined")
        kind = tool_name = None
    builder = _BUILDERS.get(provider.format)
    if builder is None:
        raise ValueError(unknown_format_message(provider.format))
    fmt = REGISTRY[provider.format]
    headers, body = builder(provider, spec, key, tools, kind, tool_name, notes)
    if key:
        headers[fmt.auth_header] = fmt.auth_value(key)
    url = _join(provider.base_url, fmt.endpoint.format(model=quote(_bare_model(provider.model), safe="-._~")))
    if spec.choices > 1 and provider.format != "openai-chat":
        notes.append(f"{spec.choices} choices asked: only OpenAI Chat Completions takes `n`; this API answers "
                     "with one reply")
    base_headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
                    "Accept-Encoding": "identity", "User-Agent": USER_AGENT}
    base_headers.update(headers)
    return HttpRequest("POST", url, base_headers, body, notes)


def _bare_model(model: str) -> str:
    """Gemini model names may be written `models/NAME` (as its API lists them); the URL takes NAME."""
    return model[len("models/"):] if model.startswith("models/") else model


def _join(base: str, path: str) -> str:
    return base.rstrip("/") + path


def _openai_chat(p, spec, key, tools, kind, tool_name, notes):
    messages = []
    if spec.system:
        messages.append({"role": "system", "content": spec.system})
    messages += [{"role": r, "content": t} for r, t in _turns(spec)]
    body: dict[str, Any] = {"model": p.model, "messages": messages, "stream": True,
                            "stream_options": {"include_usage": True}}
    if spec.choices > 1:
        body["n"] = spec.choices
    if spec.temperature is not None:
        body["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        if (urlsplit(p.base_url).hostname or "").endswith("api.openai.com"):
            body["max_completion_tokens"] = spec.max_tokens
            notes.append("max output tokens sent as max_completion_tokens (OpenAI's reasoning models reject "
                         "max_tokens)")
        else:
            body["max_tokens"] = spec.max_tokens
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                           "parameters": t["parameters"]}} for t in tools]
    if kind == "tool":
        body["tool_choice"] = {"type": "function", "function": {"name": tool_name}}
    elif kind is not None:
        body["tool_choice"] = kind
    if spec.thinking:
        body["reasoning_effort"] = _effort(spec.thinking_budget)
        notes.append(f"thinking budget {spec.thinking_budget} sent as reasoning_effort "
                     f"{body['reasoning_effort']!r} (Chat Completions takes an effort, not a budget; reasoning "
                     f"text is not streamed by OpenAI itself)")
    return {}, body


def _openai_responses(p, spec, key, tools, kind, tool_name, notes):
    body: dict[str, Any] = {"model": p.model}
    if spec.system:
        body["instructions"] = spec.system
    body["input"] = [{"role": r, "content": t} for r, t in _turns(spec)]
    body["stream"] = True
    if spec.temperature is not None:
        body["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        body["max_output_tokens"] = spec.max_tokens
    if tools:
        body["tools"] = [{"type": "function", "name": t["name"], "description": t["description"],
                          "parameters": t["parameters"], "strict": False} for t in tools]
        notes.append("function tools sent with strict: false (the Responses API defaults to strict schemas, "
                     "which need additionalProperties: false and every property required)")
    if kind == "tool":
        body["tool_choice"] = {"type": "function", "name": tool_name}
    elif kind is not None:
        body["tool_choice"] = kind
    if spec.thinking:
        body["reasoning"] = {"effort": _effort(spec.thinking_budget), "summary": "auto"}
        notes.append(f"thinking budget {spec.thinking_budget} sent as reasoning.effort "
                     f"{body['reasoning']['effort']!r} with summary 'auto' (reasoning summaries are streamed)")
    return {}, body


def _anthropic(p, spec, key, tools, kind, tool_name, notes):
    max_tokens = spec.max_tokens
    if max_tokens is None:
        max_tokens = 1024
        notes.append("max_tokens is required by Anthropic: 1024 sent")
    body: dict[str, Any] = {"model": p.model, "max_tokens": max_tokens}
    if spec.system:
        body["system"] = spec.system
    body["messages"] = [{"role": r, "content": t} for r, t in _turns(spec)]
    body["stream"] = True
    if spec.temperature is not None:
        if spec.thinking:
            notes.append(f"temperature {spec.temperature} left out: Anthropic allows no temperature with "
                         f"extended thinking")
        else:
            body["temperature"] = spec.temperature
    if tools:
        body["tools"] = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                         for t in tools]
    if kind is not None:
        if spec.thinking and kind in ("required", "tool"):
            notes.append("tool_choice forcing a tool is not allowed with extended thinking: sent as auto")
            kind = "auto"
        body["tool_choice"] = ({"type": "tool", "name": tool_name} if kind == "tool"
                               else {"type": "any" if kind == "required" else kind})
    if spec.thinking:
        budget = spec.thinking_budget
        if budget < 1024:
            notes.append(f"thinking budget {budget} raised to 1024, Anthropic's minimum")
            budget = 1024
        if body["max_tokens"] <= budget:
            body["max_tokens"] = budget + max_tokens
            notes.append(f"max_tokens raised to {body['max_tokens']} (Anthropic's max_tokens must exceed the "
                         f"thinking budget {budget})")
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return {"anthropic-version": ANTHROPIC_VERSION}, body


def _gemini(p, spec, key, tools, kind, tool_name, notes):
    body: dict[str, Any] = {}
    if spec.system:
        body["systemInstruction"] = {"parts": [{"text": spec.system}]}
    body["contents"] = [{"role": "model" if r == "assistant" else "user", "parts": [{"text": t}]}
                        for r, t in _turns(spec)]
    if tools:
        decls = []
        for t in tools:
            d: dict[str, Any] = {"name": t["name"], "description": t["description"]}
            params = t["parameters"]
            if isinstance(params, Mapping) and params.get("type", "object") == "object" \
                    and not params.get("properties"):
                notes.append(f"tool {t['name']}: no parameters, so no 'parameters' sent (Gemini rejects an "
                             f"object schema without properties)")
            else:
                adapted, changes = adapt_schema_for_gemini(params)
                d["parameters"] = adapted
                notes += [f"tool {t['name']}: {c}" for c in changes]
            decls.append(d)
        body["tools"] = [{"functionDeclarations": decls}]
    if kind is not None:
        cfg: dict[str, Any] = {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}[kind]}
        if kind == "tool":
            cfg["allowedFunctionNames"] = [tool_name]
        body["toolConfig"] = {"functionCallingConfig": cfg}
    gen: dict[str, Any] = {}
    if spec.temperature is not None:
        gen["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        gen["maxOutputTokens"] = spec.max_tokens
    if spec.thinking:
        gen["thinkingConfig"] = {"thinkingBudget": spec.thinking_budget, "includeThoughts": True}
    if gen:
        body["generationConfig"] = gen
    return {}, body


_BUILDERS = {"openai-chat": _openai_chat, "openai-responses": _openai_responses, "anthropic": _anthropic,
             "gemini": _gemini}


# -- Gemini's schema subset --------------------------------------------------------------------------------------
_GEMINI_KEYS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
                "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
                "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}


def adapt_schema_for_gemini(schema: Any) -> tuple[Any, list[str]]:
    """A JSON Schema rewritten into the OpenAPI subset Gemini's `parameters` accepts; and what was changed.

    `$ref` is inlined from `$defs`/`definitions`, `oneOf` becomes `anyOf`, `const` becomes a one-value `enum`,
    a type list with "null" becomes `nullable`, `exclusiveMinimum`/`exclusiveMaximum` become the inclusive
    bounds, a single-schema `allOf` is merged; everything else Gemini rejects (`additionalProperties`,
    `$schema`, `patternProperties`, `not`, `if`, ...) is dropped. Each change is listed with its path."""
    changes: list[str] = []
    root = copy.deepcopy(schema)
    defs = {}
    if isinstance(root, Mapping):
        defs.update(root.get("$defs") or {})
        defs.update(root.get("definitions") or {})
    out = _adapt(root, "#", defs, changes, ())
    return out, changes


def _adapt(s: Any, path: str, defs: dict, changes: list[str], seen: tuple) -> Any:
    if not isinstance(s, Mapping):
        return s
    s = dict(s)
    if "$ref" in s:
        ref = s.pop("$ref")
        name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None
        if name in defs and name not in seen:
            changes.append(f"{path}: $ref {ref} inlined")
            merged = dict(defs[name])
            merged.update(s)
            return _adapt(merged, path, defs, changes, seen + (name,))
        changes.append(f"{path}: $ref {ref} dropped (unresolvable or recursive)")
    for k in ("$defs", "definitions"):
        if k in s:
            s.pop(k)
            changes.append(f"{path}: {k} removed (inlined where referenced)")
    if "allOf" in s:
        parts = s.pop("allOf")
        if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], Mapping):
            merged = dict(parts[0])
            merged.update(s)
            s = merged
            changes.append(f"{path}: allOf with one schema merged")
            return _adapt(s, path, defs, changes, seen)
        changes.append(f"{path}: allOf dropped (Gemini has no allOf)")
    if "oneOf" in s:
        s["anyOf"] = s.pop("oneOf") if "anyOf" not in s else s["anyOf"]
        s.pop("oneOf", None)
        changes.append(f"{path}: oneOf sent as anyOf")
    if "const" in s:
        c = s.pop("const")
        s.setdefault("enum", [c])
        changes.append(f"{path}: const sent as a one-value enum")
    t = s.get("type")
    if isinstance(t, list):
        kinds = [x for x in t if x != "null"]
        if len(kinds) == 1:
            s["type"] = kinds[0]
            if "null" in t:
                s["nullable"] = True
            changes.append(f"{path}: type {t} sent as {kinds[0]!r}" + (" with nullable" if "null" in t else ""))
        else:
            s.pop("type")
            s["anyOf"] = [{"type": k} for k in kinds]
            if "null" in t:
                s["nullable"] = True
            changes.append(f"{path}: type list {t} sent as anyOf")
    for ex, incl in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if ex in s:
            v = s.pop(ex)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                s.setdefault(incl, v)
                changes.append(f"{path}: {ex} sent as the inclusive {incl}")
            else:
                changes.append(f"{path}: {ex} dropped")
    if "enum" in s and not all(isinstance(v, str) for v in s["enum"] or []):
        vals = s.pop("enum")
        changes.append(f"{path}: enum {vals!r} dropped (Gemini accepts string enums only)")
    for k in sorted(set(s) - _GEMINI_KEYS):
        s.pop(k)
        changes.append(f"{path}: {k} dropped (Gemini rejects it)")
    if isinstance(s.get("properties"), Mapping):
        s["properties"] = {name: _adapt(sub, f"{path}/properties/{name}", defs, changes, seen)
                           for name, sub in s["properties"].items()}
    if "items" in s:
        if isinstance(s["items"], list):
            changes.append(f"{path}: tuple-form items sent as its first schema")
            s["items"] = s["items"][0] if s["items"] else {}
        s["items"] = _adapt(s["items"], f"{path}/items", defs, changes, seen)
    if isinstance(s.get("anyOf"), list):
        s["anyOf"] = [_adapt(sub, f"{path}/anyOf/{i}", defs, changes, seen) for i, sub in enumerate(s["anyOf"])]
    return s


# -- transport safety ----------------------------------------------------------------------------------------------
def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    h = host.strip("[]").lower()
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def insecure_transport(provider: ProviderConfig, url: str, key: str | None) -> str | None:
    """Why sending `key` to `url` is refused (plain http:// to a non-loopback host), or None when it is fine."""
    if not key or provider.allow_insecure:
        return None
    parts = urlsplit(url)
    if parts.scheme.lower() == "https" or is_loopback_host(parts.hostname):
        return None
    return (f"refusing to send the API key over plain {parts.scheme}:// to {parts.hostname}: use https, or set "
            f"allow_insecure = true for this provider if you really mean it")


# -- curl ------------------------------------------------------------------------------------------------------------
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEY_HEADER_FORMS = {"authorization": "Bearer {}", "x-api-key": "{}", "x-goog-api-key": "{}", "api-key": "{}"}


def curl_command(request: HttpRequest, key_env: str | None) -> str:
    """A shell command that repeats the request with curl; the key is referenced as `$KEY_ENV`, never written."""
    ref = f"${{{key_env}}}" if key_env and _ENV_NAME.match(key_env) else "<API_KEY>"
    url = re.sub(r"([?&]key=)[^&#]*", lambda m: m.group(1) + ref, request.url)
    parts = ["curl -N -sS -X " + shlex.quote(request.method) + " " +
             (f'"{url}"' if ref in url else shlex.quote(url))]
    for k, v in request.headers.items():
        form = _KEY_HEADER_FORMS.get(k.lower())
        if form is not None:
            parts.append(f'-H "{k}: {form.format(ref)}"')
        else:
            parts.append("-H " + shlex.quote(f"{k}: {v}"))
    parts.append("--data-binary " + shlex.quote(request.content().decode("utf-8")))
    return " \\\n  ".join(parts)
