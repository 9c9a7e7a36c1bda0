"""The tap's `Inspector`: the recorder's work runs after forwarding, in order, and takes turns with a window's
thread through its gate without ever blocking the tap's loop."""
from __future__ import annotations

import asyncio
import threading
import time

from core.servers.tap.app import Inspector


def test_work_runs_in_order_once_forwarding_is_quiet():
    async def main():
        insp = Inspector()
        done = []
        for i in range(5):
            insp.later(done.append, i)
        await asyncio.sleep(0.05)
        await insp.aclose()
        return done

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]


def test_a_closed_gate_holds_the_work_back_for_a_bounded_time_and_the_loop_stays_free():
    gate = threading.Event()          # closed: the window's thread is handling events

    async def main():
        insp = Inspector(gate=gate)
        done = []
        t0 = time.monotonic()
        insp.later(lambda: done.append(time.monotonic() - t0))
        ticks = 0
        while not done and time.monotonic() - t0 < 2:   # the loop keeps turning meanwhile
            await asyncio.sleep(0.001)
            ticks += 1
        await insp.aclose()
        return done, ticks

    done, ticks = asyncio.run(main())
    wait = Inspector.GATE_WAIT_NS / 1e9
    assert done and done[0] >= wait * 0.9          # held back while closed, at most about GATE_WAIT_NS
    assert done[0] < wait + 0.5
    assert ticks >= 5                             # never blocking the loop (forwarding's)


def test_an_open_gate_lets_the_work_run_at_once():
    gate = threading.Event()
    gate.set()

    async def main():
        insp = Inspector(gate=gate)
        done = []
        t0 = time.monotonic()
        insp.later(lambda: done.append(time.monotonic() - t0))
        while not done and time.monotonic() - t0 < 2:
            await asyncio.sleep(0.001)
        await insp.aclose()
        return done

    done = asyncio.run(main())
    assert done and done[0] < Inspector.GATE_WAIT_NS / 1e9 / 2
