"""The `check-request` subcommand: the history check over one request body, printed as JSON.

    python main.py check-request --format F request.json [--model M] [--gemini-signatures required|optional|auto]
                                 [--responses-reasoning required|optional|auto] [--interleaved-thinking]

The file holds a request body, or a request as StreamScope shows and captures it (`{"method", "url", "headers",
"body"}`: the body is checked and, for Gemini, the model is read from the URL). Prints one JSON object:
`{"format", "rejected", "errors", "warnings", "findings": [{"severity", "code", "message", "path",
"message_index", "part_index"}]}`. `errors` and `warnings` count every finding; `findings` lists the first
`core.wire.history.FINDINGS_PER_CODE` of each code, then, for a code with more, one `findings-not-listed` finding
of its severity ("… and K more `code` findings", at the first one not listed), so the output and the memory stay
bounded whatever the body holds. Exit status: 1 when the API would reject the request, 0 otherwise, 2 for a usage
error or a file that is not a JSON object, or one nested deeper than `core.wire.jsonfast.MAX_DEPTH` levels (no
JSON StreamScope reads nests deeper), each with a one-line message on stderr. Imports the wire layer alone.
"""
from __future__ import annotations

import argparse
import re
import sys

_CHOICES = ("auto", "required", "optional")
MAX_REQUEST_BYTES = 64 << 20   # larger than any API accepts


def register(sub) -> None:
    c = sub.add_parser("check-request", help="check a request body's conversation as its API would",
                       description="Report what the API would reject in a request body's conversation (unpaired "
                                   "tool calls and results, thinking blocks or signatures dropped or changed, a "
                                   "Responses function_call without its reasoning item, ...) and what is "
                                   "suspicious. Exit status 1 when the API would reject it.")
    c.add_argument("--format", required=True, help="openai-chat | openai-responses | anthropic | gemini")
    c.add_argument("file", help="a JSON request body (or a captured request with 'body'), or - for stdin")
    c.add_argument("--model", metavar="M", help="the model (Gemini's is in the URL, not the body): gemini-3* "
                                                "models require function call signatures")
    c.add_argument("--gemini-signatures", choices=_CHOICES, default="auto",
                   help="whether Gemini functionCall parts need their thoughtSignature (auto: for Gemini 3 models)")
    c.add_argument("--responses-reasoning", choices=_CHOICES, default="auto",
                   help="whether a Responses function_call passed back needs its reasoning item (auto: when the "
                        "request asks for reasoning)")
    c.add_argument("--interleaved-thinking", action="store_true",
                   help="Anthropic's interleaved-thinking beta is on (thinking blocks may follow tool_use blocks)")
    c.set_defaults(func=cmd_check_request)


def _model_from_url(url: object) -> str | None:
    m = re.search(r"/models/([^/:?]+)", url) if isinstance(url, str) else None
    return m.group(1) if m else None


def cmd_check_request(args: argparse.Namespace) -> int:
    import json

    from core.cli.inputs import read_input
    from core.wire.formats import FORMATS
    from core.wire.history import HistoryRules, history_check
    from core.wire.jsonfast import MAX_DEPTH, JSONTooDeep, bounded, loads

    if args.format not in FORMATS:
        print(f"check-request: unknown format {args.format!r} (expected one of: {', '.join(FORMATS)})",
              file=sys.stderr)
        return 2
    data = read_input(args.file, "check-request", limit=MAX_REQUEST_BYTES)
    if data is None:   # unreadable, or larger than the bound (read no further than that)
        return 2
    too_deep = f"check-request: {args.file} is nested too deep: JSON deeper than {MAX_DEPTH} levels is not read"
    try:
        doc = loads(data.decode("utf-8"))   # too deep to parse is a ValueError (JSONTooDeep), not a RecursionError
    except JSONTooDeep:
        print(too_deep, file=sys.stderr)
        return 2
    except (UnicodeDecodeError, ValueError) as exc:
        print(f"check-request: {args.file} is not JSON: {exc}", file=sys.stderr)
        return 2
    del data
    if bounded(doc) is not doc:   # (parsed, but deeper than anything else StreamScope reads: --tools, --conversation)
        print(too_deep, file=sys.stderr)
        return 2
    if not isinstance(doc, dict):
        print(f"check-request: {args.file} holds a JSON {type(doc).__name__}, not a request body (an object)",
              file=sys.stderr)
        return 2
    model = args.model
    if isinstance(doc.get("body"), dict) and ("url" in doc or "method" in doc):   # a captured request
        model = model or _model_from_url(doc.get("url"))
        doc = doc["body"]
    model = model or (doc.get("model") if isinstance(doc.get("model"), str) else None)
    rules = HistoryRules(model=model, gemini_signatures=args.gemini_signatures,
                         responses_reasoning=args.responses_reasoning, interleaved_thinking=args.interleaved_thinking)
    result = history_check(args.format, doc, rules)
    out = {"format": args.format, "rejected": result.rejected, "errors": result.errors,
           "warnings": result.warnings, "findings": [f.to_json() for f in result.findings]}
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 1 if out["rejected"] else 0
