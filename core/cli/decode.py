"""The `decode` subcommand: one recorded body through the wire layer, printed as one JSON object (or its frames).

It imports the wire layer alone (no Qt, httpx or SDK), so it starts fast.
"""
from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    d = sub.add_parser("decode", help="decode one recorded SSE body and print one JSON object")
    g = d.add_mutually_exclusive_group()
    g.add_argument("--format", help="openai-chat | openai-responses | anthropic | gemini, or auto (told from the "
                                    "frames; stderr says which and why)")
    g.add_argument("--frames", action="store_true", help="print the raw event-stream layer, one JSON per line")
    d.add_argument("--chunk-size", type=int, default=None, metavar="N", help="feed the bytes in pieces of N")
    d.add_argument("file", help="a .sse file of raw bytes, or - for stdin")
    d.set_defaults(func=cmd_decode)


def cmd_decode(args: argparse.Namespace) -> int:
    import itertools

    from core.wire.errors import LocalProtocolError
    from core.wire.formats import FORMATS, sniff_pieces
    from core.wire.jsonfast import dumps_standard   # standard JSON: a NaN or infinity as sent is written as null

    if args.chunk_size is not None and args.chunk_size < 1:
        print("decode: --chunk-size must be at least 1", file=sys.stderr)
        return 2
    if args.format is None and not args.frames:
        print("decode: give --format FORMAT or --frames", file=sys.stderr)
        return 2
    if args.format is not None and args.format not in FORMATS and args.format != "auto":
        print(f"decode: unknown format {args.format!r} (expected one of: {', '.join(FORMATS)}, auto)",
              file=sys.stderr)
        return 2
    from core.cli.inputs import InputError, pieces_of, read_blocks
    from core.wire.formats import SNIFF_BYTES   # how much `sniff` looks at

    blocks = read_blocks(args.file, "decode")

    def first_bytes() -> bytes:
        """The input's first SNIFF_BYTES (and a little more: whether more follows), read before the rest."""
        head = b""
        for b in blocks:
            head += b
            if len(head) > SNIFF_BYTES:
                break
        return head

    try:
        if args.format == "auto":   # told from the first 64 KiB (past them only inside a long first event)
            found, read = sniff_pieces(blocks)
            if found is None:
                why = _what_it_is(b"".join(read)[:SNIFF_BYTES + 1])
                print("decode: --format auto: no frame in the first 64 KiB tells the format; give --format FORMAT"
                      + (f" ({args.file} is not an event stream: {why})" if why else ""), file=sys.stderr)
                return 2
            args.format = found.format
            print(f"decode: format {found.format}: {found.reason}", file=sys.stderr)
            blocks = itertools.chain(read, blocks)
        elif not args.frames:     # (a body that is no event stream decodes to nothing: stderr says what it is)
            head = first_bytes()
            why = _what_it_is(head)
            if why:
                print(f"decode: warning: {args.file} is not an event stream: {why}", file=sys.stderr)
            blocks = itertools.chain([head] if head else [], blocks)
        pieces = pieces_of(blocks, args.chunk_size) if args.chunk_size else blocks
        out = sys.stdout
        if args.frames:   # one line per item, printed as the input comes
            from core.wire.sse import SSEComment, SSEFrame, SSEDecoder

            dec = SSEDecoder()

            def write(items) -> None:
                for item in items:
                    if isinstance(item, (SSEFrame, SSEComment)):
                        out.write(dumps_standard(item.to_json()) + "\n")

            for p in pieces:
                write(dec.feed(p))
                out.flush()
            write(dec.end())
            return 0
        from core.wire.pipeline import StreamDecoder

        d = StreamDecoder(args.format, keep_items=False)
        for p in pieces:
            d.feed(p)
        d.end()
        out.write(dumps_standard(d.result()) + "\n")
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 2
    except LocalProtocolError as exc:
        print(f"decode: {exc}", file=sys.stderr)
        return 2
    return 0


def _what_it_is(head: bytes) -> str | None:
    """What a body that is no event stream is (gzip bytes, UTF-16, a HAR, a whole JSON reply...), or None."""
    if not head.strip():
        return None           # (an empty body is an empty stream)
    from core.live.importers import what_body_is, whole_reply_format

    why = what_body_is(head)
    if why is None:
        return None
    fmt = whole_reply_format(head, None)
    if fmt is not None:
        return (f"it is a whole (not streamed) {fmt} reply: `replay --headless FILE` reads it")
    return why
