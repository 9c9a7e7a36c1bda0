import pytest

from tests.core.servers.emulator.conftest import emulator, paced_emulator  # noqa: F401 - shared fixtures
from tests.core.servers.tap.faulty import start_faulty


@pytest.fixture(scope="module")
def faulty():
    """The small upstream written for the fault cases (tests.core.servers.tap.faulty): (base URL, its app)."""
    server, app = start_faulty()
    yield server.base_url, app
    server.stop()
