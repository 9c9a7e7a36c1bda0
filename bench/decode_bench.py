"""Decode speed: StreamScope's SSE framer and full pipeline against the peers' decoders, on the same bytes.

    .venv/bin/python bench/decode_bench.py            # full sizes (200k OpenAI chunks, ...), best of 2: ~7 min
    .venv/bin/python bench/decode_bench.py --quick    # a tenth of the sizes, best of 3: ~2 min (2-core machine)

It generates large realistic bodies shaped like the recordings in ../shared/corpus (an OpenAI chat stream, an
Anthropic Messages stream with `event:` lines, a Gemini stream with CRLF framing and whole responses, and a CRLF
variant of the OpenAI stream; English text with typographic non-ASCII, and an Anthropic stream of multilingual text
with CJK and emoji), cuts each body into 16 KiB, 1 KiB and 7-byte pieces, and times, in this one process and on
the very same piece lists:

  framing      StreamScope core.wire.sse.SSEDecoder, both .feed() once per piece (as the pipeline calls it) and
               .iter_items() over an iterator of the pieces (the shape of the peers' iter_bytes); httpx-sse
               (incremental UTF-8 decode + SSELineDecoder + SSEDecoder, as its iter_sse does);
               openai._streaming.SSEDecoder.iter_bytes; anthropic._streaming.SSEDecoder.iter_bytes.
  + JSON       each peer framer followed by json.loads of every data field ([DONE] excepted).
  full         StreamScope core.wire.pipeline.StreamDecoder: framing, JSON (orjson via core.wire.jsonfast), the format
               adapter and the reducer, then .result(); both .feed() once per piece and .iter_events() over an
               iterator of the pieces.
  openai SDK   the openai SDK's own path on a 20,000-chunk OpenAI stream (--sdk-chunks): its SSEDecoder,
               sse.json(), construct_type(ChatCompletionChunk) as Stream does with default settings,
               ChatCompletionStreamState.handle_chunk and get_final_completion(), against StreamScope's pipeline.

Each figure is the best of --repeat rounds (every decoder once a round, so that a slow spell of a shared machine
is spread over all of them) with the garbage collector paused, as timeit does. events/s counts
dispatched SSE events; MB/s is 10^6 bytes of body per second. The ratios at the end divide StreamScope's
throughput by the fastest peer's on the same stream and piece size.
"""
from __future__ import annotations

import argparse
import codecs
import gc
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PIECE_SIZES = (16384, 1024, 7)
PIECE_LABEL = {16384: "16 KiB", 1024: "1 KiB", 7: "7 B"}

# -- realistic bodies --------------------------------------------------------------------------------------

_WORDS = ("the a of to and in is that it for on with as was be by this are or from at which an not but have "
          "stream token model reply chunk server event field value delta usage block text function result "
          "Clementine calico window stories reading pages library afternoon quietly because however").split()
# what English replies carry: typographic quotes and dashes, the odd accented name
_TYPOGRAPHIC = ("don’t", "it’s", "“quoted”", "—", "…", "café", "naïve", "Zürich", "São Paulo", "€5")
# what a multilingual reply carries
_MULTILINGUAL = ("日本語の文章", "中文字符", "한국어", "Ελληνικά", "русский текст", "العربية", "हिन्दी", "😀", "🚀",
                 "✓", "½", "déjà vu", "façade", "über", "Größe")


class _Text:
    """Deterministic pseudo-prose: English words with a share of non-ASCII ones, commas, paragraph breaks."""

    def __init__(self, seed: int, non_ascii: float = 0.03, multilingual: bool = False) -> None:
        self.rng = random.Random(seed)
        self.non_ascii = non_ascii
        self.extra = _MULTILINGUAL if multilingual else _TYPOGRAPHIC

    def word(self) -> str:
        rng = self.rng
        w = rng.choice(self.extra) if rng.random() < self.non_ascii else rng.choice(_WORDS)
        r = rng.random()
        if r > 0.97:
            return w + ".\n\n"
        if r > 0.92:
            return w + ","
        return w

    def token(self) -> str:
        """What one OpenAI chunk carries: about one word."""
        return " " + self.word()

    def words(self, lo: int, hi: int) -> str:
        return " " + " ".join(self.word() for _ in range(self.rng.randint(lo, hi)))


def _js(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def openai_chat_body(chunks: int, crlf: bool = False) -> bytes:
    """A Chat Completions stream: role chunk, `chunks` content deltas, finish chunk, usage chunk, [DONE]."""
    t = _Text(1)
    head = ('{"id":"chatcmpl-ASYMaNc7XmbGRUNREnmvhyyISBHsv","object":"chat.completion.chunk","created":1731368640,'
            '"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":')
    tail = ',"logprobs":null,"finish_reason":null}],"usage":null}'
    out = ['data: ' + head + '{"role":"assistant","content":"","refusal":null}' + tail]
    for _ in range(chunks - 3):
        out.append('data: ' + head + '{"content":' + _js(t.token()) + '}' + tail)
    out.append('data: ' + head + '{},"logprobs":null,"finish_reason":"stop"}],"usage":null}')
    out.append('data: ' + head.split('"choices"')[0] + '"choices":[],"usage":{"prompt_tokens":26,'
               '"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,'
               '"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,'
               '"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}' % (chunks, chunks + 26))
    out.append("data: [DONE]")
    nl = "\r\n" if crlf else "\n"
    return (nl + nl).join(out).encode() + (nl + nl).encode()


def anthropic_body(events: int, multilingual: bool = False) -> bytes:
    """A Messages stream: message_start, content_block_start, ping, text_delta events, stop events."""
    t = _Text(2, 0.5, True) if multilingual else _Text(2)
    ev = []

    def add(name: str, data: str) -> None:
        ev.append(f"event: {name}\ndata: {data}\n\n")

    add("message_start", '{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":'
        '"msg_017A4s3HAsrqf5d2WvBmrpLr","type":"message","role":"assistant","content":[],"stop_reason":null,'
        '"stop_sequence":null,"usage":{"input_tokens":17,"cache_creation_input_tokens":0,'
        '"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,'
        '"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}}}')
    add("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}')
    add("ping", '{"type": "ping"}')
    for _ in range(events - 6):
        add("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":'
            + _js(t.words(1, 4)) + '}}')
    add("content_block_stop", '{"type":"content_block_stop","index":0}')
    add("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
        '"usage":{"input_tokens":17,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,'
        '"output_tokens":%d}}' % events)
    add("message_stop", '{"type":"message_stop"}')
    return "".join(ev).encode()


def gemini_body(chunks: int) -> bytes:
    """A streamGenerateContent?alt=sse stream: CRLF framing, whole responses with usageMetadata each time."""
    t = _Text(3)
    out = []
    for i in range(chunks):
        last = i == chunks - 1
        finish = ',"finishReason": "STOP"' if last else ""
        cand = (',"candidatesTokenCount": %d' % (i * 40 + 40)) if last else ""
        out.append('data: {"candidates": [{"content": {"parts": [{"text": ' + _js(t.words(15, 45)) +
                   '}],"role": "model"}' + finish + ',"index": 0}],"usageMetadata": {"promptTokenCount": 10' + cand +
                   ',"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 10}],'
                   '"serviceTier": "standard"},"modelVersion": "gemini-2.0-flash","responseId": '
                   '"jNcEavSuHfWA7_UP9-uokQs"}\r\n\r\n' % (i * 40 + 50))
    return "".join(out).encode()


# -- the decoders ------------------------------------------------------------------------------------------
# Each takes the list of pieces and returns the number of events it produced.

def ss_framing(pieces: list[bytes]) -> int:
    """SSEDecoder.feed() once per piece, as the pipeline, the live runner and the GUI call it.

    Each frame's `data` is read: frames decode it lazily, and the peers' framers hand out decoded strings, so
    reading it keeps the comparison like for like.
    """
    from core.wire.sse import SSEDecoder, SSEFrame

    d = SSEDecoder()   # (plain: every frame is exactly an SSEFrame, so the cheapest class test suffices)
    feed = d.feed
    for p in pieces:
        for item in feed(p):
            if item.__class__ is SSEFrame:
                item.data
    for item in d.end():
        if item.__class__ is SSEFrame:
            item.data
    return d.frames_dispatched


def ss_framing_iter(pieces: list[bytes]) -> int:
    """SSEDecoder.iter_items() over an iterator of the pieces: the shape of the SDKs' iter_bytes()."""
    from core.wire.sse import SSEDecoder, SSEFrame

    d = SSEDecoder()
    for item in d.iter_items(iter(pieces)):
        if item.__class__ is SSEFrame:
            item.data  # decoded, as the peers' framers hand it out (see ss_framing)
    return d.frames_dispatched


def ss_full(fmt: str):
    def run(pieces: list[bytes]) -> int:
        from core.wire.pipeline import StreamDecoder

        d = StreamDecoder(fmt, keep_items=False)
        feed = d.feed
        n = 0
        for p in pieces:
            for e in feed(p):
                n += 1
        d.end()
        result = d.result()
        assert result["blocks"], "the pipeline produced no blocks"
        return d.frames
    return run


def ss_full_iter(fmt: str):
    def run(pieces: list[bytes]) -> int:
        from core.wire.pipeline import StreamDecoder

        d = StreamDecoder(fmt, keep_items=False)
        n = 0
        for e in d.iter_events(iter(pieces)):
            n += 1
        result = d.result()
        assert result["blocks"], "the pipeline produced no blocks"
        return d.frames
    return run


def _httpx_sse_events(pieces):
    """httpx-sse's iter_sse over httpx's iter_text (an incremental UTF-8 decoder with errors='replace')."""
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    def iter_text():
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        for p in pieces:
            text = dec.decode(p)
            if text:
                yield text
        text = dec.decode(b"", True)
        if text:
            yield text

    def iter_lines():
        decoder = SSELineDecoder()
        for text in iter_text():
            for line in decoder.decode(text):
                yield line
        for line in decoder.flush():
            yield line

    decoder = SSEDecoder()
    for line in iter_lines():
        line = line.rstrip("\n")
        sse = decoder.decode(line)
        if sse is not None:
            yield sse


def _openai_events(pieces):
    from openai._streaming import SSEDecoder

    return SSEDecoder().iter_bytes(iter(pieces))


def _anthropic_events(pieces):
    from anthropic._streaming import SSEDecoder

    return SSEDecoder().iter_bytes(iter(pieces))


PEERS = {"httpx-sse": _httpx_sse_events, "openai": _openai_events, "anthropic": _anthropic_events}


def peer_framing(events_fn):
    def run(pieces: list[bytes]) -> int:
        n = 0
        for sse in events_fn(pieces):
            n += 1
        return n
    return run


def peer_json(events_fn):
    def run(pieces: list[bytes]) -> int:
        loads = json.loads
        n = 0
        for sse in events_fn(pieces):
            n += 1
            data = sse.data
            if data != "[DONE]":
                loads(data)
        return n
    return run


def openai_sdk_path(pieces: list[bytes]) -> int:
    """What `for chunk in client.chat.completions.create(stream=True)` + ChatCompletionStreamState does."""
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    n = 0
    for sse in SSEDecoder().iter_bytes(iter(pieces)):
        n += 1
        if sse.data.startswith("[DONE]"):
            break
        chunk = construct_type(type_=ChatCompletionChunk, value=sse.json())
        for _event in state.handle_chunk(chunk):
            pass
    assert state.get_final_completion().choices
    return n


# -- measuring ---------------------------------------------------------------------------------------------

def timed(fn, pieces) -> tuple[float, int]:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        count = fn(pieces)
        return time.perf_counter() - t0, count
    finally:
        gc.enable()


def cut(body: bytes, size: int) -> list[bytes]:
    return [body[i:i + size] for i in range(0, len(body), size)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes (about two minutes)")
    ap.add_argument("--repeat", type=int, default=None, help="rounds per stream and piece size; each decoder runs "
                    "once a round and its best round is kept (default 2; 3 with --quick)")
    ap.add_argument("--streams", default=",".join(STREAMS), help="comma-separated subset of: " + ", ".join(STREAMS))
    ap.add_argument("--sdk-chunks", type=int, default=20_000, help="OpenAI chunks for the openai SDK comparison "
                    "(default 20,000: that path decodes about 5,000 chunks/s)")
    args = ap.parse_args(argv)
    scale = 10 if args.quick else 1
    repeat = max(1, args.repeat or (3 if args.quick else 2))
    chosen = [s.strip() for s in args.streams.split(",") if s.strip()]
    for s in chosen:
        if s not in STREAMS:
            ap.error(f"unknown stream {s!r} (expected some of: {', '.join(STREAMS)})")
    t_start = time.perf_counter()

    def say(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", file=sys.stderr, flush=True)

    import platform

    import anthropic
    import httpx_sse
    import openai
    try:
        import orjson
        json_note = f"orjson {orjson.__version__} via core.wire.jsonfast"
    except ImportError:
        json_note = "json (orjson not installed)"
    print(f"# decode_bench: Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
          f"{'quick (1/10)' if args.quick else 'full'} sizes, best of {repeat} rounds, GC paused while timing")
    print(f"# StreamScope's JSON: {json_note}; peers: httpx-sse {getattr(httpx_sse, '__version__', '?')}, "
          f"openai {openai.__version__}, anthropic {anthropic.__version__}, each + json.loads")

    results: dict[tuple[str, int, str], tuple[float, int, int]] = {}

    def measure(name: str, body: bytes, decoders: list, expected: int) -> None:
        print(f"{'decoder':42} " + " ".join(f"{PIECE_LABEL[s] + ' events/s':>17} {'MB/s':>7}" for s in PIECE_SIZES))
        for size in PIECE_SIZES:
            pieces = cut(body, size)
            # every decoder runs once a round, and its best round is kept: a slow spell of the (shared) machine
            # is spread over all of them instead of landing on one
            for r in range(repeat):
                say(f"{name}: {PIECE_LABEL[size]} pieces, round {r + 1} of {repeat}")
                for dname, fn in decoders:
                    dt, count = timed(fn, pieces)
                    key = (name, size, dname)
                    if key not in results or dt < results[key][0]:
                        results[key] = (dt, count, len(body))
            del pieces
        for dname, _ in decoders:
            cells = []
            for size in PIECE_SIZES:
                dt, count, nbytes = results[(name, size, dname)]
                cells.append(f"{count / dt:17,.0f} {nbytes / dt / 1e6:7.1f}" + ("*" if count != expected else ""))
            print(f"{dname:42} " + " ".join(cells), flush=True)

    for name in chosen:
        fmt, make, n_events = STREAMS[name]
        n_events //= scale
        say(f"generating {name} ...")
        body = make(n_events)
        text = body.decode()
        non_ascii = len(text) - len(text.encode("ascii", "ignore"))
        ends = "CRLF" if b"\r\n" in body else "LF"
        count = _frame_count(body)
        print(f"\n## {name}: {count:,} events, {len(body):,} bytes ({len(body) / 1e6:.1f} MB), format {fmt}, "
              f"{ends} line ends, {non_ascii / len(text) * 100:.2f}% of characters non-ASCII")
        del text
        decoders = [("StreamScope framing, feed()", ss_framing),
                    ("StreamScope framing, iter_items()", ss_framing_iter)]
        decoders += [(f"{p} framing", peer_framing(f)) for p, f in PEERS.items()]
        decoders += [("StreamScope full pipeline, feed()", ss_full(fmt)),
                     ("StreamScope full pipeline, iter_events()", ss_full_iter(fmt))]
        decoders += [(f"{p} framing + json.loads", peer_json(f)) for p, f in PEERS.items()]
        measure(name, body, decoders, count)
        del body

    sdk_name = None
    if args.sdk_chunks > 0:
        sdk_name = f"openai-chat ({args.sdk_chunks:,} chunks)"
        say(f"generating {sdk_name} ...")
        body = openai_chat_body(args.sdk_chunks)
        print(f"\n## openai SDK comparison: {sdk_name}, {len(body):,} bytes, the same generator as openai-chat")
        measure(sdk_name, body, [("StreamScope full pipeline, feed()", ss_full("openai-chat")),
                                 ("openai SDK decode+validate+accumulate", openai_sdk_path)], _frame_count(body))
        del body

    # -- ratios --------------------------------------------------------------------------------------------
    def t(name: str, size: int, d: str) -> float:
        return results[(name, size, d)][0]

    print("\n## ratios: StreamScope's throughput / the fastest peer's, same stream, same pieces")
    print(f"{'stream':24} {'pieces':>7} {'framing: feed()':>16} {'iter_items()':>13} {'(fastest framer)':>17} "
          f"{'full: feed()':>13} {'iter_events()':>14} {'(vs fastest framer+json)':>25}")
    for name in chosen:
        for size in PIECE_SIZES:
            fast_peer = min(PEERS, key=lambda p: t(name, size, f"{p} framing"))
            fast_json = min(PEERS, key=lambda p: t(name, size, f"{p} framing + json.loads"))
            base = t(name, size, f"{fast_peer} framing")
            print(f"{name:24} {PIECE_LABEL[size]:>7} "
                  f"{base / t(name, size, 'StreamScope framing, feed()'):15.2f}x "
                  f"{base / t(name, size, 'StreamScope framing, iter_items()'):12.2f}x {fast_peer:>17} "
                  f"{t(name, size, f'{fast_json} framing + json.loads') / t(name, size, 'StreamScope full pipeline, feed()'):12.2f}x "
                  f"{t(name, size, f'{fast_json} framing + json.loads') / t(name, size, 'StreamScope full pipeline, iter_events()'):13.2f}x "
                  f"{fast_json + ' + json.loads':>25}")
    if sdk_name:
        print(f"\n{sdk_name}: StreamScope full pipeline / openai SDK decode+validate+accumulate: " + ", ".join(
            f"{t(sdk_name, s, 'openai SDK decode+validate+accumulate') / t(sdk_name, s, 'StreamScope full pipeline, feed()'):.1f}x"
            f" at {PIECE_LABEL[s]}" for s in PIECE_SIZES))
    print("\n# targets: framing >= 1.5x the fastest peer framer at 16 KiB and 1 KiB, >= 2x at 7 B; the full pipeline "
          ">= 1x the fastest peer's framing + json.loads, and >= 10x the openai SDK path")
    print("# (* after a figure: that decoder counted a different number of events than were sent)")
    say("done")
    return 0


def _frame_count(body: bytes) -> int:
    from core.wire.sse import SSEDecoder

    d = SSEDecoder()
    d.feed(body)
    d.end()
    return d.frames_dispatched


STREAMS = {
    # name: (wire format, generator, events at full size)
    "openai-chat": ("openai-chat", openai_chat_body, 200_000),
    "anthropic": ("anthropic", anthropic_body, 200_000),
    "gemini": ("gemini", gemini_body, 50_000),
    "openai-chat-crlf": ("openai-chat", lambda n: openai_chat_body(n, crlf=True), 200_000),
    "anthropic-multilingual": ("anthropic", lambda n: anthropic_body(n, multilingual=True), 100_000),
}


if __name__ == "__main__":
    raise SystemExit(main())
