"""What a reply cost, from its final usage: the provider's own `[provider.price]`, else the price database.

    price_reply(provider, usage, at=None, reporting=None) -> Cost

The database is `genai-prices` (pydantic's, kept current for the major providers; imported on first use, and
never asked to update itself over the network: the prices are those of the installed version). Which price
applies, in order:
1. `[provider.price]` in providers.toml (USD per million tokens: input, cached_input, output): an
   OpenAI-compatible or self-hosted server, or a negotiated rate. Cache writes are priced as input and
   reasoning as output (both are already inside the canonical input / output counts).
2. `price_as = "provider/model"`: the database's price for that model (a proxy, a self-hosted copy of a known
   model; the built-in demo providers use it to show what the real model would have cost, labelled as such).
3. the database's price for the provider's `model` at its `base_url` (the host tells the database which
   provider it is: api.openai.com, api.anthropic.com, generativelanguage.googleapis.com, ...).
Otherwise: "no price", with how to add one. A price is never guessed: an unknown model, an unknown host or a
reply without final input and output counts gets no number.

Usage semantics (CONTRACTS.md): input counts every prompt token (cache reads and writes included), output
counts every generated token (reasoning included); the database reads them the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal

from core.live.config import ProviderConfig, ProviderPrice
from core.wire import events as ev

PER_MILLION = Decimal(1_000_000)
HOW_TO_ADD = ('add its prices to the provider in providers.toml: [provider.price] input = ..., output = ... '
              '(optional cached_input = ...), in USD per million tokens; or price_as = "provider/model" for a '
              'model the price database knows')


@dataclass(frozen=True, slots=True)
class Cost:
    """One reply's price. `usd` is None when there is no price; `note` then says why and how to add one."""

    usd: Decimal | None
    source: str               # "override" ([provider.price]) | "database" | "reference" (a demo's model) | "none"
    priced_as: str = ""       # what was priced: "openai/gpt-4o-mini", or "" for an override / no price
    note: str = ""            # how the figure was obtained, or why there is none
    input_usd: Decimal | None = None
    output_usd: Decimal | None = None

    @property
    def known(self) -> bool:
        return self.usd is not None

    def text(self) -> str:
        """"$0.000123" (six significant figures at most), "$0.000123 (as openai/gpt-4o-mini)" for a demo's
        reference price, or "no price"."""
        if self.usd is None:
            return "no price"
        figure = format_usd(self.usd)
        return f"{figure} (as {self.priced_as})" if self.source == "reference" else figure


def format_usd(usd: Decimal) -> str:
    """Dollars to four significant figures, never in scientific notation: "$0.000123", "$0.75", "$12.34"."""
    if usd == 0:
        return "$0"
    if abs(usd) >= 1:
        return "$" + format(usd.quantize(Decimal("0.01"), ROUND_HALF_UP), "f")
    decimals = -usd.adjusted() + 3
    return "$" + format(usd.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP), "f").rstrip("0").rstrip(".")


def no_price(why: str) -> Cost:
    return Cost(None, "none", note=f"no price: {why}")


def price_reply(provider: ProviderConfig, usage: ev.Usage | None, at: float | None = None,
                reporting: str | None = None) -> Cost:
    """The reply's cost from its final usage (see the module docstring); `at` is when the request was sent
    (epoch seconds), so a database price that changed since is taken as it was then. `reporting`: how the
    reply reported its usage (`Reply.usage_reporting`); a count given only up front, before any output
    (Anthropic's `message_start` of a reply cut short), counts no output and prices nothing."""
    if usage is None or usage.input_tokens is None or usage.output_tokens is None:
        return no_price("the reply reported no final input and output token counts")
    if reporting is not None and reporting not in ev.OUTPUT_COUNTED:
        return no_price("the reply's output tokens were only reported up front, before the output: no final count "
                        "came")
    if provider.price is not None:
        return _override(provider.price, usage)
    if provider.price_as:
        pid, _, model = provider.price_as.partition("/")
        cost = _database(usage, model, at, provider_id=pid)
        if cost.known and provider.is_demo:
            return Cost(cost.usd, "reference", provider.price_as,
                        f"demo provider: what {provider.price_as} would have cost for this usage "
                        f"({cost.note})", cost.input_usd, cost.output_usd)
        if cost.known:
            return Cost(cost.usd, "database", provider.price_as, f"priced as {provider.price_as} ({cost.note})",
                        cost.input_usd, cost.output_usd)
        return cost
    if provider.is_demo:
        return no_price(f"the demo model {provider.model!r} is an emulator scenario, not a priced model; "
                        f"set price_as to price it as a real model")
    return _database(usage, provider.model, at, provider_api_url=provider.base_url)


def _override(price: ProviderPrice, usage: ev.Usage) -> Cost:
    cached = min(max(usage.cache_read_tokens or 0, 0), usage.input_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    input_usd = ((usage.input_tokens - cached) * price.input + cached * cached_rate) / PER_MILLION
    output_usd = usage.output_tokens * price.output / PER_MILLION
    return Cost(input_usd + output_usd, "override", "", "the provider's own [provider.price] in providers.toml",
                input_usd, output_usd)


def warm_up() -> None:
    """Load the price database now (about 0.25 s: the module, then its bundled snapshot on the first price), so
    that the first run's end does not: a window calls this while the user is still typing."""
    _database(ev.Usage(input_tokens=1, output_tokens=1), "gpt-4o", None, provider_id="openai")


def _database(usage: ev.Usage, model: str, at: float | None, **where) -> Cost:
    try:
        import genai_prices
    except ImportError:
        return no_price(f"the price database (genai-prices) is not installed; {HOW_TO_ADD}")
    counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
              "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
              "output_reasoning_tokens": usage.reasoning_tokens}
    when = None if at is None else datetime.fromtimestamp(at, tz=timezone.utc)
    try:
        calc = genai_prices.calc_price(genai_prices.Usage(**{k: v for k, v in counts.items() if v is not None}),
                                       model, genai_request_timestamp=when, **where)
    except LookupError:
        host = where.get("provider_api_url")
        place = f"at {host}" if host else f"for provider {where.get('provider_id')!r}"
        return no_price(f"the price database (genai-prices {genai_prices.__version__}) does not know model "
                        f"{model!r} {place}; {HOW_TO_ADD}")
    except (ValueError, ArithmeticError) as exc:   # counts the database cannot price (negative, inconsistent)
        return no_price(f"the price database could not price this usage ({exc})")
    ref = f"{calc.provider.id}/{calc.model.id}"
    return Cost(calc.total_price, "database", ref, f"genai-prices {genai_prices.__version__}: {ref}",
                calc.input_price, calc.output_price)
