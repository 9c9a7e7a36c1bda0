"""The four wire formats: the one registry of what each is (name, adapter, encoder, endpoint, auth, base URL).

Everything that needs to know about a format reads it here: the adapters and encoders are looked up by name,
the request layer takes the endpoint path and the auth header, the providers file validates its `format`, the
command line lists the choices, the emulator and the capture importer recognise a format, and the GUI offers
them. The names are the contract's (`../shared/CONTRACTS.md`), used in the CLI, the providers file and captures.
"""
from __future__ import annotations

import importlib
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


def sniff_format(data: bytes) -> str | None:
    """The format a response body looks like from its first frames, or None when nothing says."""
    head = data[:4096]
    if b"event: message_start" in head or b'"type":"message_start"' in head or b"content_block_" in head:
        return "anthropic"
    if b"event: response." in head or b'"type":"response.' in head:
        return "openai-responses"
    if b"chat.completion.chunk" in head:
        return "openai-chat"
    if b'"candidates"' in head or b'"usageMetadata"' in head:
        return "gemini"
    return None
