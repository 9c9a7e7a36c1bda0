"""The decode worker: the recorder's calls on a thread of their own, in order, with the same runs as inline.

Every scenario of the emulator in every wire format is streamed twice, once decoded inline and once through a
`DecodeWorker`: the finished runs must be the same (status, error, bytes, the decoded result, frame count).
Cancelling mid-stream and a stall keep what arrived, as inline.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading

import pytest

from core.live.config import demo_providers
from core.live.decode_worker import DecodeWorker, shared_worker
from core.live.recorder import prepare_run
from core.live.request import PromptSpec
from core.live.transport import new_client, stream_provider
from core.servers.emulator.scenarios import SCENARIOS

NO_PACING = {"x-emulator-speed": "0"}


def _run_for(base: str, fmt: str, scenario: str, name: str):
    p = next(p for p in demo_providers(base, scenario) if p.format == fmt)
    spec = PromptSpec(user="What is the capital of France?", max_tokens=100_000 if scenario == "firehose" else 1024,
                      tools=({"name": "get_weather", "description": "weather",
                              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},)
                      if scenario in ("tool-call", "parallel-tools") else ())
    run = prepare_run(dataclasses.replace(p, name=name), spec)
    if run._send is not None:
        run._send.headers.update(NO_PACING)
    return run


def _outcome(run) -> dict:
    return {"status": run.status, "error": None if run.error is None else run.error["type"],
            "http": run.http_status, "body": run.body, "frames": run.metrics.frames,
            "chunks": len(run.chunks), "events": len(run.events), "result": run.decoder.result(),
            "keepalives": run.metrics.keepalives}


def test_items_run_in_order_on_the_workers_thread_and_drained_waits_for_them():
    worker = DecodeWorker("test-decode")
    seen = []

    async def go():
        for i in range(500):
            worker.submit(lambda i=i: seen.append((i, threading.current_thread().name)))
        await worker.drained()
        return list(seen)

    try:
        got = asyncio.run(go())
    finally:
        worker.stop()
    assert [i for i, _ in got] == list(range(500))
    assert {name for _, name in got} == {"test-decode"}
    assert not worker.running


def test_an_item_that_raises_is_logged_and_the_next_ones_still_run(caplog):
    worker = DecodeWorker("test-decode-2")
    seen = []

    def boom():
        raise ValueError("bad item")

    async def go():
        worker.submit(boom)
        worker.submit(seen.append, "after")
        await worker.drained()

    with caplog.at_level(logging.ERROR, logger="streamscope.decode"):
        asyncio.run(go())
    worker.stop()
    assert seen == ["after"]
    assert any("bad item" in (r.exc_text or "") or "boom" in r.getMessage() for r in caplog.records)


def test_the_lock_is_held_while_an_item_runs():
    worker = DecodeWorker("test-decode-3")
    inside = threading.Event()
    release = threading.Event()

    def slow():
        inside.set()
        release.wait(5)

    async def go():
        worker.submit(slow)
        await asyncio.get_running_loop().run_in_executor(None, inside.wait, 5)
        assert not worker.lock.acquire(blocking=False)   # the worker holds it
        release.set()
        await worker.drained()
        assert worker.lock.acquire(blocking=False)
        worker.lock.release()

    asyncio.run(go())
    worker.stop()


@pytest.mark.parametrize("scenario", sorted(s for s in SCENARIOS if s not in ("stall",)))
def test_a_run_decoded_on_the_worker_equals_the_same_run_decoded_inline(emulator, scenario):
    formats = ("openai-chat", "openai-responses", "anthropic", "gemini")

    async def go():
        client = new_client()
        try:
            inline = [_run_for(emulator, f, scenario, f"inline/{f}") for f in formats]
            worked = [_run_for(emulator, f, scenario, f"worker/{f}") for f in formats]
            await asyncio.gather(*(stream_provider(r, client, read_timeout=10) for r in inline))
            await asyncio.gather(*(stream_provider(r, client, read_timeout=10, worker=shared_worker())
                                   for r in worked))
            return inline, worked
        finally:
            await client.aclose()

    inline, worked = asyncio.run(go())
    for a, b in zip(inline, worked):
        assert b.finished                       # final when stream_provider returned
        oa, ob = _outcome(a), _outcome(b)
        if scenario.startswith("http-"):        # (an error body carries a fresh request id each time)
            oa.pop("body"), ob.pop("body")
        if scenario in ("drop",):               # where the cut falls depends on the read: compare what is fixed
            oa.pop("body"), ob.pop("body"), oa.pop("result"), ob.pop("result")
            oa.pop("frames"), ob.pop("frames"), oa.pop("chunks"), ob.pop("chunks"), oa.pop("events"), ob.pop("events")
        else:
            oa.pop("chunks"), ob.pop("chunks")  # (how the bytes were cut into reads is the socket's)
        assert oa == ob, (scenario, a.provider.format)


def test_a_stall_ends_stalled_with_its_keepalives_counted(paced_emulator):
    async def go():
        client = new_client()
        try:
            run = _run_for(paced_emulator, "anthropic", "stall", "stall")
            run._send.headers.pop("x-emulator-speed", None)
            await stream_provider(run, client, read_timeout=0.6, worker=shared_worker())
            return run
        finally:
            await client.aclose()

    run = asyncio.run(go())
    assert run.status == "stalled" and run.error["type"] == "stalled"
    assert run.metrics.bytes > 0 and run.chunks        # what arrived before the stall is kept


def test_cancelling_mid_stream_keeps_what_arrived(emulator):
    async def go():
        client = new_client()
        try:
            run = _run_for(emulator, "openai-chat", "firehose", "cancel")
            task = asyncio.ensure_future(stream_provider(run, client, worker=shared_worker()))
            while run.metrics.bytes < 100_000:
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return run
        finally:
            await client.aclose()

    run = asyncio.run(go())
    assert run.finished and run.status == "cancelled"
    assert run.metrics.frames > 0 and run.body and len(run.body) == run.metrics.bytes
    assert run.decoder.frames == run.metrics.frames


def test_the_worker_is_given_the_arrival_times_read_on_the_loop(emulator):
    """The chunks' times are the reading thread's, taken as each was read: in order, within the run's span."""
    async def go():
        client = new_client()
        try:
            run = _run_for(emulator, "gemini", "text", "times")
            await stream_provider(run, client, worker=shared_worker())
            return run
        finally:
            await client.aclose()

    run = asyncio.run(go())
    times = [t for t, _ in run.chunks]
    assert times == sorted(times) and 0 < times[0] <= times[-1] <= run.metrics.t_total_ns


@pytest.mark.parametrize("speed", [None, 50.0])
def test_a_replay_decoded_on_the_worker_equals_the_source(emulator, speed):
    from core.live.replay import replay_into, replay_target

    async def go():
        client = new_client()
        try:
            source = _run_for(emulator, "anthropic", "tool-call", "source")
            await stream_provider(source, client)
        finally:
            await client.aclose()
        run = replay_target(source)
        await replay_into(run, source, speed=speed, worker=shared_worker())
        return source, run

    source, run = asyncio.run(go())
    assert run.finished and run.status == source.status == "done"
    assert run.body == source.body and run.decoder.result() == source.decoder.result()
    assert [t for t, _ in run.chunks] == [t for t, _ in source.chunks]


def test_a_recorder_failure_on_the_worker_ends_the_run_with_an_internal_error(emulator, monkeypatch, caplog):
    """Inline, a recorder call that raises ends the stream with an internal error; on the worker the same run
    ends the same way (and the failure is logged), and the stream's bytes are still read to the end."""
    from core.live.recorder import ProviderRun
    from core.live.replay import replay_into, replay_target

    original = ProviderRun._on_chunk
    calls = {"n": 0}

    def flaky(self, t, data):
        calls["n"] += 1
        if self.name in ("broken", "replayed") and calls["n"] == 2:
            raise ValueError("the recorder broke")
        original(self, t, data)

    async def go():
        client = new_client()
        try:
            source = _run_for(emulator, "openai-chat", "long", "source")
            await stream_provider(source, client)
            monkeypatch.setattr(ProviderRun, "_on_chunk", flaky)
            calls["n"] = 0
            run = _run_for(emulator, "openai-chat", "long", "broken")
            await stream_provider(run, client, worker=shared_worker())
            calls["n"] = 0
            again = replay_target(source)
            again.provider = dataclasses.replace(source.provider, name="replayed")
            await replay_into(again, source, speed=None, worker=shared_worker())
            return run, again
        finally:
            await client.aclose()

    with caplog.at_level(logging.ERROR, logger="streamscope.decode"):
        run, again = asyncio.run(go())
    for r in (run, again):
        assert r.finished and r.status == "error"
        assert r.error["type"] == "internal_error" and "the recorder broke" in r.error["message"]
    assert any("failed" in rec.getMessage() for rec in caplog.records)
