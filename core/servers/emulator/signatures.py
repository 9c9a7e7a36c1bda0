"""The signatures the emulator issues, and their verification (so it can answer as the APIs do when one is dropped,
changed or moved).

`sign(kind, content)` returns a signature bound to `content`, shaped like the real provider's:
    anthropic-thinking    an Anthropic thinking signature (base64, starting with field 2 like Anthropic's)
    gemini-call/-part     a Gemini thoughtSignature (base64 of a payload starting 0x01 0xD1 0xED 0x8A)
    responses-reasoning   an OpenAI reasoning `encrypted_content` (a Fernet-like `gAAAAAB...` token)
`verify(kind, signature, content)` answers "valid", "mismatch" (issued here for other content: the block was
changed) or "unknown" (not issued here: another provider's, or made up), the contract of
`core.wire.history.HistoryRules.verify_signature`. Deterministic: the key is fixed, so replies stay the same for
the same request and a signature stays valid across emulator restarts. Not a secret: nothing here protects data.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

_KEY = b"streamscope-emulator-signatures-v1"
_MAGIC = b"SSEMU1"
_KINDS = {"anthropic-thinking": 1, "gemini-call": 2, "gemini-part": 3, "responses-reasoning": 4}
_HEAD = {"anthropic-thinking": b"\x12\x99\x01\x0a\x48\x08\x01\x18\x02\x2a\x40",
         "gemini-call": b"\x0a\x9a\x01\x01\xd1\xed\x8a", "gemini-part": b"\x0a\x9a\x01\x01\xd1\xed\x8a"}
_FERNET = "gAAAAAB"


def _mac(kind: str, content: str) -> bytes:
    return hmac.new(_KEY, kind.encode() + b"\x00" + content.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def sign(kind: str, content: str) -> str:
    mac = _mac(kind, content)
    pad = hashlib.sha256(mac).digest() * 3      # realistic length (real signatures run to hundreds of bytes)
    payload = _MAGIC + bytes([_KINDS[kind]]) + mac[:16] + pad[:80]
    if kind == "responses-reasoning":
        return _FERNET + base64.urlsafe_b64encode(payload).decode("ascii")
    return base64.b64encode(_HEAD[kind] + payload).decode("ascii")


def _payload(kind: str, signature: str) -> bytes | None:
    try:
        if kind == "responses-reasoning":
            if not signature.startswith(_FERNET):
                return None
            body = signature[len(_FERNET):]
            return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        # bytes fields travel as base64 in either alphabet (google-genai re-encodes them URL-safe), padded or not
        std = signature.replace("-", "+").replace("_", "/")
        raw = base64.b64decode(std + "=" * (-len(std) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    head = _HEAD[kind]
    return raw[len(head):] if raw.startswith(head) else None


def verify(kind: str, signature: str, content: str) -> str:
    if kind not in _KINDS or not isinstance(signature, str):
        return "unknown"
    payload = _payload(kind, signature)
    if payload is None or not payload.startswith(_MAGIC) or len(payload) < len(_MAGIC) + 17 \
            or payload[len(_MAGIC)] != _KINDS[kind]:
        return "unknown"
    given = payload[len(_MAGIC) + 1:len(_MAGIC) + 17]
    return "valid" if hmac.compare_digest(given, _mac(kind, content)[:16]) else "mismatch"
