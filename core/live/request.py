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

Sampling options map per format: stop sequences (`stop` / `stop_sequences` / `generationConfig.stopSequences`;
the Responses API has none), `top_p` (`top_p` / `generationConfig.topP`) and `seed` (OpenAI Chat `seed`, Gemini
`generationConfig.seed`; the Responses and Anthropic APIs have none). What an API cannot take is left out, with a
note.

Then the provider's own extras (`[provider.headers]`, `[provider.query]`, `[provider.extra_body]`,
`core.live.provider_extras`): headers added (replacing a built one of the same name), query parameters added to
the URL, and `extra_body` merged into the top level of the body (tables key by key), each replacement noted.

Every adaptation is explained in `HttpRequest.notes`, so the GUI can show it beside the request. The key goes in
the format's own header (`Authorization: Bearer`, `x-api-key`, `x-goog-api-key`), never in the URL.

Earlier turns (`PromptSpec.conversation`, a `core.live.conversation.Conversation`, and the older `history` of
text pairs) are first made portable to the provider's format (what cannot cross is dropped, with a note), then
mapped in its API's own shape:

- `openai-chat`: an assistant message with `tool_calls` (`{id, type: function, function: {name, arguments}}`),
  then one `{"role": "tool", "tool_call_id", "content"}` message per result (an error result's content says so);
- `openai-responses`: `reasoning` items (id, summary, `encrypted_content`) before the `function_call` items
  (`call_id`, `name`, `arguments`, and the item `id`) they led to, then `function_call_output` items; with
  thinking on, `include: ["reasoning.encrypted_content"]` asks for the encrypted reasoning a stateless
  continuation needs;
- `anthropic`: `thinking` blocks with their `signature` and `redacted_thinking` blocks passed back unchanged and
  first, `tool_use` blocks with `input`, then a user message whose `tool_result` blocks (with `is_error`) come
  before any text;
- `gemini`: `model` contents whose parts keep their `thoughtSignature` where it arrived (`thought` parts, text,
  `functionCall`), then a `user` content of `functionResponse` parts (`{name, response}`; a result that is not a
  JSON object is sent as `{"result": ...}`, an error as `{"error": ...}`), the results of another API's calls in
  the calls' order (Gemini pairs them by name and order; their ids are not sent).
"""
from __future__ import annotations

import copy
import ipaddress
import json
import math
import re
import shlex
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from core.wire.formats import REGISTRY, unknown_format_message
from core.live.config import (REDACTED, EnvRef, ProviderConfig, base_url_problem, redact_headers, redact_json,
                              redact_url, resolve_extras)
from core.live.provider_extras import merge_body
from core.live.conversation import Conversation, ConversationError, Part, Turn, portable
from core.live.tools import normalize_tool
from core.wire.jsonfast import loads as parse_json   # a ValueError, never a RecursionError, on deep input
from core.wire.request_prompt import request_prompt

USER_AGENT = "StreamScope/0.1"
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class PromptSpec:
    """What the user asks, once, for every provider.

    history: earlier turns, each `(role, text)` or `{"role": ..., "content": ...}` with role `user` or
    `assistant`. conversation: earlier turns with everything else (tool calls and results, thinking with
    signatures, reasoning items), a `core.live.conversation.Conversation`; it follows `history`. `user` is the
    new user text; it may be empty when the conversation already ends with a user turn (tool results).
    tools: each `{"name", "description", "parameters": <JSON Schema>}` (an OpenAI-shaped
    `{"type": "function", "function": {...}}` or an Anthropic-shaped `input_schema` is accepted too).
    tool_choice: None (the provider's default), "auto", "none", "required" (any tool), or a tool's name.
    stop: stop sequences (at most `MAX_STOP`); top_p: nucleus sampling, 0 to 1 (None: the provider's default);
    seed: a sampling seed, where the API takes one (None: none sent).
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
    conversation: Conversation | None = None
    stop: Sequence[str] = ()
    top_p: float | None = None
    seed: int | None = None

    def to_json(self) -> dict:
        out = {"user": self.user, "system": self.system, "history": [list(t) if isinstance(t, tuple) else t
                                                                     for t in self.history],
               "temperature": self.temperature, "max_tokens": self.max_tokens,
               "tools": [dict(t) for t in self.tools], "tool_choice": self.tool_choice,
               "thinking": self.thinking, "thinking_budget": self.thinking_budget, "choices": self.choices}
        if self.stop:
            out["stop"] = list(self.stop)
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.seed is not None:
            out["seed"] = self.seed
        if self.conversation is not None and self.conversation.turns:
            out["conversation"] = self.conversation.to_json()
        return out

    def dialogue(self) -> Conversation:
        """Every turn this spec sends, in order: the history, the conversation, then the user text (merged into a
        trailing user turn of tool results; left out when empty and the conversation already ends with the
        user)."""
        try:
            conv = Conversation.from_history(self.history)
        except ConversationError as exc:
            raise ValueError(str(exc)) from None
        if self.conversation is not None:
            conv = Conversation(conv.turns + self.conversation.turns)
        last = conv.last
        if self.user or last is None or last.role != "user":
            conv = conv.add_user_text(self.user)
        return conv

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "PromptSpec":
        return cls(user=d.get("user", ""), system=d.get("system", "") or "",
                   history=tuple(tuple(t) if isinstance(t, list) else t for t in d.get("history") or ()),
                   temperature=d.get("temperature"), max_tokens=d.get("max_tokens", 1024),
                   tools=tuple(d.get("tools") or ()), tool_choice=d.get("tool_choice"),
                   thinking=bool(d.get("thinking")), thinking_budget=int(d.get("thinking_budget") or 1024),
                   choices=int(d.get("choices") or 1),
                   conversation=None if not d.get("conversation") else Conversation.from_json(d["conversation"]),
                   stop=tuple(str(x) for x in d.get("stop") or () if isinstance(x, str)),
                   top_p=d["top_p"] if isinstance(d.get("top_p"), (int, float)) and not isinstance(d["top_p"], bool)
                   else None,
                   seed=d["seed"] if isinstance(d.get("seed"), int) and not isinstance(d["seed"], bool) else None)


MAX_STOP = 4   # OpenAI takes up to 4 stop sequences (Gemini 5; Anthropic more): the lowest limit, said up front


def check_sampling(spec: "PromptSpec") -> None:
    """ValueError (one line) when the temperature, stop sequences, top_p or seed cannot be sent to any API."""
    t = spec.temperature
    if t is not None and not (math.isfinite(t) and t >= 0):   # NaN would be written as `NaN`: not JSON
        raise ValueError(f"temperature must be a finite number, 0 or more (got {t})")
    if spec.top_p is not None and not 0 <= spec.top_p <= 1:
        raise ValueError(f"top_p must be between 0 and 1 (got {spec.top_p})")
    if spec.seed is not None and not -(2 ** 63) <= spec.seed < 2 ** 63:
        raise ValueError("seed must fit in 64 bits")
    if len(spec.stop) > MAX_STOP:
        raise ValueError(f"at most {MAX_STOP} stop sequences (got {len(spec.stop)})")
    if any(not s for s in spec.stop):
        raise ValueError("a stop sequence is empty")


def parse_stop_text(text: str) -> tuple[str, ...]:
    r"""Stop sequences as one line of text (the prompt row, `--stop`): separated by `|`; `\n`, `\t`, `\|` and
    `\\` stand for a line break, a tab, a bar and a backslash. Empty pieces are dropped."""
    out, cur, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            cur.append({"n": "\n", "t": "\t", "|": "|", "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
            continue
        if c == "|":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur))
    return tuple(s for s in out if s)


def stop_text(stop: Sequence[str]) -> str:
    """The inverse of `parse_stop_text`."""
    return "|".join(s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n").replace("\t", "\\t")
                    for s in stop)


def recorded_spec(format_name: str, body: Any) -> "PromptSpec | None":
    """The prompt a recorded request body carries (its system text and last user message, nothing else), for a
    recording that kept no spec of its own (a cassette, a browser's HAR, a tap's exchange); None when it has no
    user text in that format's shape."""
    found = request_prompt(format_name, body)
    if found is None:
        return None
    system, user = found
    return PromptSpec(user=user, system=system, max_tokens=None)


@dataclass
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: dict
    notes: list[str] = field(default_factory=list)
    #: ("headers" | "query", name) whose values were read from the environment: secrets, masked by name in
    #: `redacted()` whatever their length (not stored: a redacted request holds only the mask)
    secret_params: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def content(self) -> bytes:
        """The exact bytes sent as the request body."""
        return json.dumps(self.body, ensure_ascii=False).encode("utf-8")

    def redacted(self, secrets: Sequence[str] = ()) -> "HttpRequest":
        """A copy safe to show, store and export: secret headers, `?key=`, the values read from the environment
        and every given secret removed."""
        headers = dict(self.headers)
        url = self.url
        for kind, name in self.secret_params:
            if kind == "headers" and name in headers:
                headers[name] = REDACTED
            elif kind == "query":
                url = _mask_query(url, name)
        return HttpRequest(self.method, redact_url(url, secrets), redact_headers(headers, secrets),
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
def build_request(provider: ProviderConfig, spec: PromptSpec, key: str | None,
                  env_values: Mapping[tuple[str, str], str] | None = None) -> HttpRequest:
    """The HTTP request for one provider (with its key in the format's header; `key=None` sends none).

    env_values: the values of the provider's `{ env = "NAME" }` headers and query parameters, by (kind, name)
    (`core.live.config.resolve_extras`; None: read them now); one that is missing is left out, with a note."""
    check_sampling(spec)
    tools = [normalize_tool(t) for t in spec.tools]
    notes: list[str] = []
    kind, tool_name = _choice_kind(spec.tool_choice, tools)
    if kind is not None and not tools:
        notes.append(f"tool_choice {spec.tool_choice!r} left out: no tools are defined")
        kind = tool_name = None
    problem = base_url_problem(provider.base_url)
    if problem:
        raise ValueError(f"{provider.name}: {problem}")
    builder = _BUILDERS.get(provider.format)
    if builder is None:
        raise ValueError(unknown_format_message(provider.format))
    fmt = REGISTRY[provider.format]
    conv, crossing = portable(spec.dialogue(), provider.format)
    notes += crossing
    headers, body = builder(provider, spec, conv, tools, kind, tool_name, notes)
    if key:
        headers[fmt.auth_header] = fmt.auth_value(key)
    url = _join(provider.base_url, fmt.endpoint.format(model=quote(_bare_model(provider.model), safe="-._~")))
    if spec.choices > 1 and provider.format != "openai-chat":
        notes.append(f"{spec.choices} choices asked: only OpenAI Chat Completions takes `n`; this API answers "
                     "with one reply")
    base_headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
                    "Accept-Encoding": "identity", "User-Agent": USER_AGENT}
    base_headers.update(headers)
    if env_values is None:
        env_values = resolve_extras(provider)[0]
    secret: list[tuple[str, str]] = []
    base_headers = _with_headers(provider, base_headers, env_values, secret, notes)
    url = _with_query(provider, url, env_values, secret, notes)
    if provider.extra_body:
        replaced = merge_body(body, provider.extra_body)
        notes.append("extra_body from the providers file merged into the body: " + ", ".join(provider.extra_body)
                     + (f" (replacing the built {', '.join(replaced)})" if replaced else ""))
    return HttpRequest("POST", url, base_headers, body, notes, tuple(secret))


def _extra_value(provider, kind: str, name: str, value, env_values, secret: list, notes: list) -> str | None:
    if not isinstance(value, EnvRef):
        return value
    got = env_values.get((kind, name))
    if got is None:
        notes.append(f"{'header' if kind == 'headers' else 'query parameter'} {name} left out: the environment "
                     f"variable {value.name} is not set")
        return None
    secret.append((kind, name))
    return got


def _with_headers(provider, headers: dict[str, str], env_values, secret: list, notes: list) -> dict[str, str]:
    """The provider's `[provider.headers]` added; one named like a built header (any case) replaces it."""
    for name, value in provider.headers.items():
        v = _extra_value(provider, "headers", name, value, env_values, secret, notes)
        if v is None:
            continue
        same = [k for k in headers if k.lower() == name.lower()]
        for k in same:
            del headers[k]
        if same:
            notes.append(f"header {name} from the providers file replaces the built one")
        headers[name] = v
    return headers


def _with_query(provider, url: str, env_values, secret: list, notes: list) -> str:
    """The provider's `[provider.query]` added to the URL; one named like a parameter already there replaces it."""
    if not provider.query:
        return url
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    for name, value in provider.query.items():
        v = _extra_value(provider, "query", name, value, env_values, secret, notes)
        if v is None:
            continue
        if any(k == name for k, _ in pairs):
            notes.append(f"query parameter {name} from the providers file replaces the built one")
            pairs = [(k, x) for k, x in pairs if k != name]
        pairs.append((name, v))
    return urlunsplit(parts._replace(query=urlencode(pairs, quote_via=quote, safe="-._~")))


def _mask_query(url: str, name: str) -> str:
    """`url` with the value of the query parameter `name` replaced by the redaction mark."""
    key = re.escape(quote(name, safe="-._~"))
    return re.sub(r"([?&]" + key + r"=)[^&#]*", lambda m: m.group(1) + REDACTED, url)


def _bare_model(model: str) -> str:
    """Gemini model names may be written `models/NAME` (as its API lists them); the URL takes NAME."""
    return model[len("models/"):] if model.startswith("models/") else model


def _join(base: str, path: str) -> str:
    """The endpoint's path (and query) after the base URL's path, and the base URL's own query after the
    endpoint's (Azure's `...?api-version=2024-10-21`): joined as text it went after the query."""
    if "?" not in base:
        return base.rstrip("/") + path
    base, _, base_query = base.partition("?")
    path, _, query = path.partition("?")
    query = "&".join(q for q in (query, base_query) if q)
    return base.rstrip("/") + path + (f"?{query}" if query else "")


def _openai_chat(p, spec, conv, tools, kind, tool_name, notes):
    messages = []
    if spec.system:
        messages.append({"role": "system", "content": spec.system})
    messages += chat_messages(conv, notes)
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
    if spec.stop:
        body["stop"] = list(spec.stop)
    if spec.top_p is not None:
        body["top_p"] = spec.top_p
    if spec.seed is not None:
        body["seed"] = spec.seed
    if spec.thinking:
        body["reasoning_effort"] = _effort(spec.thinking_budget)
        notes.append(f"thinking budget {spec.thinking_budget} sent as reasoning_effort "
                     f"{body['reasoning_effort']!r} (Chat Completions takes an effort, not a budget; reasoning "
                     f"text is not streamed by OpenAI itself)")
    return {}, body


def _openai_responses(p, spec, conv, tools, kind, tool_name, notes):
    body: dict[str, Any] = {"model": p.model}
    if spec.system:
        body["instructions"] = spec.system
    body["input"] = responses_input(conv, notes)
    body["stream"] = True
    if spec.temperature is not None:
        body["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        body["max_output_tokens"] = spec.max_tokens
    if spec.top_p is not None:
        body["top_p"] = spec.top_p
    _not_taken(spec, notes, "the Responses API", stop=True, seed=True)
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
        body["include"] = ["reasoning.encrypted_content"]
        notes.append(f"thinking budget {spec.thinking_budget} sent as reasoning.effort "
                     f"{body['reasoning']['effort']!r} with summary 'auto' (reasoning summaries are streamed)")
        notes.append("include: reasoning.encrypted_content asked, so the reasoning items can be passed back on the "
                     "next turn without server-side storage")
    return {}, body


def _anthropic(p, spec, conv, tools, kind, tool_name, notes):
    max_tokens = spec.max_tokens
    if max_tokens is None:
        max_tokens = 1024
        notes.append("max_tokens is required by Anthropic: 1024 sent")
    body: dict[str, Any] = {"model": p.model, "max_tokens": max_tokens}
    if spec.system:
        body["system"] = spec.system
    body["messages"] = anthropic_messages(conv, notes)
    body["stream"] = True
    if spec.temperature is not None:
        if spec.thinking:
            notes.append(f"temperature {spec.temperature} left out: Anthropic allows no temperature with "
                         f"extended thinking")
        else:
            body["temperature"] = spec.temperature
    if spec.stop:
        body["stop_sequences"] = list(spec.stop)
    if spec.top_p is not None:
        if spec.thinking and spec.top_p < 0.95:
            notes.append(f"top_p {spec.top_p} left out: with extended thinking Anthropic allows top_p only from "
                         f"0.95 to 1")
        else:
            body["top_p"] = spec.top_p
            if "temperature" in body:
                notes.append("temperature and top_p both sent: Anthropic advises setting one, and its newer models "
                             "refuse both")
    _not_taken(spec, notes, "the Anthropic Messages API", seed=True)
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


def _gemini(p, spec, conv, tools, kind, tool_name, notes):
    body: dict[str, Any] = {}
    if spec.system:
        body["systemInstruction"] = {"parts": [{"text": spec.system}]}
    body["contents"] = gemini_contents(conv)
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
    if spec.stop:
        gen["stopSequences"] = list(spec.stop)
    if spec.top_p is not None:
        gen["topP"] = spec.top_p
    if spec.seed is not None:
        gen["seed"] = spec.seed
    if spec.thinking:
        gen["thinkingConfig"] = {"thinkingBudget": spec.thinking_budget, "includeThoughts": True}
    if gen:
        body["generationConfig"] = gen
    return {}, body


def _not_taken(spec: PromptSpec, notes: list[str], api: str, stop: bool = False, seed: bool = False) -> None:
    """Notes for the sampling options this API has no field for (they are left out)."""
    if stop and spec.stop:
        notes.append(f"stop sequences left out: {api} takes none")
    if seed and spec.seed is not None:
        notes.append(f"seed {spec.seed} left out: {api} takes no seed")


# -- the conversation in each API's shape -----------------------------------------------------------------------
def _texts(parts) -> str:
    return "".join(p.text for p in parts if p.type == "text")


def _args_object(arguments: str | None) -> Any:
    """A call's argument text as the JSON value Anthropic's `input` and Gemini's `args` take (an object)."""
    try:
        value = parse_json(arguments or "{}")
    except (ValueError, RecursionError):
        return {"_unparsed_arguments": arguments}
    return value if isinstance(value, dict) else {"value": value}


def _error_text(p: Part) -> str:
    """A failed tool's result where the API has no error flag: the text says so."""
    return f"Error: {p.text}" if p.is_error and not p.text.lower().startswith("error") else p.text


def _openai_user_turn(turn: Turn, out: list[dict], result) -> int:
    """A user turn in the OpenAI formats: one item per tool result (`result(part)`), then the text as a user
    message (the results must follow the calls directly). Returns how many results were errors."""
    out += [result(r) for r in turn.tool_results]
    text = [p for p in turn.parts if p.type == "text"]
    if text or not turn.tool_results:
        out.append({"role": "user", "content": _texts(text)})
    return sum(r.is_error for r in turn.tool_results)


def chat_messages(conv: Conversation, notes: list[str]) -> list[dict]:
    out: list[dict] = []
    errors = 0
    for turn in conv.turns:
        if turn.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": _texts(turn.parts) or None}
            calls = turn.tool_calls
            if calls:
                msg["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments or "{}"}}
                                     for c in calls]
            elif msg["content"] is None:
                msg["content"] = ""
            out.append(msg)
            continue
        errors += _openai_user_turn(turn, out, lambda r: {"role": "tool", "tool_call_id": r.id,
                                                         "content": _error_text(r)})
    if errors:
        notes.append(f"{errors} error result(s) sent as tool messages whose content starts with 'Error:' (Chat "
                     "Completions has no error flag)")
    return out


def responses_input(conv: Conversation, notes: list[str]) -> list[dict]:
    out: list[dict] = []
    errors = 0
    for turn in conv.turns:
        if turn.role == "assistant":
            for p in turn.parts:
                if p.type == "reasoning":
                    item: dict[str, Any] = {"type": "reasoning", "summary": (
                        [{"type": "summary_text", "text": p.text}] if p.text else [])}
                    if p.id:
                        item["id"] = p.id
                    if p.data:
                        item["encrypted_content"] = p.data
                    out.append(item)
                elif p.type == "text":
                    out.append({"role": "assistant", "content": p.text})
                elif p.type == "tool_call":
                    item = {"type": "function_call", "call_id": p.id, "name": p.name,
                            "arguments": p.arguments or "{}"}
                    if p.item_id:
                        item["id"] = p.item_id
                    out.append(item)
            continue
        errors += _openai_user_turn(turn, out, lambda r: {"type": "function_call_output", "call_id": r.id,
                                                         "output": _error_text(r)})
    if errors:
        notes.append(f"{errors} error result(s) sent as function_call_output text starting with 'Error:' (the "
                     "Responses API has no error flag)")
    return out


def anthropic_messages(conv: Conversation, notes: list[str] | None = None) -> list[dict]:
    """The conversation as Anthropic messages. An assistant turn with nothing left to send (its thinking dropped
    as another API's, its text empty) is left out, with a note: Anthropic rejects an empty message other than the
    final one, and merges the user turns on either side into one."""
    out: list[dict] = []
    left_out: list[int] = []
    for ti, turn in enumerate(conv.turns):
        plain = len(turn.parts) == 1 and turn.parts[0].type == "text"
        if plain and (turn.role == "user" or turn.parts[0].text.strip()):
            # a text-only turn stays a plain string, as most clients send it
            out.append({"role": turn.role, "content": turn.parts[0].text})
            continue
        blocks: list[dict] = []
        if turn.role == "assistant":
            for p in turn.parts:
                if p.type == "thinking":
                    blocks.append({"type": "thinking", "thinking": p.text, "signature": p.signature or ""})
                elif p.type == "redacted_thinking":
                    blocks.append({"type": "redacted_thinking", "data": p.data or ""})
                elif p.type == "text":
                    if p.text.strip():   # Anthropic rejects empty and white-space-only text blocks
                        blocks.append({"type": "text", "text": p.text})
                elif p.type == "tool_call":
                    blocks.append({"type": "tool_use", "id": p.id, "name": p.name,
                                   "input": _args_object(p.arguments)})
            if not blocks:
                left_out.append(ti)
                continue
        else:
            for r in turn.tool_results:   # tool_result blocks first: Anthropic wants them before any text
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": r.id, "content": r.text}
                if r.is_error:
                    block["is_error"] = True
                blocks.append(block)
            blocks += [{"type": "text", "text": p.text} for p in turn.parts if p.type == "text" and p.text.strip()]
        out.append({"role": turn.role, "content": blocks})
    if left_out and notes is not None:
        notes.append(f"{len(left_out)} assistant turn(s) left out (turn {', '.join(map(str, left_out))} of the "
                     "conversation, counting from 0): nothing in them can be sent to Anthropic, which rejects an "
                     "empty message (\"all messages must have non-empty content except for the optional final "
                     "assistant message\") and merges the user turns on either side into one")
    return out


def _function_response(r: Part) -> dict:
    try:
        value = parse_json(r.text)
    except (ValueError, RecursionError):
        value = None
    if r.is_error:
        return {"error": value if isinstance(value, dict) else r.text}
    return value if isinstance(value, dict) else {"result": r.text if value is None else value}


def _in_call_order(results: Sequence[Part], order: Mapping[str, int]) -> list[Part]:
    """The results with those answering a call of `order` (call id -> the call's position) moved into the calls'
    order; a result that answers none of them keeps its place."""
    slots = [i for i, r in enumerate(results) if r.id in order]
    out = list(results)
    for i, r in zip(slots, sorted((results[i] for i in slots), key=lambda r: order[r.id])):
        out[i] = r
    return out


def gemini_contents(conv: Conversation) -> list[dict]:
    out: list[dict] = []
    call_ids: set[str] = set()   # Gemini's own call ids, echoed on their responses
    # Another API's call ids are not sent (Gemini would not know them), so Gemini pairs those calls' responses by
    # name and order: the results are sent in the order of the calls they answer (matched by id), as an id-pairing
    # API (Anthropic, OpenAI) lets them come in any order. {call id: its position in the previous model turn}
    order: dict[str, int] = {}
    for turn in conv.turns:
        parts: list[dict] = []
        if turn.role == "assistant":
            order = {}
            for p in turn.parts:
                if p.type in ("text", "thinking"):
                    part: dict[str, Any] = {"text": p.text}
                    if p.type == "thinking":
                        part["thought"] = True
                elif p.type == "tool_call":
                    fc: dict[str, Any] = {"name": p.name, "args": _args_object(p.arguments)}
                    if p.id and p.origin == "gemini":
                        fc["id"] = p.id
                        call_ids.add(p.id)
                    elif p.id:
                        order.setdefault(p.id, len(order))
                    part = {"functionCall": fc}
                else:
                    continue
                if p.signature:
                    part["thoughtSignature"] = p.signature
                parts.append(part)
            out.append({"role": "model", "parts": parts or [{"text": ""}]})
            continue
        for r in _in_call_order(turn.tool_results, order):
            fr: dict[str, Any] = {"name": r.name or "", "response": _function_response(r)}
            if r.id and r.id in call_ids:
                fr["id"] = r.id
            parts.append({"functionResponse": fr})
        order = {}
        parts += [{"text": p.text} for p in turn.parts if p.type == "text"]
        out.append({"role": "user", "parts": parts or [{"text": ""}]})
    return out


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
    """True when `host` is this machine: a loopback address, or a `localhost` name that resolves only to loopback.

    A name is loopback by what it resolves to, not by its spelling: `x.localhost` counts only when every address
    it resolves to is a loopback one. Other names are not resolved (that would block on DNS for every remote
    provider), so they count as not loopback: the conservative answer for the insecure-transport rule."""
    if not host:
        return False
    h = host.strip("[]").lower().rstrip(".")
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        pass
    if h and all(c in "0123456789abcdefx." for c in h):
        # IPv4's short and hex forms (`127.1`, `0x7f.1`), as the system reads them when it binds or connects
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h)).is_loopback
        except OSError:
            pass
    if h != "localhost" and not h.endswith(".localhost"):
        return False
    try:
        infos = socket.getaddrinfo(h, None)
    except (OSError, UnicodeError):
        return False
    addrs = {info[4][0] for info in infos}
    return bool(addrs) and all(ipaddress.ip_address(a.split("%", 1)[0]).is_loopback for a in addrs)


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


def curl_command(request: HttpRequest, key_env: str | None, provider: ProviderConfig | None = None) -> str:
    """A shell command that repeats the request with curl; the key is referenced as `$KEY_ENV`, never written, and
    so is each of the `provider`'s `{ env = "NAME" }` header and query values (`${NAME}`)."""
    ref = f"${{{key_env}}}" if key_env and _ENV_NAME.match(key_env) else "<API_KEY>"
    url = re.sub(r"([?&]key=)[^&#]*", lambda m: m.group(1) + ref, request.url)
    env_headers: dict[str, str] = {}
    for kind, name, env in (provider.env_refs() if provider is not None else ()):
        var = f"${{{env.name}}}"
        if kind == "headers":
            env_headers[name.lower()] = var
        else:
            key = re.escape(quote(name, safe="-._~"))
            url = re.sub(r"([?&]" + key + r"=)[^&#]*", lambda m, v=var: m.group(1) + v, url)
    expands = "${" in url
    parts = ["curl -N -sS -X " + shlex.quote(request.method) + " " +
             (f'"{_dq(url)}"' if expands else shlex.quote(url))]
    for k, v in request.headers.items():
        form = _KEY_HEADER_FORMS.get(k.lower())
        if k.lower() in env_headers:
            parts.append(f'-H "{_dq(k)}: {env_headers[k.lower()]}"')
        elif form is not None:
            parts.append(f'-H "{k}: {form.format(ref)}"')
        else:
            parts.append("-H " + shlex.quote(f"{k}: {v}"))
    fmt = REGISTRY.get(provider.format) if provider is not None and key_env else None
    if fmt is not None and fmt.auth_header.lower() not in {k.lower() for k in request.headers}:
        # the key was not set when the request was built (it was not sent): the command still names its variable
        parts.append(f'-H "{fmt.auth_header}: {fmt.auth_value(ref)}"')
    parts.append("--data-binary " + shlex.quote(request.content().decode("utf-8")))
    return " \\\n  ".join(parts)


def _dq(text: str) -> str:
    """Text for inside a double-quoted shell word where only our own `${VAR}` references may expand."""
    out = re.sub(r'([\\"`])', r"\\\1", text)
    # a `$` that does not start one of our references is escaped
    return re.sub(r"\$(?!\{[A-Za-z_][A-Za-z0-9_]*\})", r"\\$", out)
