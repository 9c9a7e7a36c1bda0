"""StreamScope's built-in provider emulator: a real loopback HTTP server speaking the four wire formats.

API
    from core.servers.emulator.server import EmulatorServer, create_app
    with EmulatorServer(speed=0) as base:           # uvicorn in a background thread, free loopback port
        ...                                          # base == "http://127.0.0.1:PORT"
    server = EmulatorServer(); base = server.start(); server.stop()
    app = create_app(speed=1.0, scenario=None, recordings=None)     # the ASGI app itself

    from core.wire.encoders import encode
    from core.wire.encoders import encode_bytes           # ScriptedReply -> wire events / bytes
    from core.wire.script import ScriptedReply, ScriptBlock, ScriptUsage, ScriptedError, ScriptIds
    from core.servers.emulator.scenarios import SCENARIOS, build_plan, schedule
    from core.wire.translate import translate_bytes                       # re-encode a recording in another format

Endpoints (OpenAI clients use base + "/v1", Anthropic and Gemini clients the base itself)
    POST /v1/chat/completions   OpenAI Chat (stream_options.include_usage, n, tools; stream=false too)
    POST /v1/responses          OpenAI Responses
    POST /v1/messages           Anthropic Messages (x-api-key and anthropic-version checked)
    POST /v1beta/models/{model}:streamGenerateContent?alt=sse    Gemini (x-goog-api-key or ?key=);
                                also :generateContent, and the JSON-array stream without alt=sse
    GET  /scenarios             the catalog: {"scenarios": [{"name", "description"}], "default": "text"}
    GET  /v1/models, /v1beta/models, /health

Scenarios (the request's model name selects one; any other name gets `text`; the request header
`x-emulator-scenario` overrides the model): text, tool-call, parallel-tools, thinking, mid-stream-error, http-429,
http-500, drop, stall, malformed-json, no-terminator, split-utf8, ping-heavy, firehose, long, thinking-tools,
thinking-tools-lenient, tool-rounds.

Every request's conversation is checked as the real API checks it (`history.py`, over `core.wire.history`): a
broken rule gets the provider's own 400. The signatures it issues (`signatures.py`) are bound to what they sign.

Replies are deterministic for the same request (seeded from a hash of its content). Pacing imitates a model: a
first-token delay of 150-300 ms, then 5-15 ms per fragment with jitter (firehose: no delays). The server option
`speed` or the request header `x-emulator-speed` scales it (0 = no delays).
"""
