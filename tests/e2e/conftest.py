"""The stack the end-to-end modules share the shape of: each module gets one of its own. The embedded AWS emulator
(tests/emulator.py) is loaded too, emptied before each module: one stack keeps its tables there (aws_endpoint)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.test_local_stack import KNOWN_KEY, LocalStack
from tests.emulator import *  # noqa: F403 (its fixtures: aws_endpoint, fresh_resources, ...)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """A stack with its own emulator and a known key, shared by the module."""
    local = LocalStack.start(tmp_path_factory.mktemp("stack"), api_key=KNOWN_KEY)
    try:
        yield local.wait_until_ready()
    finally:
        local.stop()
