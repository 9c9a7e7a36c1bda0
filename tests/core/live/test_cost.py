"""Cost from the final usage: the price database for a known model, [provider.price], price_as, the demo
providers' reference models, and "no price" (never a guessed number)."""
from __future__ import annotations

import dataclasses
from decimal import Decimal

import genai_prices
import pytest

from core.live.config import (DEMO_PRICE_AS, ConfigError, ProviderConfig, ProviderPrice, demo_providers,
                              dumps_providers, parse_providers)
from core.live.cost import format_usd, price_reply
from core.wire.events import Usage

OPENAI = ProviderConfig("o", "openai-chat", "https://api.openai.com/v1", "gpt-4o-mini")
LOCAL = ProviderConfig("ollama", "openai-chat", "http://127.0.0.1:11434/v1", "llama3.2")
USAGE = Usage(input_tokens=1000, output_tokens=300, cache_read_tokens=400, reasoning_tokens=100)


def db_rates(provider_id: str, model: str):
    return genai_prices.calc_price(genai_prices.Usage(input_tokens=1, output_tokens=1), model,
                                   provider_id=provider_id).model_price


def test_a_known_model_is_priced_from_the_database_by_its_host():
    rates = db_rates("openai", "gpt-4o-mini")
    cost = price_reply(OPENAI, USAGE)
    # input includes the 400 cached tokens (priced at the cache-read rate); reasoning is part of output
    expected = (600 * rates.input_mtok + 400 * rates.cache_read_mtok + 300 * rates.output_mtok) / 1_000_000
    assert cost.usd == expected and cost.usd > 0
    assert cost.source == "database" and cost.priced_as == "openai/gpt-4o-mini"
    assert cost.input_usd + cost.output_usd == cost.usd
    assert cost.text() == format_usd(expected) and "genai-prices" in cost.note


def test_an_anthropic_cache_write_is_priced_at_its_own_rate():
    p = ProviderConfig("a", "anthropic", "https://api.anthropic.com", "claude-haiku-4-5")
    rates = db_rates("anthropic", "claude-haiku-4-5")
    u = Usage(input_tokens=1000, output_tokens=10, cache_read_tokens=200, cache_write_tokens=300)
    expected = (500 * rates.input_mtok + 200 * rates.cache_read_mtok + 300 * rates.cache_write_mtok
                + 10 * rates.output_mtok) / 1_000_000
    assert price_reply(p, u).usd == expected


def test_the_providers_own_price_overrides_the_database():
    p = dataclasses.replace(OPENAI, price=ProviderPrice(Decimal("2"), Decimal("8"), Decimal("0.5")))
    cost = price_reply(p, USAGE)
    assert cost.usd == (600 * 2 + 400 * Decimal("0.5") + 300 * 8) / Decimal(1_000_000)   # $0.0038
    assert cost.usd == Decimal("0.0038") and cost.source == "override"
    # cached_input defaults to input
    plain = price_reply(dataclasses.replace(LOCAL, price=ProviderPrice(Decimal("1"), Decimal("1"))), USAGE)
    assert plain.usd == Decimal(1300) / 1_000_000


def test_an_unknown_model_or_host_has_no_price_and_says_how_to_add_one():
    for p in (LOCAL, dataclasses.replace(OPENAI, model="no-such-model-7")):
        cost = price_reply(p, USAGE)
        assert cost.usd is None and not cost.known and cost.text() == "no price"
        assert "[provider.price]" in cost.note and "providers.toml" in cost.note and p.model in cost.note
    assert price_reply(dataclasses.replace(LOCAL, price_as="openai/no-such-model-7"), USAGE).usd is None


def test_no_final_usage_means_no_price():
    for u in (None, Usage(input_tokens=10), Usage(output_tokens=5)):
        assert price_reply(OPENAI, u).usd is None


def test_price_as_prices_a_self_hosted_copy_as_the_named_model():
    cost = price_reply(dataclasses.replace(LOCAL, price_as="openai/gpt-4o-mini"), USAGE)
    assert cost.usd == price_reply(OPENAI, USAGE).usd and cost.source == "database"
    assert "priced as openai/gpt-4o-mini" in cost.note


def test_demo_providers_show_what_their_reference_model_would_have_cost_labelled_as_such():
    demos = demo_providers("http://127.0.0.1:1")
    assert {p.name: p.price_as for p in demos} == DEMO_PRICE_AS
    for p in demos:
        cost = price_reply(p, USAGE)
        pid, _, model = p.price_as.partition("/")
        assert cost.source == "reference" and cost.priced_as == p.price_as
        assert cost.usd == price_reply(dataclasses.replace(OPENAI, price_as=p.price_as), USAGE).usd
        assert cost.text().endswith(f"(as {p.price_as})") and "demo provider" in cost.note
    bare = dataclasses.replace(demos[0], price_as="")
    assert price_reply(bare, USAGE).usd is None and "emulator scenario" in price_reply(bare, USAGE).note


def test_format_usd_keeps_four_significant_figures_without_exponents():
    cases = {"0": "$0", "0.000123456": "$0.0001235", "0.75": "$0.75", "12.345": "$12.35",
             "0.0000000042": "$0.0000000042"}
    assert {k: format_usd(Decimal(k)) for k in cases} == cases


# -- [provider.price] and price_as in providers.toml ------------------------------------------------------------------
BASE = '[[provider]]\nname = "p"\nformat = "openai-chat"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\n'


def test_price_table_and_price_as_parse_and_round_trip():
    text = BASE + 'price_as = "openai/gpt-4o"\n[provider.price]\ninput = 0.15\ncached_input = 0.075\noutput = 0.6\n'
    [p] = parse_providers(text)
    assert p.price == ProviderPrice(Decimal("0.15"), Decimal("0.6"), Decimal("0.075"))
    assert p.price_as == "openai/gpt-4o"
    assert parse_providers(dumps_providers([p])) == [p]                      # the settings dialog's writer
    assert ProviderConfig.from_json(p.to_json()) == p                        # a capture keeps the price
    assert p.to_json()["price"] == {"input": "0.15", "cached_input": "0.075", "output": "0.6"}
    [plain] = parse_providers(BASE)
    assert plain.price is None and plain.price_as == ""


@pytest.mark.parametrize("bad, says", [
    ("price = 3\n", "must be a table"),
    ("[provider.price]\ninput = 1\n", "'output' is required"),
    ("[provider.price]\ninput = -1\noutput = 1\n", "0 or more"),
    ("[provider.price]\ninput = 'cheap'\noutput = 1\n", "must be a number"),
    ("[provider.price]\ninput = true\noutput = 1\n", "must be a number"),
    ("[provider.price]\ninput = nan\noutput = 1\n", "must be a number"),
    ("[provider.price]\ninput = 1\noutput = 1\nimage = 2\n", "unknown setting"),
    ("price_as = 'gpt-4o'\n", "provider/model"),
    ("price_as = 7\n", "provider/model"),
])
def test_bad_prices_are_refused_with_a_clear_error(bad, says):
    with pytest.raises(ConfigError, match=says):
        parse_providers(BASE + bad)


def test_an_unreadable_price_in_a_capture_is_dropped_not_fatal():
    d = ProviderConfig("p", "openai-chat", "http://x/v1", "m").to_json() | {"price": {"input": "x"}}
    assert ProviderConfig.from_json(d).price is None
