"""What a pane says, as plain text (no widget here): the error banner and the notice, the Text tab's end note
and empty-reply placeholder, the "quiet for N s" line, the Blocks overview, the Raw tab's frame detail, and the
Request tab's text and curl command.

Every function reads a run (`core.live.recorder.ProviderRun`) or its parts and returns a string (or None when
there is nothing to say); the wording shared with the `run` lines and the `.md` report comes from
`core.live.summary`.
"""
from __future__ import annotations

import json

from core.live.config import keyring_available, keyring_hint
from core.live.errors import ErrorType, provider_error
from core.live.recorder import (FINAL_STATUSES, TIMING_NONE, TIMING_NOT_RECORDED, TIMING_RECORDED,
                                 output_tokens_now)
from core.live.request import curl_command
from core.live.summary import findings_text, finish_text, plural, usage_figures
from core.wire import events as ev
from core.wire.errors import LocalProtocolError
from core.wire.history import HistoryRules, check_request, finding_totals

from gui.models import block_detail, pretty_payload
from core.wire.jsonfast import loads as parse_json   # a ValueError, never a RecursionError, on deep input

QUIET_AFTER_NS = 1_000_000_000   # "quiet for N s" is shown after this long without content (or a quarter of
                                 # the read timeout, when that is shorter)
MAX_BODY_SHOWN = 64 * 1024       # a non-stream response body (an error body) shown in the Request tab, at most
MAX_MESSAGE = 240                # the banner cuts the provider's message here (its tooltip has all of it)
OVERVIEW_TEXT_CHARS = 300        # the Blocks overview shows this much of each text or thinking block

METRICS_TIP = ("Time to first token · elapsed time · frames · input / output tokens · output tokens per second.\n"
               "~ marks an estimate (the characters received / 4), shown until the provider reports its own count "
               "of the output; most formats report it only at the end, and Anthropic's count in message_start, "
               "sent before any output, is not one.")


# -- the metrics line under the pane's header ------------------------------------------------------------------
def metrics_text(run, view) -> str:
    """TTFT, elapsed, frames, input / output tokens (~ while estimated) and tokens per second (~ while
    estimated), by the core's one rule for every format (`core.live.recorder.output_tokens_now`). A run opened
    from a recording that held no times (a cassette, a raw .sse) says "timing not recorded" instead of the two
    times; one that held only the headers and the total (a browser's HAR) shows "TTFT n/a"."""
    m = run.metrics
    parts = []
    if run.timing == TIMING_NONE:
        parts.append(TIMING_NOT_RECORDED)
    else:
        ttft = view.ms(m.t_first_content_ns)
        parts.append("TTFT n/a" if run.timing != TIMING_RECORDED else
                     f"TTFT {ttft:,.0f} ms" if ttft is not None else "TTFT —")
        parts.append(f"{view.ms(run.clock()) / 1000:.2f} s" if run.status != "pending" else "— s")
    parts.append(f"{view.frames_seen:,} {'frame' if view.frames_seen == 1 else 'frames'}")
    u = run.reply.usage
    inp = None if u is None else u.input_tokens
    out, estimated = output_tokens_now(run)
    tok = f"in {inp:,}" if inp is not None else "in —"
    tok += " / out " + ("—" if out is None else f"{'~' if estimated else ''}{out:,}") + " tok"
    parts.append(tok)
    if m.tokens_per_s is not None:   # (None too for a burst: core.live.recorder.MIN_RATE_SPAN_NS)
        parts.append(f"{'' if m.tokens_per_s_exact else '~'}{m.tokens_per_s:,.0f} tok/s")
    return " · ".join(parts)

# -- what to tell the user about an error ---------------------------------------------------------------------
WHAT = {ErrorType.HTTP_ERROR: "The provider answered with an HTTP error",
        ErrorType.CONNECTION_DROPPED: "The connection was cut mid-stream",
        ErrorType.STALLED: "The stream stalled",
        ErrorType.CONNECT_FAILED: "Could not connect to the provider",
        ErrorType.MISSING_KEY: "Not sent: no API key",
        ErrorType.BAD_REQUEST: "Not sent: the request could not be built",
        ErrorType.INSECURE_TRANSPORT: "Not sent: the key would travel over plain http://",
        ErrorType.HISTORY_REJECTED: "Not sent: the API would reject this conversation",
        ErrorType.NOT_EVENT_STREAM: "The provider answered with a body that is not an event stream",
        ErrorType.UNFRAMED_ERROR: "The provider sent an error outside any SSE event",
        ErrorType.TRANSPORT_ERROR: "The connection failed",
        ErrorType.BODY_TOO_LARGE: "The stream passed StreamScope's bound: it stopped reading",
        ErrorType.INTERNAL_ERROR: "StreamScope failed while reading this stream (a bug: please report it)"}


def _header(run, name: str) -> str | None:
    for k, v in run.response_headers or ():
        if k.lower() == name:
            return v.strip()
    return None


def error_report(run, reply) -> tuple[str, str] | None:
    """(short text, full text) for the pane's error banner, or None when there was no error.

    Plain lines: what happened (with the HTTP status and the provider's error type), the provider's message
    (the short text cuts it), and what to do."""
    status = run.status
    err = run.error if isinstance(run.error, dict) else None
    in_band = reply.error
    if status not in ("error", "stalled") and in_band is None:
        return None
    if status == "cancelled" or (err or {}).get("type") == ErrorType.CANCELLED:
        return None
    etype = (err or {}).get("type")
    http = run.http_status
    message = (err or {}).get("message") or ""
    if in_band is not None and (err is None or etype == in_band.type):
        head = f"Error inside the stream at frame {in_band.frame}"
        head += f", after HTTP {http}" if http is not None else ""
        head += f" · {in_band.type}" if in_band.type else ""
        message = in_band.message
        advice = ("the provider failed mid-reply; your application got the same error event." if run.observed
                  else "the provider failed mid-reply; send again.")
    else:
        head = WHAT.get(etype or "", f"The exchange failed ({etype})" if etype else "The exchange failed")
        ptype, pmsg = provider_error((err or {}).get("raw"))
        if http is not None:
            head += f" · HTTP {http}"
        if ptype:
            head += f" · {ptype}"
        if etype == ErrorType.HTTP_ERROR and pmsg:
            message = str(pmsg)
        advice = _advice(run, etype)
    if http is not None and http >= 400:
        tail = "The provider's error body is in the Request tab." if run.chunks else ""
    elif run.sent and reply.blocks:
        tail = "What arrived before is kept here and can be exported."
    elif run.sent and run.chunks:
        tail = "What arrived is in the Raw tab."
    else:
        tail = ""
    short_msg = message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "…"
    todo = "What to do: " + advice + (" " + tail if tail else "")
    return ("\n".join(x for x in (head, short_msg, todo) if x), "\n".join(x for x in (head, message, todo) if x))


def _advice(run, etype) -> str:
    """What to do about an error that ended the exchange outside the stream."""
    if run.observed:
        return _tapped_advice(run, etype)
    http = run.http_status
    if http in (401, 403):
        where = "its environment variable or keyring entry" if keyring_available()[0] else "its environment variable"
        return f"check the API key ({where}) and the account's access."
    if http == 429:
        wait = _header(run, "retry-after")
        when = f"wait {wait} s (its retry-after header)" if wait and wait.isdigit() else \
            f"wait until {wait} (its retry-after header)" if wait else "wait a moment"
        return f"rate limited: {when} and send again, or send to fewer providers at once."
    if http is not None and http >= 500:
        return "the provider failed on its side: send again later."
    if http is not None and http >= 400:
        return "the request was refused: check the model name and parameters (Request tab)."
    if etype == ErrorType.CONNECTION_DROPPED:
        return "send again."
    if etype == ErrorType.BODY_TOO_LARGE:
        return "lower the max tokens, or check that the base URL is an LLM API (this one did not stop sending)."
    if etype == ErrorType.STALLED or run.status == "stalled":
        return "the provider may be overloaded: send again, or raise the read timeout (Run → Timeouts…)."
    if etype == ErrorType.CONNECT_FAILED:
        return "check the base URL, the network and any proxy (Providers → Settings…)."
    if etype == ErrorType.MISSING_KEY:
        return (f"set the environment variable{keyring_hint()}, then send again (Providers → Settings… shows which "
                f"one each provider reads).")
    if etype == ErrorType.INSECURE_TRANSPORT:
        return "use https://, or allow insecure transport for this provider if the network is trusted."
    if etype == ErrorType.BAD_REQUEST:
        return "fix the prompt settings the message names (tools, tool choice)."
    if etype == ErrorType.HISTORY_REJECTED:
        return ("the history check found what the API answers with a 400 (Request tab, History check); continue "
                "from another reply, or send this pane's own tool results.")
    return "see the Raw and Diagnostics tabs; send again."


def _tapped_advice(run, etype) -> str:
    """What to do about a tap's failed exchange: the user's own application sent it (its key, its retries, its
    timeout), so none of the window's send, settings or timeouts apply."""
    http = run.http_status
    if http in (401, 403):
        return "check the API key your application sends (the tap passes it on untouched) and the account's access."
    if http == 429:
        wait = _header(run, "retry-after")
        when = f"{wait} s" if wait and wait.isdigit() else (wait or "")
        return ("rate limited: your application should wait" + (f" {when} (the retry-after header)" if when else "")
                + " before it retries, or send fewer requests at once.")
    if http is not None and http >= 500:
        return "the provider failed on its side: your application got the same status and may retry later."
    if http is not None and http >= 400:
        return "the provider refused your application's request: its error body says why (Request tab)."
    if etype == ErrorType.CONNECT_FAILED:
        return ("the tap could not reach its upstream (your application got a 502): check the upstream URL "
                "(Run → Tap…) and the network.")
    if etype == ErrorType.CONNECTION_DROPPED:
        return "the upstream cut the stream; your application saw the same cut."
    if etype == ErrorType.STALLED or run.status == "stalled":
        return "the upstream went quiet; your application's own timeout decides when it gives up."
    if etype == ErrorType.BODY_TOO_LARGE:
        return "the tap stopped keeping this body at its bound; your application still got every byte."
    return "see the Raw and Diagnostics tabs."


def notice_report(run, reply) -> str | None:
    """For a pane that finished without an error: the findings worth a look (a frame that was not JSON, a
    missing end marker, invalid tool arguments, ...), or None. Routine ones (keepalives, usage-only chunks:
    `core.wire.events.ROUTINE_DIAGNOSTICS`) are left to the Diag tab."""
    if run.status != "done" or run.error is not None:
        return None
    found = ev.findings(reply.diagnostics)
    if not found:
        return None
    codes = {d.code for d in found}
    lost = ""
    if "data-not-json" in codes:
        lost = " Frames that were not JSON were skipped: their content is missing from the reply."
    elif "missing-terminator" in codes:
        lost = " The stream ended without its end marker: the reply may be incomplete."
    return (f"Finished, with {plural(len(found), 'finding')} a strict client would trip on: "
            f"{findings_text(found)}.{lost} See the Diag tab.")


def end_note(run, reply) -> str | None:
    """For the Text tab of a finished pane whose reply stopped short of its end: where, and why, in one line
    (the banner above says more). None when the stream finished, or nothing arrived (the placeholder says so)."""
    if run.status not in FINAL_STATUSES or not reply.blocks:
        return None
    # the stream's last frame, numbered as the Raw tab, the Diag tab and the findings number it (from 0): the
    # missing-terminator finding names this frame too
    last = run.decoder.frames - 1
    at = f" after frame {last}" if last >= 0 else ""
    if run.status == "cancelled":
        return f"⟂ Stopped here{at}: you cancelled the stream."
    if reply.error is not None:
        return f"⟂ The reply stops here: the provider sent an error inside the stream at frame {reply.error.frame}."
    if run.status == "stalled":
        return f"⟂ The reply stops here{at}: nothing more arrived before the read timeout."
    if run.status == "error":
        return f"⟂ The reply stops here{at}: the exchange failed (see the message below)."
    if not reply.terminated:
        return f"⟂ The stream ended here{at} without its end marker: the reply may be incomplete."
    return None


def empty_reply_text(run) -> str:
    """What the Text tab says when a finished pane has no reply text."""
    if run.status == "cancelled":
        return "(no reply: cancelled before any content arrived)"
    if not run.sent:
        return "(not sent: see the message below)"
    if run.http_status is not None and run.http_status >= 400:
        return f"(no reply: the provider answered HTTP {run.http_status}; its error body is in the Request tab)"
    if run.status == "stalled":
        return "(no reply: nothing arrived before the read timeout)"
    if run.status == "error":
        return "(no reply: the exchange failed before any content; see the message below and the Raw tab)"
    if run.body_kind == "json" and run.chunks:     # (a tap sees these: GET /v1/models, a call that did not stream)
        return f"(not a stream: a JSON reply of {run.metrics.bytes:,} bytes, shown whole in the Req tab)"
    return "(the reply was empty: see the Blocks and Raw tabs)"


def quiet_text(run, read_timeout: float | None) -> str | None:
    """"quiet for N s" while a live stream sends nothing, or only keepalives (None otherwise, and for a replay,
    whose `read_timeout` is None, until it is quiet for a second)."""
    q, qc = run.quiet_ns(), run.quiet_content_ns()
    if q is None or qc is None:
        return None
    rt = read_timeout
    threshold = QUIET_AFTER_NS if not rt else min(QUIET_AFTER_NS, int(rt * 1e9 / 4))
    if qc < threshold:
        return None
    limit = f"; stalled at {rt:g} s without a byte" if rt else ""
    if run.http_status is None:
        return f"waiting for the response headers for {q / 1e9:.1f} s{limit}"
    what = "no content yet after" if run.metrics.t_first_content_ns is None else "quiet for"
    if q >= threshold:
        if qc - q < 200_000_000:
            return f"{what} {qc / 1e9:.1f} s, not a byte{limit}"
        return f"{what} {qc / 1e9:.1f} s, not a byte for {q / 1e9:.1f} s{limit}"
    k = run.metrics.keepalives
    return (f"{what} {qc / 1e9:.1f} s: keepalives only ({k} so far; they reset the read timeout)"
            if k else f"{what} {qc / 1e9:.1f} s: bytes, but no content")


# -- Blocks and Raw ---------------------------------------------------------------------------------------------
def blocks_overview(blocks) -> str:
    """Every block in short, for the Blocks tab's detail when no block is selected: tool calls whole (their
    arguments pretty-printed once complete), text and thinking cut to their first few hundred characters."""
    out = []
    for b in blocks:
        head = f"── block {b.index} · {b.kind}" + (f" · choice {b.choice}" if b.choice else "") + \
            ("" if b.complete else " · streaming") + " ──"
        if b.kind != "tool_call" and b.text is not None and not b.redacted:
            body = _cut(b.text, OVERVIEW_TEXT_CHARS)
            if b.signature:   # the tag is whole, after the (cut) text: never cut mid-word
                body += f"\n\n[signature: {len(b.signature):,} chars]"
        else:
            body = block_detail(b)
            if b.kind != "tool_call":
                body = _cut(body, OVERVIEW_TEXT_CHARS)
        out.append(head + "\n" + body)
    return "\n\n".join(out)


def _cut(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters at a word's end, saying how long it was."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit + 1)
    cut = cut if cut > 0 else limit
    return text[:cut].rstrip() + f"… ({len(text):,} chars: select the row for all of it)"


def describe_event(e) -> str:
    """One line per normalized event, for the frame detail view (plain text)."""
    name = type(e).__name__
    if isinstance(e, (ev.TextDelta, ev.ThinkingDelta, ev.RefusalDelta)):
        return f"{name} block {e.index}: {e.text!r}"
    if isinstance(e, ev.ToolArgsDelta):
        return f"{name} block {e.index}: {e.fragment!r}"
    if isinstance(e, ev.ToolArgsReplaced):
        return f"{name} block {e.index}: {e.arguments!r}"
    if isinstance(e, ev.SignatureDelta):
        return f"{name} block {e.index}: {plural(len(e.signature), 'char')}"
    if isinstance(e, ev.BlockStarted):
        extra = "".join(f" {k}={v}" for k, v in (("id", e.id), ("name", e.name)) if v)
        return f"{name} block {e.index} ({e.kind}){extra}"
    if isinstance(e, ev.BlockStopped):
        return f"{name} block {e.index}"
    if isinstance(e, ev.UsageUpdated):
        return f"{name} ({e.reporting}): {usage_figures(e.usage)}"
    if isinstance(e, ev.Finished):
        return f"{name}: {finish_text(e.reason) or '–'}"
    if isinstance(e, ev.InBandError):
        return f"{name}: {e.type or '–'}: {e.message or '–'}"
    if isinstance(e, ev.Terminated):
        return f"{name}: {e.marker}"
    if isinstance(e, ev.Diagnostic):
        return f"{name} {e.code}: {e.message}"
    if isinstance(e, ev.ResponseStarted):
        return f"{name}: id={e.response_id or '–'} model={e.model or '–'}"
    return name


def frame_detail_text(item, produced, selected: int = 1) -> str:
    """The Raw tab's detail of one SSE frame or comment line: where it was, its payload pretty-printed, and
    the normalized events it `produced` (frames only). `selected`: how many rows are selected."""
    is_frame = hasattr(item, "event")
    if is_frame:
        head = f"frame {item.n} · event {item.event} · offset {item.offset} · {plural(len(item.raw), 'byte')}"
        if item.id:
            head += f" · id {item.id}"
        if item.retry is not None:
            head += f" · retry {item.retry}"
    else:
        head = f"comment line (before frame {item.n}) · offset {item.offset} · {plural(len(item.raw), 'byte')}"
    lines = [head]
    if selected > 1:
        lines.append(f"({selected} frames selected; the first is shown)")
    lines += ["", pretty_payload(item)]
    if is_frame:
        lines += ["", "produced:" if produced else "produced: nothing (no normalized event)"]
        lines += ["  " + describe_event(e) for e in produced]
    return "\n".join(lines)


# -- Request ----------------------------------------------------------------------------------------------------
def _headers_lines(headers) -> list[str]:
    if headers is None:
        return []
    pairs = headers.items() if hasattr(headers, "items") else headers
    return [f"{k}: {v}" for k, v in pairs]


def request_body(req, pretty: bool = False) -> str:
    """The request body as text: exactly the bytes `core.live.transport` sends (`HttpRequest.content()`, the same
    serialization, from the redacted request), or indented JSON when `pretty`."""
    body = req.body
    if isinstance(body, (bytes, bytearray)):
        return body.decode("utf-8", "replace")
    if isinstance(body, str):
        return body
    if pretty:
        return json.dumps(body, indent=2, ensure_ascii=False)
    return req.content().decode("utf-8", "replace")


def response_body(run, pretty: bool = False) -> str | None:
    """A response body that is not an event stream (an HTTP error's body, a JSON answer), or None."""
    if run.body_kind in (None, "event-stream") or not run.chunks:
        return None
    if run.body_kind == "other" and run.decoder.frames:
        return None    # decoded as a stream: it is in the Raw tab
    data = run.body
    cut = len(data) > MAX_BODY_SHOWN
    text = data[:MAX_BODY_SHOWN].decode("utf-8", "replace")
    if pretty and not cut:
        try:
            text = json.dumps(parse_json(text), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):
            pass
    return text + (f"\n… ({len(data) - MAX_BODY_SHOWN:,} more bytes: export the run for all of it)" if cut else "")


def request_text(run, pretty: bool = False) -> str:
    """The redacted request as sent (the body byte for byte unless `pretty`), then the response status, headers
    and, when it is not an event stream, the response body."""
    req = run.request
    if req is None:
        return "(no request was sent)"
    lines = [f"{req.method} {req.url}"]
    lines.extend(_headers_lines(req.headers))
    lines.append("")
    lines.append(request_body(req, pretty))
    lines.append("")
    if isinstance(req.body, dict):
        n = len(req.content())
        lines.append(f"── body: {n:,} bytes, " + ("pretty-printed here (untick Pretty-print JSON for the exact "
                                                    "bytes)" if pretty else "exactly as sent")
                     + " (secrets masked); httpx adds Host, Connection and Content-Length ──")
    if not run.sent:
        lines.append("(this request was not sent)")
    notes = req.notes
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines.extend(f"  • {n}" for n in notes)
    lines.append("")
    lines.extend(history_lines(run))
    lines.append("")
    lines.append("── response ──")
    status = run.http_status
    if status is not None:
        lines.append(" ".join(x for x in (run.http_version, str(status), run.reason_phrase) if x))
    else:
        lines.append("(no response yet)" if not run.finished else "(no response)")
    lines.extend(_headers_lines(run.response_headers))
    body = response_body(run, pretty)
    if body is not None:
        lines.append("")
        lines.append(f"── response body ({len(run.body):,} bytes, not an event stream) ──")
        lines.append(body)
    return "\n".join(lines)


def history_lines(run) -> list[str]:
    """The history check of the request: what the recorder found before sending (`run.history_findings`), or,
    for a run that holds none (a replayed capture), the same check run on its request now. Each finding with
    where it points, or that nothing was found."""
    found = tuple(getattr(run, "history_findings", ()) or ())
    req = run.request
    if not found and req is not None and isinstance(req.body, dict):
        try:
            found = tuple(check_request(run.format, req.body, HistoryRules(model=run.provider.model)))
        except LocalProtocolError:   # (an unknown format: nothing to say about its history)
            found = ()
    if not found:
        return ["History check: nothing the API would reject"]
    errors, warnings = finding_totals(found)
    head = f"History check: {plural(errors, 'error')}, {plural(warnings, 'warning')}"
    if errors and not run.sent:
        head += " (so the request was not sent)"
    return [head] + [f"  • {f.severity} {f.code} at {f.path}: {f.message}" for f in found]


def curl_text(run) -> str | None:
    """A curl command for the run's request, the key replaced by its environment variable (None: no request)."""
    req = run.request
    if req is None:
        return None
    return curl_command(req, run.provider.api_key_env or None, run.provider)
