"""Conversations over exchanges: the follow-up after a reply, and the automatic tool loop with the mocks.

    conversation_after(spec, run) -> Conversation      everything sent, then the run's assistant turn
    pending_calls(run) -> tuple[Part, ...]              the tool calls the run's reply ends with
    follow_up(spec, run, user="", results=()) -> PromptSpec
        the next exchange's spec: the same settings, the conversation so far, the tool results (each a
        `tool_result` part, e.g. from `core.live.tool_mocks.mock_results`) and/or a new user text
    exchange_index(spec) -> int                         which exchange of its conversation a spec sends (0 first)
    conversations_of(runs) -> list[list[ProviderRun]]  a capture's runs as conversations (per provider, by turn)
    handover_notes(spec, run, target) -> list[str]      what would not cross if the run's conversation became
                                                        the history of a `target`-format provider
    async run_tool_loop(providers, spec, rounds, ...) -> list[ProviderRun]
        every provider continues its own conversation: while its reply ends in tool calls and fewer than
        `rounds` tool rounds were run, the mocks answer and the conversation is sent again. Returns every
        exchange's run, round by round (the order they were sent in).

A provider's conversation stays provider-neutral between exchanges; each request maps it to its format again
(`core.live.request`), so a conversation can also be handed to another provider ("continue from this reply"):
`follow_up(spec, run)` with any other provider's run works the same, what cannot cross being dropped and noted.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from core.live.config import ProviderConfig
from core.live.conversation import Conversation, Part, assistant_turn, portable
from core.live.recorder import ProviderRun, prepare_run
from core.live.request import PromptSpec
from core.live.tool_mocks import mock_results


def conversation_after(spec: PromptSpec, run: ProviderRun) -> Conversation:
    conv = spec.dialogue()
    turn = assistant_turn(run.reply, run.format)
    if spec.conversation is not None:   # keep the file's system prompt and tools with it
        conv = replace(conv, system=spec.conversation.system, tools=spec.conversation.tools)
    return conv.add(turn) if turn.parts else conv


def pending_calls(run: ProviderRun) -> tuple[Part, ...]:
    if not run.ok:
        return ()
    return assistant_turn(run.reply, run.format).tool_calls


def follow_up(spec: PromptSpec, run: ProviderRun, user: str = "", results: Sequence[Part] = ()) -> PromptSpec:
    conv = conversation_after(spec, run)
    if results:
        conv = conv.add_tool_results(results)
    return replace(spec, user=user, history=(), conversation=conv)


HANDOVER_NOTE = "history handed over from "   # a run's note: whose reply its history came from ("Continue everyone")


def handover_note(label: str) -> str:
    """The note a turn carries when its history is another pane's reply (kept in the capture with the run)."""
    return HANDOVER_NOTE + label


def handover_source(notes: Sequence[str]) -> str | None:
    """Whose reply a turn's history came from, by its `handover_note` (None: its own conversation's)."""
    return next((n[len(HANDOVER_NOTE):] for n in notes if n.startswith(HANDOVER_NOTE)), None)


def conversations_of(runs: Sequence[ProviderRun]) -> list[list[ProviderRun]]:
    """Runs grouped into conversations, in the order each conversation first appears: a run continues the
    provider's open conversation when it is a later exchange (`exchange_index`) than that conversation's last;
    otherwise (a first exchange again, as repeated runs of a bench are) it starts a new one."""
    groups: list[list[ProviderRun]] = []
    open_by_name: dict[str, list[ProviderRun]] = {}
    for r in runs:
        turn = exchange_index(r.spec)
        group = open_by_name.get(r.provider.name)
        if group is None or turn <= exchange_index(group[-1].spec):
            group = []
            groups.append(group)
            open_by_name[r.provider.name] = group
        group.append(r)
    return groups


def handover_notes(spec: PromptSpec, run: ProviderRun, target: str) -> list[str]:
    """One note per kind of part dropped or changed if `follow_up(spec, run)` went to a provider of the `target`
    format ("continue everyone from this reply"): the same notes that provider's request will carry, known before
    anything is sent. Empty when every part can go to the target as it is (its own format's turns)."""
    return portable(conversation_after(spec, run), target)[1]


def exchange_index(spec: PromptSpec | None) -> int:
    if spec is None:
        return 0
    try:
        return spec.dialogue().exchanges()
    except ValueError:
        return 0


async def run_tool_loop(providers: Sequence[ProviderConfig], spec: PromptSpec, rounds: int, *,
                        key_resolver: Callable | None = None, on_prepared: Callable[[ProviderRun], None] | None = None,
                        on_finished: Callable[[ProviderRun], None] | None = None,
                        connect_timeout: float = 10.0, read_timeout: float = 60.0) -> list[ProviderRun]:
    """Send `spec` to every provider, then run up to `rounds` tool rounds each with the mock implementations.

    on_prepared(run) is called for every run before it is sent (a run refused before sending, e.g. for a missing
    key or a history the API would reject, is already finished); on_finished(run) as each one ends."""
    from core.live.transport import Session

    kw = {} if key_resolver is None else {"key_resolver": key_resolver}
    todo = [(p, spec) for p in providers]
    every: list[ProviderRun] = []
    for round_no in range(rounds + 1):
        runs = [prepare_run(p, s, **kw) for p, s in todo]
        for r in runs:
            if on_prepared is not None:
                on_prepared(r)
        every += runs
        await Session(runs, connect_timeout=connect_timeout, read_timeout=read_timeout,
                      on_finished=on_finished).run()
        if round_no == rounds:
            break
        todo = []
        for r in runs:   # each run keeps the spec it was sent with
            calls = pending_calls(r)
            if calls and r.spec is not None:
                todo.append((r.provider, follow_up(r.spec, r, results=mock_results(calls))))
        if not todo:
            break
    return every
