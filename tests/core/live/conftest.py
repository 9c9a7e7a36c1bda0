"""Shared fixtures: the emulator with no pacing and with its default pacing (session fixtures of the emulator tests)."""
from tests.core.servers.emulator.conftest import emulator, paced_emulator  # noqa: F401
