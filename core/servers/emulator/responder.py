"""Deterministic replies that read sensibly and respond to the prompt.

No model here: a handful of recognizers (capitals, arithmetic, greetings, counting, jokes, poems, weather,
tool results) and, for everything else, a short answer built around the prompt's own words. Tool arguments are
made up from the declared JSON schema, with values taken from the prompt where a property's name says what it
wants (a city, a country, a query, ...). Everything is driven by a `random.Random` the caller seeds from the
request, so the same request always gets the same reply.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field, replace

from core.wire.jsonfast import loads as parse_json

CAPITALS = {
    "france": "Paris", "germany": "Berlin", "italy": "Rome", "spain": "Madrid", "portugal": "Lisbon",
    "united kingdom": "London", "uk": "London", "england": "London", "ireland": "Dublin", "scotland": "Edinburgh",
    "netherlands": "Amsterdam", "belgium": "Brussels", "switzerland": "Bern", "austria": "Vienna",
    "poland": "Warsaw", "sweden": "Stockholm", "norway": "Oslo", "denmark": "Copenhagen", "finland": "Helsinki",
    "greece": "Athens", "turkey": "Ankara", "russia": "Moscow", "ukraine": "Kyiv", "czech republic": "Prague",
    "hungary": "Budapest", "romania": "Bucharest", "egypt": "Cairo", "nigeria": "Abuja", "kenya": "Nairobi",
    "south africa": "Pretoria", "morocco": "Rabat", "japan": "Tokyo", "china": "Beijing", "india": "New Delhi",
    "south korea": "Seoul", "korea": "Seoul", "vietnam": "Hanoi", "thailand": "Bangkok", "indonesia": "Jakarta",
    "australia": "Canberra", "new zealand": "Wellington", "canada": "Ottawa", "united states": "Washington, D.C.",
    "usa": "Washington, D.C.", "america": "Washington, D.C.", "mexico": "Mexico City", "brazil": "Brasília",
    "argentina": "Buenos Aires", "chile": "Santiago", "peru": "Lima", "colombia": "Bogotá", "iceland": "Reykjavík",
}
CAPITAL_NOTES = {
    "Paris": "It sits on the Seine and is also the country's largest city.",
    "Berlin": "It became the capital of reunified Germany in 1990.",
    "Rome": "It is often called the Eternal City.",
    "Tokyo": "Its metropolitan area is the most populous in the world.",
    "Canberra": "It was purpose-built as a compromise between Sydney and Melbourne.",
    "Ottawa": "It was chosen by Queen Victoria in 1857.",
    "London": "It stands on the River Thames.",
    "Madrid": "It lies near the geographic centre of the Iberian Peninsula.",
}
CITY_WEATHER = ["sunny", "partly cloudy", "overcast", "light rain", "clear skies", "a light breeze"]
JOKES = [
    "Why do programmers prefer dark mode? Because light attracts bugs.",
    "I told my computer I needed a break, and it said: \"No problem, I'll go to sleep.\"",
    "Why did the developer go broke? Because he used up all his cache.",
    "There are 10 kinds of people in the world: those who understand binary and those who don't.",
    "A SQL query walks into a bar, walks up to two tables and asks: \"Can I join you?\"",
]
HAIKUS = [
    "Tokens drift like snow,\none by one across the wire,\nthe answer takes shape.",
    "Quiet server hums,\nbytes arrive in measured steps,\nthe stream finds its end.",
    "Morning light on code,\na single delta flickers,\nthen the sentence blooms.",
]
#: characters of each prompt text the recognizers read (see Conversation.read_view): every one of them is linear
#: in its input, and this bound keeps a 32 MB prompt as quick to answer as an 8 KB one
READ_LIMIT = 8192
STOPWORDS = set("""a an the is are was were be been being of to in on for with and or but if then so what which who
whom whose when where why how do does did can could would should will shall may might must i you he she it we they
me my your our their this that these those there here please tell give explain describe about as at by from into
than too very just also any some all more most much many not no yes up down out over under again once s t""".split())


@dataclass
class ToolSpec:
    name: str
    description: str = ""
    parameters: dict = field(default_factory=dict)
    strict: bool = False


@dataclass
class Conversation:
    """What the emulator needs from a request, whatever its wire format."""

    prompt: str = ""                                   # the last user text
    system: str = ""
    tools: list[ToolSpec] = field(default_factory=list)
    tool_results: list[tuple[str, str]] = field(default_factory=list)   # (tool name or id, result text)
    earlier_prompt: str = ""                           # the user text that led to the tool calls
    n: int = 1
    max_tokens: int | None = None
    #: the request turned thinking on (Anthropic `thinking` enabled or adaptive, Gemini `includeThoughts`,
    #: Responses `reasoning.summary`): the `thinking` scenario shows its thinking only then (see
    #: scenarios.thinking_mode)
    thinking: bool = False
    thinking_off: bool = False                         # Gemini `thinkingBudget: 0`: no thinking at all
    legacy_functions: bool = False                     # Chat `functions` without `tools`: the legacy function_call
    turns: int = 1
    #: the characters of every turn's words (`providers._message_chars`): what the usage counts as input, the
    #: history included; None (a Conversation made by hand) counts the prompt and the tool results alone
    message_chars: int | None = None
    tool_rounds: int = 0                               # tool-result turns in the request (rounds done so far)
    all_tool_results: list[tuple[str, str]] = field(default_factory=list)   # every round's, in order
    encrypted_reasoning: bool = False                  # Responses: include=["reasoning.encrypted_content"]
    tool_choice: str = "auto"                          # auto | none (no call) | required (a call, forced)
    allowed_tools: list[str] | None = None             # the tools a call may use (a forced name, allowed names)
    parallel_tools: bool = True                        # False: one call at most (parallel_tool_calls: false, ...)
    stop_sequences: list[str] = field(default_factory=list)   # the reply's text ends before the first one it holds
    #: structured output: the JSON schema the reply's text must fit (`{}` for a JSON-object mode), or None
    output_schema: dict | None = None
    echo: dict = field(default_factory=dict)          # Responses: request fields its response object repeats

    def key(self) -> tuple:
        key = (self.prompt, self.system, tuple(t.name for t in self.tools), tuple(self.tool_results), self.n,
               self.turns)
        return key + (self.tool_rounds,) if self.tool_rounds else key   # (single-turn replies keep their seed)

    def read_view(self) -> "Conversation":
        """What the reply is made from: the texts cut to their first `READ_LIMIT` characters, so that a huge
        prompt costs no more to answer than a long one (the usage still counts the whole request)."""
        cut = READ_LIMIT
        if (len(self.prompt) <= cut and len(self.system) <= cut and len(self.earlier_prompt) <= cut
                and all(len(n) <= cut and len(r) <= cut for n, r in self.tool_results + self.all_tool_results)):
            return self
        return replace(self, prompt=self.prompt[:cut], system=self.system[:cut],
                       earlier_prompt=self.earlier_prompt[:cut],
                       tool_results=[(name[:cut], r[:cut]) for name, r in self.tool_results],
                       all_tool_results=[(name[:cut], r[:cut]) for name, r in self.all_tool_results])


# -- prompt understanding -----------------------------------------------------------------------------------------

def _clean(prompt: str) -> str:
    return " ".join(prompt.split())


def short(prompt: str, limit: int = 80) -> str:
    p = _clean(prompt)
    return p if len(p) <= limit else p[: limit - 1].rstrip() + "…"


_WORD = re.compile(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'-]{2,}")


def keywords(prompt: str, n: int = 4) -> list[str]:
    """The first `n` distinct words of the prompt that are not stop words (one pass, stopping at the n-th)."""
    seen: list[str] = []
    lower: set[str] = set()
    for m in _WORD.finditer(prompt):
        w = m.group(0)
        lw = w.lower()
        if lw not in STOPWORDS and lw not in lower and len(w) <= 40:   # (no word is longer: a blob is no keyword)
            lower.add(lw)
            seen.append(w)
            if len(seen) == n:
                break
    return seen


def first_sentence(prompt: str) -> str:
    """The first sentence of a prompt, with its own end punctuation."""
    p = _clean(prompt)
    m = re.match(r"(.+?[.?!])(\s|$)", p)
    return m.group(1) if m else p


def topic_of(prompt: str) -> str | None:
    """A noun phrase for the prompt's subject ("the sky" from "Tell me about the sky."), or None."""
    p = first_sentence(prompt).rstrip("?.! ")
    m = re.search(r"\b(?:about|on|regarding|explain|describe|what (?:is|are)|who (?:is|was)|tell me about)\s+(.+)$",
                  p, re.I)
    if not m:
        return None
    t = re.sub(r"^(?:the|a|an)\s+", "", m.group(1), flags=re.I)
    t = t.strip(" ,;:")
    if not t:
        return None
    return t if len(t) <= 60 else short(" ".join(t.split()[:8]), 80)


def find_country(prompt: str) -> str | None:
    low = prompt.lower()
    for country in sorted(CAPITALS, key=len, reverse=True):
        if re.search(rf"\b{re.escape(country)}\b", low):
            return country
    return None


def find_places(prompt: str) -> list[str]:
    """Place names the prompt mentions: capitalized words after in/for/at, capitals of countries it names."""
    places: list[str] = []
    for m in re.finditer(r"\b(?:in|for|at|near|to|from|and)\s+((?:[A-Z][\w.'-]*)(?:[ -][A-Z][\w.'-]*)*)", prompt):
        cand = m.group(1).strip(".")
        if cand.lower() in CAPITALS:
            places.append(CAPITALS[cand.lower()])
        elif cand.lower() not in STOPWORDS:
            places.append(cand)
    country = find_country(prompt)
    if country and CAPITALS[country] not in places:
        places.append(CAPITALS[country])
    return list(dict.fromkeys(places))   # (in order, each once)


def _fmt_number(x: float) -> str:
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return f"{x:.6g}"


# (bounded runs: `\d+` then an operator, tried at every digit of a long digit run, would be quadratic)
_ARITHMETIC = re.compile(r"(-?\d{1,30}(?:\.\d{1,30})?)\s{0,8}([-+*/x×÷^])\s{0,8}(-?\d{1,30}(?:\.\d{1,30})?)")


def arithmetic(prompt: str) -> str | None:
    m = _ARITHMETIC.search(prompt)
    if not m:
        return None
    a, op, b = float(m.group(1)), m.group(2), float(m.group(3))
    try:
        val = {"+": a + b, "-": a - b, "*": a * b, "x": a * b, "×": a * b, "/": a / b, "÷": a / b,
               "^": a ** b if abs(b) < 64 else float("inf")}[op]
    except ZeroDivisionError:
        return f"{m.group(1)} {op} {m.group(3)} is undefined: you can't divide by zero."
    sym = {"x": "×", "*": "×", "/": "÷"}.get(op, op)
    return f"{m.group(1)} {sym} {m.group(3)} = {_fmt_number(val)}."


def answer(conv: Conversation, rng: random.Random) -> str:
    """A short, sensible answer to the last user message (or to the tool results)."""
    if conv.tool_results:
        return tool_result_answer(conv, rng)
    prompt = conv.prompt.strip()
    low = prompt.lower()
    if not prompt:
        return "It looks like your message was empty. What would you like to know?"
    country = find_country(prompt)
    if "capital" in low and country:
        city = CAPITALS[country]
        name = country.title() if len(country) > 3 else country.upper()
        if country in ("united states", "usa", "america"):
            name = "the United States"
        elif country in ("united kingdom", "uk"):
            name = "the United Kingdom"
        elif country == "netherlands":
            name = "the Netherlands"
        note = CAPITAL_NOTES.get(city)
        return f"The capital of {name} is {city}." + (f" {note}" if note else "")
    calc = arithmetic(prompt)
    if calc and re.search(r"\d\s{0,8}[-+*/x×÷^]\s{0,8}\d", prompt):
        return calc
    if re.match(r"^(hi|hello|hey|good (morning|afternoon|evening)|greetings)\b", low):
        return rng.choice(["Hello! How can I help you today?", "Hi there! What can I do for you?",
                           "Hey! What would you like to talk about?"])
    m = re.search(r"count (?:from \d{1,9} )?to (\d{1,9})", low)
    if m:
        n = min(int(m.group(1)), 200)
        return ", ".join(str(i) for i in range(1, n + 1)) + "."
    if "joke" in low:
        return rng.choice(JOKES)
    if "haiku" in low or "poem" in low:
        return rng.choice(HAIKUS)
    if "weather" in low:
        place = (find_places(prompt) or ["your area"])[0]
        return (f"I can't check live conditions for {place} from here, but a weather tool could: try the "
                f"tool-call scenario, which calls get_weather for {place}.")
    if re.search(r"\b(who|what) are you\b|\byour name\b|\bwhich model\b", low):
        return ("I'm the StreamScope emulator: a built-in stand-in for real LLM providers that streams "
                "deterministic replies in each provider's own wire format.")
    topic = topic_of(prompt)
    kws = keywords(prompt)
    if topic is None:  # a question that is not about a noun phrase ("Why is the sky blue?"): quote it
        question = short(first_sentence(prompt), 80)
        first = rng.choice([f"Here's a short answer to “{question}”",
                            f"Good question: “{question}”", f"Let's look at “{question}”"])
        if not first.endswith(("?”", ".”", "!”")):
            first += "."
    else:
        first = rng.choice([
            f"Here's a short answer about {topic}.",
            f"Good question about {topic}.",
            f"Let's look at {topic}.",
        ])
    middle = rng.choice([
        f"The key points usually come down to {', '.join(kws[:3]) or 'a few basics'}, and how they fit together.",
        f"In short, it helps to start from what “{kws[0]}” means and build up from there." if kws
        else "In short, it helps to start from the basics and build up from there.",
        f"Most explanations start with “{kws[0]}” and then look at the details." if kws
        else "Most explanations start with the basics and then look at the details.",
    ])
    last = rng.choice([
        "Let me know if you'd like more detail on any part.",
        "I can go deeper on any of these if that helps.",
        "Happy to expand on this with examples.",
    ])
    return f"{first} {middle} {last}"


def _result_phrase(name: str, result: str) -> str:
    """One tool result in words: a forecast, a calculation or an error is quoted as such, anything else verbatim."""
    try:
        data = parse_json(result)   # (a peer's text: no lone surrogate comes back out of it)
    except ValueError:
        data = None
    tool = f"the {name} tool" if name else "the tool"
    if isinstance(data, dict):
        if isinstance(data.get("error"), str):
            return f"{tool} reported an error: {short(data['error'], 160)}"
        if isinstance(data.get("forecast"), str):
            where = data.get("city") or data.get("location")
            return f"{tool} gives {short(data['forecast'], 160)}" + (f" for {where}" if isinstance(where, str) else "")
        if "result" in data and "expression" in data:
            return f"{tool} computed {short(str(data['expression']), 60)} = {short(str(data['result']), 60)}"
        if isinstance(data.get("time"), str):
            return f"{tool} says it is {data['time']}" + (f" in {data['timezone']}" if data.get("timezone") else "")
    return f"{tool} returned {short(result, 160)}"


def tool_result_answer(conv: Conversation, rng: random.Random) -> str:
    parts = []
    for name, result in conv.tool_results:
        parts.append(_result_phrase(name, result))
    joined = "; ".join(parts)
    lead = rng.choice(["Thanks, I have the results.", "Here's what I found.", "Got it."])
    return f"{lead} {joined[0].upper() + joined[1:]}. Let me know if you need anything else."


def thinking_text(conv: Conversation, final_answer: str, rng: random.Random) -> str:
    prompt = short(conv.prompt or "the empty message", 120)
    low = conv.prompt.lower()
    if conv.tool_results:
        kind = "I have tool results to work with, so I should summarize them clearly."
    elif "capital" in low and find_country(conv.prompt):
        kind = "This is a straightforward geography question; the answer is well known."
    elif arithmetic(conv.prompt):
        kind = "This is a small arithmetic problem, so I'll compute it directly and double-check the result."
    else:
        kind = rng.choice(["This is a general question, so a short, clear answer should work.",
                           "I should answer directly and offer to go deeper."])
    plan = rng.choice(["I'll keep the answer brief.", "A concise reply is best here.",
                       "I'll answer in one or two sentences."])
    return (f"The user asks: \"{prompt}\". {kind} Drafting the answer: \"{short(final_answer, 100)}\" "
            f"That reads correctly. {plan}")


def long_text(conv: Conversation, rng: random.Random, target_words: int = 2200) -> str:
    """A few thousand words on the prompt's topic, in sections."""
    topic = (topic_of(conv.prompt) or " ".join(keywords(conv.prompt, 3)) or "your question"
             if conv.prompt.strip() else "streaming language model responses")
    kws = keywords(conv.prompt) or ["streaming", "latency", "tokens"]
    heads = ["Background", "Why it matters", "Core ideas", "A closer look", "Common misconceptions",
             "Practical examples", "Trade-offs", "Measuring it", "Edge cases", "History", "Looking ahead",
             "Putting it together", "Further questions", "A worked example", "Checklist", "Summary"]
    templates = [
        "When people first meet {t}, they tend to notice its most visible features before its structure.",
        "A useful way to think about {t} is to separate what it does from how it does it.",
        "The role of {k} here is easy to underestimate, yet it shapes almost every later decision.",
        "In practice, {t} rarely appears in isolation; it interacts with {k} and with the people using it.",
        "One common mistake is to treat {k} as a detail, when it is often the heart of the matter.",
        "Small choices made early tend to compound, so it pays to be deliberate about {k}.",
        "Consider a simple case: a team adopts {t} and measures the result week by week.",
        "At first the numbers barely move, and then, once {k} is understood, they change quickly.",
        "There is no single right answer, but there are clearly better and worse ways to approach {t}.",
        "Experts often disagree on the details while agreeing on the basics of {k}.",
        "It helps to write down assumptions about {t} explicitly, because unstated ones cause most surprises.",
        "Looking at {k} from the outside, the pattern seems obvious; from the inside it rarely is.",
        "The history of {t} is a story of steady refinement rather than sudden breakthroughs.",
        "Each improvement solved one problem and, almost always, exposed a new one involving {k}.",
        "A good test of understanding is whether you can explain {t} to someone new in a few sentences.",
        "Measuring progress on {k} requires a baseline, a clear metric and the patience to wait for data.",
        "Edge cases matter: what happens to {t} when inputs are empty, enormous or malformed?",
        "Trade-offs are unavoidable, and naming them openly makes discussions about {k} far more productive.",
        "The simplest approach to {t} that works is usually the right place to start.",
        "Later, once the basics of {k} are stable, more ambitious ideas become practical.",
    ]
    words = 0
    out = [f"# {topic[:1].upper() + topic[1:]}: an overview\n"]
    h = 0
    while words < target_words:
        head = heads[h % len(heads)] + ("" if h < len(heads) else f" ({h // len(heads) + 1})")
        h += 1
        out.append(f"\n## {head}\n\n")
        for _ in range(2):
            sentences = [rng.choice(templates).format(t=topic, k=rng.choice(kws)) for _ in range(rng.randint(4, 6))]
            para = " ".join(sentences)
            words += len(para.split())
            out.append(para + "\n\n")
    out.append("In short: start simple, measure honestly, and revisit your assumptions about "
               f"{topic} as you learn more.")
    return "".join(out)


def utf8_flourish(rng: random.Random) -> str:
    return rng.choice([
        " Voilà — café, crème brûlée, naïve façade… 日本語もどうぞ 😀🚀 Ελληνικά, русский, العربية.",
        " Bonne journée ☀️ — 你好，世界！ Grüße aus Zürich 🇨🇭 and ¡olé! ñandú 🦩.",
        " Emoji check: 👩‍💻🧪🔥 — accents: àéîõü — CJK: 漢字かなカナ — math: ∑∫√∞ ≠ ≤ ≥.",
    ])


# -- tool arguments from JSON schemas ----------------------------------------------------------------------------
def structured_answer(conv: Conversation, text: str, rng: random.Random) -> str:
    """The reply's text under a structured-output request: JSON fitting `conv.output_schema` (made up as tool
    arguments are, with `text` where a string property's name says it is the answer), or, in JSON-object mode
    (no schema), `{"answer": text}`. Compact, so that the SDKs' parse helpers read it as the real APIs' is read."""
    root = conv.output_schema or {}
    schema = _lower_types(_inline_refs(root, root))
    if not schema.get("properties") and _stype(schema) != "object":
        return json.dumps({"answer": text}, ensure_ascii=False) if not schema else \
            json.dumps(fake_value(schema, "answer", conv, rng), ensure_ascii=False)
    value = fake_value(schema, "", conv, rng)
    if isinstance(value, dict):
        for k in ("answer", "text", "response", "reply", "content", "summary"):
            if isinstance(value.get(k), str):
                value[k] = text
                break
    return json.dumps(value, ensure_ascii=False)


def _inline_refs(schema, root: dict, depth: int = 0):
    """`schema` with its local `$ref`s (`#/$defs/City`, as pydantic writes nested models) replaced by what they
    point at (bounded: a recursive model stops being expanded past 16 levels)."""
    if depth > 16:
        return {}
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target = root
            for part in ref[2:].split("/"):
                target = target.get(part) if isinstance(target, dict) else None
            return _inline_refs(target, root, depth + 1) if isinstance(target, dict) else {}
        return {k: _inline_refs(v, root, depth + 1) for k, v in schema.items() if k not in ("$defs", "definitions")}
    if isinstance(schema, list):
        return [_inline_refs(v, root, depth + 1) for v in schema]
    return schema


def _lower_types(schema, depth: int = 0):
    """Gemini's OpenAPI schemas name their types in capitals (`OBJECT`, `STRING`): JSON Schema's, for fake_value."""
    if depth > 64:
        return schema
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v, depth + 1))
                for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v, depth + 1) for v in schema]
    return schema



def _stype(schema: dict) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if isinstance(t, str):
        return t.lower()
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    if "enum" in schema and schema["enum"]:
        v = schema["enum"][0]
        return "integer" if isinstance(v, int) and not isinstance(v, bool) else "string"
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _stype(schema[key][0])
    return "string"


def fake_value(schema: dict, key: str, conv: Conversation, rng: random.Random, variant: int = 0, depth: int = 0):
    if not isinstance(schema, dict):
        return "example"
    for k in ("anyOf", "oneOf"):
        if schema.get(k) and "type" not in schema:
            opts = [s for s in schema[k] if isinstance(s, dict) and s.get("type") != "null"]
            if opts:
                return fake_value(opts[0], key, conv, rng, variant, depth)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][variant % len(schema["enum"])] if key not in ("unit", "units") else schema["enum"][0]
    if "default" in schema and variant == 0 and schema["default"] is not None:
        return schema["default"]
    t = _stype(schema)
    lk = key.lower()
    if t == "object":
        if depth > 4:
            return {}
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        out = {}
        for name, sub in props.items():
            if name in required or len(out) < 1:
                out[name] = fake_value(sub, name, conv, rng, variant, depth + 1)
        return out
    if t == "array":
        item = schema.get("items") or {"type": "string"}
        n = max(1, int(schema.get("minItems") or 1))
        return [fake_value(item, key.rstrip("s"), conv, rng, variant + i, depth + 1) for i in range(min(n, 3))]
    if t == "integer":
        lo = schema.get("minimum", 1)
        hi = schema.get("maximum", max(lo, 10))
        if "day" in lk or "count" in lk or "num" in lk or "limit" in lk:
            hi = min(hi, max(lo, 5))
        return int(lo + (variant + rng.randint(0, 3)) % max(1, int(hi - lo + 1)))
    if t == "number":
        lo = float(schema.get("minimum", 0.0))
        return round(lo + 1.5 + variant, 2)
    if t == "boolean":
        return True
    # strings
    places = find_places(conv.earlier_prompt or conv.prompt) or ["Paris", "London"]
    if len(places) < 2:
        places = places + [p for p in ("London", "Tokyo", "Paris") if p not in places]
    if any(w in lk for w in ("city", "location", "place", "town", "destination", "where", "address")):
        return places[variant % len(places)]
    if "country" in lk:
        c = find_country(conv.prompt)
        return c.title() if c else ["France", "Japan"][variant % 2]
    if "unit" in lk:
        return "celsius"
    if "timezone" in lk or lk == "tz":
        return ["Europe/Paris", "Europe/London", "Asia/Tokyo"][variant % 3]
    if "date" in lk or schema.get("format") == "date":
        return "2026-01-15"
    if "time" in lk or schema.get("format") == "date-time":
        return "2026-01-15T09:00:00Z"
    if "email" in lk or schema.get("format") == "email":
        return "ada@example.com"
    if "url" in lk or "uri" in lk or schema.get("format") in ("uri", "url"):
        return "https://example.com"
    if "lang" in lk:
        return "en"
    if any(w in lk for w in ("expression", "formula", "equation", "calculation")):
        # an arithmetic expression of the prompt's, else a fixed one: a calculator tool gets something to compute
        found = _ARITHMETIC.search(conv.prompt)
        if found:
            a, op, b = found.groups()
            return f"{a} {'*' if op in 'x×' else '/' if op == '÷' else op} {b}"
        return "12 * (3 + 4)"
    if any(w in lk for w in ("query", "search", "q", "text", "prompt", "question", "topic", "input", "content")):
        return short(topic_of(conv.prompt) or first_sentence(conv.prompt).rstrip("?.! "), 200) if conv.prompt \
            else "example"
    if "name" in lk:
        return ["Ada", "Grace", "Alan"][variant % 3]
    if "id" in lk:
        return f"item-{variant + 1}"
    kws = keywords(conv.prompt)
    return kws[variant % len(kws)] if kws else "example"


def tool_arguments(tool: ToolSpec, conv: Conversation, rng: random.Random, variant: int = 0) -> str:
    schema = tool.parameters or {"type": "object", "properties": {}}
    args = fake_value(schema, "", conv, rng, variant)
    if not isinstance(args, dict):
        args = {}
    return json.dumps(args, separators=(",", ":"), ensure_ascii=False)


def weather_tool() -> ToolSpec:
    return ToolSpec("get_weather", "Get the current weather for a city",
                    {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
                     "required": ["city"]})


def tool_preamble(calls: list[tuple[ToolSpec, str]]) -> str:
    if not calls:
        return ""
    names = sorted({t.name for t, _ in calls})
    try:
        first_args = parse_json(calls[0][1])
    except ValueError:
        first_args = {}
    place = next((v for v in first_args.values() if isinstance(v, str)), None) if first_args else None
    if len(calls) > 1:
        return f"I'll call {' and '.join(names)} for each of these in parallel."
    if place:
        return f"I'll use {names[0]} for {place}."
    return f"I'll use {names[0]} to find out."
