"""The emulator's HTTP side with plain httpx: endpoints, authentication, validation, scenarios and faults."""
from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from core.servers.emulator.scenarios import SCENARIOS, build_plan, schedule
from core.servers.emulator.responder import Conversation
from core.servers.emulator.server import EmulatorServer
from core.wire.pipeline import decode_bytes

from tests.wrong_types import WRONG_TYPES, json_paths, replaced

from core.wire.formats import FORMATS
from tests.core.servers.emulator.conftest import PROMPT

FAST = {"x-emulator-speed": "0"}


def request_for(fmt: str, model: str, prompt: str = PROMPT, **extra) -> tuple[str, dict, dict]:
    """(path, headers, json body) of a streaming request in each format."""
    if fmt == "openai-chat":
        body = {"model": model, "messages": [{"role": "user", "content": prompt}], "stream": True,
                "stream_options": {"include_usage": True}}
        return "/v1/chat/completions", {"Authorization": "Bearer sk-test"}, {**body, **extra}
    if fmt == "openai-responses":
        return "/v1/responses", {"Authorization": "Bearer sk-test"}, {"model": model, "input": prompt,
                                                                      "stream": True, **extra}
    if fmt == "anthropic":
        return "/v1/messages", {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01"}, {
            "model": model, "max_tokens": 4096, "messages": [{"role": "user", "content": prompt}], "stream": True,
            **extra}
    return f"/v1beta/models/{model}:streamGenerateContent?alt=sse", {"x-goog-api-key": "g-key"}, {
        "contents": [{"role": "user", "parts": [{"text": prompt}]}], **extra}


def post(base: str, fmt: str, model: str, timeout: float = 10, headers: dict | None = None, **extra) -> httpx.Response:
    path, h, body = request_for(fmt, model, **extra)
    return httpx.post(base + path, headers={**h, **(headers or {})}, json=body, timeout=timeout)


def decoded(base: str, fmt: str, model: str, **kw) -> dict:
    r = post(base, fmt, model, **kw)
    assert r.status_code == 200, r.text
    return decode_bytes(fmt, r.content).result()


def text_of(result: dict) -> str:
    return "".join(b["text"] or "" for b in result["blocks"] if b["type"] == "text")


# -- endpoints ------------------------------------------------------------------------------------------------

def test_scenario_catalog(emulator):
    r = httpx.get(emulator + "/scenarios")
    assert r.status_code == 200
    cat = r.json()
    names = [s["name"] for s in cat["scenarios"]]
    assert names == list(SCENARIOS)
    assert set(names) >= {"text", "tool-call", "parallel-tools", "thinking", "mid-stream-error", "http-429",
                          "http-500", "drop", "stall", "malformed-json", "no-terminator", "split-utf8",
                          "ping-heavy", "firehose", "long"}
    assert all(s["description"] and "\n" not in s["description"] for s in cat["scenarios"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_stream_on_every_endpoint(emulator, fmt):
    r = post(emulator, fmt, "text")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    got = decode_bytes(fmt, r.content).result()
    assert text_of(got).startswith("The capital of France is Paris.")
    assert got["terminated"] is True and got["error"] is None
    assert got["finish_reason"]["canonical"] == "stop"
    assert got["usage"]["output_tokens"] > 0 and got["usage"]["input_tokens"] > 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_models_get_text_and_replies_are_deterministic(emulator, fmt):
    a = post(emulator, fmt, "gpt-4o-mini").content
    b = post(emulator, fmt, "gpt-4o-mini").content
    assert a == b
    assert text_of(decode_bytes(fmt, a).result()) == text_of(decoded(emulator, fmt, "text"))
    other = decoded(emulator, fmt, "text", prompt="What is 12 * 7?")
    assert "84" in text_of(other)


def test_the_same_reply_in_every_format(emulator):
    texts = {fmt: text_of(decoded(emulator, fmt, "thinking")) for fmt in FORMATS}
    assert len(set(texts.values())) == 1


def test_gemini_key_in_query_and_json_array_without_alt_sse(emulator):
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    r = httpx.post(emulator + "/v1beta/models/text:streamGenerateContent?alt=sse&key=abc", json=body)
    assert r.status_code == 200 and b"\r\n\r\n" in r.content
    r = httpx.post(emulator + "/v1beta/models/text:streamGenerateContent?key=abc", json=body)
    chunks = r.json()
    assert isinstance(chunks, list) and chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks).startswith("The capital")
    r = httpx.post(emulator + "/v1beta/models/text:generateContent?key=abc", json=body)
    assert r.json()["candidates"][0]["content"]["parts"][0]["text"].startswith("The capital")


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic"])
def test_non_streaming_requests(emulator, fmt):
    path, h, body = request_for(fmt, "tool-call")
    body.pop("stream_options", None)
    body["stream"] = False
    r = httpx.post(emulator + path, headers=h, json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    obj = r.json()
    if fmt == "openai-chat":
        call = obj["choices"][0]["message"]["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    elif fmt == "openai-responses":
        assert obj["status"] == "completed" and obj["output"][0]["type"] == "function_call"
    else:
        assert obj["stop_reason"] == "tool_use" and obj["content"][-1]["input"] == {"city": "Paris"}


def test_models_lists_and_health(emulator):
    r = httpx.get(emulator + "/v1/models", headers={"Authorization": "Bearer k"})
    assert r.json()["object"] == "list" and {m["id"] for m in r.json()["data"]} == set(SCENARIOS)
    r = httpx.get(emulator + "/v1/models", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert r.json()["has_more"] is False and r.json()["data"][0]["type"] == "model"
    r = httpx.get(emulator + "/v1beta/models", headers={"x-goog-api-key": "k"})
    assert r.json()["models"][0]["name"] == "models/text"
    assert httpx.get(emulator + "/health").json()["status"] == "ok"


def test_unknown_routes_answer_in_the_provider_shape(emulator):
    r = httpx.post(emulator + "/v1/nothing", headers={"Authorization": "Bearer k"}, json={})
    assert r.status_code == 404 and r.json()["error"]["message"] == "Invalid URL (POST /v1/nothing)"
    r = httpx.post(emulator + "/v1beta/models/text:embedContent?key=k", json={})
    assert r.status_code == 404 and r.json()["error"]["status"] == "NOT_FOUND"
    r = httpx.get(emulator + "/v1/messages", headers={"anthropic-version": "2023-06-01"})
    assert r.status_code == 405 and r.json()["type"] == "error"


# -- authentication and validation -------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_key_gets_the_provider_401(emulator, fmt):
    path, h, body = request_for(fmt, "text")
    h = {k: v for k, v in h.items() if k not in ("Authorization", "x-api-key", "x-goog-api-key")}
    r = httpx.post(emulator + path, headers=h, json=body)
    assert r.status_code == 401
    err = r.json()
    if fmt == "anthropic":
        assert err["type"] == "error" and err["error"]["type"] == "authentication_error"
        assert err["request_id"].startswith("req_") and r.headers["request-id"] == err["request_id"]
    elif fmt == "gemini":
        assert err["error"]["code"] == 401 and err["error"]["status"] == "UNAUTHENTICATED"
    else:
        assert err["error"]["type"] == "invalid_request_error" and "API key" in err["error"]["message"]
        assert set(err["error"]) == {"message", "type", "param", "code"}


def test_anthropic_version_is_required(emulator):
    path, h, body = request_for("anthropic", "text")
    r = httpx.post(emulator + path, headers={"x-api-key": "k"}, json=body)
    assert r.status_code == 400 and r.json()["error"]["message"] == "anthropic-version: header is required"


@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_json_is_rejected_as_the_provider_would(emulator, fmt):
    path, h, _ = request_for(fmt, "text")
    r = httpx.post(emulator + path, headers={**h, "content-type": "application/json"}, content=b'{"model": "te')
    assert r.status_code == 400
    err = r.json()
    if fmt == "anthropic":
        assert err["error"]["type"] == "invalid_request_error"
    elif fmt == "gemini":
        assert err["error"]["status"] == "INVALID_ARGUMENT" and "Invalid JSON payload" in err["error"]["message"]
    else:
        assert "could not parse the JSON body" in err["error"]["message"]


@pytest.mark.parametrize("fmt,drop,status,needle", [
    ("openai-chat", "messages", 400, "Missing required parameter: 'messages'."),
    ("openai-chat", "model", 400, "you must provide a model parameter"),
    ("openai-responses", "model", 400, "Missing required parameter: 'model'."),
    ("anthropic", "max_tokens", 400, "max_tokens: Field required"),
    ("anthropic", "messages", 400, "messages: Field required"),
    ("gemini", "contents", 400, "contents is not specified"),
])
def test_missing_fields(emulator, fmt, drop, status, needle):
    path, h, body = request_for(fmt, "text")
    body.pop(drop)
    r = httpx.post(emulator + path, headers=h, json=body)
    assert r.status_code == status
    assert needle in r.text


def test_more_validation(emulator):
    path, h, body = request_for("openai-chat", "text")
    r = httpx.post(emulator + path, headers=h, json={**body, "messages": []})
    assert r.status_code == 400 and r.json()["error"]["code"] == "empty_array"
    r = httpx.post(emulator + path, headers=h, json={**body, "stream": False})
    assert r.status_code == 400 and r.json()["error"]["param"] == "stream_options"
    path, h, body = request_for("anthropic", "thinking")
    r = httpx.post(emulator + path, headers=h, json={**body, "max_tokens": 1000,
                                                     "thinking": {"type": "enabled", "budget_tokens": 2000}})
    assert r.status_code == 400 and "budget_tokens" in r.json()["error"]["message"]


# -- scenarios ------------------------------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "book_table", "description": "Book a restaurant table",
                                           "parameters": {"type": "object", "properties": {
                                               "restaurant": {"type": "string"},
                                               "city": {"type": "string"},
                                               "party_size": {"type": "integer", "minimum": 1, "maximum": 12},
                                               "time": {"type": "string", "format": "date-time"},
                                               "seating": {"type": "string", "enum": ["indoor", "outdoor"]},
                                               "notes": {"type": "array", "items": {"type": "string"}},
                                               "vip": {"type": "boolean"}},
                                               "required": ["restaurant", "city", "party_size", "time", "seating",
                                                            "notes", "vip"]}}}]


def test_tool_arguments_fit_the_declared_schema(emulator):
    got = decoded(emulator, "openai-chat", "tool-call", prompt="Book a table for four in Lyon tonight", tools=TOOLS)
    call = [b for b in got["blocks"] if b["type"] == "tool_call"][0]
    args = json.loads(call["arguments"])
    assert call["name"] == "book_table"
    assert args["city"] == "Lyon" and isinstance(args["party_size"], int) and 1 <= args["party_size"] <= 12
    assert args["seating"] in ("indoor", "outdoor") and isinstance(args["notes"], list)
    assert isinstance(args["vip"], bool) and isinstance(args["restaurant"], str)
    assert got["finish_reason"]["canonical"] == "tool_calls"


@pytest.mark.parametrize("prompt, expression", [("What is 17 x 23?", "17 * 23"),
                                                ("Plan my day in Paris.", "12 * (3 + 4)")])
def test_a_calculator_is_given_an_expression_it_can_compute(emulator, prompt, expression):
    from core.live.tool_mocks import CALCULATOR_TOOL, run_mock

    tools = [{"type": "function", "function": CALCULATOR_TOOL}]
    got = decoded(emulator, "openai-chat", "tool-call", prompt=prompt, tools=tools)
    call = [b for b in got["blocks"] if b["type"] == "tool_call"][0]
    assert json.loads(call["arguments"]) == {"expression": expression}
    assert not run_mock("calculator", call["arguments"]).is_error     # the preset's mock computes it


@pytest.mark.parametrize("fmt", FORMATS)
def test_builtin_get_weather_when_no_tools_were_sent(emulator, fmt):
    got = decoded(emulator, fmt, "parallel-tools", prompt="Weather in Paris and Tokyo?")
    calls = [b for b in got["blocks"] if b["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["get_weather", "get_weather"]
    assert [json.loads(c["arguments"])["city"] for c in calls] == ["Paris", "Tokyo"]
    if fmt != "gemini":
        assert len({c["id"] for c in calls}) == 2
    assert got["finish_reason"]["canonical"] == "tool_calls"


def test_anthropic_tool_result_turn_gets_a_text_answer(emulator):
    msgs = [{"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                               "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "-3C, snow"}]}]
    r = httpx.post(emulator + "/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                   json={"model": "tool-call", "max_tokens": 300, "messages": msgs, "stream": True})
    got = decode_bytes("anthropic", r.content).result()
    assert [b["type"] for b in got["blocks"]] == ["text"]
    assert "-3C, snow" in got["blocks"][0]["text"] and "get_weather" in got["blocks"][0]["text"]


#: each format's request field that turns thinking on (Chat has none: `reasoning_content` comes by model)
THINKING_ON = {"openai-chat": {}, "openai-responses": {"reasoning": {"effort": "low", "summary": "auto"}},
               "anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
               "gemini": {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}}


@pytest.mark.parametrize("fmt", FORMATS)
def test_thinking(emulator, fmt):
    got = decoded(emulator, fmt, "thinking", **THINKING_ON[fmt])
    assert [b["type"] for b in got["blocks"]] == ["thinking", "text"]
    assert "capital of France" in got["blocks"][0]["text"]
    assert bool(got["blocks"][0]["signature"]) == (fmt in ("anthropic", "gemini"))


def test_max_tokens_cuts_the_reply(emulator):
    got = decoded(emulator, "openai-chat", "text", max_tokens=4)
    assert got["finish_reason"]["canonical"] == "length" and got["usage"]["output_tokens"] == 4
    got = decoded(emulator, "gemini", "thinking", generationConfig={"maxOutputTokens": 6,
                                                                    "thinkingConfig": {"includeThoughts": True}})
    assert got["finish_reason"]["raw"] == "MAX_TOKENS" and [b["type"] for b in got["blocks"]] == ["thinking"]
    got = decoded(emulator, "openai-responses", "text", max_output_tokens=3)
    assert got["finish_reason"]["raw"] == "incomplete"
    got = decoded(emulator, "anthropic", "long", max_tokens=100)   # long and firehose too
    assert got["finish_reason"]["raw"] == "max_tokens" and got["usage"]["output_tokens"] == 100


def test_scenario_header_overrides_the_model(emulator):
    got = decoded(emulator, "anthropic", "claude-sonnet-4-5", headers={"x-emulator-scenario": "tool-call"})
    assert got["finish_reason"]["raw"] == "tool_use"


# -- faults --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_mid_stream_error(emulator, fmt):
    got = decoded(emulator, fmt, "mid-stream-error")
    assert got["error"] is not None
    assert text_of(got).startswith("The capital")
    assert "in-band-error" in {d["code"] for d in got["diagnostics"]}
    if fmt == "anthropic":
        assert got["error"]["type"] == "overloaded_error"
    if fmt == "gemini":
        assert "503" in json.dumps(got["error"]["raw"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_http_errors(emulator, fmt):
    r = post(emulator, fmt, "http-429")
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    body = r.json()
    if fmt == "anthropic":
        assert body["error"]["type"] == "rate_limit_error"
    elif fmt == "gemini":
        assert body["error"]["status"] == "RESOURCE_EXHAUSTED"
    else:
        assert body["error"]["code"] == "rate_limit_exceeded"
    r = post(emulator, fmt, "http-500")
    assert r.status_code == 500
    assert (r.json()["error"]["type"] == "api_error") if fmt == "anthropic" else ("error" in r.json())


@pytest.mark.parametrize("fmt", FORMATS)
def test_drop_cuts_the_connection(emulator, fmt):
    path, h, body = request_for(fmt, "drop")
    received = b""
    with pytest.raises(httpx.RemoteProtocolError):
        with httpx.stream("POST", emulator + path, headers=h, json=body, timeout=10) as r:
            for chunk in r.iter_raw():
                received += chunk
    got = decode_bytes(fmt, received).result()
    assert text_of(got) and got["terminated"] is False and got["error"] is None


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.slow
def test_stall_keeps_the_connection_open(emulator, fmt):
    path, h, body = request_for(fmt, "stall")
    received = b""
    with pytest.raises(httpx.ReadTimeout):
        with httpx.stream("POST", emulator + path, headers=h, json=body,
                          timeout=httpx.Timeout(10, read=0.6)) as r:
            for chunk in r.iter_raw():
                received += chunk
    assert text_of(decode_bytes(fmt, received).result())


@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_json_and_no_terminator(emulator, fmt):
    got = decoded(emulator, fmt, "malformed-json")
    assert "data-not-json" in {d["code"] for d in got["diagnostics"]}
    assert got["terminated"] is True
    got = decoded(emulator, fmt, "no-terminator")
    assert got["terminated"] is False and text_of(got).startswith("The capital")
    assert "missing-terminator" in {d["code"] for d in got["diagnostics"]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_split_utf8_splits_characters_across_writes(emulator, fmt):
    path, h, body = request_for(fmt, "split-utf8")
    chunks = []
    with httpx.stream("POST", emulator + path, headers=h, json=body, timeout=10) as r:
        chunks = list(r.iter_raw())
    whole = b"".join(chunks)
    whole.decode("utf-8")

    def broken(c: bytes) -> bool:
        try:
            c.decode("utf-8")
            return False
        except UnicodeDecodeError:
            return True

    assert sum(broken(c) for c in chunks) >= 3
    text = text_of(decode_bytes(fmt, whole).result())
    assert "😀" in text or "🦩" in text or "👩‍💻" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_ping_heavy(emulator, fmt):
    r = post(emulator, fmt, "ping-heavy")
    plain = post(emulator, fmt, "text").content
    got = decode_bytes(fmt, r.content).result()
    assert text_of(got) == text_of(decode_bytes(fmt, plain).result())
    if fmt == "anthropic":
        assert r.content.count(b"event: ping") > 10
    elif fmt == "gemini":
        assert r.content.count(b'{"text": ""}') > 10
    else:
        assert r.content.count(b": keepalive\n\n") > 10


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.slow
def test_firehose(emulator, fmt):
    t = time.monotonic()
    got = decoded(emulator, fmt, "firehose", timeout=60, **({"max_tokens": 100_000} if fmt == "anthropic" else {}))
    assert time.monotonic() - t < 20
    assert got["frames"] >= 20000 and got["terminated"] is True


def test_long_is_a_few_thousand_words_at_a_readable_pace():
    conv = Conversation(prompt="Tell me about the history of tea")
    for fmt in FORMATS:
        plan = build_plan(fmt, "long", conv)
        words = len(plan.reply.blocks[0].text.split())
        assert 2000 <= words <= 5000
        total = sum(d for d, _ in schedule(fmt, plan, 1.0))
        assert 5 < total < 40, total


@pytest.mark.slow
def test_default_pacing_looks_like_a_model(paced_emulator):
    path, h, body = request_for("anthropic", "text")
    with httpx.Client(timeout=10) as client:
        t0 = time.monotonic()
        arrivals = []
        with client.stream("POST", paced_emulator + path, headers=h, json=body) as r:
            for chunk in r.iter_raw():
                if b"text_delta" in chunk:
                    arrivals.append(time.monotonic() - t0)
        paced = time.monotonic() - t0
        assert 0.12 < arrivals[0] < 1.0           # the first token waits
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        assert gaps and sum(gaps) / len(gaps) < 0.08
        t0 = time.monotonic()
        fast = client.post(paced_emulator + path, headers={**h, **FAST}, json=body)
        assert time.monotonic() - t0 < paced / 3  # x-emulator-speed: 0 sends it at once
        assert fast.status_code == 200 and decode_bytes("anthropic", fast.content).result()["terminated"]


@pytest.mark.slow
def test_fifty_concurrent_streams(paced_emulator):
    async def one(client: httpx.AsyncClient, i: int) -> dict:
        fmt = FORMATS[i % 4]
        path, h, body = request_for(fmt, ["text", "tool-call", "thinking", "ping-heavy"][i % 4],
                                    prompt=f"Question number {i}: what is {i} + {i}?")
        r = await client.post(paced_emulator + path, headers=h, json=body)
        assert r.status_code == 200
        return decode_bytes(fmt, r.content).result()

    async def main() -> list[dict]:
        limits = httpx.Limits(max_connections=60, max_keepalive_connections=60)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            return await asyncio.gather(*(one(client, i) for i in range(50)))

    t = time.monotonic()
    results = asyncio.run(main())
    assert time.monotonic() - t < 15
    assert len(results) == 50 and all(r["terminated"] and r["error"] is None for r in results)
    assert all(r["blocks"] for r in results)


@pytest.mark.slow
def test_stop_ends_open_stalls_promptly():
    server = EmulatorServer(speed=0)
    base = server.start()
    path, h, body = request_for("openai-chat", "stall")
    errors = []

    def client() -> None:
        try:
            with httpx.stream("POST", base + path, headers=h, json=body, timeout=30) as r:
                for _ in r.iter_raw():
                    pass
        except httpx.HTTPError as exc:
            errors.append(exc)

    import threading

    th = threading.Thread(target=client)
    th.start()
    time.sleep(0.3)
    t = time.monotonic()
    server.stop()
    assert time.monotonic() - t < 5
    th.join(5)
    assert not th.is_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(base + "/health", timeout=2)


# -- request bodies with fields of the wrong JSON type ------------------------------------------------------------
_FULL_EXTRAS = {
    "openai-chat": {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
                    "tool_choice": "auto", "temperature": 0.5, "max_tokens": 50},
    "openai-responses": {"instructions": "s", "max_output_tokens": 100, "reasoning": {"effort": "low"},
                         "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]},
    "anthropic": {"tools": [{"name": "f", "input_schema": {"type": "object"}}], "system": "s", "temperature": 0.5,
                  "thinking": {"type": "enabled", "budget_tokens": 1024}, "tool_choice": {"type": "auto"}},
    "gemini": {"generationConfig": {"temperature": 0.5, "maxOutputTokens": 100,
                                    "thinkingConfig": {"thinkingBudget": 10, "includeThoughts": True}},
               "systemInstruction": {"parts": [{"text": "s"}]},
               "tools": [{"functionDeclarations": [{"name": "f", "parameters": {"type": "object"}}]}]},
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.slow
def test_request_fields_of_the_wrong_type_get_the_providers_400_never_a_crash(fmt):
    from core.servers.emulator import providers as pv

    path, headers, body = request_for(fmt, "text", **_FULL_EXTRAS[fmt])
    headers = {k.lower(): v for k, v in headers.items()}
    refused = 0
    for where in list(json_paths(body))[1:]:
        for value in WRONG_TYPES:
            raw = json.dumps(replaced(body, where, value)).encode()
            try:
                parsed = pv.parse_request(fmt, headers, {}, raw, "text")
            except pv.ProviderErrorResponse as err:
                refused += 1
                assert 400 <= err.status < 500, (where, value, err.body)
                continue
            plan = build_plan(fmt, parsed.model, parsed.conversation)   # what it accepts, it can answer
            plan.encode_options = dict(parsed.options)
            schedule(fmt, plan, 0)
    assert refused > 10


def test_a_wrong_type_is_answered_in_the_providers_error_shape(emulator):
    for fmt, field, value in (("openai-chat", "tools", 7), ("anthropic", "tools", "s"),
                              ("gemini", "generationConfig", 7), ("openai-responses", "tools", 7)):
        path, headers, body = request_for(fmt, "text")
        r = httpx.post(emulator + path, headers=headers, json={**body, field: value})
        assert r.status_code == 400, (fmt, r.text)
        err = r.json()
        if fmt == "anthropic":
            assert err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
        elif fmt == "gemini":
            assert err["error"]["status"] == "INVALID_ARGUMENT" and err["error"]["code"] == 400
        else:
            assert err["error"]["type"] == "invalid_request_error" and err["error"]["code"] == "invalid_type"
    assert httpx.post(emulator + path, headers=headers, json=body).status_code == 200   # and it keeps serving


# -- input usage counts the history ------------------------------------------------------------------------------
def _two_turns(fmt: str, answer: str) -> dict:
    """The request overrides of a follow-up "And Spain?" after PROMPT and `answer`, in each format."""
    if fmt == "openai-chat":
        return {"messages": [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": answer},
                             {"role": "user", "content": "And Spain?"}]}
    if fmt == "openai-responses":
        return {"input": [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": answer},
                          {"role": "user", "content": "And Spain?"}]}
    if fmt == "anthropic":
        return {"messages": [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": answer},
                             {"role": "user", "content": "And Spain?"}]}
    return {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}, {"role": "model", "parts": [{"text": answer}]},
                         {"role": "user", "parts": [{"text": "And Spain?"}]}]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_follow_up_is_counted_for_its_whole_history(emulator, fmt):
    """Each API bills the history it is sent as input: a follow-up counted only its last message (43 input
    tokens after a first turn's 78)."""
    first = decoded(emulator, fmt, "text")
    answer = text_of(first)
    follow_up = decoded(emulator, fmt, "text", **_two_turns(fmt, answer))
    alone = decoded(emulator, fmt, "text", prompt="And Spain?")
    inp = lambda r: r["usage"]["input_tokens"]   # noqa: E731
    assert inp(follow_up) >= inp(first) + len(answer) // 4 > inp(alone)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_escape_in_a_prompt_is_answered_not_a_500(emulator, fmt):
    """`\\ud800` in a request's JSON: Python's parser gives a lone surrogate, which no reply can encode."""
    path, headers, body = request_for(fmt, "text", prompt="PLACEHOLDER")   # (a prompt the reply quotes whole)
    raw = json.dumps(body).replace("PLACEHOLDER", "\\ud800").encode()
    r = httpx.post(emulator + path, headers={**headers, "content-type": "application/json"}, content=raw, timeout=10)
    assert r.status_code == 200, r.text
    assert decode_bytes(fmt, r.content).result()["terminated"]
