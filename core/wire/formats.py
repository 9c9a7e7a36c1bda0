"""The four wire formats: the one registry of what each is (name, adapter, encoder, endpoint, auth, base URL).

Everything that needs to know about a format reads it here: the adapters and encoders are looked up by name,
the request layer takes the endpoint path and the auth header, the providers file validates its `format`, the
command line lists the choices, the emulator and the capture importer recognise a format, and the GUI offers
them. The names are the contract's (`../shared/CONTRACTS.md`), used in the CLI, the providers file and captures.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from core.wire.errors import LocalProtocolError


@dataclass(frozen=True, slots=True)
class WireFormat:
    name: str                 # the contract's name: openai-chat | openai-responses | anthropic | gemini
    title: str                # for people: "OpenAI Chat Completions"
    module: str               # the module name of its adapter (core.wire.adapters.X) and encoder (core.wire.encoders.X)
    adapter_class: str        # the adapter class in core.wire.adapters.<module>
    encoder_function: str     # the encoder function in core.wire.encoders.<module>
    endpoint: str             # appended to the base URL; "{model}" is the model name, URL-quoted
    auth_header: str          # the header that carries the key
    auth_scheme: str          # how the key is written in it ("Bearer {}" or "{}")
    default_base_url: str     # the provider's own public API, in the official SDKs' convention
    server_path: str          # the path the emulator serves it on (the endpoint for a base URL on the host)

    def new_adapter(self):
        """A new adapter instance (frames -> normalized events)."""
        return getattr(importlib.import_module(f"core.wire.adapters.{self.module}"), self.adapter_class)()

    def encoder(self):
        """The encoder function (ScriptedReply -> WireEvents)."""
        return getattr(importlib.import_module(f"core.wire.encoders.{self.module}"), self.encoder_function)

    def auth_value(self, key: str) -> str:
        return self.auth_scheme.format(key)


REGISTRY: dict[str, WireFormat] = {f.name: f for f in (
    WireFormat("openai-chat", "OpenAI Chat Completions", "openai_chat", "OpenAIChatAdapter", "encode_chat",
               "/chat/completions", "Authorization", "Bearer {}", "https://api.openai.com/v1",
               "/v1/chat/completions"),
    WireFormat("openai-responses", "OpenAI Responses", "openai_responses", "OpenAIResponsesAdapter",
               "encode_responses", "/responses", "Authorization", "Bearer {}", "https://api.openai.com/v1",
               "/v1/responses"),
    WireFormat("anthropic", "Anthropic Messages", "anthropic", "AnthropicAdapter", "encode_anthropic",
               "/v1/messages", "x-api-key", "{}", "https://api.anthropic.com", "/v1/messages"),
    WireFormat("gemini", "Gemini streamGenerateContent", "gemini", "GeminiAdapter", "encode_gemini",
               "/v1beta/models/{model}:streamGenerateContent?alt=sse", "x-goog-api-key", "{}",
               "https://generativelanguage.googleapis.com",
               "/v1beta/models/{model}:streamGenerateContent"),
)}
FORMATS: tuple[str, ...] = tuple(REGISTRY)


def unknown_format_message(name: object) -> str:
    return f"unknown wire format {name!r} (expected one of: {', '.join(FORMATS)})"


def wire_format(name: str) -> WireFormat:
    """The format of that name; `LocalProtocolError` (misuse: the caller passed a name that is not a format)."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise LocalProtocolError(unknown_format_message(name)) from None


# -- recognising a format: from a request path, or from a body's first frames ------------------------------------
_VERSION_SEGMENT = re.compile(r"v\d+(?:(?:alpha|beta)\d*)?")
SNIFF_BYTES = 65536        # a body's format is told from its first frames; at most this much of it is read
#: ... unless the body begins as an event stream whose first event is longer (a 70 KiB `message_start`): then it
#: is read on until that event ends, up to this much (`sniff_pieces`)
SNIFF_LONG_EVENT = 16 << 20
#: how a line of an event stream begins (a field a frame needs, or a comment): one rule for `sniff_pieces` and
#: `core.live.importers.is_event_stream`
SSE_LINE_START = rb"(?:data|event|id|retry)?:"
_FIRST_LINE = re.compile(rb"(?:\xef\xbb\xbf)?[\r\n]*" + SSE_LINE_START)
_SNIFF_FRAMES = 16
#: Anthropic's event names (as `event:` and as the data's `type`); `error` is left out: Responses has it too
_ANTHROPIC_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                               "message_delta", "message_stop", "ping"})


def _path_tail(f: WireFormat) -> tuple[str, ...]:
    """The segments of the format's server path after its version (`/v1beta/models/{model}:x` -> models, ...)."""
    segments = [s for s in f.server_path.split("/") if s]
    return tuple(segments[1:] if segments and _VERSION_SEGMENT.fullmatch(segments[0]) else segments)


def _segment_matches(pattern: str, segment: str) -> bool:
    if "{model}" not in pattern:
        return pattern == segment
    head, _, tail = pattern.partition("{model}")
    return len(segment) > len(head) + len(tail) and segment.startswith(head) and segment.endswith(tail)


_GEMINI_UNSTREAMED = ":generateContent"


def format_for_path(path: str) -> str | None:
    """The wire format a request path names, or None: one of the four endpoints, with or without a version
    (`/v1/messages`, `/messages`), under any prefix an OpenAI-compatible server puts before it (`/openai/v1`,
    `/api/v1`, Azure's `/openai/deployments/NAME`, Vertex's `/v1/projects/.../publishers/google`). A one-segment
    endpoint (`responses`, `messages`) counts only right after a version segment or at the root, so
    `/v1/threads/ID/messages` is not Anthropic's."""
    segments = [s for s in path.split("?", 1)[0].split("/") if s]
    if segments and segments[-1].endswith(_GEMINI_UNSTREAMED):
        # Gemini's method that answers in one JSON reply: the same API, so the same wire format (a tap records
        # it as gemini, not under its fallback)
        segments[-1] = segments[-1][:-len(_GEMINI_UNSTREAMED)] + ":streamGenerateContent"
    for f in REGISTRY.values():
        tail = _path_tail(f)
        if len(segments) < len(tail) or not all(
                _segment_matches(p, s) for p, s in zip(tail, segments[len(segments) - len(tail):])):
            continue
        before = segments[:len(segments) - len(tail)]
        if len(tail) > 1 or not before or _VERSION_SEGMENT.fullmatch(before[-1]):
            return f.name
    return None


def asks_for_stream(path: str, body: object) -> bool:
    """Whether a request asks for an event stream: Gemini's streaming method in the path, or `"stream": true`."""
    last = path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return last.endswith(":streamGenerateContent") or (isinstance(body, dict) and body.get("stream") is True)


def model_from_request(path: str, body: object) -> str:
    """The model a request names: its body's `model`, else the `{model}` of a Gemini path; "" when neither."""
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return body["model"]
    last = path.split("?", 1)[0].rstrip("/").rsplit("/", 2)
    if len(last) == 3 and last[1] == "models" and ":" in last[2]:
        return last[2].split(":", 1)[0]
    return ""


@dataclass(frozen=True, slots=True)
class Sniffed:
    """What a body's frames say about its wire format: the format, the frame that said it, and why."""

    format: str
    frame: int
    reason: str               # for people: 'frame 0 is "event: message_start"'


def _frame_evidence(event: str, data: str) -> tuple[str, str] | None:
    """(format, why) when this one frame is unmistakably of a format; None when it says nothing."""
    if event.startswith("response."):
        return "openai-responses", f'is "event: {event}"'
    if event in _ANTHROPIC_EVENTS:
        return "anthropic", f'is "event: {event}"'
    if not data.startswith("{"):
        return None
    from core.wire.jsonfast import loads

    try:
        d = loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(d, dict):
        return None
    t = d.get("type")
    if isinstance(t, str) and t.startswith("response."):
        return "openai-responses", f'has "type": "{t}"'
    if isinstance(t, str) and t in _ANTHROPIC_EVENTS:
        return "anthropic", f'has "type": "{t}"'
    if d.get("object") == "chat.completion.chunk":
        return "openai-chat", 'has "object": "chat.completion.chunk"'
    if isinstance(d.get("choices"), list):
        return "openai-chat", 'has a "choices" list'
    for key in ("candidates", "usageMetadata", "promptFeedback"):
        if key in d:
            return "gemini", f'has "{key}"'
    return None


class FormatProbe:
    """Watches a stream's first frames and keeps the first one that tells its format (`found`).

    A decoder holds one to notice that it was given the wrong format; `sniff` uses one over a whole body."""

    __slots__ = ("open", "found", "_left")

    def __init__(self) -> None:
        self.open = True                    # False once a frame told the format, or enough frames said nothing
        self.found: Sniffed | None = None
        self._left = _SNIFF_FRAMES

    def see(self, items) -> bool:
        """Look at SSE items (frames; comments and diagnostics are passed over) until one tells the format;
        returns whether it still looks (`open`)."""
        from core.wire.sse import SSEFrame

        for item in items:
            if not isinstance(item, SSEFrame):
                continue
            hit = _frame_evidence(item.event, item.data)
            self._left -= 1
            if hit is not None:
                self.found = Sniffed(hit[0], item.n, f"frame {item.n} {hit[1]}")
            if hit is not None or self._left <= 0:
                self.open = False
                break
        return self.open

    def mismatch(self, declared: str) -> tuple[int, str] | None:
        """(frame, message) when the frames look like another format than `declared`, else None."""
        f = self.found
        if f is None or f.format == declared:
            return None
        return f.frame, f"decoded as {declared}, but the frames look like {f.format} ({f.reason})"


def sniff(data: bytes) -> Sniffed | None:
    """The format a response body's first frames show (reading at most 64 KiB of it), or None."""
    from core.wire.sse import SSEDecoder

    head = data[:SNIFF_BYTES]
    decoder = SSEDecoder()
    probe = FormatProbe()
    probe.see(decoder.feed(head))
    if probe.open and len(head) == len(data):
        probe.see(decoder.end())
    return probe.found


def sniff_pieces(pieces) -> tuple[Sniffed | None, list[bytes]]:
    """What the first frames of a body arriving in `pieces` (an iterable of bytes) say of its format, and the
    pieces read for it (the caller decodes them with the rest). It reads SNIFF_BYTES, as `sniff` does, and on
    past them only while a body that begins with a field line (`data:`, `event:`, ...) is still inside its first
    event, up to SNIFF_LONG_EVENT: so a first event of 70 KiB tells as well as a short one, and a body that is
    no event stream (or one that never ends) is given up at 64 KiB."""
    from core.wire.sse import SSEDecoder, SSEFrame

    decoder, probe = SSEDecoder(), FormatProbe()
    read: list[bytes] = []
    size = 0
    framed = False          # has an event been dispatched?
    head = b""
    for p in pieces:
        read.append(p)
        if len(head) < 64:
            head += p[:64]
        # the first SNIFF_BYTES are looked at alone, whatever the pieces (a 1 MiB read, or 64 KiB slices, tell
        # the same), then the rest only inside a long first event
        parts = (p[:SNIFF_BYTES - size], p[SNIFF_BYTES - size:]) if size < SNIFF_BYTES < size + len(p) else (p,)
        for part in parts:
            if size >= SNIFF_BYTES and (framed or size >= SNIFF_LONG_EVENT or not _FIRST_LINE.match(head)):
                return probe.found, read     # (the piece stays in `read`: one taken is never dropped)
            items = decoder.feed(part)
            size += len(part)
            framed = framed or any(type(i) is SSEFrame for i in items)
            if not probe.see(items):
                return probe.found, read
    probe.see(decoder.end())
    return probe.found, read


def sniff_format(data: bytes) -> str | None:
    """The format a response body looks like from its first frames, or None when nothing says."""
    found = sniff(data)
    return None if found is None else found.format
