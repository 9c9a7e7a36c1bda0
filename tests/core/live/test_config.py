"""Providers file, keys from the environment / keyring, redaction."""
from __future__ import annotations

import tomllib

import pytest

from core.live import config
from core.live.config import (ConfigError, ProviderConfig, default_config_path, demo_providers, dumps_providers,
                         keyring_available, load_providers, mask_bytes, redact, resolve_key, save_providers)

SAMPLE = '''
[[provider]]
name = "openai-4o-mini"
format = "openai-chat"
base_url = "https://api.openai.com/v1"
model = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"

[[provider]]
name = "local"
format = "anthropic"
base_url = "http://10.0.0.5:8080"
model = "claude"
api_key_env = "LOCAL_KEY"
allow_insecure = true
'''


def test_load_contract_example(tmp_path):
    p = tmp_path / "providers.toml"
    p.write_text(SAMPLE)
    provs = load_providers(p)
    assert provs == [ProviderConfig("openai-4o-mini", "openai-chat", "https://api.openai.com/v1", "gpt-4o-mini",
                                    "OPENAI_API_KEY"),
                     ProviderConfig("local", "anthropic", "http://10.0.0.5:8080", "claude", "LOCAL_KEY", True)]


@pytest.mark.parametrize("bad, words", [
    ('[[provider]]\nname="a"\nformat="nope"\nbase_url="http://h"\nmodel="m"\n', "unknown format"),
    ('[[provider]]\nname="a"\nformat="gemini"\nbase_url="http://h"\nmodel="m"\napi_key="sk-x"\n', "never go"),
    ('[[provider]]\nname="a"\nformat="gemini"\nbase_url="ftp://h"\nmodel="m"\n', "base_url"),
    ('[[provider]]\nname="a"\nformat="gemini"\nbase_url="http://h"\n', "'model' is required"),
    ('[[provider]]\nname="a"\nformat="gemini"\nbase_url="http://h"\nmodel="m"\n' * 2, "used twice"),
    ('[[provider]]\nname="a"\nformat="gemini"\nbase_url="http://h"\nmodel="m"\ncolour="red"\n', "unknown setting"),
    ('[[provider]\n', "not valid TOML"),
])
def test_invalid_files_say_why(tmp_path, bad, words):
    p = tmp_path / "p.toml"
    p.write_text(bad)
    with pytest.raises(ConfigError, match=words):
        load_providers(p)


def test_missing_default_is_empty_but_missing_explicit_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(config.sys, "platform", "linux")
    assert default_config_path() == tmp_path / "streamscope" / "providers.toml"
    assert load_providers() == []
    with pytest.raises(ConfigError, match="no such file"):
        load_providers(tmp_path / "nope.toml")


def test_save_round_trips_through_tomllib(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(config.sys, "platform", "linux")
    provs = [ProviderConfig('we"ird\\na\tme', "gemini", "https://g.example/x", "gemini-2.5-flash", "GEMINI_API_KEY"),
             ProviderConfig("ünï", "openai-responses", "http://10.1.1.1/v1", "m", "", allow_insecure=True)]
    path = save_providers(provs + demo_providers("http://127.0.0.1:1"))
    assert path == default_config_path()
    assert load_providers() == provs          # demo providers are never saved
    data = tomllib.loads(path.read_text())
    assert data["provider"][0]["name"] == 'we"ird\\na\tme'
    assert "allow_insecure" not in data["provider"][0] and data["provider"][1]["allow_insecure"] is True


def test_save_refuses_duplicates(tmp_path):
    p = ProviderConfig("a", "gemini", "http://h", "m", "K")
    with pytest.raises(ConfigError):
        save_providers([p, p], tmp_path / "x.toml")
    assert not (tmp_path / "x.toml").exists()


def test_keys_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SECRET_KEY", "sk-zzz-secret-value")
    p = ProviderConfig("a", "openai-chat", "https://h/v1", "m", "MY_SECRET_KEY")
    assert resolve_key(p) == "sk-zzz-secret-value"
    text = dumps_providers([p] + demo_providers("http://127.0.0.1:5"))
    assert "sk-zzz" not in text and config.DEMO_KEY not in text
    assert "sk-zzz" not in repr(p)


def test_resolve_key_env_then_keyring(monkeypatch):
    p = ProviderConfig("a", "openai-chat", "https://h/v1", "m", "SS_TEST_KEY_VAR")
    monkeypatch.delenv("SS_TEST_KEY_VAR", raising=False)
    monkeypatch.setattr(config, "_keyring_get", lambda user: "from-keyring" if user == "SS_TEST_KEY_VAR" else None)
    assert resolve_key(p) == "from-keyring" and config.key_source(p) == "keyring"
    monkeypatch.setenv("SS_TEST_KEY_VAR", " from-env ")
    assert resolve_key(p) == "from-env" and config.key_source(p) == "env"
    assert resolve_key(ProviderConfig("b", "gemini", "http://h", "m", "")) is None
    demo = demo_providers("http://127.0.0.1:7")[0]
    assert resolve_key(demo) == config.DEMO_KEY and config.key_source(demo) == "demo"


def test_no_keyring_means_environment_only(monkeypatch):
    import keyring
    import keyring.backends.fail

    monkeypatch.setattr(keyring, "get_keyring", lambda: keyring.backends.fail.Keyring())
    ok, why = keyring_available(refresh=True)
    try:
        assert ok is False and "environment" in why
        assert config._keyring_get("ANY") is None
        with pytest.raises(ConfigError):
            config.set_keyring_key("ANY", "v")
    finally:
        keyring_available(refresh=True)


def test_demo_providers_follow_the_sdk_base_urls():
    d = {p.name: p for p in demo_providers("http://127.0.0.1:5555/")}
    assert list(d) == ["demo-openai-chat", "demo-openai-responses", "demo-anthropic", "demo-gemini"]
    assert d["demo-openai-chat"].base_url == "http://127.0.0.1:5555/v1"
    assert d["demo-openai-responses"].base_url == "http://127.0.0.1:5555/v1"
    assert d["demo-anthropic"].base_url == "http://127.0.0.1:5555"
    assert d["demo-gemini"].format == "gemini" and d["demo-gemini"].base_url == "http://127.0.0.1:5555"


def test_redact_shapes():
    key = "sk-abcdef123456"
    assert redact(f"Bearer {key} and more", [key]) == "Bearer [REDACTED] and more"
    assert redact("https://h/x?alt=sse&key=AIzaSECRET", []) == "https://h/x?alt=sse&key=[REDACTED]"
    hdrs = {"Authorization": f"Bearer {key}", "x-api-key": "zz", "X-Goog-Api-Key": "zz", "Accept": "x"}
    assert redact(hdrs, []) == {"Authorization": "[REDACTED]", "x-api-key": "[REDACTED]",
                                "X-Goog-Api-Key": "[REDACTED]", "Accept": "x"}
    assert redact([("authorization", "a"), ("x-note", key)], [key]) == [("authorization", "[REDACTED]"),
                                                                       ("x-note", "[REDACTED]")]
    assert redact({"a": [1, {"b": f"x{key}"}]}, [key]) == {"a": [1, {"b": "x[REDACTED]"}]}
    masked, n = mask_bytes(f"..{key}..{key}".encode(), [key])
    assert n == 2 and len(masked) == len(key) * 2 + 4 and key.encode() not in masked
    assert redact(key.encode(), [key]) == b"*" * len(key)



def test_a_key_quoted_cut_short_is_redacted_in_texts_bytes_exports_and_logs(tmp_path):
    """A server's message or a library's log can quote a key minus a few characters: still the key's."""
    import logging

    from core.live import transport
    from core.live.capture import _masked_doc
    key = "sk-ant-api03-Zq8Lx2Vn5Tb7Rk9Wm3Yc6Hd1Jf4Gs0Pe"
    cut = key[:-3]
    assert redact(f"invalid x-api-key {cut}...", [key]) == "invalid x-api-key [REDACTED]..."
    masked, n = mask_bytes(f'{{"error":"{cut}"}}'.encode(), [key])
    assert n == 1 and masked == b'{"error":"' + b"*" * len(cut) + b'"}'
    assert _masked_doc({"m": [f"key {key[4:]}"]}, [key]) == {"m": ["key " + "*" * (len(key) - 4)]}
    record = logging.LogRecord("httpx", logging.DEBUG, __file__, 1, "send %s", (f"x-api-key: {cut}",), None)
    transport._register_secrets([key], True)
    try:
        transport._SecretLogFilter().filter(record)
    finally:
        transport._register_secrets([key], False)
    assert record.getMessage() == "send x-api-key: " + "*" * len(cut)

# -- hostile and clumsy providers files (issue 11, items 13 and 7) -------------------------------------------
def _provider(**fields) -> str:
    row = {"name": '"p"', "format": '"openai-chat"', "base_url": '"http://127.0.0.1:8080/v1"', "model": '"m"'} | fields
    return "[[provider]]\n" + "".join(f"{k} = {v}\n" for k, v in row.items())


def _one_line_error(tmp_path, data: bytes) -> str:
    path = tmp_path / "providers.toml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        load_providers(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message and message.startswith(str(path))
    return message


@pytest.mark.parametrize("field,value,words", [
    ("base_url", '"http://127.0.0.1:99999999/v1"', ["'p'", "base_url", "port"]),
    ("base_url", '"http://127.0.0.1:0/v1"', ["'p'", "base_url", "port 0"]),
    ("base_url", '"http://127.0.0.1:80x/v1"', ["'p'", "base_url"]),
    ("base_url", '"http://127.0.0.1/v1\\u0000evil"', ["'p'", "base_url", "control character"]),
    ("base_url", '"http://127.0.0.1/v1\\r\\nX-Injected: 1"', ["'p'", "base_url", "control character"]),
    ("base_url", '"http://exa mple.com/v1"', ["'p'", "base_url", "white space"]),
    ("base_url", '"http://:8080/v1"', ["'p'", "base_url", "host"]),
    ("model", '"gpt\\u0000x"', ["'p'", "model", "control character"]),
    ("api_key_env", '"KEY\\u0000"', ["'p'", "api_key_env"]),
    ("api_key_env", '"A=B"', ["'p'", "api_key_env"]),
])
def test_bad_fields_are_one_line_errors_naming_the_provider_and_field(tmp_path, field, value, words):
    message = _one_line_error(tmp_path, _provider(**{field: value}).encode())
    assert all(w in message for w in words), message


def test_a_name_with_a_nul_is_named_escaped(tmp_path):
    message = _one_line_error(tmp_path, _provider(name='"a\\u0000b"').encode())
    assert "'a\\x00b'" in message and "name" in message


def test_invalid_utf8_says_where(tmp_path):
    data = _provider().encode() + b'# caf\xe9\n'
    message = _one_line_error(tmp_path, data)
    assert "not UTF-8" in message and "0xe9" in message and "line 6" in message


def test_a_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "providers.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.encode())
    assert [p.name for p in load_providers(path)] == ["openai-4o-mini", "local"]
    assert [p.name for p in config.parse_providers("\ufeff" + SAMPLE)] == ["openai-4o-mini", "local"]


@pytest.mark.parametrize("nested", ["a = " + "[" * 100_000 + "]" * 100_000, "a = " + "{b = " * 100_000 + "}" * 100_000])
def test_a_file_nested_100000_deep_is_a_one_line_error(tmp_path, nested):
    message = _one_line_error(tmp_path, (nested + "\n").encode())
    assert "not valid TOML" in message


def test_a_toml_error_is_one_line(tmp_path):
    message = _one_line_error(tmp_path, b'[[provider]]\nname = "a\nb"\n')
    assert "not valid TOML" in message


def test_a_hundred_thousand_providers_load_and_validate(tmp_path):
    # linear: about a second here (the run --all selection that followed was quadratic: see test_run)
    text = "".join(_provider(name=f'"p{i}"', base_url=f'"http://127.0.0.1:{1024 + i % 60000}/v1"')
                   for i in range(100_000))
    path = tmp_path / "providers.toml"
    path.write_text(text)
    providers = load_providers(path)
    assert len(providers) == 100_000 and providers[-1].name == "p99999"


@pytest.mark.parametrize("env, refused", [
    ("sk-proj-AbCdEf0123456789PASTEDKEY", True), ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv", True),
    ("Xk9Qw2Er7Ty5Ui3Op1As8Df6Gh4Jk0LzXc", True),
    ("OPENAI_API_KEY", False), ("openai-key", False), ("MY_VERY_LONG_PROVIDER_GATEWAY_API_KEY_2026", False),
])
def test_a_key_pasted_as_api_key_env_is_refused_without_echoing_it(env, refused):
    """The settings dialog's "Key variable" took a pasted key, saved it in the file and printed it back ("set the
    environment variable sk-proj-..."): refused, and the message never holds it."""
    text = f'[[provider]]\nname="x"\nformat="openai-chat"\nbase_url="https://api.openai.com/v1"\nmodel="m"\napi_key_env="{env}"\n'
    if not refused:
        assert config.parse_providers(text, "p.toml")[0].api_key_env == env
        return
    with pytest.raises(ConfigError, match="looks like a key itself") as got:
        config.parse_providers(text, "p.toml")
    assert env not in str(got.value)


@pytest.mark.parametrize("url, want", [
    ("https://bob:s3cretpass@gw.example.com/v1/chat/completions", "https://bob:****@gw.example.com/v1/chat/completions"),
    ("https://ghp_token123@github.com/x", "https://****@github.com/x"),                     # a lone token
    ("https://sk-abcdefghij0123:x@h/v1", "https://****:****@h/v1"),                        # a key as the user name
    ("http://u:p@ss@h/p?key=AIzaQ1", "http://u:****@h/p?key=[REDACTED]"),
    ("https://host/a@b", "https://host/a@b"),
])
def test_redact_url_hides_the_userinfo_credentials_and_still_parses(url, want):
    from urllib.parse import urlsplit

    assert config.redact_url(url) == want
    assert config.redact_url(want) == want                  # (idempotent)
    assert urlsplit(want).hostname                          # (brackets there would read as an IPv6 host)
