"""The four wire formats, by the names used everywhere (CLI, config, captures)."""
from __future__ import annotations

from core.wire.errors import ProtocolError

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")


def adapter_for(format_name: str):
    """A new adapter instance for a wire format name; ProtocolError for an unknown name."""
    if format_name == "openai-chat":
        from core.wire.adapters.openai_chat import OpenAIChatAdapter
        return OpenAIChatAdapter()
    if format_name == "openai-responses":
        from core.wire.adapters.openai_responses import OpenAIResponsesAdapter
        return OpenAIResponsesAdapter()
    if format_name == "anthropic":
        from core.wire.adapters.anthropic import AnthropicAdapter
        return AnthropicAdapter()
    if format_name == "gemini":
        from core.wire.adapters.gemini import GeminiAdapter
        return GeminiAdapter()
    raise ProtocolError(f"unknown wire format {format_name!r} (expected one of: {', '.join(FORMATS)})")
