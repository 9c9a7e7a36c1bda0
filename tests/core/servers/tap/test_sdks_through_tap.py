"""The official SDKs pointed at a tap in front of the emulator get what they get from the emulator itself, on
every scenario, and the tap captures the very bytes the emulator sent."""
from __future__ import annotations

import json

import httpx
import pytest

from core.servers.emulator.scenarios import SCENARIOS
from core.servers.tap.server import TapServer
from core.servers.tap.upstreams import parse_upstreams
from tests.core.servers.emulator.conftest import PROMPT
from tests.core.servers.tap.test_tap import ended

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
from google.genai import types as genai_types  # noqa: E402

pytestmark = pytest.mark.slow
MSGS = [{"role": "user", "content": PROMPT}]
TOOLS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
STALL_TIMEOUT = 0.6      # the client's own timeout ends the stall scenario, in both paths


def timeout(scenario: str) -> float:
    return STALL_TIMEOUT if scenario == "stall" else 60.0


@pytest.fixture(scope="module")
def tap(emulator):
    server = TapServer(parse_upstreams([emulator]))
    base = server.start()
    yield base, server.tap
    server.stop()


def _outcome(fn):
    """What a client saw: its result, or its error's type and the parts of it that do not vary per request."""
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
        body = getattr(exc, "body", None)
        if isinstance(body, dict):     # request ids differ per request; the error itself must not
            body = {k: v for k, v in body.items() if k not in ("request_id",)}
        return ("error", type(exc).__name__, status, body if not isinstance(body, bytes) else None)


def chat(base, scenario):
    c = openai.OpenAI(base_url=base + "/v1", api_key="sk-tap-sdk-1", max_retries=0, timeout=timeout(scenario),
                      default_headers={"x-emulator-speed": "0"})

    def go():
        text, usage, calls = "", None, {}
        for ch in c.chat.completions.create(model=scenario, messages=MSGS, stream=True,
                                            stream_options={"include_usage": True},
                                            tools=[{"type": "function", "function": {"name": "get_weather",
                                                                                     "parameters": TOOLS}}]):
            usage = ch.usage.model_dump() if ch.usage else usage
            for choice in ch.choices:
                text += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    calls[tc.index] = calls.get(tc.index, "") + (tc.function.arguments or "")
        return text, usage, calls
    return _outcome(go)


def responses(base, scenario):
    c = openai.OpenAI(base_url=base + "/v1", api_key="sk-tap-sdk-1", max_retries=0, timeout=timeout(scenario),
                      default_headers={"x-emulator-speed": "0"})

    def go():
        with c.responses.stream(model=scenario, input=PROMPT) as s:
            r = s.get_final_response()
        return r.output_text, r.usage.model_dump(), [o.type for o in r.output]
    return _outcome(go)


def messages(base, scenario):
    c = anthropic.Anthropic(base_url=base, api_key="sk-ant-tap-sdk-1", max_retries=0, timeout=timeout(scenario),
                            default_headers={"x-emulator-speed": "0"})

    def go():
        with c.messages.stream(model=scenario, max_tokens=512, messages=MSGS,
                               tools=[{"name": "get_weather", "input_schema": TOOLS}]) as s:
            m = s.get_final_message()
        return m.model_dump(exclude={"id"}), m.id
    return _outcome(go)


def gemini(base, scenario):
    c = genai.Client(api_key="AIza-tap-sdk-1", http_options=genai_types.HttpOptions(
        base_url=base, timeout=int(timeout(scenario) * 1000), headers={"x-emulator-speed": "0"}))

    def go():
        return [ch.model_dump(exclude={"sdk_http_response"}) for ch in
                c.models.generate_content_stream(model=scenario, contents=PROMPT)]
    return _outcome(go)


CLIENTS = {"openai-chat": chat, "openai-responses": responses, "anthropic": messages, "gemini": gemini}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("fmt", list(CLIENTS))
def test_an_sdk_through_the_tap_gets_what_it_gets_directly(tap, emulator, fmt, scenario):
    base, t = tap
    client = CLIENTS[fmt]
    direct = client(emulator, scenario)
    before = len(t.exchanges)
    tapped = client(base, scenario)
    assert tapped == direct
    if scenario not in ("stall", "drop"):
        assert direct[0] == "ok" or scenario in ("http-429", "http-500", "mid-stream-error", "malformed-json",
                                                 "no-terminator")
    ex = ended(t, before + 1)
    assert ex.format == fmt
    if scenario == "stall":
        assert ex.run.error["type"] == "client_cancelled"
    elif scenario == "drop":
        assert ex.run.error["type"] == "connection_dropped"


@pytest.mark.parametrize("fmt", list(CLIENTS))
def test_the_captured_bytes_are_the_upstreams(tap, emulator, fmt):
    """The request the SDK sent, sent again straight to the emulator (its replies are deterministic), gives
    the bytes the tap captured."""
    base, t = tap
    before = len(t.exchanges)
    assert CLIENTS[fmt](base, "parallel-tools")[0] == "ok"
    ex = ended(t, before + 1)
    req = ex.run.request
    headers = {k: v for k, v in req.headers.items() if v != "[REDACTED]" and k.lower() != "content-length"}
    headers[{"openai-chat": "authorization", "openai-responses": "authorization", "anthropic": "x-api-key",
             "gemini": "x-goog-api-key"}[fmt]] = "Bearer k" if fmt.startswith("openai") else "k"
    again = httpx.request(req.method, req.url, headers=headers, content=json.dumps(req.body).encode())
    assert again.status_code == 200 and again.content == ex.run.body and len(ex.run.body) > 300
