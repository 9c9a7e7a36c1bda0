"""Shared fixtures: one emulator per test session, started on a free loopback port."""
from __future__ import annotations

import pytest

from core.servers.emulator.server import EmulatorServer

PROMPT = "What is the capital of France?"


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


# -- the official SDKs pointed at the emulator (each skips the tests that use it when it is not installed) --------
@pytest.fixture(scope="module")
def oc(emulator):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=emulator + "/v1", api_key="sk-test", max_retries=0, timeout=10)


@pytest.fixture(scope="module")
def ac(emulator):
    anthropic = pytest.importorskip("anthropic")
    return anthropic.Anthropic(base_url=emulator, api_key="sk-ant-test", max_retries=0, timeout=10)


@pytest.fixture(scope="module")
def gc(emulator):
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    return genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=emulator, timeout=10_000))
