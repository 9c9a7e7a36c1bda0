"""Shared fixtures: the emulator with no pacing (a session fixture of the emulator tests)."""
from tests.core.servers.emulator.conftest import emulator  # noqa: F401
