"""What every test shares: the network rule, enforced in every test process, and a git server.

The embedded AWS emulator and the fixtures of the tests that call the app (client, account, ...) are in
tests/emulator.py, which only the conftests of functional/ and e2e/ load: unit tests run without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests import network_rule

if TYPE_CHECKING:
    from tests.gitserver import GitServer

network_rule.enforce()
# jobs run in the unshare sandbox unless a test asks for containers (tests/functional/test_containers.py): a
# container per job would slow every build test down, and most test what the runner does, not where
os.environ.setdefault("CONVEYOR_CONTAINERS", "off")


@pytest.fixture(autouse=True)
def loopback_only() -> Iterator[None]:
    """A test that looked up a name or reached an address outside loopback fails, even where the code under test
    took the refusal in its stride."""
    network_rule.broken.clear()
    yield
    assert not network_rule.broken, f"the network rule: tests reach loopback only, and this one {network_rule.broken}"


@pytest.fixture(scope="module")
def git_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    """A git smart-HTTP server on loopback for the module, serving the repositories its tests make under its root."""
    from tests.gitserver import GitServer  # imported here: dulwich is of no use to most unit tests

    with GitServer(tmp_path_factory.mktemp("repositories")) as server:
        yield server
