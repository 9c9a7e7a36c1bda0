"""The emulator's HTTP side: an ASGI app (Starlette) served by uvicorn on loopback.

    app = create_app(speed=1.0)                  # the ASGI app, for any ASGI server
    with EmulatorServer() as base:               # uvicorn in a background thread on a free loopback port
        ...  base == "http://127.0.0.1:PORT"     # OpenAI clients use base + "/v1", the others base
    server = EmulatorServer(); base = server.start(); ...; server.stop()
    run_foreground(host, port)                   # `python main.py emulate`: prints "listening on ..." first

Endpoints: POST /v1/chat/completions, POST /v1/responses, POST /v1/messages,
POST /v1beta/models/{model}:streamGenerateContent?alt=sse (and :generateContent), GET /scenarios,
GET /v1/models, GET /v1beta/models, GET /v1/models/{id} (and /v1beta/models/{id}), GET /health. Pacing: `speed`
(server option) or the request header `x-emulator-speed` (a rate multiplier; 0 sends everything at once);
`x-emulator-scenario` overrides the model.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core.servers.emulator import history, providers as pv
from core.servers.serving import BackgroundServer, bind_socket, serve_foreground, url_for
from core.wire.encoders.assemble import assemble
from core.wire.encoders import encode
from core.servers.emulator.recordings import Recording, replay_headers
from core.servers.emulator.stored import StoredResponses
from core.servers.emulator.scenarios import (SCENARIOS, DEFAULT_SCENARIO, Pacing, Plan, build_plan, input_tokens,
                                              iter_schedule, scenario_for, schedule, whole_reply)
from core.wire.script import seed_of

log = logging.getLogger("streamscope.emulator")

MEDIA = {"openai-chat": "text/event-stream; charset=utf-8", "openai-responses": "text/event-stream; charset=utf-8",
         "anthropic": "text/event-stream; charset=utf-8", "gemini": "text/event-stream"}
STALL_LIMIT = 600.0   # a stalled stream gives up after this many seconds even if nobody hangs up


@dataclass
class EmulatorState:
    speed: float = 1.0
    scenario: str | None = None                         # force one scenario for every request
    recordings: list[Recording] = field(default_factory=list)
    closing: bool = False
    requests: int = 0
    _rr: dict = field(default_factory=dict)
    stored: StoredResponses = field(default_factory=StoredResponses)   # the Responses API's stored responses

    def recording_for(self, fmt: str, model: str | None) -> Recording | None:
        recs = [r for r in self.recordings if r.format == fmt]
        if not recs:
            return None
        exact = [r for r in recs if r.model and r.model == model]
        if exact:
            recs = exact
        it = self._rr.setdefault((fmt, model), itertools.cycle(range(len(recs))))
        return recs[next(it) % len(recs)]


# -- responses -----------------------------------------------------------------------------------------------------

# One thread encodes every big reply, a write (about 32 KiB) at a time, taking the streams in turn: more threads
# would only take the interpreter lock from the event loop more often (on 2 cores, /health then waits for them)
_ENCODER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emulator-encode")


class SharedWrites:
    """The writes of one big reply (firehose, long), made as they are first asked for and kept, so that the
    responses sending the same reply share one encoding and each starts sending at once. `get(i)` runs in a
    worker thread (it may encode); `writes` only grows."""

    def __init__(self, writes: Iterator[tuple[float, bytes]]) -> None:
        self._source = writes
        self.writes: list[tuple[float, bytes]] = []
        self.done = False
        self._lock = threading.Lock()

    def get(self, i: int) -> tuple[float, bytes] | None:
        with self._lock:
            while len(self.writes) <= i and not self.done:
                try:
                    self.writes.append(next(self._source))
                except StopIteration:
                    self.done = True
                except BaseException:
                    self.done = True
                    raise
            return self.writes[i] if i < len(self.writes) else None

    async def stream(self) -> AsyncIterator[tuple[float, bytes]]:
        i = 0
        writes = self.writes
        loop = asyncio.get_running_loop()
        while True:
            w = writes[i] if i < len(writes) else await loop.run_in_executor(_ENCODER, self.get, i)
            if w is None:
                return
            yield w
            i += 1


async def _listed(writes: list[tuple[float, bytes]]) -> AsyncIterator[tuple[float, bytes]]:
    for w in writes:
        yield w


class StreamResponse:
    """Timed writes on an open chunked response; then complete it, drop the connection, or stall.
    `writes`: a list, or a `SharedWrites` (made as they are sent)."""

    def __init__(self, writes: list[tuple[float, bytes]] | SharedWrites, state: EmulatorState,
                 after: str = "complete", headers: dict | list | None = None, status: int = 200,
                 media_type: str = "text/event-stream", headers_delay: float = 0.0) -> None:
        self.writes = writes
        self.state = state
        self.after = after
        self.status = status
        self.headers_delay = headers_delay
        hl = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        if media_type and not any(k.lower() == "content-type" for k, _ in hl):
            hl.insert(0, ("content-type", media_type))
        self.raw_headers = [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in hl]

    async def __call__(self, scope, receive, send) -> None:
        disconnected = asyncio.Event()

        async def watch() -> None:
            while True:
                msg = await receive()
                if msg["type"] == "http.disconnect":
                    disconnected.set()
                    return

        watcher = asyncio.ensure_future(watch())
        try:
            loop = asyncio.get_running_loop()
            if self.headers_delay > 0:
                await asyncio.sleep(self.headers_delay)
            await send({"type": "http.response.start", "status": self.status, "headers": self.raw_headers})
            t0 = loop.time()
            t = 0.0
            source = self.writes.stream() if isinstance(self.writes, SharedWrites) else _listed(self.writes)
            async for delay, data in source:
                if disconnected.is_set() or self.state.closing:
                    return
                t += delay
                wait = t0 + t - loop.time()
                if wait > 0.0005:
                    await asyncio.sleep(wait)
                await send({"type": "http.response.body", "body": data, "more_body": True})
            if self.after == "drop":
                return   # uvicorn closes the connection: the chunked body never gets its last chunk
            if self.after == "stall":
                end = loop.time() + STALL_LIMIT
                while not disconnected.is_set() and not self.state.closing and loop.time() < end:
                    try:
                        await asyncio.wait_for(disconnected.wait(), 0.25)
                    except asyncio.TimeoutError:
                        pass
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()


def _pretty(fmt: str, body: dict) -> bytes:
    """Error bodies as each provider prints them: OpenAI indents 4, Google 2, Anthropic compact."""
    if fmt == "gemini":
        return json.dumps(body, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    if fmt in ("openai-chat", "openai-responses"):
        return json.dumps(body, indent=4, ensure_ascii=False).encode("utf-8") + b"\n"
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def error_response(fmt: str, err: pv.ProviderErrorResponse) -> Response:
    ctype = "application/json; charset=UTF-8" if fmt == "gemini" else "application/json"
    return Response(_pretty(fmt, err.body), status_code=err.status, headers=err.headers, media_type=ctype)


def _speed(request: Request, default: float) -> float:
    v = request.headers.get("x-emulator-speed")
    if v is None:
        v = request.query_params.get("emulator_speed")
    if v is None:
        return default
    try:
        s = float(v)
    except ValueError:
        return default
    return s if s >= 0 else default


def _json_array_writes(fmt: str, plan: Plan, speed: float) -> list[tuple[float, bytes]]:
    """Gemini without `alt=sse`: the same chunks as one streamed JSON array."""
    events = [e for e in encode(fmt, plan.reply, **plan.encode_options) if e.payload_start >= 0]
    p = plan.pacing.scaled(speed)
    rng = random.Random(plan.seed)
    out = []
    for i, e in enumerate(events):
        payload = e.data[e.payload_start:e.payload_end]
        delay = p.first_token if i == 0 else p.per_fragment * (1 + rng.uniform(-p.jitter, p.jitter))
        out.append((delay, (b"[" if i == 0 else b"\r\n,") + payload))
    out.append((0.0, b"]" if events else b"[]"))
    return out


def _recording_response(rec: Recording, state: EmulatorState, speed: float) -> StreamResponse:
    writes = []
    timed = all(t is not None for t, _ in rec.chunks)
    if timed:
        prev = rec.headers_at or 0.0
        for t, data in rec.chunks:
            d = max(0.0, (t or 0.0) - prev)
            prev = max(prev, t or 0.0)
            writes.append((0.0 if speed <= 0 else d / speed, data))
    else:
        rng = random.Random(seed_of(rec.source))
        p = Pacing().scaled(speed)
        for i, (_, data) in enumerate(rec.chunks):
            delay = p.first_token if i == 1 else (0.0 if i == 0 else
                                                  p.per_fragment * (1 + rng.uniform(-p.jitter, p.jitter)))
            writes.append((delay, data))
    headers = replay_headers(rec)
    media = MEDIA[rec.format] if rec.status == 200 else "application/json"
    hd = 0.0 if (speed <= 0 or not timed) else (rec.headers_at or 0.0) / speed
    return StreamResponse(writes, state, rec.after, headers, rec.status, media, headers_delay=hd)


#: a request body up to this size is parsed and planned on the event loop (fast); a larger one in a worker
#: thread, so that no request holds up the others (or /health) while its JSON is read and its reply made
INLINE_BYTES = 64 * 1024
#: past its limit a body declared by its Content-Length is still read (and dropped) up to this size, so that the
#: client, still sending, gets the provider's error rather than a reset connection; then the connection is closed.
#: A chunked body (whose size nothing declares) is read no further than the limit: its answer closes the connection
DRAIN_LIMIT = 256 * 1024 * 1024


async def _read_body(request: Request, fmt: str) -> bytes:
    """The request body, or the provider's too-large error when it passes the format's limit (checked against
    Content-Length first, then as it arrives: the body is never held past the limit). A body of unknown size is
    not read past the limit: its error says it is larger than the limit, and closes the connection."""
    limit = pv.REQUEST_LIMITS[fmt]
    declared = request.headers.get("content-length")
    # (more digits than any real length: past the drain limit, and no int() of thousands of digits)
    size = (int(declared) if len(declared) <= 18 else DRAIN_LIMIT + 1) if declared and declared.isdigit() else None
    if size is not None and size > DRAIN_LIMIT:
        raise pv.request_too_large(fmt, size)
    parts: list[bytes] = []
    got = 0
    async for chunk in request.stream():
        got += len(chunk)
        if got <= limit:
            parts.append(chunk)
            continue
        parts.clear()       # too large: what arrived is dropped (the rest, of a declared size, read and dropped)
        if size is None or got > DRAIN_LIMIT:
            err = pv.request_too_large(fmt, size)
            err.headers = {**err.headers, "connection": "close"}     # (the rest of the body is never read)
            raise err
    if got > limit:
        raise pv.request_too_large(fmt, size)
    return b"".join(parts)


async def _off_loop_if(big: bool, fn, *args):
    """fn(*args), in a worker thread when `big` (the event loop keeps serving the other requests meanwhile)."""
    return await asyncio.to_thread(fn, *args) if big else fn(*args)


async def _handle(request: Request, fmt: str, path_model: str | None = None, method: str | None = None) -> object:
    state: EmulatorState = request.app.state.emulator
    state.requests += 1
    try:
        raw = await _read_body(request, fmt)
        pv.authenticate(fmt, request.headers, request.query_params)
        if fmt == "openai-responses":     # previous_response_id: the stored conversation, then this input
            raw = state.stored.expand(raw)
        big = len(raw) > INLINE_BYTES
        parsed = await _off_loop_if(big, pv.parse_request, fmt, request.headers, request.query_params, raw,
                                    path_model or "")
    except pv.ProviderErrorResponse as err:
        return error_response(fmt, err)
    speed = _speed(request, state.speed)
    stream = parsed.stream if fmt != "gemini" else method == "streamGenerateContent"
    rec = state.recording_for(fmt, parsed.model)
    if rec is not None:
        return _recording_response(rec, state, speed)

    override = request.headers.get("x-emulator-scenario") or state.scenario
    scenario = scenario_for(parsed.model, override)
    refused = await _off_loop_if(big, _vetted, fmt, parsed, scenario)
    if refused is not None:   # the conversation breaks a rule the real API enforces: its own 400
        return error_response(fmt, refused)
    big = big or scenario in BIG_SCENARIOS   # (a firehose's plan takes ~50 ms)
    plan = await _off_loop_if(big, build_plan, fmt, parsed.model, parsed.conversation, override)
    if plan.http_status == 429:
        return error_response(fmt, pv.rate_limited(fmt, parsed.model))
    if plan.http_status >= 500:
        return error_response(fmt, pv.server_error(fmt))
    plan.encode_options = dict(parsed.options)
    reply = plan.reply
    if fmt == "openai-responses" and plan.after == "complete" and reply.error is None:
        await _off_loop_if(big, _keep_response, state, raw, plan)
    headers = pv.response_headers(fmt, reply.ids)
    headers["x-emulator-scenario"] = plan.scenario
    if not stream:
        delay = 0.0 if speed <= 0 else (plan.pacing.first_token + plan.pacing.per_fragment
                                        * reply.fragment_count()) / speed
        if plan.scenario == "mid-stream-error":
            await asyncio.sleep(min(delay, 2.0))
            return error_response(fmt, pv.server_error(fmt))
        if plan.after in ("drop", "stall"):
            return StreamResponse([], state, plan.after, headers, 200, "application/json",
                                  headers_delay=min(delay, 2.0))
        body = await _off_loop_if(big, _assembled, fmt, plan)
        return StreamResponse([(0.0, body)], state, "complete", headers, 200, "application/json",
                              headers_delay=min(delay, 30.0))
    if fmt == "gemini" and request.query_params.get("alt") != "sse":
        writes = await _off_loop_if(big, _json_array_writes, fmt, plan, speed)
        media = "application/json; charset=UTF-8"
    elif plan.scenario in BIG_SCENARIOS:
        writes = _shared_writes(fmt, plan, speed)   # encoded as it is sent, off the loop, shared
        media = MEDIA[fmt]
    else:
        writes = await _off_loop_if(big, schedule, fmt, plan, speed)
        media = MEDIA[fmt]
    return StreamResponse(writes, state, plan.after, headers, 200, media)


def _keep_response(state: EmulatorState, raw: bytes, plan: Plan) -> None:
    """Store a Responses reply for a later `previous_response_id` or `GET /v1/responses/{id}` (unless the request
    said `store: false`: its response object is then never made)."""
    state.stored.keep(raw, lambda: whole_reply("openai-responses", plan, assemble("openai-responses", plan.reply)))


def _vetted(fmt: str, parsed: pv.Parsed, scenario: str) -> pv.ProviderErrorResponse | None:
    """The provider's 400 when the conversation breaks one of its history rules; else None, and the earlier
    turns the reply reads are noted in `parsed.conversation` (work in the size of the request)."""
    refused = history.violation(fmt, parsed, scenario)
    if refused is None:
        history.annotate(fmt, parsed)
    return refused


def _assembled(fmt: str, plan: Plan) -> bytes:
    whole = whole_reply(fmt, plan, assemble(fmt, plan.reply))
    stop_sequence = plan.stop_sequence
    if fmt == "anthropic" and stop_sequence is not None and whole.get("stop_reason") == "end_turn":
        whole["stop_reason"], whole["stop_sequence"] = "stop_sequence", stop_sequence
    return json.dumps(whole, ensure_ascii=False, indent=2 if fmt == "gemini" else None,
                      separators=None if fmt == "gemini" else (",", ":")).encode("utf-8")


BIG_SCENARIOS = ("firehose", "long")
_BIG: dict[tuple, SharedWrites] = {}   # the last few big replies (firehose clients often ask the same)


def _shared_writes(fmt: str, plan: Plan, speed: float) -> SharedWrites:
    reply = plan.reply   # (the seed does not depend on max_tokens: where the reply was cut is part of the key)
    key = (fmt, plan.scenario, plan.seed, json.dumps(plan.encode_options, sort_keys=True), speed,
           reply.fragment_count(), reply.finish, json.dumps(reply.echo, sort_keys=True, default=str),
           plan.legacy_functions, plan.summaries_hidden)
    hit = _BIG.get(key)   # (only the event loop's thread reads and writes _BIG)
    if hit is None:
        while len(_BIG) >= 4:
            _BIG.pop(next(iter(_BIG)))
        hit = _BIG[key] = SharedWrites(iter_schedule(fmt, plan, speed))
    return hit


# -- routes --------------------------------------------------------------------------------------------------------

async def chat_completions(request: Request):
    return await _handle(request, "openai-chat")


async def responses(request: Request):
    return await _handle(request, "openai-responses")


async def messages(request: Request):
    return await _handle(request, "anthropic")


async def count_tokens(request: Request, fmt: str, path_model: str = "") -> Response:
    """Anthropic's `POST /v1/messages/count_tokens` and Gemini's `:countTokens`: the input tokens the request would
    be counted for (the same count as a reply's usage), or the provider's error for a request it would refuse."""
    try:
        raw = await _read_body(request, fmt)
        pv.authenticate(fmt, request.headers, request.query_params)
        body = pv._load(fmt, raw or b"{}")          # (UTF-8, JSON, and its depth checked as for a reply)
        if not isinstance(body, dict):
            raise pv.invalid_request(fmt, ValueError("the body is not a JSON object"))
        if fmt == "anthropic":
            body.setdefault("max_tokens", 1)          # (count_tokens takes none; the message check wants one)
        elif isinstance(body.get("generateContentRequest"), dict):
            body = body["generateContentRequest"]     # (Gemini's other form: the whole request, wrapped)
        parsed = pv.parse_request(fmt, request.headers, request.query_params, json.dumps(body).encode(), path_model)
    except pv.ProviderErrorResponse as err:
        return error_response(fmt, err)
    refused = _vetted(fmt, parsed, scenario_for(parsed.model, request.headers.get("x-emulator-scenario")))
    if refused is not None:                           # (the API checks the conversation here too)
        return error_response(fmt, refused)
    tokens = input_tokens(parsed.conversation)
    return JSONResponse({"input_tokens": tokens} if fmt == "anthropic" else
                        {"totalTokens": tokens, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens}]})


async def anthropic_count_tokens(request: Request):
    return await count_tokens(request, "anthropic")


async def gemini_models(request: Request):
    rest = request.path_params["rest"]
    model, sep, method = rest.rpartition(":")
    if sep and method == "countTokens":
        return await count_tokens(request, "gemini", model)
    if not sep or method not in ("streamGenerateContent", "generateContent"):
        return error_response("gemini", pv.not_found("gemini", request.method, request.url.path))
    return await _handle(request, "gemini", path_model=model, method=method)


def _catalog() -> list[dict]:
    return [{"name": k, "description": v} for k, v in SCENARIOS.items()]


async def scenarios(request: Request):
    return JSONResponse({"scenarios": _catalog(), "default": DEFAULT_SCENARIO,
                         "formats": ["openai-chat", "openai-responses", "anthropic", "gemini"]})


CREATED = 1767225600   # 2026-01-01T00:00:00Z: when the emulator's "models" were released


def _models_format(request: Request) -> str:
    """Whose model endpoints a GET /models request is for: Gemini's on its /v1beta (and /v1alpha) paths and on /v1
    with Google's key (`x-goog-api-key` or `?key=`, as google-genai 3 sends it to /v1); Anthropic's with its
    headers; else OpenAI's."""
    path = request.url.path
    if path.startswith(("/v1beta/", "/v1alpha/")) or path in ("/v1beta", "/v1alpha") \
            or request.headers.get("x-goog-api-key") or request.query_params.get("key"):
        return "gemini"
    if request.headers.get("anthropic-version") or request.headers.get("x-api-key"):
        return "anthropic"
    return "openai-chat"


def _model_description(model_id: str) -> str:
    scenario = scenario_for(model_id)
    if scenario != DEFAULT_SCENARIO or model_id.strip().lower().rsplit("/", 1)[-1] == DEFAULT_SCENARIO:
        return SCENARIOS[scenario]
    return f"Not a scenario's name: answered with the {DEFAULT_SCENARIO!r} scenario. " + SCENARIOS[DEFAULT_SCENARIO]


def _model_object(fmt: str, model_id: str) -> dict:
    """One model as each provider describes it (its list's entries and its GET /models/{id} answer)."""
    if fmt == "gemini":
        return {"name": f"models/{model_id}", "version": "001", "displayName": model_id,
                "description": _model_description(model_id), "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
                "temperature": 1, "topP": 0.95, "topK": 64, "maxTemperature": 2}
    if fmt == "anthropic":
        return {"type": "model", "id": model_id, "display_name": model_id, "created_at": "2026-01-01T00:00:00Z",
                "lifecycle": "active", "max_input_tokens": 200000, "max_tokens": 64000}
    return {"id": model_id, "object": "model", "created": CREATED, "owned_by": "streamscope-emulator"}


async def list_models(request: Request):
    fmt = _models_format(request)
    try:
        pv.authenticate(fmt, request.headers, request.query_params)
    except pv.ProviderErrorResponse as err:
        return error_response(fmt, err)
    names = [s["name"] for s in _catalog()]
    if fmt == "gemini":
        return JSONResponse({"models": [_model_object(fmt, n) for n in names]})
    data = [_model_object(fmt, n) for n in names]
    if fmt == "anthropic":
        return JSONResponse({"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]})
    return JSONResponse({"object": "list", "data": data})


async def get_model(request: Request):
    """GET /v1/models/{id} (and Gemini's /v1beta/models/{id}): any id is described, as any model name is answered
    (a scenario's name with its description, another with the default scenario's)."""
    fmt = _models_format(request)
    try:
        pv.authenticate(fmt, request.headers, request.query_params)
    except pv.ProviderErrorResponse as err:
        return error_response(fmt, err)
    model_id = request.path_params["rest"]
    if not model_id or ":" in model_id:
        return error_response(fmt, pv.method_not_allowed(fmt, request.method, request.url.path))
    return JSONResponse(_model_object(fmt, model_id))


async def get_response(request: Request):
    """GET /v1/responses/{id}: a stored response (`responses.retrieve`), or the API's 404."""
    try:
        pv.authenticate("openai-responses", request.headers, request.query_params)
    except pv.ProviderErrorResponse as err:
        return error_response("openai-responses", err)
    rid = request.path_params["response_id"]
    found = request.app.state.emulator.stored.get(rid)
    if found is None:
        return error_response("openai-responses", pv.openai_error(404, f"Response with id '{rid}' not found."))
    return JSONResponse(found)


async def health(request: Request):
    state: EmulatorState = request.app.state.emulator
    return JSONResponse({"status": "ok", "emulator": "streamscope", "requests": state.requests,
                         "endpoints": ["POST /v1/chat/completions", "POST /v1/responses", "POST /v1/messages",
                                       "POST /v1beta/models/{model}:streamGenerateContent?alt=sse",
                                       "GET /scenarios"]})


def _format_for_path(request: Request) -> str:
    path = request.url.path
    if "/models/" in path and ":" in path or path.startswith("/v1beta"):
        return "gemini"
    if path.startswith("/v1/messages") or request.headers.get("anthropic-version"):
        return "anthropic"
    return "openai-chat"


async def _not_found(request: Request, exc):
    fmt = _format_for_path(request)
    return error_response(fmt, pv.not_found(fmt, request.method, request.url.path))


async def _not_allowed(request: Request, exc):
    fmt = _format_for_path(request)
    return error_response(fmt, pv.method_not_allowed(fmt, request.method, request.url.path))


def create_app(speed: float = 1.0, scenario: str | None = None,
               recordings: list[Recording] | None = None) -> Starlette:
    """The emulator as an ASGI app. `speed`: pacing multiplier (0 = no delays); `scenario`: force one scenario;
    `recordings`: recorded responses to serve instead of scenarios on their formats' endpoints."""
    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/responses", responses, methods=["POST"]),
        Route("/v1/responses/{response_id:str}", get_response, methods=["GET"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", anthropic_count_tokens, methods=["POST"]),
        Route("/{version:str}/models/{rest:path}", gemini_models, methods=["POST"]),
        Route("/scenarios", scenarios, methods=["GET"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1beta/models", list_models, methods=["GET"]),
        Route("/v1alpha/models", list_models, methods=["GET"]),
        Route("/{version:str}/models/{rest:path}", get_model, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/", health, methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_allowed})
    app.state.emulator = EmulatorState(speed=speed, scenario=scenario, recordings=list(recordings or []))
    return app


# -- running it ----------------------------------------------------------------------------------------------------

class EmulatorServer(BackgroundServer):
    """uvicorn serving the emulator in a background thread. `start()` returns the base URL once it accepts
    connections; `stop()` shuts it down (open streams, stalls included, are ended). A context manager too."""

    thread_name = "streamscope-emulator"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, speed: float = 1.0, scenario: str | None = None,
                 recordings: list[Recording] | None = None, log_level: str = "warning") -> None:
        super().__init__(create_app(speed=speed, scenario=scenario, recordings=recordings), host, port, log_level,
                         on_shutdown=self._closing)

    @property
    def state(self) -> EmulatorState:
        return self.app.state.emulator

    def _closing(self) -> None:
        self.state.closing = True       # open streams (stalls too) end at their next step

    def start(self, timeout: float = 15.0) -> str:
        self.state.closing = False
        return super().start(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        self._closing()
        super().stop(timeout)


def run_foreground(host: str = "127.0.0.1", port: int = 0, speed: float = 1.0, scenario: str | None = None,
                   recordings: list[Recording] | None = None, log_level: str = "warning",
                   access_log: bool = False, announce=None) -> int:
    """Serve until Ctrl+C / SIGTERM. Prints `listening on http://HOST:PORT` (first stdout line) once accepting;
    OSError when `host:port` cannot be bound."""
    import sys

    if log_level != "critical" or access_log:   # (make_server puts the access log at INFO, redacted)
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s",
                            stream=sys.stderr)
    app = create_app(speed=speed, scenario=scenario, recordings=recordings)

    def started(h: str, p: int) -> None:
        sys.stdout.write(f"listening on {url_for(h, p)}\n")
        sys.stdout.flush()
        if announce:
            announce(url_for(h, p))

    def closing() -> None:
        app.state.emulator.closing = True

    sock = bind_socket(host, port)   # an OSError saying why (the address is in use, not this machine's): the
    try:                             # caller prints it, where uvicorn would only log it
        return serve_foreground(app, host, port, started, closing, log_level, access_log, sockets=[sock])
    finally:
        sock.close()
