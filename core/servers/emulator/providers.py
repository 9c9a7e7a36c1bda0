"""Each provider's own request handling: authentication, request validation, error bodies, response headers.

`parse_request(format, headers, query, body_bytes, path_model)` returns either a `Parsed` request (model,
conversation, format options) or a `ProviderErrorResponse` answered exactly as that provider would: OpenAI
`{"error": {"message", "type", "param", "code"}}`, Anthropic `{"type": "error", "error": {"type", "message"},
"request_id"}`, Gemini `{"error": {"code", "message", "status"}}`.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from core.servers.emulator.responder import Conversation, ToolSpec
from core.wire.jsonfast import without_lone_surrogates
from core.wire.script import ScriptIds, seed_of


@dataclass
class ProviderErrorResponse(Exception):
    status: int
    body: dict
    headers: dict = field(default_factory=dict)


@dataclass
class Parsed:
    model: str
    conversation: Conversation
    stream: bool = True
    options: dict = field(default_factory=dict)   # encoder options (include_usage, obfuscation)
    body: Any = None


def _h(headers, name: str) -> str | None:
    v = headers.get(name)
    return v if v is None else str(v)


# -- error bodies --------------------------------------------------------------------------------------------------

def openai_error(status: int, message: str, type_: str = "invalid_request_error", param=None, code=None,
                 headers: dict | None = None) -> ProviderErrorResponse:
    return ProviderErrorResponse(status, {"error": {"message": message, "type": type_, "param": param, "code": code}},
                     headers or {})


def anthropic_error(status: int, type_: str, message: str, headers: dict | None = None,
                    details: dict | None = None) -> ProviderErrorResponse:
    """Anthropic's error body; `details` (`{"error_code": ...}`) goes in `error.details`, where the SDK reads it."""
    rid = "req_011C" + ScriptIds(seed=seed_of(message, time.time_ns())).token("r", 20)
    h = {"request-id": rid}
    h.update(headers or {})
    err: dict = {"type": type_, "message": message}
    if details:
        err["details"] = details
    return ProviderErrorResponse(status, {"type": "error", "error": err, "request_id": rid}, h)


_GSTATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
            405: "METHOD_NOT_ALLOWED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def gemini_error(status: int, message: str, details: list | None = None, headers: dict | None = None) -> ProviderErrorResponse:
    err: dict = {"code": status, "message": message, "status": _GSTATUS.get(status, "UNKNOWN")}
    if details:
        err["details"] = details
    return ProviderErrorResponse(status, {"error": err}, headers or {})


def not_found(fmt: str, method: str, path: str) -> ProviderErrorResponse:
    if fmt == "anthropic":
        return anthropic_error(404, "not_found_error", "Not Found")
    if fmt == "gemini":
        return gemini_error(404, f"The requested URL {path} was not found on this server.")
    return openai_error(404, f"Invalid URL ({method} {path})")


def method_not_allowed(fmt: str, method: str, path: str) -> ProviderErrorResponse:
    if fmt == "anthropic":
        return anthropic_error(405, "invalid_request_error", f"Method Not Allowed: {method} {path}")
    if fmt == "gemini":
        return gemini_error(405, f"Method Not Allowed: {method} {path}")
    return openai_error(405, f"Invalid method for URL ({method} {path})")


def rate_limited(fmt: str, model: str) -> ProviderErrorResponse:
    if fmt == "anthropic":
        return anthropic_error(
            429, "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50 requests per minute. For details, "
            "refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current "
            "usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
            {"retry-after": "1", "anthropic-ratelimit-requests-limit": "50",
             "anthropic-ratelimit-requests-remaining": "0",
             "anthropic-ratelimit-requests-reset": _iso(time.time() + 1)})
    if fmt == "gemini":
        return gemini_error(
            429, "You exceeded your current quota, please check your plan and billing details. For more information "
            "on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
            [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}], {"retry-after": "1"})
    return openai_error(
        429, f"Rate limit reached for {model} in organization org-streamscope on requests per min (RPM): Limit 3, "
        "Used 3, Requested 1. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to "
        "learn more.", "requests", None, "rate_limit_exceeded",
        {"retry-after": "1", "x-ratelimit-limit-requests": "3", "x-ratelimit-remaining-requests": "0",
         "x-ratelimit-reset-requests": "1s"})


def server_error(fmt: str) -> ProviderErrorResponse:
    if fmt == "anthropic":
        return anthropic_error(500, "api_error", "Internal server error")
    if fmt == "gemini":
        return gemini_error(500, "An internal error has occurred. Please retry or report in "
                                 "https://developers.generativeai.google/guide/troubleshooting")
    return openai_error(500, "The server had an error while processing your request. Sorry about that!",
                        "server_error")


#: the largest request body each provider takes (Anthropic: 32 MB for the Messages API; Google: 20 MiB), and
#: the emulator's own for the OpenAI endpoints; a larger body is answered with the provider's own error
REQUEST_LIMITS = {"openai-chat": 32 * 1024 * 1024, "openai-responses": 32 * 1024 * 1024,
                  "anthropic": 32_000_000, "gemini": 20 * 1024 * 1024}
#: how deep a request body's JSON may nest (a real request is a few levels; tool schemas a few dozen)
MAX_NESTING = 128


def request_too_large(fmt: str, size: int | None) -> ProviderErrorResponse:
    """What each provider answers to a body over its limit (`size`: the body's length when known)."""
    limit = REQUEST_LIMITS[fmt]
    if fmt == "anthropic":
        return anthropic_error(413, "request_too_large",
                               "Request exceeds the maximum allowed number of bytes. The maximum request size is "
                               "32 MB for standard API requests.")
    if fmt == "gemini":
        return gemini_error(400, f"Request payload size exceeds the limit: {limit} bytes.")
    got = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return openai_error(413, f"Request too large: the request body is {got}; the maximum is {limit:,} bytes.",
                        code="request_too_large")


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# -- authentication ------------------------------------------------------------------------------------------------

def authenticate(fmt: str, headers, query) -> None:
    """Raise the provider's own 401 when no key was sent. Any non-empty key is accepted."""
    if fmt in ("openai-chat", "openai-responses"):
        auth = (_h(headers, "authorization") or "").strip()
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        if not key:   # Azure OpenAI's own header
            key = (_h(headers, "api-key") or "").strip()
        if not key:
            raise openai_error(
                401, "You didn't provide an API key. You need to provide your API key in an Authorization header "
                "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank "
                "username) if you're accessing the API from your browser and are prompted for a username. You can "
                "obtain an API key from https://platform.openai.com/account/api-keys.")
    elif fmt == "anthropic":
        key = (_h(headers, "x-api-key") or "").strip()
        auth = (_h(headers, "authorization") or "").strip()
        if not key and not (auth.lower().startswith("bearer ") and auth[7:].strip()):
            raise anthropic_error(401, "authentication_error", "x-api-key header is required")
        if not (_h(headers, "anthropic-version") or "").strip():
            raise anthropic_error(400, "invalid_request_error", "anthropic-version: header is required")
    elif fmt == "gemini":
        key = (_h(headers, "x-goog-api-key") or query.get("key") or "").strip()
        auth = (_h(headers, "authorization") or "").strip()
        if not key and not (auth.lower().startswith("bearer ") and auth[7:].strip()):
            raise gemini_error(
                401, "Request is missing required authentication credential. Expected OAuth 2 access token, login "
                "cookie or other valid authentication credential. See "
                "https://developers.google.com/identity/sign-in/web/devconsole-project.")


# -- request bodies ------------------------------------------------------------------------------------------------

def _nesting_deeper_than(obj, limit: int) -> bool:
    """Whether `obj` nests arrays and objects more than `limit` deep (iteratively: no recursion to exhaust)."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if d > limit:
            return True
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values() if isinstance(v, (dict, list)))
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o if isinstance(v, (dict, list)))
    return False


def _not_json(name: str):
    """NaN, Infinity and -Infinity, which Python's parser takes and JSON has not: the APIs' parse error."""
    raise ValueError(f"{name} is not a JSON value")


def _load(fmt: str, raw: bytes):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    try:
        if text is None:
            raise ValueError("body is not UTF-8")
        try:
            body = json.loads(text, parse_constant=_not_json)
        except RecursionError:   # (the JSON parser recurses once a level)
            body = None
            deep = True
        else:
            if "\\u" in text:   # (only an escape gives a lone surrogate in UTF-8 text: \ud800 in a prompt gave a 500)
                body = without_lone_surrogates(body)
            deep = _nesting_deeper_than(body, MAX_NESTING)
        if deep:
            raise ValueError(f"the JSON nests more than {MAX_NESTING} levels deep")
        return body
    except ValueError as exc:
        if fmt == "anthropic":
            raise anthropic_error(400, "invalid_request_error", f"Request body is not valid JSON: {exc}")
        if fmt == "gemini":
            snippet = (text or "")[:40]
            raise gemini_error(400, f"Invalid JSON payload received. Unexpected token.\n{snippet}\n^")
        raise openai_error(
            400, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
            "HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If "
            "you have trouble figuring out how to fix this, please contact us through our help center at "
            "help.openai.com.)")


#: Strings of a message that are not its words: names of its shape, ids, signatures and inline data (what a
#: provider bills for them, if anything, is no count of characters).
_UNCOUNTED_KEYS = frozenset({"role", "type", "id", "tool_call_id", "call_id", "tool_use_id", "signature",
                             "thoughtSignature", "thought_signature", "encrypted_content", "data", "url",
                             "image_url", "mimeType", "mime_type", "media_type", "file_id", "status"})


def _message_chars(messages, skip_roles=("system", "developer")) -> int:
    """The characters of the words in a request's messages (every turn: the history is billed as input, as each
    API counts it), the system messages left to the caller; bounded by the body's own size."""
    total = 0
    stack = [m for m in messages if not (isinstance(m, dict) and m.get("role") in skip_roles)] \
        if isinstance(messages, list) else [messages]
    while stack:
        o = stack.pop()
        if isinstance(o, str):
            total += len(o)
        elif isinstance(o, dict):
            stack.extend(v for k, v in o.items() if k not in _UNCOUNTED_KEYS)
        elif isinstance(o, list):
            stack.extend(o)
    return total


def _text_of(content) -> str:
    """Text of a message content in any of the formats' shapes (string, list of parts/blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        for k in ("text", "content", "output", "result"):
            if k in content:
                return _text_of(content[k])
        return json.dumps(content, ensure_ascii=False)
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and p.get("type") in (None, "text", "input_text", "output_text"):
                t = p.get("text")
                if isinstance(t, str):
                    parts.append(t)
        return "\n".join(parts)
    return str(content)


def _int_or_none(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


#: the roles each OpenAI format takes, in the order its error lists them
CHAT_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
RESPONSES_ROLES = ("assistant", "system", "developer", "user")


def _invalid_role(role, allowed: tuple[str, ...], param: str) -> ProviderErrorResponse:
    listed = ", ".join(f"'{r}'" for r in allowed[:-1]) + f", and '{allowed[-1]}'"
    shown = f"'{role}'" if isinstance(role, str) else json.dumps(role)
    return openai_error(400, f"Invalid value: {shown}. Supported values are: {listed}.", param=param,
                        code="invalid_value")


def _stops(v) -> list[str]:
    """The stop sequences of a request field (a string or a list of them; empty ones stop nothing)."""
    if isinstance(v, str):
        v = [v]
    return [x for x in v if isinstance(x, str) and x] if isinstance(v, list) else []


#: the request fields a Responses response object repeats as they were sent
RESPONSES_ECHOED = ("instructions", "max_output_tokens", "max_tool_calls", "metadata", "parallel_tool_calls",
                    "prompt_cache_key", "reasoning", "safety_identifier", "store", "temperature", "text",
                    "tool_choice", "top_logprobs", "top_p", "truncation", "user", "background")


def _output_schema(fmt_field) -> dict | None:
    """The structured-output schema of a request's format field, in any API's shape: `{"type": "json_schema",
    "json_schema": {"schema"}}` (Chat's response_format), `{"type": "json_schema", "schema"}` (Responses'
    text.format, Anthropic's output_config.format), `{"type": "json_object"}` (no schema: `{}`); else None."""
    if not isinstance(fmt_field, dict):
        return None
    kind = fmt_field.get("type")
    if kind == "json_object":
        return {}
    if kind != "json_schema":
        return None
    inner = fmt_field.get("json_schema") if isinstance(fmt_field.get("json_schema"), dict) else fmt_field
    schema = inner.get("schema")
    return schema if isinstance(schema, dict) else {}


def _openai_tool_choice(conv: Conversation, body: dict, chat: bool) -> None:
    """`tool_choice` (Chat's legacy `function_call` too) and `parallel_tool_calls` of either OpenAI format: "none",
    "auto", "required", a named function (Chat `{"type": "function", "function": {"name"}}`, Responses and the
    legacy field `{"name"}` flat), or `allowed_tools` (a subset, in mode auto or required)."""
    tc = body.get("tool_choice")
    if tc is None and chat:
        tc = body.get("function_call")
    if tc in ("none", "required"):
        conv.tool_choice = tc
    elif isinstance(tc, dict):
        kind = tc.get("type")
        if kind == "function" or (kind is None and "name" in tc):
            fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc
            if isinstance(fn.get("name"), str):
                conv.tool_choice, conv.allowed_tools = "required", [fn["name"]]
        elif kind == "allowed_tools":
            spec = tc.get("allowed_tools") if isinstance(tc.get("allowed_tools"), dict) else tc
            names = []
            for t in spec.get("tools") or []:
                fn = t.get("function") if isinstance(t, dict) and isinstance(t.get("function"), dict) else t
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    names.append(fn["name"])
            conv.allowed_tools = names or None
            if spec.get("mode") == "required":
                conv.tool_choice = "required"
    if body.get("parallel_tool_calls") is False:
        conv.parallel_tools = False


def parse_openai_chat(headers, query, raw: bytes) -> Parsed:
    body = _load("openai-chat", raw)
    if not isinstance(body, dict):
        raise openai_error(400, "Invalid type for request body: expected an object.")
    model = body.get("model")
    if not model or not isinstance(model, str):
        raise openai_error(400, "you must provide a model parameter")
    if "messages" not in body:
        raise openai_error(400, "Missing required parameter: 'messages'.", param="messages",
                           code="missing_required_parameter")
    msgs = body["messages"]
    if not isinstance(msgs, list):
        raise openai_error(400, f"Invalid type for 'messages': expected an array of objects, but got "
                                f"{type(msgs).__name__} instead.", param="messages", code="invalid_type")
    if not msgs:
        raise openai_error(400, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got "
                                "an empty array instead.", param="messages", code="empty_array")
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or "role" not in m:
            raise openai_error(400, f"Missing required parameter: 'messages[{i}].role'.", param=f"messages[{i}].role",
                               code="missing_required_parameter")
        if m["role"] not in CHAT_ROLES:
            raise _invalid_role(m["role"], CHAT_ROLES, f"messages[{i}].role")
    n = body.get("n", 1)
    if n is None:
        n = 1
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n > 128:
        raise openai_error(400, f"Invalid 'n': integer must be between 1 and 128, got {n!r}.", param="n",
                           code="integer_out_of_range" if isinstance(n, int) else "invalid_type")
    stream = bool(body.get("stream"))
    so = body.get("stream_options")
    if so is not None and not stream:
        raise openai_error(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                           param="stream_options")
    tools = []
    for i, t in enumerate(body.get("tools") or []):
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(fn, dict) or not fn.get("name"):
            raise openai_error(400, f"Missing required parameter: 'tools[{i}].function'.",
                               param=f"tools[{i}].function", code="missing_required_parameter")
        tools.append(ToolSpec(fn["name"], fn.get("description") or "", fn.get("parameters") or {},
                              bool(fn.get("strict"))))
    legacy = bool(body.get("functions")) and not tools
    for f in body.get("functions") or []:
        if isinstance(f, dict) and f.get("name"):
            tools.append(ToolSpec(f["name"], f.get("description") or "", f.get("parameters") or {}))
    conv = Conversation(n=n, tools=tools, turns=len(msgs), message_chars=_message_chars(msgs),
                        max_tokens=_int_or_none(body.get("max_completion_tokens")) or
                        _int_or_none(body.get("max_tokens")))
    _openai_tool_choice(conv, body, chat=True)
    if legacy:   # the deprecated `functions`: one `message.function_call` at most, finish_reason `function_call`
        conv.legacy_functions, conv.parallel_tools = True, False
    conv.output_schema = _output_schema(body.get("response_format"))
    stop = body.get("stop")
    if isinstance(stop, list) and len(stop) > 4:
        raise openai_error(400, f"Invalid 'stop': array too long. Expected an array with maximum length 4, but got "
                                f"an array with length {len(stop)} instead.", param="stop",
                           code="array_above_max_length")
    conv.stop_sequences = _stops(stop)
    conv.system = "\n".join(_text_of(m.get("content")) for m in msgs if m.get("role") in ("system", "developer"))
    tail = []
    for m in reversed(msgs):
        if m.get("role") in ("tool", "function"):
            tail.append((m.get("name") or m.get("tool_call_id") or "", _text_of(m.get("content"))))
        else:
            break
    if tail:
        conv.tool_results = list(reversed(tail))
        calls = {}
        for m in msgs:
            for tc in m.get("tool_calls") or []:
                if isinstance(tc, dict):
                    calls[tc.get("id")] = (tc.get("function") or {}).get("name")
        conv.tool_results = [(calls.get(n_, n_) or n_, r) for n_, r in conv.tool_results]
    users = [m for m in msgs if m.get("role") == "user"]
    conv.prompt = _text_of(users[-1].get("content")) if users else ""
    conv.earlier_prompt = conv.prompt
    options = {}
    if isinstance(so, dict):
        options["include_usage"] = bool(so.get("include_usage"))
        if so.get("include_obfuscation") is False:
            options["obfuscation"] = False
    return Parsed(model, conv, stream, options, body)


def parse_openai_responses(headers, query, raw: bytes) -> Parsed:
    body = _load("openai-responses", raw)
    if not isinstance(body, dict):
        raise openai_error(400, "Invalid type for request body: expected an object.")
    model = body.get("model")
    if not model or not isinstance(model, str):
        raise openai_error(400, "Missing required parameter: 'model'.", param="model",
                           code="missing_required_parameter")
    inp = body.get("input")
    if inp is None and not body.get("previous_response_id") and not body.get("prompt"):
        raise openai_error(400, "Missing required parameter: 'input'.", param="input",
                           code="missing_required_parameter")
    tools = []
    for i, t in enumerate(body.get("tools") or []):
        if isinstance(t, dict) and t.get("type") == "function":
            if not t.get("name"):
                raise openai_error(400, f"Missing required parameter: 'tools[{i}].name'.", param=f"tools[{i}].name",
                                   code="missing_required_parameter")
            tools.append(ToolSpec(t["name"], t.get("description") or "", t.get("parameters") or {},
                                  bool(t.get("strict", True))))
    reasoning = body.get("reasoning")
    summary = (reasoning.get("summary") or reasoning.get("generate_summary")) if isinstance(reasoning, dict) else None
    conv = Conversation(tools=tools, max_tokens=_int_or_none(body.get("max_output_tokens")),
                        thinking=summary in ("auto", "concise", "detailed"))
    _openai_tool_choice(conv, body, chat=False)
    conv.echo = {k: body[k] for k in RESPONSES_ECHOED if body.get(k) is not None}
    text_cfg = body.get("text")
    conv.output_schema = _output_schema(text_cfg.get("format")) if isinstance(text_cfg, dict) else None
    conv.system = _text_of(body.get("instructions"))
    if isinstance(inp, str):
        conv.prompt = inp
    elif isinstance(inp, list):
        for i, x in enumerate(inp):
            if isinstance(x, dict) and "role" in x and x.get("type", "message") == "message" \
                    and x["role"] not in RESPONSES_ROLES:
                raise _invalid_role(x["role"], RESPONSES_ROLES, f"input[{i}].role")
        conv.turns = len(inp)
        conv.message_chars = _message_chars(inp)
        items = [x for x in inp if isinstance(x, dict)]
        calls = {x.get("call_id"): x.get("name") for x in items if x.get("type") == "function_call"}
        tail = []
        for x in reversed(items):
            if x.get("type") == "function_call_output":
                tail.append((calls.get(x.get("call_id")) or x.get("call_id") or "", _text_of(x.get("output"))))
            elif x.get("type") == "function_call":
                continue
            else:
                break
        conv.tool_results = list(reversed(tail))
        users = [x for x in items if x.get("role") == "user"]
        conv.prompt = _text_of(users[-1].get("content")) if users else ""
        sys_ = [x for x in items if x.get("role") in ("system", "developer")]
        if sys_:
            conv.system = "\n".join([conv.system] + [_text_of(x.get("content")) for x in sys_]).strip()
    conv.earlier_prompt = conv.prompt
    options = {}
    so = body.get("stream_options")
    if isinstance(so, dict) and so.get("include_obfuscation") is False:
        options["obfuscation"] = False
    return Parsed(model, conv, bool(body.get("stream")), options, body)


def _anthropic_thread(thread) -> None:
    """Message threads (beta `message-threads-2026-08-12`): the emulator keeps no conversation state. A `create` is
    answered as any request (the whole history is in it); a `continue` gets the 404 `thread_not_found` of a thread
    the server does not hold, on which the SDK replays the whole history (and, after a second one, stops
    threading)."""
    if thread is None:
        return
    kind = thread.get("type") if isinstance(thread, dict) else None
    if not isinstance(thread, dict):
        raise anthropic_error(400, "invalid_request_error", "thread: Input should be a valid dictionary or object")
    if kind == "create":
        return
    if kind != "continue":
        raise anthropic_error(400, "invalid_request_error",
                              f"thread: Input tag {kind!r} found using 'type' does not match any of the expected "
                              "tags: 'create', 'continue'" if kind is not None else
                              "thread: Unable to extract tag using discriminator 'type'")
    prev = thread.get("previous_message_id")
    if not isinstance(prev, str) or not prev:
        raise anthropic_error(400, "invalid_request_error", "thread.continue.previous_message_id: Field required"
                              if prev is None else "thread.continue.previous_message_id: Input should be a valid "
                              "string")
    raise anthropic_error(404, "not_found_error", f"No usable Thread state was found for `previous_message_id` "
                          f"{prev!r}. Replay the full conversation with `thread: {{\"type\": \"create\"}}` to start "
                          "a new Thread.", details={"error_code": "thread_not_found"})


def parse_anthropic(headers, query, raw: bytes) -> Parsed:
    body = _load("anthropic", raw)
    if not isinstance(body, dict):
        raise anthropic_error(400, "invalid_request_error", "Input should be a valid dictionary")
    _anthropic_thread(body.get("thread"))
    for f in ("model", "messages", "max_tokens"):
        if f not in body:
            raise anthropic_error(400, "invalid_request_error", f"{f}: Field required")
    model = body["model"]
    if not isinstance(model, str) or not model:
        raise anthropic_error(400, "invalid_request_error", "model: Input should be a valid string")
    mt = body["max_tokens"]
    if not isinstance(mt, int) or isinstance(mt, bool) or mt < 1:
        raise anthropic_error(400, "invalid_request_error", "max_tokens: Input should be greater than or equal to 1")
    msgs = body["messages"]
    if not isinstance(msgs, list) or not msgs:
        raise anthropic_error(400, "invalid_request_error", "messages: at least one message is required")
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise anthropic_error(400, "invalid_request_error",
                                  f"messages.{i}.role: Input should be 'user' or 'assistant'")
    thinking = body.get("thinking")
    want_thinking = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise anthropic_error(400, "invalid_request_error",
                                  "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if mt <= budget:
            raise anthropic_error(400, "invalid_request_error",
                                  "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                                  "documentation at https://docs.claude.com/en/docs/build-with-claude/"
                                  "extended-thinking#max-tokens-and-context-window-size")
    tools = []
    for i, t in enumerate(body.get("tools") or []):
        if not isinstance(t, dict) or not t.get("name"):
            raise anthropic_error(400, "invalid_request_error", f"tools.{i}.name: Field required")
        if "input_schema" in t or t.get("type") in (None, "custom"):
            tools.append(ToolSpec(t["name"], t.get("description") or "", t.get("input_schema") or {}))
    conv = Conversation(tools=tools, max_tokens=mt, thinking=want_thinking, turns=len(msgs),
                        message_chars=_message_chars(msgs))
    conv.stop_sequences = _stops(body.get("stop_sequences"))
    out_cfg = body.get("output_config")
    conv.output_schema = _output_schema(out_cfg.get("format") if isinstance(out_cfg, dict) else
                                        body.get("output_format"))   # (the beta's field before output_config)
    tc = body.get("tool_choice")
    if tc is not None:
        kind = tc.get("type") if isinstance(tc, dict) else None
        if kind not in ("auto", "any", "tool", "none"):
            raise anthropic_error(400, "invalid_request_error", "tool_choice: Input should be a valid dictionary or "
                                  "object" if not isinstance(tc, dict) else f"tool_choice: Input tag {kind!r} found "
                                  "using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', "
                                  "'none'")
        if kind == "tool" and not isinstance(tc.get("name"), str):
            raise anthropic_error(400, "invalid_request_error", "tool_choice.tool.name: Field required")
        if kind in ("any", "tool") and want_thinking:
            raise anthropic_error(400, "invalid_request_error",
                                  "Thinking may not be enabled when tool_choice forces tool use.")
        if kind == "none":
            conv.tool_choice = "none"
        elif kind in ("any", "tool"):
            conv.tool_choice = "required"
            conv.allowed_tools = [tc["name"]] if kind == "tool" else None
        if tc.get("disable_parallel_tool_use") is True:
            conv.parallel_tools = False
    conv.system = _text_of(body.get("system"))
    last = msgs[-1]
    content = last.get("content")
    if last.get("role") == "user" and isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        names = {}
        for m in msgs:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    names[b.get("id")] = b.get("name")
        conv.tool_results = [(names.get(b.get("tool_use_id")) or b.get("tool_use_id") or "", _text_of(b.get("content")))
                             for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    users = [m for m in msgs if m.get("role") == "user" and _text_of(m.get("content")).strip()]
    conv.prompt = _text_of(users[-1].get("content")) if users else ""
    conv.earlier_prompt = conv.prompt
    return Parsed(model, conv, bool(body.get("stream")), {}, body)


#: Gemini's GenerationConfig.stopSequences: "The set of character sequences (up to 5) that will stop output
#: generation" (ai.google.dev/api/generate-content)
GEMINI_MAX_STOPS = 5


def parse_gemini(headers, query, raw: bytes, model: str) -> Parsed:
    body = _load("gemini", raw)
    if not isinstance(body, dict):
        raise gemini_error(400, "Invalid JSON payload received. Expected an object.")
    contents = body.get("contents")
    if not contents:
        raise gemini_error(400, "* GenerateContentRequest.contents: contents is not specified\n")
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list):
        raise gemini_error(400, "Invalid JSON payload received. Unknown name \"contents\": Proto field is not "
                                "repeating, cannot start list.")
    for i, c in enumerate(contents):     # a Content has a role and parts: any other field is Google's 400
        unknown = next((k for k in c if k not in ("role", "parts")), None) if isinstance(c, dict) else None
        if unknown is not None:
            what = f"Invalid JSON payload received. Unknown name \"{unknown}\" at 'contents[{i}]': Cannot find field."
            raise gemini_error(400, what, [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                                            "fieldViolations": [{"field": f"contents[{i}]", "description": what}]}])
    for c in contents:
        if isinstance(c, dict) and c.get("role") not in (None, "", "user", "model"):
            raise gemini_error(400, "Please use a valid role: user, model.")
    tools = []
    for t in body.get("tools") or []:
        for d in (t.get("functionDeclarations") or t.get("function_declarations") or []) if isinstance(t, dict) else []:
            if isinstance(d, dict) and d.get("name"):
                params = (d.get("parametersJsonSchema") or d.get("parameters_json_schema") or d.get("parameters")
                          or {})
                tools.append(ToolSpec(d["name"], d.get("description") or "", params))
    gen = body.get("generationConfig") or body.get("generation_config") or {}
    think = gen.get("thinkingConfig") or gen.get("thinking_config") or {}
    conv = Conversation(tools=tools, max_tokens=_int_or_none(gen.get("maxOutputTokens") or
                                                             gen.get("max_output_tokens")), turns=len(contents),
                        message_chars=_message_chars(contents),
                        thinking=bool(think.get("includeThoughts") or think.get("include_thoughts")),
                        thinking_off=think.get("thinkingBudget", think.get("thinking_budget")) == 0)
    stops = gen.get("stopSequences", gen.get("stop_sequences"))
    if isinstance(stops, list) and len(stops) > GEMINI_MAX_STOPS:
        raise gemini_error(400, f"* GenerateContentRequest.generation_config.stop_sequences: at most "
                                f"{GEMINI_MAX_STOPS} stop sequences are allowed, got {len(stops)}.\n")
    conv.stop_sequences = _stops(stops)
    schema = next((gen[k] for k in ("responseJsonSchema", "response_json_schema", "responseSchema",
                                    "response_schema") if isinstance(gen.get(k), dict)), None)
    mime = gen.get("responseMimeType") or gen.get("response_mime_type")
    conv.output_schema = schema if schema is not None else ({} if mime == "application/json" else None)
    tcfg = body.get("toolConfig") or body.get("tool_config") or {}
    fcc = tcfg.get("functionCallingConfig") or tcfg.get("function_calling_config") or {}
    mode = str(fcc.get("mode") or "AUTO").upper()
    if mode == "NONE":
        conv.tool_choice = "none"
    elif mode == "ANY":
        conv.tool_choice = "required"
        names = fcc.get("allowedFunctionNames") or fcc.get("allowed_function_names")
        conv.allowed_tools = ([n for n in names if isinstance(n, str)] or None) if isinstance(names, list) else None
    si = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(si, dict):
        conv.system = "\n".join(p.get("text", "") for p in si.get("parts") or [] if isinstance(p, dict))
    elif isinstance(si, str):
        conv.system = si

    def texts(c) -> str:
        if isinstance(c, str):
            return c
        return "\n".join(p.get("text", "") for p in (c.get("parts") or []) if isinstance(p, dict)
                         and isinstance(p.get("text"), str) and not p.get("thought"))

    items = [c for c in contents if isinstance(c, (dict, str))]
    last = items[-1] if items else {}
    if isinstance(last, dict):
        results = [p["functionResponse"] for p in last.get("parts") or []
                   if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]
        conv.tool_results = [(r.get("name") or "", _text_of(r.get("response"))) for r in results]
    users = [c for c in items if (isinstance(c, str) or c.get("role", "user") == "user") and texts(c).strip()]
    conv.prompt = texts(users[-1]) if users else ""
    conv.earlier_prompt = conv.prompt
    return Parsed(model, conv, True, {}, body)


def parse_request(fmt: str, headers, query, raw: bytes, path_model: str = "") -> Parsed:
    """The request in `fmt`, or the ProviderErrorResponse the provider would answer. A field of the wrong JSON type that the
    parsers do not check one by one (`tools` as a number, `generationConfig` as a string, ...) is the provider's
    400 invalid-request error too, never a crash of the server."""
    try:
        if fmt == "openai-chat":
            return parse_openai_chat(headers, query, raw)
        if fmt == "openai-responses":
            return parse_openai_responses(headers, query, raw)
        if fmt == "anthropic":
            return parse_anthropic(headers, query, raw)
        return parse_gemini(headers, query, raw, path_model)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise invalid_request(fmt, exc) from None


def invalid_request(fmt: str, exc: BaseException) -> ProviderErrorResponse:
    """The provider's 400 for a request body with a field of the wrong type."""
    what = f"a field of the request body has the wrong type ({exc})"
    if fmt == "anthropic":
        return anthropic_error(400, "invalid_request_error", what)
    if fmt == "gemini":
        return gemini_error(400, f"Invalid JSON payload received: {what}.")
    return openai_error(400, f"Invalid type: {what}.", code="invalid_type")


def response_headers(fmt: str, ids: ScriptIds) -> dict:
    if fmt in ("openai-chat", "openai-responses"):
        return {"x-request-id": "req_" + ids.hex("xreq", 32), "openai-processing-ms": str(90 + ids.seed % 300),
                "openai-version": "2020-10-01", "x-ratelimit-limit-requests": "10000",
                "x-ratelimit-remaining-requests": "9999", "cache-control": "no-cache"}
    if fmt == "anthropic":
        return {"request-id": ids.request_id, "anthropic-organization-id": "streamscope-emulator",
                "cache-control": "no-cache"}
    return {"vary": "Origin, X-Origin, Referer", "server": "scaffolding on HTTPServer2",
            "x-xss-protection": "0", "x-content-type-options": "nosniff",
            "server-timing": f"gfet4t7; dur={200 + ids.seed % 500}"}
