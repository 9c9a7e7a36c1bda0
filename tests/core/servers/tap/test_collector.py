"""The tap process's collector (`core.servers.tap.collector`): young collections only while exchanges are open,
one full collection once the tap is idle, and one at an exchange's start when it has been busy for long."""
from __future__ import annotations

import asyncio
import gc

import pytest

from core.servers.tap.collector import OUT_OF_REACH, ForwardingCollector


class FakeTap:
    def __init__(self) -> None:
        self.on_started: list = []
        self.on_ended: list = []


@pytest.fixture
def collector():
    before = gc.get_threshold()
    c = ForwardingCollector(settle_s=0.05, full_every_s=60.0)
    yield c
    c.uninstall()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_older_generations_wait_while_exchanges_are_open_and_are_collected_once_idle(collector):
    async def go():
        tap = FakeTap()
        collector.install(tap)
        assert collector.full_collections == 1 and gc.get_freeze_count() > 0     # start-up, frozen
        young = collector.defaults[0]
        for fn in tap.on_started:
            fn("ex1")
        for fn in tap.on_started:
            fn("ex2")
        assert gc.get_threshold() == (young, OUT_OF_REACH, OUT_OF_REACH)
        for fn in tap.on_ended:
            fn("ex1")
        await asyncio.sleep(0.1)
        assert gc.get_threshold()[1] == OUT_OF_REACH and collector.full_collections == 1   # ex2 still open
        for fn in tap.on_ended:
            fn("ex2")
        for fn in tap.on_started:          # a new one within settle_s: still busy, no collection
            fn("ex3")
        await asyncio.sleep(0.1)
        assert collector.full_collections == 1
        for fn in tap.on_ended:
            fn("ex3")
        await asyncio.sleep(0.1)
        assert gc.get_threshold() == collector.defaults and collector.full_collections == 2
    asyncio.run(go())


def test_a_tap_never_idle_still_gets_a_full_collection_now_and_then(collector):
    async def go():
        tap = FakeTap()
        collector.install(tap)
        collector.full_every_s = 0.0
        collector.started()                 # nothing began since the last full collection: none
        assert collector.full_collections == 1
        collector.started()                 # busy, and full_every_s passed: one, before it forwards
        assert collector.full_collections == 2 and collector.open == 2
        assert gc.get_threshold()[1] == OUT_OF_REACH
    asyncio.run(go())


def test_uninstall_leaves_the_tap_and_the_collector_as_they_were(collector):
    tap = FakeTap()
    asyncio.run(asyncio.sleep(0))
    collector.install(tap)
    collector.uninstall()
    assert tap.on_started == [] and tap.on_ended == [] and gc.get_freeze_count() == 0
