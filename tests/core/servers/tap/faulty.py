"""A small upstream written for the tap's fault cases: a real HTTP server on loopback (uvicorn), raw ASGI.

The request header `x-fault` picks what it does on `POST /v1/chat/completions`:
    ok        a fixed chat stream, written in several pieces
    drop      the first pieces, then the connection is cut (the chunked body never ends)
    stall     one piece, then nothing until the client hangs up
    gzip      the stream gzip-encoded (`content-encoding: gzip`)
    echo      a stream whose text is the request's Authorization value (a server echoing the key)
    error     HTTP 503 with a JSON body and a retry-after header
    slow      the pieces 20 ms apart
    anthropic a short Anthropic stream (on any path: for telling a format from the frames)
    big       `x-size` bytes of chat frames (`big_body(size)`), then the stream's end; `big-gzip`: gzip-encoded
    endless   chat frames without end, until the client hangs up (at most 64 MiB, as a safety net)
    endless-event  one SSE event that never ends (`data: ` then `x` without end, the same way)
It records what it sent per request (`sent`; an endless fault only counts it, in `endless_sent`) and every
request whose client went away before it finished (`hung_up`), so a test can tell that the upstream saw its
request cancelled.
"""
from __future__ import annotations

import asyncio
import gzip
import json
import threading
import zlib

from core.servers.serving import BackgroundServer


def chunk(text: str, finish=None) -> bytes:
    delta = {"content": text} if text else {}
    return ("data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n").encode()


PIECES = [chunk("The capital "), chunk("of France "), chunk("is Paris."), chunk("", "stop"), b"data: [DONE]\n\n"]
BODY = b"".join(PIECES)
ANTHROPIC = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"x","content":[],'
             b'"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
             b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
             b'"content_block":{"type":"text","text":""}}\n\n'
             b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
             b'"delta":{"type":"text_delta","text":"Paris"}}\n\n'
             b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
             b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
             b'"usage":{"output_tokens":2}}\n\n'
             b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


def big_body(size: int) -> bytes:
    """Chat frames of about `size` bytes in all, then the stream's end (a finish and [DONE])."""
    one = chunk("word ")
    return one * max(1, size // len(one)) + chunk("", "stop") + b"data: [DONE]\n\n"


ENDLESS_LIMIT = 64 << 20


class Faulty:
    def __init__(self) -> None:
        self.sent: dict[int, bytes] = {}
        self.hung_up: set[int] = set()
        self.endless_sent: dict[int, int] = {}     # what an endless fault sent before the client went (bytes)
        self.requests: list[dict] = []
        self.hung_up_event = threading.Event()
        self._n = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self._n += 1
        n = self._n
        self.requests.append({"path": scope["path"], "query": scope["query_string"].decode(), "headers": headers,
                              "body": body, "method": scope["method"]})
        fault = headers.get("x-fault", "ok")
        gone = asyncio.Event()

        async def watch():
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.ensure_future(watch())
        sent = bytearray()
        try:
            if fault == "error":
                err = json.dumps({"error": {"type": "overloaded", "message": "try later"}}).encode()
                await send({"type": "http.response.start", "status": 503, "headers": [
                    (b"content-type", b"application/json"), (b"retry-after", b"7"),
                    (b"content-length", str(len(err)).encode())]})
                await send({"type": "http.response.body", "body": err})
                sent += err
                return
            pieces = list(PIECES)
            extra = []
            if fault == "gzip":
                pieces = [gzip.compress(BODY)]
                extra = [(b"content-encoding", b"gzip")]
            elif fault == "anthropic":
                pieces = [ANTHROPIC[:50], ANTHROPIC[50:]]
            elif fault in ("big", "big-gzip"):
                data = big_body(int(headers.get("x-size", "100000")))
                pieces = [data[i:i + 16384] for i in range(0, len(data), 16384)]
                if fault == "big-gzip":
                    z = zlib.compressobj(wbits=31)
                    pieces = [z.compress(p) + z.flush(zlib.Z_SYNC_FLUSH) for p in pieces] + [z.flush()]
                    extra = [(b"content-encoding", b"gzip")]
            elif fault == "echo":
                pieces = [chunk(headers.get("authorization", "")), chunk("", "stop"), b"data: [DONE]\n\n"]
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream"), (b"x-upstream", b"faulty"),
                (b"connection", b"keep-alive, x-hop"), (b"x-hop", b"dropped")] + extra})
            if fault in ("endless", "endless-event"):
                piece = chunk("word ") * 200 if fault == "endless" else b"x" * 16384
                if fault == "endless-event":
                    await send({"type": "http.response.body", "body": b"data: ", "more_body": True})
                total = 0
                try:
                    while not gone.is_set() and total < ENDLESS_LIMIT:
                        await send({"type": "http.response.body", "body": piece, "more_body": True})
                        total += len(piece)
                        await asyncio.sleep(0)
                finally:
                    self.endless_sent[n] = total
                return
            if fault == "drop":
                pieces = pieces[:2]
            if fault == "stall":
                pieces = pieces[:1]
            for p in pieces:
                await send({"type": "http.response.body", "body": p, "more_body": True})
                sent += p
                if fault == "slow":
                    await asyncio.sleep(0.02)
            if fault == "drop":
                return                      # uvicorn closes the connection: the body never ends
            if fault == "stall":
                try:
                    await asyncio.wait_for(gone.wait(), 30)
                except asyncio.TimeoutError:
                    pass
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.sent[n] = bytes(sent)
            watcher.cancel()
            if gone.is_set():
                self.hung_up.add(n)
                self.hung_up_event.set()


def start_faulty() -> tuple[BackgroundServer, Faulty]:
    app = Faulty()
    server = BackgroundServer(app)
    server.start()
    return server, app
