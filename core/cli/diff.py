"""The `diff` subcommand: what differs between two answers in a capture (registered by main.py).

    python main.py diff capture.jsonl --a NAME --b NAME [--choice N] [--json]

NAME is a provider's name in the capture; where a name occurs more than once (a `bench --export` capture holds
every repeat), `NAME#K` picks its K-th run (from 1). With exactly two runs in the capture, --a and --b may be
left out. The comparison is `core.wire.answer_diff`: the texts word by word (`[-only in A-]{+only in B+}`, the
notation of `git diff --word-diff=plain`), the tool calls (same tool? arguments parsed as JSON and compared key
by key, with the differing paths), thinking lengths, finish reasons and usage. Model text is printed with
control characters shown as escapes. Exit status: 0 when the answers are the same, 1 when they differ (as
diff(1)), 2 for a usage error or an unreadable capture.
"""
from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    d = sub.add_parser("diff", help="what differs between two answers in a .jsonl capture",
                       description="Compare two providers' answers in a capture: the texts word by word, the "
                                   "tool calls key by key, thinking lengths, finish reasons and usage. Exit "
                                   "status 0 when they are the same, 1 when they differ, 2 for errors.")
    d.add_argument("file", help="a .jsonl capture written by `run --export`, `bench --export` or the GUI")
    d.add_argument("--a", dest="side_a", metavar="NAME", help="the first provider (NAME#K: its K-th run)")
    d.add_argument("--b", dest="side_b", metavar="NAME", help="the second provider (NAME#K: its K-th run)")
    d.add_argument("--choice", type=int, default=0, metavar="N", help="which choice of an n>1 reply (default 0)")
    d.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    d.set_defaults(func=cmd_diff)


def pick_run(runs, ref: str):
    """The run `ref` names ("NAME" or "NAME#K"); raises ValueError saying what the capture holds."""
    name, sep, k = ref.rpartition("#") if "#" in ref else (ref, "", "")
    matches = [r for r in runs if r.name == name]
    if sep and not matches:   # a provider whose name itself holds "#"
        name, sep, matches = ref, "", [r for r in runs if r.name == ref]
    names = list(dict.fromkeys(r.name for r in runs))
    if not matches:
        raise ValueError(f"no run of {name!r} in the capture (it holds: {', '.join(names)})")
    if not sep:
        if len(matches) > 1:
            raise ValueError(f"{name!r} has {len(matches)} runs in the capture: name one as {name}#1 .. "
                             f"{name}#{len(matches)}")
        return matches[0]
    if not k.isdigit() or not 1 <= int(k) <= len(matches):
        raise ValueError(f"{ref!r}: {name!r} has {len(matches)} run(s) in the capture; K must be 1..{len(matches)}")
    return matches[int(k) - 1]


def _side(run, ref: str) -> dict:
    return {"ref": ref, "provider": run.name, "format": run.format, "model": run.provider.model,
            "status": run.status, "error": run.error}


def cmd_diff(args: argparse.Namespace) -> int:
    import json

    from core.live.capture import CaptureError, read_jsonl
    from core.wire.answer_diff import diff_replies

    def fail(msg: str) -> int:
        print(f"diff: {msg}", file=sys.stderr)
        return 2

    if args.choice < 0:
        return fail("--choice must be 0 or more")
    try:
        runs = read_jsonl(args.file)
    except CaptureError as exc:
        return fail(str(exc))
    refs = [args.side_a, args.side_b]
    if refs == [None, None] and len(runs) == 2:
        picked = runs
        refs = [runs[0].name, runs[1].name]
    elif None in refs:
        names = ", ".join(dict.fromkeys(r.name for r in runs))
        return fail(f"give --a NAME and --b NAME (the capture holds: {names})")
    else:
        try:
            picked = [pick_run(runs, ref) for ref in refs]
        except ValueError as exc:
            return fail(str(exc))
    a, b = picked
    d = diff_replies(a.reply, b.reply, choice=args.choice)
    if args.json:
        out = {"a": _side(a, refs[0]), "b": _side(b, refs[1]), "choice": args.choice}
        out.update(d.to_json())
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(d, _side(a, refs[0]), _side(b, refs[1])))
    sys.stdout.flush()
    return 0 if d.same else 1


def _value(v) -> str:
    import json

    return json.dumps(v, ensure_ascii=False)


def render(d, a: dict, b: dict) -> str:
    """The comparison as terminal text (model text made safe to print)."""
    from core.cli.terminal import safe

    out = [f"A = {a['ref']} ({a['format']}, model {a['model']}, {a['status']})",
           f"B = {b['ref']} ({b['format']}, model {b['model']}, {b['status']})"]
    for label, side in (("A", a), ("B", b)):
        if side["error"] is not None:
            out.append(f"{label} ended with {side['error'].get('type')}: {side['error'].get('message')}")
    t = d.text
    out.append("")
    if t.same:
        out.append("Text: the same" + ("" if any(o.a for o in t.ops) else " (both empty)"))
    else:
        how = "word by word" if t.exact else "too long to compare word by word: the differing middle is shown whole"
        out.append(f"Text: differs (similarity {t.similarity:.2f}, {how}; [-only in A-] {{+only in B+}})")
        pieces = []
        for o in t.ops:
            if o.op == "equal":
                pieces.append(o.a)
            else:
                if o.a:
                    pieces.append(f"[-{o.a}-]")
                if o.b:
                    pieces.append(f"{{+{o.b}+}}")
        out += ["", "".join(pieces), ""]
    out += detail_lines(d)
    return safe("\n".join(out)) + "\n"


def detail_lines(d) -> list[str]:
    """Everything but the text: tool calls (with the differing argument paths), thinking lengths, finish reasons
    and usage, one line each (plain text, not yet made safe for a terminal; the GUI's diff view shows them)."""
    out: list[str] = []
    calls = d.tool_calls
    out.append(f"Tool calls: {sum(c.a_name is not None for c in calls)} in A, "
               f"{sum(c.b_name is not None for c in calls)} in B")
    for n, c in enumerate(calls, start=1):
        if c.b_name is None:
            out.append(f"  #{n} only in A: {c.a_name}({c.a_arguments})")
            continue
        if c.a_name is None:
            out.append(f"  #{n} only in B: {c.b_name}({c.b_arguments})")
            continue
        tool = f"same tool {c.a_name}" if c.same_tool else f"different tools: A {c.a_name}, B {c.b_name}"
        if not (c.a_valid and c.b_valid):
            bad = " and ".join(s for s, ok in (("A", c.a_valid), ("B", c.b_valid)) if not ok)
            same = "the same text" if c.same_arguments else "different text"
            out.append(f"  #{n} {tool}; arguments of {bad} are not valid JSON ({same})")
            out += [f"     A: {c.a_arguments}", f"     B: {c.b_arguments}"]
            continue
        if c.same_arguments:
            out.append(f"  #{n} {tool}; the same arguments")
            continue
        count = len(c.differences) + c.more_differences
        out.append(f"  #{n} {tool}; arguments differ at {count} path{'s' if count != 1 else ''}")
        for x in c.differences:
            if x.kind == "only_a":
                out.append(f"     {x.path}: only in A: {_value(x.a)}")
            elif x.kind == "only_b":
                out.append(f"     {x.path}: only in B: {_value(x.b)}")
            else:
                kind = " (different JSON types)" if x.kind == "type" else ""
                out.append(f"     {x.path}: {_value(x.a)} -> {_value(x.b)}{kind}")
        if c.more_differences:
            out.append(f"     ... and {c.more_differences} more")
    out.append(f"Thinking: A {d.thinking_chars.a} chars in {d.thinking_blocks.a} block(s), "
               f"B {d.thinking_chars.b} chars in {d.thinking_blocks.b} block(s)")
    raws = f"A {_value(d.finish_raw.a)}, B {_value(d.finish_raw.b)}"
    if d.finish.a is None and d.finish.b is None and d.finish_raw.a is None and d.finish_raw.b is None:
        out.append(NO_FINISH)            # (it said "the same: None (raw null)")
    elif not d.finish.same:
        out.append(f"Finish: differs: A {d.finish.a}, B {d.finish.b} (raw: {raws})")
    elif d.finish_raw.same:
        out.append(f"Finish: the same: {d.finish.a} (raw {_value(d.finish_raw.a)})")
    else:
        out.append(f"Finish: the same: {d.finish.a}; the providers' own values differ: {raws}")
    out.append("Usage:")
    width = max(len(u.field) for u in d.usage)
    out.append(f"  {'':<{width}}  {'A':>8}  {'B':>8}  {'B-A':>8}")
    for u in d.usage:
        delta = "" if u.delta is None else f"{u.delta:+d}"
        out.append(f"  {u.field:<{width}}  {_num(u.a):>8}  {_num(u.b):>8}  {delta:>8}")
    return out


NO_FINISH = "Finish: none reported by either run"


def _num(v) -> str:
    return "–" if v is None else str(v)
