"""The scenario catalog and what each scenario does: the scripted reply, its pacing and its fault.

The request's model name selects the scenario (any other name gets `text`); a request header
`x-emulator-scenario` overrides it. `build_plan(format, model, conversation)` returns a `Plan`: the scripted reply
plus how to deliver it. `schedule(format, plan, speed)` turns the encoded events into timed writes:
`[(delay_seconds, bytes), ...]`, followed by the plan's `after` action (complete, drop, stall).
"""
from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from core.wire.encoders import WireEvent, dumps, iter_encode, keepalive, sse_event
from core.servers.emulator.responder import (Conversation, ToolSpec, answer, long_text, thinking_text, tool_arguments, tool_preamble,
                        structured_answer, utf8_flourish, weather_tool)
from core.wire.script import (ScriptBlock, ScriptedReply, ScriptedError, ScriptIds, ScriptUsage, seed_of,
                     split_chars, split_json, split_text)
from core.wire.history import gemini_call_content
from core.servers.emulator.signatures import sign

SCENARIOS: dict[str, str] = {
    "text": "A short, sensible answer to the prompt, paced like a real model (the default for unknown models).",
    "tool-call": "Calls one tool the request declared (or a built-in get_weather) with arguments fitting its schema.",
    "parallel-tools": "Calls two tools at once (two declared tools, or one tool twice with different arguments).",
    "thinking": "A thinking block (with a signature where the format carries one), then the answer; the thinking "
                "text only when the request turns it on, as each API sends it (Anthropic thinking, Gemini "
                "includeThoughts, Responses reasoning.summary; Chat's reasoning_content by model).",
    "mid-stream-error": "Starts answering, then the provider's own in-band error event after HTTP 200.",
    "http-429": "HTTP 429 with the provider's rate-limit error body and a retry-after header.",
    "http-500": "HTTP 500 with the provider's internal-error body.",
    "drop": "Starts answering, then the connection is cut mid-stream (no end marker, incomplete body).",
    "stall": "Starts answering, then sends nothing more and keeps the connection open.",
    "malformed-json": "One event in the middle carries truncated JSON; the rest of the stream is normal.",
    "no-terminator": "A complete answer without the format's end marker ([DONE], message_stop, ...).",
    "split-utf8": "Multi-byte characters (accents, CJK, emoji) split across separate writes.",
    "ping-heavy": "Keepalives between every event and during the wait for the first token.",
    "firehose": "Tens of thousands of tiny deltas (about 11,000 tokens), as fast as possible; raise max tokens "
                "for all of it.",
    "long": "A few thousand words (about 3,000 tokens) at a readable pace; raise max tokens for all of it.",
    "thinking-tools": "Thinks, then calls a tool, as a reasoning model does; the follow-up must hand the thinking "
                      "back as issued: Anthropic's signed thinking block first, the Responses reasoning item before "
                      "its function_call, and (emulating Gemini 3) the thoughtSignature on the functionCall part, "
                      "without which Gemini answers 400.",
    "thinking-tools-lenient": "The same tool round, emulating models where passing the reasoning back is optional "
                              "(Gemini 2.5: a functionCall without its thoughtSignature is accepted).",
    "tool-rounds": "Calls one declared tool per round, for two or three rounds (one per declared tool, at least "
                   "two), then answers from every result: an automatic tool loop.",
}
THINKING_TOOL_SCENARIOS = ("thinking-tools", "thinking-tools-lenient")
#: The scenario whose thinking shows only when the request turns thinking on, as each API's does (`thinking_mode`).
THINKING_ON_REQUEST = "thinking"
DEFAULT_SCENARIO = "text"


def scenario_for(model: str | None, override: str | None = None) -> str:
    for name in (override, model):
        if not name:
            continue
        n = name.strip().lower()
        if n.startswith("models/"):
            n = n[len("models/"):]
        if n in SCENARIOS:
            return n
        tail = n.rsplit("/", 1)[-1]
        if tail in SCENARIOS:
            return tail
    return DEFAULT_SCENARIO


@dataclass
class Pacing:
    first_token: float = 0.22     # seconds before the first content event
    per_fragment: float = 0.010   # seconds between content events
    jitter: float = 0.5           # +- fraction of per_fragment
    batch_bytes: int = 0          # firehose: coalesce writes up to this size, no delays

    def scaled(self, speed: float) -> "Pacing":
        if speed <= 0:
            return Pacing(0.0, 0.0, 0.0, self.batch_bytes)
        return Pacing(self.first_token / speed, self.per_fragment / speed, self.jitter, self.batch_bytes)


@dataclass
class Plan:
    scenario: str
    format: str
    reply: ScriptedReply | None           # None for the HTTP-error scenarios
    pacing: Pacing = field(default_factory=Pacing)
    http_status: int = 200
    after: str = "complete"               # complete | drop | stall
    fault: str | None = None              # malformed-json | split-utf8 | ping-heavy
    stop_sequence: str | None = None      # the request's stop sequence that ended the reply (Anthropic names it)
    legacy_functions: bool = False        # Chat `functions`: calls as `function_call`, not `tool_calls`
    summaries_hidden: bool = False        # Responses without `reasoning.summary`: reasoning items, no summary
    seed: int = 0
    encode_options: dict = field(default_factory=dict)


def _estimate_tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


_TOKEN = re.compile(r"\w+|[^\w\s]", re.U)


def count_tokens(text: str) -> int:
    """A tokenizer-free token count: words and punctuation marks (close to BPE counts for English prose)."""
    return len(_TOKEN.findall(text))


def _block_tokens(b: ScriptBlock) -> int:
    if b.kind == "tool_call":
        return count_tokens(b.arguments) + 4
    return count_tokens(b.text)


def input_tokens(conv: Conversation) -> int:
    """The input tokens a request is counted for (a reply's usage, and the count_tokens endpoints)."""
    if conv.message_chars is None:
        inp = 8 + _estimate_tokens(conv.prompt + conv.system + "".join(r for _, r in conv.tool_results))
    else:   # every turn's words: a follow-up is counted for its whole history, as each API bills it
        inp = 8 + max(1, (conv.message_chars + len(conv.system) + 3) // 4)
    inp += 4 * conv.turns
    for t in conv.tools:
        inp += 12 + _estimate_tokens(str(t.parameters)) + _estimate_tokens(t.description)
    return inp


def _usage(conv: Conversation, blocks: list[ScriptBlock]) -> ScriptUsage:
    inp = input_tokens(conv)
    out = reasoning = 0
    for b in blocks:
        k = _block_tokens(b)
        if b.kind == "thinking":
            reasoning += k
        out += k
    return ScriptUsage(input_tokens=inp, output_tokens=out, reasoning_tokens=reasoning)


def _regroup(pieces: list[str], rng: random.Random, lo: int, hi: int, first_alone: bool = False) -> list[str]:
    out: list[str] = []
    i = 0
    if first_alone and pieces:
        out.append(pieces[0])
        i = 1
    while i < len(pieces):
        n = rng.randint(lo, hi)
        out.append("".join(pieces[i:i + n]))
        i += n
    return out


# How each provider cuts text into deltas: OpenAI about a token per event; Anthropic a few tokens; Gemini a
# quick first chunk, then chunks of a dozen tokens or so (thoughts: whole sentences).
GROUPING = {"openai-chat": (1, 1), "openai-responses": (1, 1), "anthropic": (1, 4), "gemini": (6, 16)}


def fragments_for(fmt: str, kind: str, text: str, rng: random.Random) -> list[str]:
    if kind == "tool_call":
        return [text] if fmt == "gemini" else split_json(text, rng)
    pieces = split_text(text, rng, merge=0.15)
    if fmt == "gemini" and kind == "thinking":
        return _regroup(pieces, rng, 18, 40)
    lo, hi = GROUPING.get(fmt, (1, 1))
    if hi == 1:
        return pieces
    return _regroup(pieces, rng, lo, hi, first_alone=(fmt == "gemini"))


def _tool_calls(conv: Conversation, rng: random.Random, split_rng: random.Random, count: int, ids: ScriptIds,
                fmt: str, choice: int = 0, first_tool: int = 0, signed: bool = False) -> list[ScriptBlock]:
    """`count` calls (from the declared tools, starting at `first_tool`); `signed`: the first Gemini functionCall
    part carries a thoughtSignature (as Gemini 3's thinking models send it)."""
    tools = conv.tools or [weather_tool()]
    if conv.allowed_tools:   # a forced tool, or the allowed ones (one not declared is called with no arguments)
        declared = {t.name: t for t in tools}
        tools = [declared.get(n) or ToolSpec(n) for n in conv.allowed_tools]
    if not conv.parallel_tools:
        count = min(count, 1)
    chosen: list[tuple[ToolSpec, int]] = []
    if count > 1 and len(tools) > 1:
        chosen = [(tools[i], 0) for i in range(min(count, len(tools)))]
    else:
        chosen = [(tools[first_tool % len(tools)], v) for v in range(count)]
    calls = [(t, tool_arguments(t, conv, rng, v)) for t, v in chosen]
    blocks = []
    for k, (t, args) in enumerate(calls):
        if fmt == "anthropic":
            call_id = "toolu_01" + ids.token(f"toolu{choice}.{k}", 22)
        else:
            call_id = "call_" + ids.token(f"call{choice}.{k}", 24)
        sig = None
        if signed and fmt == "gemini" and k == 0:
            sig = sign("gemini-call", gemini_call_content({"name": t.name, "args": json.loads(args)}))
        blocks.append(ScriptBlock("tool_call", fragments_for(fmt, "tool_call", args, split_rng), id=call_id,
                                  name=t.name, choice=choice, signature=sig))
    if fmt == "anthropic" and calls and conv.tool_choice != "required":
        # Claude says what it is about to do before a tool_use block (not when the call is forced: the API then
        # starts the reply with the tool_use)
        pre = ScriptBlock("text", fragments_for(fmt, "text", tool_preamble(calls), split_rng), choice=choice)
        blocks.insert(0, pre)
    return blocks


def tool_rounds_for(conv: Conversation) -> int:
    """How many tool rounds the tool-rounds scenario runs: one per declared tool, two at least, three at most."""
    return max(2, min(3, len(conv.tools)))


def thinking_signature(fmt: str, thinking: str, conv: Conversation) -> str | None:
    """The signature a thinking block gets, bound to its text: Anthropic's signature, Gemini's thoughtSignature,
    the Responses reasoning item's encrypted_content (when the request asked for it); Chat has none."""
    if fmt == "anthropic":
        return sign("anthropic-thinking", thinking)
    if fmt == "gemini":
        return sign("gemini-part", thinking)
    if fmt == "openai-responses" and conv.encrypted_reasoning:
        return sign("responses-reasoning", thinking)
    return None


def thinking_mode(fmt: str, conv: Conversation) -> str:
    """How the `thinking` scenario gives its thinking, as each API does for the request: "shown" (the text),
    "hidden" (the model reasons and the usage counts it, but no text is sent) or "off".

    Anthropic sends thinking blocks only when the request turns thinking on (`thinking` of type `enabled` with
    a `budget_tokens`, or `adaptive`); Gemini sends thought parts only with `thinkingConfig.includeThoughts`,
    and still counts its thinking (`thoughtsTokenCount`) unless `thinkingBudget` is 0; the Responses API gives
    a reasoning model's reasoning item in every reply, with summary text only when `reasoning.summary` is set
    (else `summary: []`). Chat Completions has no thinking in OpenAI's API; the compatible servers that send
    `reasoning_content` (DeepSeek's `deepseek-reasoner`, vLLM's reasoning models) send it by model, with no
    request field, and so does the emulator's `thinking` model."""
    if fmt == "anthropic":
        return "shown" if conv.thinking else "off"
    if fmt == "gemini":
        return "shown" if conv.thinking else ("off" if conv.thinking_off else "hidden")
    if fmt == "openai-responses":
        return "shown" if conv.thinking else "hidden"
    return "shown"


def _thinking_hidden(reply: ScriptedReply, fmt: str) -> ScriptedReply:
    """`reply` with its thinking text taken out and its usage kept (the thinking is still counted): Gemini
    sends no thought part; a Responses reasoning item stays, with no summary (its encrypted_content kept)."""
    if fmt == "openai-responses":
        blocks = [replace(b, fragments=[]) if b.kind == "thinking" else b for b in reply.blocks]
        echo = dict(reply.echo)
        asked = echo.get("reasoning")
        echo["reasoning"] = {**(asked if isinstance(asked, dict) else {}), "summary": None}
        return replace(reply, blocks=blocks, echo=echo)
    return replace(reply, blocks=[b for b in reply.blocks if b.kind != "thinking"])


def _model_name(fmt: str, model: str) -> str:
    return model or "text"


def build_reply(fmt: str, scenario: str, conv: Conversation, model: str, seed: int) -> ScriptedReply:
    """The scripted reply for a scenario (faults are applied on top by `build_plan`). The words are the same in
    every format (they depend on the request only); how they are cut into deltas follows each provider."""
    return _build_reply(fmt, scenario, conv, model, seed)[0]


def _build_reply(fmt: str, scenario: str, conv: Conversation, model: str,
                 seed: int) -> tuple[ScriptedReply, str | None]:
    """The reply, and the stop sequence that ended its (first choice's) text, if one did."""
    ids = ScriptIds(seed=seed_of(seed, fmt), model=_model_name(fmt, model))
    n = max(1, conv.n) if fmt == "openai-chat" else 1
    usage_of = conv            # the whole request counts for the usage ...
    conv = conv.read_view()    # ... the words of the reply come from its first few KiB (linear, bounded work)
    thinking = thinking_mode(fmt, conv) if scenario == THINKING_ON_REQUEST else "off"
    blocks: list[ScriptBlock] = []
    finish = "stop"
    for c in range(n):
        rng = random.Random(seed_of(seed, "choice", c))
        split_rng = random.Random(seed_of(seed, fmt, "split", c))
        # tool_choice: "none" never calls; "required" (any tool, a named one) always does, whatever the scenario
        calls_ok, forced = conv.tool_choice != "none", conv.tool_choice == "required"
        if calls_ok and ((forced and scenario not in ("tool-rounds",) + THINKING_TOOL_SCENARIOS)
                         or (scenario in ("tool-call", "parallel-tools") and not conv.tool_results)):
            blocks += _tool_calls(conv, rng, split_rng, 2 if scenario == "parallel-tools" else 1, ids, fmt, c)
            finish = "tool_calls"
            continue
        if scenario == "tool-rounds":
            if calls_ok and (conv.tool_rounds < tool_rounds_for(conv) or forced):
                blocks += _tool_calls(conv, rng, split_rng, 1, ids, fmt, c, first_tool=conv.tool_rounds)
                finish = "tool_calls"
                continue
            conv = replace(conv, tool_results=list(conv.all_tool_results or conv.tool_results))
        if scenario in THINKING_TOOL_SCENARIOS:
            call = calls_ok and (forced or not conv.tool_results)
            first = [ToolSpec(conv.allowed_tools[0])] if conv.allowed_tools else conv.tools or [weather_tool()]
            text = tool_preamble([(first[0], "{}")]) if call else answer(conv, rng)
            th = thinking_text(conv, text, rng)
            blocks.append(ScriptBlock("thinking", fragments_for(fmt, "thinking", th, split_rng), choice=c,
                                      signature=thinking_signature(fmt, th, conv)))
            if not call:
                blocks.append(ScriptBlock("text", fragments_for(fmt, "text", text, split_rng), choice=c))
            else:
                blocks += _tool_calls(conv, rng, split_rng, 1, ids, fmt, c, signed=True)
                finish = "tool_calls"
            continue
        if scenario == "long":
            text = long_text(conv, rng)
            blocks.append(ScriptBlock("text", fragments_for(fmt, "text", text, split_rng), choice=c))
            continue
        if scenario == "firehose":
            text = long_text(conv, rng, target_words=9000)
            blocks.append(ScriptBlock("text", split_chars(text, split_rng, 1, 4), choice=c))
            continue
        text = answer(conv, rng)
        structured = conv.output_schema is not None
        if structured:           # (a structured-output request: JSON fitting its schema, whatever the scenario says)
            text = structured_answer(conv, text, rng)
        elif scenario == "split-utf8":
            text += utf8_flourish(rng)
        if thinking != "off":
            th = thinking_text(conv, text, rng)
            blocks.append(ScriptBlock("thinking", fragments_for(fmt, "thinking", th, split_rng), choice=c,
                                      signature=thinking_signature(fmt, th, conv)))
        if scenario in ("mid-stream-error", "drop", "stall") and len(text.split()) < 24 and not structured:
            # long enough that the cut lands clearly mid-answer
            text += " " + answer(Conversation(prompt="tell me more about " + (conv.prompt or "this")), rng)
        blocks.append(ScriptBlock("text", fragments_for(fmt, "text", text, split_rng), choice=c))
    # stop sequences: a choice's text ends before the first one it holds, and nothing after it is sent
    stopped: dict[int, str] = {}
    if conv.stop_sequences:
        kept: list[ScriptBlock] = []
        for c in range(n):
            mine, hit = _stop_cut([b for b in blocks if b.choice == c], conv.stop_sequences)
            kept += mine
            if hit is not None:
                stopped[c] = hit
        blocks = kept
    choice_finish = {c: "stop" for c in stopped if c != 0 and finish != "stop"}
    if 0 in stopped and finish != "stop":
        choice_finish = {c: finish for c in range(n) if c not in stopped}
        finish = "stop"
    reply = ScriptedReply(blocks=blocks, finish=finish, ids=ids, n_choices=n,
                          input_tools=[{"name": t.name, "description": t.description, "parameters": t.parameters,
                                        "strict": t.strict} for t in conv.tools], echo=dict(conv.echo))
    reply.choice_finish = choice_finish
    reply.usage = _usage(usage_of, reply.choice_blocks(0))
    if n > 1:
        reply.usage.output_tokens = sum(_usage(usage_of, reply.choice_blocks(c)).output_tokens for c in range(n))
    # max_tokens, on every scenario as the real APIs do: a reply longer than the limit is cut there, with the
    # format's "length" finish (length / max_tokens / MAX_TOKENS / incomplete); with n > 1, each choice
    limit = conv.max_tokens
    if limit is not None and limit > 0:
        reply = _limited(reply, limit, usage_of, fmt)
    if thinking == "hidden":
        reply = _thinking_hidden(reply, fmt)
    return reply, (stopped.get(0) if reply.finish_of(0) == "stop" else None)


#: a stop sequence up to this many characters is looked up among the text's windows of its length; a longer one
#: only where its first this many characters occur
_SHORT_STOP = 16
#: how many places in all the long stop sequences of a request are tried at (each a startswith): past it, the
#: remaining ones are not looked for (no real text repeats a 16-character run anywhere near that often)
STOP_CHECKS = 100_000


def first_stop(text: str, stops: list[str]) -> tuple[int, int, str] | None:
    """The stop sequence of `stops` that `text` holds whose end comes first (as a model stops when it appears;
    a tie goes to the one starting first), as (end, start, sequence); or None. Bounded work whatever the number
    of stops (Anthropic documents no limit): a few are searched for one by one; many in one pass over the text
    (its windows of each short length present, its 16-character runs), then one lookup for each stop."""
    if len(stops) <= 8:
        found = [(i + len(st), i, st) for st in stops if (i := text.find(st)) >= 0]
        return min(found) if found else None
    size = len(text)
    lengths = {len(st) for st in stops if len(st) <= min(_SHORT_STOP, size)}
    # each window of the text by its first start (made from the end, so that the first start is kept)
    windows = {n: {text[i:i + n]: i for i in range(size - n, -1, -1)} for n in lengths}
    runs: dict[str, list[int]] | None = None
    checks = STOP_CHECKS
    best: tuple[int, int, str] | None = None
    seen: set[str] = set()
    for st in stops:
        n = len(st)
        if n > size or st in seen:
            continue
        seen.add(st)
        if n <= _SHORT_STOP:
            i = windows[n].get(st)
        else:
            if runs is None:
                runs = {}
                for p in range(size - _SHORT_STOP + 1):
                    runs.setdefault(text[p:p + _SHORT_STOP], []).append(p)
            i = None
            for p in runs.get(st[:_SHORT_STOP], ()):
                if p + n > size or checks <= 0:
                    break
                checks -= 1
                if text.startswith(st, p):
                    i = p
                    break
        if i is not None and (best is None or (i + n, i, st) < best):
            best = (i + n, i, st)
    return best


def _stop_cut(blocks: list[ScriptBlock], stops: list[str]) -> tuple[list[ScriptBlock], str | None]:
    """`blocks` (one choice's) ended at the first stop sequence its text holds, which is left out with all that
    follows it; and that sequence (the one whose end comes first, as a model stops when it appears), or None."""
    for k, b in enumerate(blocks):
        if b.kind != "text":
            continue
        text = "".join(b.fragments)
        found = first_stop(text, stops)
        if found is None:
            continue
        _, cut, hit = found
        kept = _fragments_before(b.fragments, cut)
        return blocks[:k] + ([replace(b, fragments=kept)] if kept else []), hit
    return blocks, None


def _limited(reply: ScriptedReply, limit: int, usage_of: Conversation, fmt: str) -> ScriptedReply:
    """`reply` with each choice longer than `limit` tokens cut to fit, finishing with "length"."""
    blocks: list[ScriptBlock] = []
    cut_choices: list[int] = []
    outputs = []
    for c in range(max(1, reply.n_choices)):
        mine = reply.choice_blocks(c)
        full = _usage(usage_of, mine)
        if full.output_tokens <= limit:
            blocks += mine
            outputs.append(full.output_tokens)
            continue
        kept = _within(mine, limit, fmt)
        blocks += kept
        cut_choices.append(c)
        outputs.append(limit)
    if not cut_choices:
        return reply
    out = replace(reply, blocks=blocks)
    if reply.n_choices > 1:
        out.choice_finish = {**reply.choice_finish, **{c: "length" for c in cut_choices}}
        if 0 in cut_choices:
            out.finish = "length"
            out.choice_finish = {c: reply.finish_of(c) for c in range(reply.n_choices) if c not in cut_choices}
    else:
        out.finish = "length"
    usage = _usage(usage_of, [b for b in blocks if b.choice == 0])
    usage.output_tokens = sum(outputs)
    usage.reasoning_tokens = min(usage.reasoning_tokens, limit)
    out.usage = usage
    return out


def _fragments_before(fragments: list[str], cut: int) -> list[str]:
    """The fragments that hold a block's first `cut` characters (the last one cut short where it straddles)."""
    kept: list[str] = []
    pos = 0
    for f in fragments:
        if pos + len(f) > cut:
            if cut > pos:
                kept.append(f[:cut - pos])
            break
        kept.append(f)
        pos += len(f)
    return kept


def _within(blocks: list[ScriptBlock], limit: int, fmt: str) -> list[ScriptBlock]:
    """The start of `blocks` whose tokens (counted over each block's text as a whole, as `_usage` counts them)
    fit in `limit`: the fragment the limit falls in is cut there, as a model stops mid-sentence (a Gemini call,
    whose arguments arrive whole, is kept whole or left out). It may be nothing at all, as an API answers when
    the limit comes before the first visible token. A block cut short loses its signature."""
    out: list[ScriptBlock] = []
    left = limit
    for b in blocks:
        if left <= 0:
            break
        if b.kind == "tool_call":
            left -= 4          # the call's name and id
            if left <= 0:
                break
        text = "".join(b.fragments)
        ends = [m.end() for m in itertools.islice(_TOKEN.finditer(text), left + 1)]
        if len(ends) <= left:  # the whole block fits
            out.append(b)
            left -= len(ends)
            continue
        cut = ends[left - 1]   # where the last token that fits ends
        left = 0
        if b.kind == "tool_call" and fmt == "gemini":
            break
        kept = _fragments_before(b.fragments, cut)
        if kept:
            out.append(replace(b, fragments=kept, signature=None))
    return out


def build_plan(fmt: str, model: str, conv: Conversation, scenario_override: str | None = None,
               request_seed: object = None) -> Plan:
    scenario = scenario_for(model, scenario_override)
    seed = seed_of("streamscope-emulator", scenario, model, conv.key(), request_seed)
    plan = Plan(scenario=scenario, format=fmt, reply=None, seed=seed)
    rng = random.Random(seed)
    plan.pacing = Pacing(first_token=rng.uniform(0.15, 0.30), per_fragment=rng.uniform(0.005, 0.015))
    if scenario == "http-429":
        plan.http_status = 429
        return plan
    if scenario == "http-500":
        plan.http_status = 500
        return plan
    reply, plan.stop_sequence = _build_reply(fmt, scenario, conv, model, seed)
    plan.legacy_functions = fmt == "openai-chat" and conv.legacy_functions
    plan.summaries_hidden = (fmt == "openai-responses" and scenario == "thinking"
                             and thinking_mode(fmt, conv) == "hidden")
    if scenario in ("mid-stream-error", "drop", "stall"):
        # cut after about 40% of the answer's tokens (at least one fragment, never all of them)
        counts = [count_tokens(f) or 1 for b in reply.blocks for f in b.fragments]
        target = sum(counts) * 0.4
        keep = used = 0
        while keep < len(counts) - 1 and used + counts[keep] <= target:
            used += counts[keep]
            keep += 1
        keep = max(1, keep)
        reply = reply.truncated(keep)
        if scenario == "mid-stream-error":
            reply.error = _in_band_error(fmt)
        else:
            reply.complete = False
            plan.after = scenario
    elif scenario == "no-terminator":
        reply.terminated = False
    elif scenario in ("malformed-json", "split-utf8", "ping-heavy"):
        plan.fault = scenario
    elif scenario == "firehose":
        plan.pacing = Pacing(0.0, 0.0, 0.0, batch_bytes=32768)
    elif scenario == "long":
        plan.pacing = Pacing(first_token=rng.uniform(0.2, 0.4), per_fragment=0.0045, jitter=0.6)
    if scenario != "firehose":
        # a steady token rate: events carrying more tokens (Anthropic, Gemini) come proportionally less often
        frags = [f for b in reply.blocks if b.kind != "tool_call" for f in b.fragments]
        if frags:
            per_event = sum(count_tokens(f) for f in frags) / len(frags)
            plan.pacing.per_fragment *= max(1.0, per_event)
    plan.reply = reply
    return plan


def _in_band_error(fmt: str) -> ScriptedError:
    if fmt == "anthropic":
        return ScriptedError("overloaded_error", "Overloaded")
    if fmt == "gemini":
        return ScriptedError("UNAVAILABLE", "The model is overloaded. Please try again later.", 503)
    if fmt == "openai-responses":
        return ScriptedError("server_error", "An error occurred while processing your request. You can retry your "
                           "request, or contact us through our help center at help.openai.com if the error persists.")
    return ScriptedError("server_error", "The server had an error while processing your request. Sorry about that!")


# -- delivery ----------------------------------------------------------------------------------------------------

_PACED = ("delta",)


def schedule(fmt: str, plan: Plan, speed: float = 1.0) -> list[tuple[float, bytes]]:
    """The encoded reply as timed writes: [(delay before this write, bytes)]."""
    return list(iter_schedule(fmt, plan, speed))


def iter_schedule(fmt: str, plan: Plan, speed: float = 1.0) -> Iterator[tuple[float, bytes]]:
    """The writes of `schedule`, made one at a time as they are taken: the reply is encoded as it is sent
    (a firehose's first bytes leave before its last events are made)."""
    assert plan.reply is not None
    events: Iterable[WireEvent] = iter_encode(fmt, plan.reply, **plan.encode_options)
    if fmt == "anthropic" and plan.stop_sequence is not None:
        events = (stop_sequence_event(e, plan.stop_sequence) if e.kind == "finish" else e for e in events)
    if plan.legacy_functions:
        events = legacy_function_events(events)
    if plan.summaries_hidden:
        events = unsummarized_events(events)
    rng = random.Random(seed_of(plan.seed, "pacing"))
    pacing = plan.pacing.scaled(speed)
    if plan.fault == "malformed-json":   # (which event is the middle delta: the whole list is needed)
        events = list(events)
        deltas = [i for i, e in enumerate(events) if e.kind == "delta"]
        if len(deltas) > 1:
            deltas = deltas[:-1]   # never the last one: in Gemini it carries the finishReason
        if deltas:
            k = deltas[len(deltas) // 2]
            events[k] = events[k].corrupted()
    if pacing.batch_bytes:
        yield from _batched(events, pacing.batch_bytes)
        return
    first = True
    wrote = False
    ping = keepalive(fmt, plan.reply.ids).data
    for e in events:
        delay = 0.0
        if e.kind in _PACED or (first and e.kind in ("start", "finish", "error")):
            if first:
                delay = pacing.first_token
                first = False
                if plan.fault == "ping-heavy":
                    # keepalives while the "model" thinks about its first token
                    for _ in range(4):
                        yield delay / 5, ping
                    wrote = True
                    delay = delay / 5
            else:
                delay = pacing.per_fragment * (1 + rng.uniform(-pacing.jitter, pacing.jitter))
        if plan.fault == "ping-heavy" and wrote:
            for _ in range(3):
                yield delay / 4, ping
            delay = delay / 4
        if plan.fault == "split-utf8":
            yield from _split_utf8(e.data, delay, pacing)
        else:
            yield delay, e.data
        wrote = True


def legacy_function_events(events: Iterable[WireEvent]) -> Iterator[WireEvent]:
    """Chat chunks in the shape of the deprecated `functions` API: a call is `delta.function_call` (`name` and
    empty `arguments` first, then `arguments` fragments) and the finish reason `function_call`, where the tools
    API has `delta.tool_calls` and `tool_calls`."""
    for e in events:
        payload = e.data[e.payload_start:e.payload_end] if e.payload_start >= 0 else b""
        if b'"tool_calls"' not in payload:
            yield e
            continue
        obj = json.loads(payload)
        for ch in obj.get("choices") or []:
            delta = ch.get("delta") or {}
            calls = delta.pop("tool_calls", None)
            if calls:
                fn = calls[0].get("function") or {}
                delta["function_call"] = ({"name": fn["name"], "arguments": fn.get("arguments", "")} if "name" in fn
                                          else {"arguments": fn.get("arguments", "")})
            if ch.get("finish_reason") == "tool_calls":
                ch["finish_reason"] = "function_call"
        yield sse_event(e.kind, dumps(obj))


def unsummarized_events(events: Iterable[WireEvent]) -> Iterator[WireEvent]:
    """Responses events of a reasoning model asked for no summary: each reasoning item is added and done with
    `summary: []`, and no `response.reasoning_summary_*` event comes between (the sequence numbers count the
    events sent)."""
    dropped = 0
    for e in events:
        if e.payload_start < 0:
            yield e
            continue
        obj = json.loads(e.data[e.payload_start:e.payload_end])
        kind = obj.get("type") or ""
        if kind.startswith("response.reasoning_summary"):
            dropped += 1
            continue
        if isinstance(obj.get("sequence_number"), int):
            obj["sequence_number"] -= dropped
        _no_summaries([obj.get("item")] + list((obj.get("response") or {}).get("output") or []))
        yield sse_event(e.kind, dumps(obj), kind or None)


def _no_summaries(items: list) -> None:
    for item in items:
        if isinstance(item, dict) and item.get("type") == "reasoning":
            item["summary"] = []


def whole_reply(fmt: str, plan: Plan, whole: dict) -> dict:
    """A non-streamed reply object (`assemble`'s) in the shape the request asked for: Chat's legacy
    `message.function_call`, a Responses reasoning item without a summary."""
    if fmt == "openai-chat" and plan.legacy_functions:
        for ch in whole.get("choices") or []:
            msg = ch.get("message") or {}
            calls = msg.get("tool_calls")
            if calls:
                fn = calls[0]["function"]
                ch["message"] = {k: v for k, v in msg.items() if k != "tool_calls"}
                ch["message"]["function_call"] = {"name": fn["name"], "arguments": fn["arguments"]}
            if ch.get("finish_reason") == "tool_calls":
                ch["finish_reason"] = "function_call"
    if fmt == "openai-responses" and plan.summaries_hidden:
        _no_summaries(list(whole.get("output") or []))
    return whole


_END_TURN = b'"stop_reason":"end_turn","stop_sequence":null'


def stop_sequence_event(e: WireEvent, stop: str) -> WireEvent:
    """Anthropic's `message_delta` of a reply a stop sequence ended: `stop_reason` "stop_sequence" and the
    sequence in `stop_sequence` (the rest of the event, padding included, as encoded)."""
    at = e.data.find(_END_TURN, e.payload_start)
    if at < 0:
        return e
    new = b'"stop_reason":"stop_sequence","stop_sequence":' + json.dumps(stop, ensure_ascii=False).encode("utf-8")
    return WireEvent(e.kind, e.data[:at] + new + e.data[at + len(_END_TURN):], e.payload_start,
                     e.payload_end + len(new) - len(_END_TURN))


def _batched(events: Iterable[WireEvent], size: int) -> Iterator[tuple[float, bytes]]:
    buf: list[bytes] = []
    n = 0
    for e in events:
        buf.append(e.data)
        n += len(e.data)
        if n >= size:
            yield 0.0, b"".join(buf)
            buf, n = [], 0
    if buf:
        yield 0.0, b"".join(buf)


def _split_utf8(data: bytes, delay: float, pacing: Pacing) -> list[tuple[float, bytes]]:
    """Cut `data` inside every multi-byte character it holds (at most a few cuts per event)."""
    cuts = []
    i = 0
    while i < len(data) and len(cuts) < 4:
        b = data[i]
        if b >= 0xC0:   # a lead byte: cut right after it, inside the character
            cuts.append(i + 1)
            i += 2
            while i < len(data) and (data[i] & 0xC0) == 0x80:
                i += 1
        else:
            i += 1
    if not cuts:
        return [(delay, data)]
    out = []
    prev = 0
    gap = max(0.002, pacing.per_fragment / 3)
    for k, c in enumerate(cuts):
        out.append((delay if k == 0 else gap, data[prev:c]))
        prev = c
    out.append((gap, data[prev:]))
    return out
