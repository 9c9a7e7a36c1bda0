"""Shared fixtures: one emulator per test session, started on a free loopback port."""
from __future__ import annotations

import pytest

from core.servers.emulator.server import EmulatorServer

PROMPT = "What is the capital of France?"
from core.wire.formats import FORMATS  # noqa: E402


@pytest.fixture(scope="session")
def emulator():
    """The emulator with no pacing (speed 0), so streams arrive at once."""
    server = EmulatorServer(speed=0)
    base = server.start()
    yield base
    server.stop()


@pytest.fixture(scope="session")
def paced_emulator():
    """The emulator with its default, model-like pacing."""
    server = EmulatorServer()
    base = server.start()
    yield base
    server.stop()
