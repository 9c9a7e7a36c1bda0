"""Undoing a body's `content-encoding` (RFC 9110 section 8.4) for the inspector's own copy of it.

A tap forwards an encoded body untouched (the client asked for it) and decodes only the copy it records; an
importer meets bodies a recorder stored still encoded (vcrpy keeps gzip bodies as they came). Both go through
`ContentDecoder`, incremental, so a stream is decoded chunk by chunk as it arrives.

Codings: `gzip` / `x-gzip`, `deflate` (zlib-wrapped, or raw as some servers send it), `br` when the `brotli`
package is installed, `identity`. A coding this build cannot undo leaves the bytes as they are, and `note`
says so; so does a body that turns out damaged, from the chunk that failed on (nothing received is lost). The
decoded size is bounded (`MAX_DECODED`): a small body that inflates without end (a decompression bomb) is
decoded up to there and kept as it came after it, with a note. What is recorded stays bounded all the same: an
`Exchange` keeps at most `MAX_STREAM_BODY` bytes of a body, decoded and as-it-came bytes together (the same bound,
256 MiB), and counts the rest.
"""
from __future__ import annotations

import zlib

from core.live.errors import MAX_STREAM_BODY, size_text

MAX_DECODED = MAX_STREAM_BODY     # (one bound: a body decoded past what a capture keeps would not be kept)


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._d = zlib.decompressobj(wbits)
        self._fallback_raw = wbits == 15      # "deflate" is sometimes sent raw, without the zlib wrapper
        self._seen = False

    def decompress(self, data: bytes, limit: int) -> bytes:
        out = []
        while data:
            try:
                piece = self._d.decompress(data, limit)
            except zlib.error:
                if self._fallback_raw and not self._seen:
                    self._fallback_raw = False
                    self._d = zlib.decompressobj(-15)
                    continue
                raise
            self._seen = True
            out.append(piece)
            limit -= len(piece)
            if self._d.unconsumed_tail:
                raise OverflowError
            data = b""
            if self._d.eof and self._d.unused_data and self._wbits == 31:   # a further gzip member
                data = self._d.unused_data
                self._d = zlib.decompressobj(31)
        return b"".join(out)

    def flush(self) -> bytes:
        return self._d.flush()


class _Brotli:
    def __init__(self) -> None:
        import brotli

        self._d = brotli.Decompressor()

    def decompress(self, data: bytes, limit: int) -> bytes:
        out = self._d.process(data)
        if len(out) > limit:
            raise OverflowError
        return out

    def flush(self) -> bytes:
        return b""


def _stage(coding: str):
    if coding in ("gzip", "x-gzip"):
        return _Zlib(31)
    if coding == "deflate":
        return _Zlib(15)
    if coding == "br":
        try:
            return _Brotli()
        except ImportError:
            return None
    return None


class ContentDecoder:
    """Decodes a body encoded with the codings of a `content-encoding` value, chunk by chunk."""

    def __init__(self, content_encoding: str) -> None:
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        self.encoding = ", ".join(codings)
        stages = [_stage(c) for c in reversed(codings)]      # the last coding applied is undone first
        self.note: str | None = None
        self.decoding = all(s is not None for s in stages)
        self._stages = stages if self.decoding else []
        self._out = 0
        if not self.decoding:
            self.note = (f"the body is {self.encoding}-encoded, which this build cannot decode: it is recorded "
                         f"as it came")

    @property
    def active(self) -> bool:
        """Whether it changes anything (some coding is being undone)."""
        return bool(self._stages)

    def decode(self, data: bytes) -> bytes:
        if not self._stages:
            return data
        raw = data
        try:
            for stage in self._stages:
                data = stage.decompress(data, MAX_DECODED - self._out)
        except OverflowError:
            return self._stop(raw, f"the decoded body passed {size_text(MAX_DECODED)}")
        except Exception as exc:  # noqa: BLE001 - zlib.error, brotli.error: the body is damaged
            return self._stop(raw, f"the {self.encoding} body could not be decoded ({type(exc).__name__}: {exc})")
        self._out += len(data)
        return data

    def flush(self) -> bytes:
        """The end of the body: what the decoders still hold (each stage's rest goes through the next)."""
        out = b""
        try:
            for stage in self._stages:
                out = (stage.decompress(out, MAX_DECODED - self._out) if out else b"") + stage.flush()
        except Exception as exc:  # noqa: BLE001 - as in decode()
            return self._stop(b"", f"the {self.encoding} body ended damaged ({type(exc).__name__}: {exc})")
        self._stages = []
        return out

    @property
    def never_decoded(self) -> bool:
        """Decoding was given up before any byte came out: the body was not encoded at all, whatever its header
        said (a recorder that stored it decoded and kept the header, as vcrpy does for `requests`)."""
        return not self.decoding and self._out == 0

    def _stop(self, raw: bytes, why: str) -> bytes:
        """Give up decoding: from this chunk on, the body is passed on as it came (nothing is lost; a capture keeps
        it up to its bound, `MAX_STREAM_BODY`, decoded bytes included)."""
        self._stages = []
        self.decoding = False
        if self._out == 0 and not raw.startswith((b"\x1f\x8b", b"\x78")):
            self.note = (f"the content-encoding header says {self.encoding}, but the body is not {self.encoding}-"
                         f"encoded (a recorder that stored it decoded): it is recorded as it came")
            return raw
        self.note = (f"{why}: from decoded byte {self._out} on, the body is recorded as it came ({self.encoding}), "
                     f"up to the capture's bound")
        return raw


def decoder_for(content_encoding: str | None) -> ContentDecoder | None:
    """A decoder for a `content-encoding` header value, or None when the body is not encoded."""
    if not content_encoding:
        return None
    d = ContentDecoder(content_encoding)
    return d if d.encoding else None


def decode_body(content_encoding: str | None, data: bytes) -> tuple[bytes, str | None]:
    """(the decoded body, a note when it could not be decoded) for a whole body."""
    d = decoder_for(content_encoding)
    if d is None:
        return data, None
    if not d.active:
        return data, d.note
    out = d.decode(data)
    if d.active:
        out += d.flush()
    return out, d.note
