"""The tap: a reverse proxy on loopback in front of an application's LLM provider, recording every exchange.

    from core.servers.tap.upstreams import parse_upstreams
    from core.servers.tap.server import TapServer
    with TapServer(parse_upstreams(["anthropic"])) as base:   # clients use base as their provider's base URL
        ...

`app.py` is the proxy (forward first, decode after; the fault behaviour), `upstreams.py` where it forwards,
`headers.py` which headers pass, `server.py` how it runs. `core.live.exchange` records each exchange and
`core.live.forward` is its httpx client to the upstreams.
"""
