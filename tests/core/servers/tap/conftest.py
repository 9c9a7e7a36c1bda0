from tests.core.servers.emulator.conftest import emulator, paced_emulator  # noqa: F401 - shared fixtures
