"""The emulator checks a request's conversation as the real API would, and reads what its replies need from it.

`violation(format, parsed, scenario)` runs the history checker (`core.wire.history`) with the rules of the
emulated model (its signatures verified by `signatures.verify`) and returns the provider's own 400 error for the
first rule broken, or None. `annotate(format, parsed)` adds to the parsed conversation what the scenarios use
from earlier turns: how many tool rounds were done, every round's results, and whether a Responses request asked
for encrypted reasoning.
"""
from __future__ import annotations

from typing import Any

from core.servers.emulator import signatures
from core.servers.emulator.providers import (Parsed, ProviderErrorResponse, anthropic_error, gemini_error,
                                             openai_error)
from core.servers.emulator.providers import _text_of as _text_of_result
from core.wire.history import Finding, HistoryRules, check_request, first_error


def rules_for(scenario: str, model: str | None) -> HistoryRules:
    """What the emulated model requires: the thinking-tools scenario emulates Gemini 3 and a reasoning model on
    Responses (reasoning passed back is required); its lenient twin, and every other scenario, do not require it
    (a model named gemini-3... still does, as the real one would)."""
    strict = scenario == "thinking-tools"
    lenient = scenario == "thinking-tools-lenient"
    return HistoryRules(model=model,
                        gemini_signatures="required" if strict else "optional" if lenient else "auto",
                        responses_reasoning="required" if strict else "optional" if lenient else "auto",
                        verify_signature=signatures.verify)


def violation(fmt: str, parsed: Parsed, scenario: str) -> ProviderErrorResponse | None:
    found = first_error(check_request(fmt, parsed.body, rules_for(scenario, parsed.model)))
    return None if found is None else provider_error(fmt, found)


def provider_error(fmt: str, finding: Finding) -> ProviderErrorResponse:
    """The 400 the provider answers for this finding, in its own error shape."""
    if fmt == "anthropic":
        return anthropic_error(400, "invalid_request_error", finding.message)
    if fmt == "gemini":
        return gemini_error(400, finding.message)
    if fmt == "openai-chat":
        param = f"messages.[{finding.message_index}].role" if finding.message_index is not None else "messages"
        return openai_error(400, finding.message, param=param)
    return openai_error(400, finding.message, param="input")


# -- what the replies read from earlier turns ---------------------------------------------------------------
def annotate(fmt: str, parsed: Parsed) -> None:
    body: Any = parsed.body if isinstance(parsed.body, dict) else {}
    rounds, results = _tool_rounds(fmt, body)
    conv = parsed.conversation
    conv.tool_rounds = rounds
    conv.all_tool_results = results
    include = body.get("include") if fmt == "openai-responses" else None
    conv.encrypted_reasoning = isinstance(include, list) and "reasoning.encrypted_content" in include


def _dicts(v: Any) -> list[dict]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _tool_rounds(fmt: str, body: dict) -> tuple[int, list[tuple[str, str]]]:
    """(tool-result turns, every (tool name, result text) in order) of a request body."""
    rounds, results, names = 0, [], {}
    if fmt in ("openai-chat", "openai-responses"):
        chat = fmt == "openai-chat"
        items = _dicts(body.get("messages" if chat else "input"))
        previous = False
        for it in items:
            if chat:
                for tc in _dicts(it.get("tool_calls")):
                    names[tc.get("id")] = (tc.get("function") or {}).get("name")
            elif it.get("type") == "function_call":
                names[it.get("call_id")] = it.get("name")
            is_result = it.get("role") == "tool" if chat else it.get("type") == "function_call_output"
            if is_result:   # a run of consecutive results is one round
                cid, content = (it.get("tool_call_id"), it.get("content")) if chat else (it.get("call_id"),
                                                                                        it.get("output"))
                results.append((names.get(cid) or "", _text_of_result(content)))
                rounds += not previous
            previous = is_result
    elif fmt == "anthropic":
        for m in _dicts(body.get("messages")):
            blocks = _dicts(m.get("content"))
            for b in blocks:
                if b.get("type") == "tool_use":
                    names[b.get("id")] = b.get("name")
            found = [b for b in blocks if b.get("type") == "tool_result"]
            results += [(names.get(b.get("tool_use_id")) or "", _text_of_result(b.get("content"))) for b in found]
            rounds += bool(found)
    else:
        for c in _dicts(body.get("contents")):
            found = [p.get("functionResponse") or p.get("function_response") for p in _dicts(c.get("parts"))]
            found = [f for f in found if isinstance(f, dict)]
            results += [(f.get("name") or "", _text_of_result(f.get("response"))) for f in found]
            rounds += bool(found)
    return rounds, results
