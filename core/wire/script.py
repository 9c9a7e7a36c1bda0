"""The scripted reply: what the emulator's encoders turn into each provider's wire format.

A `ScriptedReply` is format-neutral: blocks (text, thinking, tool calls, refusals), each already split into the
fragments that will become one streamed delta each; canonical usage; a canonical finish reason; optionally an
in-band error that ends the stream early; and the ids the encoders put on the wire, all derived from one seed so
the same request always produces the same reply.
"""
from __future__ import annotations

import base64
import hashlib
import random
import re
import string
from dataclasses import dataclass, field, replace
from typing import Literal

BlockKind = Literal["text", "thinking", "tool_call", "refusal"]
FINISHES = ("stop", "length", "tool_calls", "content_filter")

_ALNUM = string.ascii_letters + string.digits
_B64 = string.ascii_letters + string.digits + "+/"
_B64URL = string.ascii_letters + string.digits + "-_"


@dataclass(slots=True)
class ScriptBlock:
    kind: BlockKind
    fragments: list[str] = field(default_factory=list)   # text / thinking / refusal pieces, or argument pieces
    id: str | None = None          # tool calls: the call id (chat `call_...`, Anthropic `toolu_...`)
    name: str | None = None        # tool calls
    signature: str | None = None   # thinking signature (Anthropic, Gemini thoughtSignature)
    choice: int = 0                # OpenAI Chat n>1; every other format keeps choice 0 only

    @property
    def text(self) -> str:
        return "".join(self.fragments)

    @property
    def arguments(self) -> str:
        return "".join(self.fragments)


@dataclass(slots=True)
class ScriptUsage:
    """Canonical usage, as `decode` reports it: input counts every prompt token (cached ones included), output
    every generated token (reasoning included)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class ScriptedError:
    """An in-band error that ends the stream after the blocks streamed so far."""

    type: str = "server_error"
    message: str = "The server had an error while processing your request. Sorry about that!"
    code: int | str | None = None


@dataclass(slots=True)
class ScriptIds:
    """Every id and name an encoder puts on the wire, derived from the reply's seed."""

    seed: int = 0
    model: str = "text"
    created: int = 1767225600

    def _rng(self, salt: str) -> random.Random:
        return random.Random(f"{self.seed}:{salt}")

    def token(self, salt: str, n: int, alphabet: str = _ALNUM) -> str:
        r = self._rng(salt)
        return "".join(r.choice(alphabet) for _ in range(n))

    def hex(self, salt: str, n: int) -> str:
        return self.token(salt, n, "0123456789abcdef")

    # OpenAI Chat
    @property
    def chat_id(self) -> str:
        return "chatcmpl-" + self.token("chat", 29)

    @property
    def system_fingerprint(self) -> str:
        return "fp_" + self.hex("fp", 10)

    # OpenAI Responses
    @property
    def response_id(self) -> str:
        return "resp_" + self.hex("resp", 50)

    def item_id(self, prefix: str, n: int) -> str:
        return f"{prefix}_" + self.hex(f"item{prefix}{n}", 50)

    # Anthropic
    @property
    def message_id(self) -> str:
        return "msg_01" + self.token("amsg", 22)

    @property
    def request_id(self) -> str:
        return "req_011C" + self.token("areq", 20)

    # Gemini
    @property
    def gemini_response_id(self) -> str:
        return self.token("gresp", 23, _B64URL)

    def obfuscation(self, n: int) -> str:
        """OpenAI's `obfuscation` field: random characters that pad each event to a less telling length."""
        r = self._rng(f"obf{n}")
        return "".join(r.choice(_ALNUM) for _ in range(r.randint(2, 16)))

    def padding(self, n: int) -> str:
        """Anthropic pads many `data:` objects with spaces before their final brace."""
        r = self._rng(f"pad{n}")
        return " " * (r.choice((0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))


@dataclass(slots=True)
class ScriptedReply:
    blocks: list[ScriptBlock] = field(default_factory=list)
    usage: ScriptUsage = field(default_factory=ScriptUsage)
    finish: str = "stop"                 # canonical: stop | length | tool_calls | content_filter
    error: ScriptedError | None = None     # in-band error after the blocks (no finish, no usage, no terminator)
    complete: bool = True                # False: the stream is cut after the last fragment (drop, stall)
    terminated: bool = True              # False: everything but the format's end marker
    ids: ScriptIds = field(default_factory=ScriptIds)
    n_choices: int = 1                   # OpenAI Chat n
    choice_finish: dict[int, str] = field(default_factory=dict)   # a choice's finish where it differs from `finish`
    input_tools: list[dict] = field(default_factory=list)   # the request's tools, for the Responses echo
    #: request fields the Responses API repeats in its response object (instructions, temperature, store, ...)
    echo: dict = field(default_factory=dict)

    @property
    def model(self) -> str:
        return self.ids.model

    def choice_blocks(self, choice: int = 0) -> list[ScriptBlock]:
        return [b for b in self.blocks if b.choice == choice]

    def finish_of(self, choice: int = 0) -> str:
        return self.choice_finish.get(choice, self.finish)

    def fragment_count(self) -> int:
        return sum(len(b.fragments) for b in self.blocks)

    def truncated(self, keep_fragments: int) -> "ScriptedReply":
        """A copy holding only the first `keep_fragments` fragments (blocks in order); later blocks dropped."""
        blocks: list[ScriptBlock] = []
        left = keep_fragments
        for b in self.blocks:
            if left <= 0:
                break
            take = b.fragments[:left]
            left -= len(take)
            blocks.append(replace(b, fragments=list(take),
                                  signature=b.signature if len(take) == len(b.fragments) else None))
        return replace(self, blocks=blocks)


# -- helpers used by the scenario builder and tests ------------------------------------------------------------

_WORDISH = re.compile(r"\s*[^\s]+|\s+$", re.S)


def split_text(text: str, rng: random.Random, merge: float = 0.25, max_len: int = 24) -> list[str]:
    """Token-like fragments: words with their leading space, punctuation often on its own, sometimes two words
    merged (as real streams do). The fragments concatenate to `text` exactly."""
    pieces: list[str] = []
    for m in _WORDISH.finditer(text):
        w = m.group(0)
        # split trailing punctuation off as its own token most of the time
        core = w.rstrip(".,;:!?)\"'")
        if core and core != w and rng.random() < 0.7:
            pieces.append(core)
            pieces.append(w[len(core):])
        else:
            pieces.append(w)
    out: list[str] = []
    for p in pieces:
        if out and rng.random() < merge and len(out[-1]) + len(p) <= max_len and not out[-1].endswith("\n"):
            out[-1] += p
        else:
            out.append(p)
    # long pieces (URLs, code) are cut so no single delta is huge
    final: list[str] = []
    for p in out:
        if len(p) > max_len * 2:   # (cut by index: re-slicing the rest each time would be quadratic)
            last = (len(p) - max_len - 1) // max_len * max_len   # where the final piece (<= 2 * max_len) starts
            final.extend(p[i:i + max_len] for i in range(0, last, max_len))
            p = p[last:]
        final.append(p)
    return final or ([text] if text else [])


def split_json(text: str, rng: random.Random) -> list[str]:
    """Argument fragments the way OpenAI and Anthropic stream them: a few characters at a time."""
    out: list[str] = []
    i = 0
    while i < len(text):
        n = rng.randint(1, 7)
        out.append(text[i:i + n])
        i += n
    return out


def split_chars(text: str, rng: random.Random, lo: int = 1, hi: int = 4) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        n = rng.randint(lo, hi)
        out.append(text[i:i + n])
        i += n
    return out


def seed_of(*parts: object) -> int:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return int.from_bytes(h.digest()[:8], "big")


def fake_signature(rng: random.Random, n: int = 180) -> str:
    """A base64 blob shaped like Anthropic's thinking signature or Gemini's thoughtSignature."""
    raw = bytes([0x12, 0x99]) + bytes(rng.randrange(256) for _ in range(n))
    return base64.b64encode(raw).decode("ascii")
