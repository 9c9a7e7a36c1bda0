"""What ended an exchange outside the stream: the error types, and reading a provider's error body.

`ErrorType` names every `run.error["type"]` the live layer sets itself (a provider's own in-band error keeps the
provider's type string, e.g. `overloaded_error`). It is a `StrEnum`, so the values compare and serialize as the
plain strings the captures, the exports and `replay --headless` have always held.

`provider_error(body)` reads the (type, message) out of a provider's parsed error body, whatever its shape; the
recorder builds the run's error message with it and the GUI's error banner shows its type.
"""
from __future__ import annotations

from enum import StrEnum
from typing import Any

# The most of one response body a run or an exchange keeps (the decoded bytes, for an encoded body): a stream that
# never ends (or one SSE event that never ends) would otherwise be kept until memory runs out. A run StreamScope
# sent stops reading there (`BODY_TOO_LARGE`); a tap keeps forwarding to its client and stops recording.
MAX_STREAM_BODY = 256 << 20


class ErrorType(StrEnum):
    # the provider answered, but not with an event stream
    HTTP_ERROR = "http_error"                  # a non-2xx status (the body is the provider's error)
    NOT_EVENT_STREAM = "not_event_stream"      # a 2xx body that is not an event stream
    UNFRAMED_ERROR = "unframed_error"          # JSON outside any SSE event, after some frames
    # the connection
    CONNECT_FAILED = "connect_failed"
    CONNECTION_DROPPED = "connection_dropped"  # cut before the stream's end
    STALLED = "stalled"                        # no byte for the read timeout
    BODY_TOO_LARGE = "body_too_large"          # a stream that passed MAX_STREAM_BODY: reading it was stopped
    TRANSPORT_ERROR = "transport_error"        # any other HTTP-client failure
    CANCELLED = "cancelled"                    # by the user (or a replay cancelled, or a tap stopped)
    CLIENT_CANCELLED = "client_cancelled"      # a tap's client hung up (its upstream request was cancelled)
    # refused before sending
    MISSING_KEY = "missing_key"
    BAD_REQUEST = "bad_request"                # the request could not be built from the prompt
    INSECURE_TRANSPORT = "insecure_transport"  # the key would travel over plain http:// to another host
    HISTORY_REJECTED = "history_rejected"      # the conversation breaks a rule the API would answer with 400
    # ours
    INTERNAL_ERROR = "internal_error"          # a bug in StreamScope while reading the stream
    CAPTURE_TRUNCATED = "capture_truncated"    # a capture file that ends before the run ended


def size_text(n: int) -> str:
    """A byte count as a message says it: "256 MiB", "64 KiB", "1,000 bytes"."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def error_dict(typ: str, message: str, raw: Any = None) -> dict:
    """A run's `error` value: {"type", "message", "raw"}. typ: an `ErrorType`, or an in-band error's own type;
    raw: the provider's error body or event, parsed, or None."""
    return {"type": typ, "message": message, "raw": raw}


def provider_error(body: Any) -> tuple[str | None, str | None]:
    """(type, message) from a provider's parsed error body: `{"error": {"type" | "status" | "code", "message"}}`,
    the same without the "error" wrapper, `{"error": "text"}`, or a list of those (Gemini); (None, None) when
    the body says neither."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return None, None
    err = body.get("error", body)
    if isinstance(err, str):
        return None, err
    if not isinstance(err, dict):
        return None, None
    typ = err.get("type") or err.get("status") or err.get("code")
    msg = err.get("message") or err.get("detail") or body.get("message")
    return (None if typ is None else str(typ)), (None if msg is None else str(msg))
