"""StreamScope core: sans-IO decoding of LLM streaming responses (no sockets, no Qt)."""
