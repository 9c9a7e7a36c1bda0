"""Extra headers, query parameters and body fields against the emulator: what the server received, and the
values read from the environment redacted in every export type."""
from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs

import pytest

from core.live.capture import EXPORT_TYPES, export, read_jsonl
from core.live.config import EnvRef, ProviderConfig
from core.live.request import PromptSpec
from core.live.transport import run_prompt
from core.servers.emulator.server import create_app
from core.servers.serving import BackgroundServer

HEADER_SECRET = "hdr-secret-0123456789"
QUERY_SECRET = "qry-secret-9876543210"
KEY = "sk-the-api-key-000111"


class Recorder:
    """The emulator app, keeping each request's path, query, headers and body as received."""

    def __init__(self, app) -> None:
        self.app = app
        self.seen: list[dict] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        rec = {"path": scope["path"], "query": parse_qs(scope["query_string"].decode()),
               "headers": {k.decode().lower(): v.decode() for k, v in scope["headers"]}, "body": b""}
        self.seen.append(rec)

        async def recv():
            msg = await receive()
            if msg["type"] == "http.request":
                rec["body"] += msg.get("body", b"")
            return msg

        return await self.app(scope, recv, send)


@pytest.fixture(scope="module")
def recording_emulator():
    rec = Recorder(create_app(speed=0))
    server = BackgroundServer(rec)
    base = server.start()
    yield base, rec
    server.stop()


def _providers(base: str) -> list[ProviderConfig]:
    return [
        ProviderConfig("azure-like", "openai-chat", base + "/v1", "text",
                       headers={"api-key": EnvRef("SS_E2E_HEADER"), "HTTP-Referer": "https://me.example/app"},
                       query={"api-version": "2024-10-21", "tenant_token": EnvRef("SS_E2E_QUERY")},
                       extra_body={"seed": 11, "response_format": {"type": "json_object"}}),
        ProviderConfig("gemini-extra", "gemini", base, "text", "SS_E2E_KEY",
                       headers={"X-Tenant": EnvRef("SS_E2E_HEADER")},
                       extra_body={"generationConfig": {"topK": 3}}),
    ]


def test_extras_reach_the_server_and_never_an_export(recording_emulator, monkeypatch, tmp_path):
    base, rec = recording_emulator
    monkeypatch.setenv("SS_E2E_HEADER", HEADER_SECRET)
    monkeypatch.setenv("SS_E2E_QUERY", QUERY_SECRET)
    monkeypatch.setenv("SS_E2E_KEY", KEY)
    rec.seen.clear()
    spec = PromptSpec("What is the capital of France?", stop=("END",), top_p=0.8, seed=5, temperature=0.2)
    runs = asyncio.run(run_prompt(_providers(base), spec, read_timeout=10))
    assert [r.status for r in runs] == ["done", "done"], [r.error for r in runs]

    chat = next(s for s in rec.seen if s["path"].endswith("/chat/completions"))
    assert chat["headers"]["api-key"] == HEADER_SECRET and chat["headers"]["http-referer"] == "https://me.example/app"
    assert chat["query"] == {"api-version": ["2024-10-21"], "tenant_token": [QUERY_SECRET]}
    body = json.loads(chat["body"])
    assert (body["seed"], body["response_format"], body["stop"], body["top_p"]) == (
        11, {"type": "json_object"}, ["END"], 0.8)   # the provider's seed wins over the prompt's
    gem = next(s for s in rec.seen if "streamGenerateContent" in s["path"])
    assert gem["headers"]["x-tenant"] == HEADER_SECRET and gem["headers"]["x-goog-api-key"] == KEY
    assert json.loads(gem["body"])["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 1024,
                                                          "stopSequences": ["END"], "topP": 0.8, "seed": 5,
                                                          "topK": 3}

    written = []
    for t in EXPORT_TYPES:
        path = tmp_path / f"capture{t.extension}"
        export(runs, path)
        written += sorted(tmp_path.glob(f"capture*{t.extension}"))
    assert {p.suffix for p in written} == {t.extension for t in EXPORT_TYPES}
    for p in written:
        data = p.read_bytes()
        for secret in (HEADER_SECRET, QUERY_SECRET, KEY):
            assert secret.encode() not in data, (p.name, secret)
    capture = (tmp_path / "capture.jsonl").read_text()
    first = next(json.loads(line) for line in capture.splitlines() if '"type":"run"' in line)
    assert dict(first["request"]["headers"])["api-key"] == "[REDACTED]"
    assert "tenant_token=[REDACTED]" in first["request"]["url"]
    assert "HTTP-Referer" in capture and "api-version=2024-10-21" in capture   # what is not secret stays
    # the capture replays, still without them, and keeps where each value came from
    again = read_jsonl(tmp_path / "capture.jsonl")
    assert again[0].provider.headers["api-key"] == EnvRef("SS_E2E_HEADER")
    assert HEADER_SECRET not in json.dumps(again[0].request.to_json())
    # the summaries printed by `run` and the notes
    from core.cli.run import summary_line

    for r in runs:
        text = summary_line(r) + "\n".join(r.notes)
        assert HEADER_SECRET not in text and QUERY_SECRET not in text and KEY not in text
