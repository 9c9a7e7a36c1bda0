"""Re-encode a recorded stream in another provider's wire format.

`translate_bytes(src, dst, data) -> (bytes, notes)`: decode `data` with the core (the same pipeline as
`decode`), rebuild a format-neutral scripted reply from the decoded blocks, keeping every delta as it was
fragmented, then encode it with the emulator's encoders. `notes` says what the target format cannot carry
(thinking signatures, refusals, server-tool blocks, extra choices, cache-write or reasoning token counts, ...).
"""
from __future__ import annotations


from core.wire.encoders import encode_bytes
from core.wire.formats import FORMATS, unknown_format_message
from core.wire.jsonfast import loads
from core.wire.script import ScriptBlock, ScriptedReply, ScriptedError, ScriptIds, ScriptUsage, seed_of
from core.wire.pipeline import StreamDecoder

_CARRIES_REFUSAL = ("openai-chat", "openai-responses")


def _int(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def reply_from_decoder(d: StreamDecoder, target: str, seed: int = 0) -> tuple[ScriptedReply, list[str], dict]:
    """The decoded reply as a scripted reply for `target`, the notes, and the target's encoder options."""
    notes: list[str] = []
    r = d.reply
    src = d.format
    blocks: list[ScriptBlock] = []
    dropped_other: list[str] = []
    sigs = foreign_sigs = refusals = redacted = gen_ids = bad_args = empty = 0
    choices = sorted({b.choice for b in r.blocks.values()})
    if len(choices) > 1 and target != "openai-chat":
        notes.append(f"{len(choices)} choices (n>1) but {target} carries one reply: only choice 0 is kept")
    ids = ScriptIds(seed=seed, model=r.model or "translated")
    for b in r.ordered_blocks():
        if b.choice != 0 and target != "openai-chat":
            continue
        if b.kind == "other":
            dropped_other.append(b.provider_type or "other")
            continue
        kind = b.kind
        if b.redacted:
            redacted += 1
            continue
        if kind == "refusal" and target not in _CARRIES_REFUSAL:
            refusals += 1
            kind = "text"
        sb = ScriptBlock(kind, [p for p in b.parts], choice=b.choice)
        if kind == "tool_call":
            sb.name = b.name or "tool"
            sb.id = b.id
            if target == "gemini":
                try:
                    loads(sb.arguments or "{}")
                except ValueError:
                    bad_args += 1
            elif not sb.id:
                prefix = "toolu_01" if target == "anthropic" else "call_"
                sb.id = prefix + ids.token(f"tid{b.index}", 22 if target == "anthropic" else 24)
                gen_ids += 1
        if b.signature:
            if target == "gemini" or (target == "anthropic" and kind == "thinking"):
                sb.signature = b.signature
                if target != src:
                    foreign_sigs += 1
            else:
                sigs += 1
        if kind != "tool_call" and not sb.text and not sb.signature:
            empty += 1      # nothing to stream: most formats cannot even open an empty block
            continue
        blocks.append(sb)
    if dropped_other:
        notes.append(f"{len(dropped_other)} built-in/server block(s) ({', '.join(sorted(set(dropped_other)))}) have "
                     f"no equivalent in {target}: dropped")
    if sigs:
        where = "outside thinking blocks" if target == "anthropic" else ""
        notes.append(f"{sigs} signature(s): {target} cannot carry them{' ' + where if where else ''}: dropped")
    if foreign_sigs:    # (kept: a parser under test still meets one; but the API checks whose it is)
        notes.append(f"{foreign_sigs} signature(s) copied from {src} as they were: {target} would reject them in a "
                     f"request's history (a signature is valid only with the API that made it)")
    if empty:
        notes.append(f"{empty} empty text/thinking block(s) (no content, no signature): not sent")
    if redacted:
        notes.append(f"{redacted} redacted thinking block(s): {target} cannot carry them: dropped")
    if refusals:
        notes.append(f"{refusals} refusal block(s): {target} has no refusal blocks: sent as text")
    if gen_ids:
        notes.append(f"{gen_ids} tool call(s) had no id in {src}: ids were generated for {target}")
    if target == "gemini" and any(b.kind == "tool_call" and b.id for b in blocks):
        notes.append("gemini function calls carry no ids: tool call ids dropped")
    if bad_args:
        notes.append(f"{bad_args} tool call(s) with arguments that are not a JSON object: gemini needs whole args "
                     "objects, sent as {}")
    if target == "gemini":
        for a, b in zip(blocks, blocks[1:]):
            if a.kind == b.kind and a.kind in ("text", "thinking"):
                notes.append("adjacent text blocks of one kind become one block in gemini")
                break
    if target == "openai-chat":
        kinds = [b.kind for b in blocks if b.choice == 0 and b.kind != "tool_call"]
        if len(kinds) != len(set(kinds)):
            notes.append("openai-chat has one content stream per choice: blocks of one kind are merged")
    if src == "gemini" and target != "gemini" and any(b.kind == "tool_call" for b in blocks):
        notes.append("gemini sends whole function-call args: each call's arguments are one fragment")

    # usage
    u = r.usage
    usage = ScriptUsage()
    include_usage = u is not None
    if u is None:
        if target != "openai-chat":
            notes.append(f"the {src} stream carried no usage: zeros written ({target} always sends usage)")
    else:
        usage = ScriptUsage(_int(u.input_tokens), _int(u.output_tokens), _int(u.cache_read_tokens),
                            _int(u.cache_write_tokens), _int(u.reasoning_tokens))
        if usage.cache_write_tokens and target != "anthropic":
            notes.append(f"cache-write tokens ({usage.cache_write_tokens}) have no field in {target}: folded into "
                         "input tokens")
        if usage.reasoning_tokens and target == "anthropic":
            notes.append(f"reasoning tokens ({usage.reasoning_tokens}) have no field in anthropic: counted in "
                         "output tokens only")
        if u.total_tokens is not None and u.input_tokens is not None and u.output_tokens is not None and \
                u.total_tokens != u.input_tokens + u.output_tokens:
            notes.append(f"the source total ({u.total_tokens}) is not input + output; {target} gets input + output")

    finish = r.finish.canonical if r.finish is not None else None
    reply = ScriptedReply(blocks=blocks, usage=usage, ids=ids,
                          n_choices=(max(choices) + 1 if choices and target == "openai-chat" else 1))
    if finish in ("stop", "length", "tool_calls", "content_filter"):
        reply.finish = finish
    elif finish is not None and r.error is None:
        reply.finish = "stop"
        notes.append(f"finish reason {r.finish.raw!r} ({finish}) has no equivalent in {target}: sent as stop")
    if r.error is not None:
        raw = r.error.raw if isinstance(r.error.raw, dict) else {}
        inner = raw.get("error") if isinstance(raw.get("error"), dict) else raw
        code = inner.get("code") if isinstance(inner.get("code"), (int, str)) else None
        if target == "gemini" and not isinstance(code, int):
            code = 500
        reply.error = ScriptedError(r.error.type or "error", r.error.message, code)
        if finish is not None or (u is not None and r.finish is not None):
            notes.append(f"the {src} stream sent a finish reason beside its in-band error: in {target} the error "
                         "ends the stream, so that finish reason and the final usage are not sent")
    elif finish is None:
        reply.complete = False
        notes.append(f"the {src} stream never finished: the {target} stream is cut the same way")
    if not r.terminated and r.error is None and finish is not None:
        reply.terminated = False
        notes.append(f"the {src} stream had no end marker: the {target} stream has none either")
    options = {"include_usage": include_usage} if target == "openai-chat" else {}
    return reply, notes, options


def translate_bytes(src: str, dst: str, data: bytes) -> tuple[bytes, list[str]]:
    if dst not in FORMATS:
        raise ValueError(unknown_format_message(dst))
    d = StreamDecoder(src, keep_items=False)
    d.feed(data)
    d.end()
    reply, notes, options = reply_from_decoder(d, dst, seed_of("translate", data[:4096], len(data)))
    return encode_bytes(dst, reply, **options), notes
