"""Per-provider extra headers, query parameters and body fields: the providers file, the dialog's text form,
the request builders and the redaction of the values read from the environment."""
from __future__ import annotations

import pytest

from core.live.config import (REDACTED, ConfigError, EnvRef, ProviderConfig, parse_providers,
                              save_providers, load_providers)
from core.live.provider_extras import ExtrasError, merge_body, parse_table_text, table_text
from core.live.recorder import prepare_run
from core.live.request import PromptSpec, build_request, curl_command

AZURE = '''
[[provider]]
name = "azure"
format = "openai-chat"
base_url = "https://example.openai.azure.com/openai/v1"
model = "gpt-4o"

[provider.headers]
api-key = { env = "SS_TEST_AZURE_KEY" }
HTTP-Referer = "https://me.example/app"

[provider.query]
api-version = "2024-10-21"

[provider.extra_body]
seed = 7
response_format = { type = "json_object" }
'''
SECRET = "azure-secret-value-0123"


def test_the_tables_are_read_and_written_back(tmp_path):
    (p,) = parse_providers(AZURE)
    assert p.headers == {"api-key": EnvRef("SS_TEST_AZURE_KEY"), "HTTP-Referer": "https://me.example/app"}
    assert p.query == {"api-version": "2024-10-21"}
    assert p.extra_body == {"seed": 7, "response_format": {"type": "json_object"}}
    path = save_providers([p], tmp_path / "providers.toml")
    text = path.read_text()
    assert "[provider.headers]" in text and 'api-key = {env = "SS_TEST_AZURE_KEY"}' in text
    assert load_providers(path) == [p]
    # a capture keeps the reference, never a value
    assert ProviderConfig.from_json(p.to_json()) == p
    assert p.to_json()["headers"]["api-key"] == {"env": "SS_TEST_AZURE_KEY"}


BASE = '[[provider]]\nname="a"\nformat="openai-chat"\nbase_url="https://h"\nmodel="m"\n'


@pytest.mark.parametrize("tables, words", [
    ('[provider.headers]\napi-key = "sk-literal"\n', r"headers.api-key: keys never go in the providers file"),
    ('[provider.headers]\nAuthorization = "Bearer x"\n', "keys never go"),
    ('[provider.query]\nkey = "AIza..."\n', r"query.key: keys never go"),
    ('[provider.extra_body]\napi_key = "x"\n', r"extra_body: api_key: keys never go"),
    ('[provider.extra_body]\nmetadata = { access_token = "sk-plain" }\n', r"extra_body: metadata.access_token: keys"),
    ('[provider.extra_body]\nclient_secret = "s"\n', r"extra_body: client_secret: keys never go"),
    ('[provider.extra_body]\naws_secret_access_key = "s"\n', r"extra_body: aws_secret_access_key: keys"),
    ('[provider.headers]\n"bad name" = "x"\n', "not a header name"),
    ('[provider.headers]\nContent-Length = "3"\n', "sets this header itself"),
    ('[provider.headers]\nX-A = "1"\nx-a = "2"\n', "named twice"),
    ('[provider.headers]\nX-A = "line\\nbreak"\n', "control character"),
    ('[provider.headers]\nX-A = 3\n', "must be a string or"),
    ('[provider.headers]\nX-A = { env = "1BAD" }\n', "variable name"),
    ('[provider.headers]\nX-A = { env = "OK", other = 1 }\n', "variable name"),
    ('headers = "x"\n', "'headers' must be a table"),
    ('[provider.extra_body]\nwhen = 1979-05-27\n', "not a JSON value"),
    ('[provider.extra_body]\nx = nan\n', "not a JSON number"),
])
def test_bad_entries_say_which_and_why(tables, words):
    with pytest.raises(ConfigError, match=words) as exc:
        parse_providers(BASE + tables)
    assert "provider 'a'" in str(exc.value) and "\n" not in str(exc.value)


def test_the_dialog_text_form_round_trips():
    (p,) = parse_providers(AZURE)
    for kind in ("headers", "query", "extra_body"):
        table = getattr(p, kind)
        assert parse_table_text(table_text(table), kind) == table
    # plain text where TOML would need quotes, JSON in extra_body, dotted names, comments
    assert parse_table_text("HTTP-Referer = https://me.example\n# a comment\n\nX-Title=My app", "headers") == {
        "HTTP-Referer": "https://me.example", "X-Title": "My app"}
    assert parse_table_text("api-version = 2024-10-21", "query") == {"api-version": "2024-10-21"}
    assert parse_table_text('response_format = {"type": "json_object"}\ngenerationConfig.seed = 3\n'
                            'generationConfig.topK = 5\nstop = ["a", "b"]', "extra_body") == {
        "response_format": {"type": "json_object"}, "generationConfig": {"seed": 3, "topK": 5}, "stop": ["a", "b"]}
    with pytest.raises(ExtrasError, match="line 2"):
        parse_table_text("seed = 1\nno equals sign", "extra_body")
    with pytest.raises(ExtrasError, match="neither TOML nor JSON"):
        parse_table_text("x = not json", "extra_body")
    with pytest.raises(ExtrasError, match="given twice"):
        parse_table_text("seed = 1\nseed = 2", "extra_body")
    with pytest.raises(ExtrasError, match="TOML"):
        parse_table_text("x = null", "extra_body")


def test_merge_body_merges_tables_and_says_what_it_replaced():
    body = {"generationConfig": {"temperature": 0.5, "maxOutputTokens": 10}, "stream": True}
    replaced = merge_body(body, {"generationConfig": {"seed": 1, "temperature": 0.1}, "stream": True})
    assert body == {"generationConfig": {"temperature": 0.1, "maxOutputTokens": 10, "seed": 1}, "stream": True}
    assert replaced == ["generationConfig.temperature"]


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_extras_reach_every_format(fmt, monkeypatch):
    monkeypatch.setenv("SS_TEST_AZURE_KEY", SECRET)
    (p,) = parse_providers(AZURE.replace('"openai-chat"', f'"{fmt}"'))
    req = build_request(p, PromptSpec("hi", temperature=0.3), None)
    assert req.headers["api-key"] == SECRET and req.headers["HTTP-Referer"] == "https://me.example/app"
    assert "api-version=2024-10-21" in req.url
    if fmt == "gemini":
        assert "alt=sse" in req.url   # the built parameter stays
    assert req.body["seed"] == 7 and req.body["response_format"] == {"type": "json_object"}
    assert any("extra_body" in n for n in req.notes)
    shown = req.redacted([SECRET])
    assert shown.headers["api-key"] == REDACTED and SECRET not in repr(shown)


def test_a_secret_too_short_to_search_for_is_still_masked_by_name(monkeypatch):
    monkeypatch.setenv("SS_SHORT", "ab")
    p = ProviderConfig("p", "gemini", "https://h", "m", headers={"X-Tenant": EnvRef("SS_SHORT")},
                       query={"token": EnvRef("SS_SHORT")})
    run = prepare_run(p, PromptSpec("hi"))
    assert run._send.headers["X-Tenant"] == "ab" and "token=ab" in run._send.url
    assert run.request.headers["X-Tenant"] == REDACTED and "token=" + REDACTED in run.request.url


def test_extra_headers_replace_built_ones_and_are_noted():
    p = ProviderConfig("p", "anthropic", "https://h", "m", headers={"Anthropic-Version": "2024-01-01",
                                                                    "User-Agent": "mine/1"})
    req = build_request(p, PromptSpec("hi"), None)
    assert req.headers["Anthropic-Version"] == "2024-01-01" and "anthropic-version" not in req.headers
    assert req.headers["User-Agent"] == "mine/1"
    assert sum("replaces the built one" in n for n in req.notes) == 2


def test_a_missing_variable_is_not_sent_and_says_which(monkeypatch):
    monkeypatch.delenv("SS_TEST_AZURE_KEY", raising=False)
    (p,) = parse_providers(AZURE)
    run = prepare_run(p, PromptSpec("hi"))
    assert run.status == "error" and not run.sent
    assert run.error["type"] == "missing_key" and "SS_TEST_AZURE_KEY" in run.error["message"]
    assert "api-key" not in run.request.headers
    assert any("api-key left out" in n for n in run.request.notes)


def test_curl_names_the_variables(monkeypatch):
    monkeypatch.setenv("SS_TEST_AZURE_KEY", SECRET)
    monkeypatch.setenv("SS_SIG", "sig-secret-value")
    (p,) = parse_providers(AZURE)
    p.query["sig"] = EnvRef("SS_SIG")
    run = prepare_run(p, PromptSpec("hi"))
    cmd = curl_command(run.request, None, p)
    assert SECRET not in cmd and "sig-secret-value" not in cmd
    assert '-H "api-key: ${SS_TEST_AZURE_KEY}"' in cmd and "sig=${SS_SIG}" in cmd
    assert "'HTTP-Referer: https://me.example/app'" in cmd


def test_a_value_the_server_echoes_is_masked_like_the_key(monkeypatch):
    import json

    monkeypatch.setenv("SS_TEST_AZURE_KEY", SECRET)
    (p,) = parse_providers(AZURE)
    run = prepare_run(p, PromptSpec("hi"))
    assert SECRET in run._secrets
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": f"your header was {SECRET}"}, "finish_reason": None}]}
    run._begin(0.0)
    run._on_headers(1, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    run._on_chunk(2, b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n")
    run._finish(3, None)
    run._scrub()
    assert SECRET.encode() not in run.body and SECRET not in json.dumps(run.result())
    assert any("masked" in n for n in run.notes)


def test_ordinary_body_fields_named_like_keys_in_part_are_let_through():
    """A secret's word among a field's parts is refused (access_token); fields of the APIs themselves are not."""
    from core.live.config import parse_providers

    body = '[provider.extra_body]\nmax_tokens = 9\nprompt_cache_key = "user-7"\nmetadata = { key_count = 2 }\n'
    p = parse_providers(BASE + body, "p.toml")[0]
    assert p.extra_body["prompt_cache_key"] == "user-7" and p.extra_body["max_tokens"] == 9
