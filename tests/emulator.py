"""One embedded AWS emulator per test process, for the tests that call the app in it; every test works in accounts of
its own.

Only the conftests of the directories whose tests need it import this module, and its fixtures with it:
tests/functional/conftest.py (the app through Chalice's test client) and tests/e2e/conftest.py (a stack may keep its
tables here). Importing it starts the emulator, so it runs before any module of theirs is collected and every AWS
client they make talks to it; unit and browser tests never load it.

Accounts isolate tests from each other (everything the API serves belongs to one account), so the emulator is
started once. It is emptied before each test module all the same: moto copies a whole table for every transaction,
so tables that grew across the session would slow every write down.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import requests
from chalice.test import Client

from chalicelib.local.emulator import Emulator
from tests.support import Account, new_account

__all__ = ["account", "aws_endpoint", "client", "fresh_resources", "other_account"]  # the fixtures conftests take

_emulator = Emulator(port=0)
_emulator.start()  # before anything makes an AWS client, so every client talks to it

from chalicelib.cli import apply_stage_environment  # noqa: E402

apply_stage_environment("local")


def emulator_admin_headers() -> dict[str, str]:
    """What resetting the emulator takes (nothing else may reset it: a build could otherwise wipe the stack)."""
    return _emulator.admin_headers


@pytest.fixture(scope="session")
def aws_endpoint() -> str:
    """The emulator's URL."""
    return os.environ["AWS_ENDPOINT_URL"]


@pytest.fixture(scope="module", autouse=True)
def fresh_resources(aws_endpoint: str) -> None:
    """An empty emulator with every table, queue, bucket and key of the app, for each test module."""
    from app import app
    from chalicelib.domain.shared.warm_cache import forget_everything
    from chalicelib.local.resources import ensure_resources

    requests.post(f"{aws_endpoint}/moto-api/reset", headers=emulator_admin_headers(), timeout=30).raise_for_status()
    ensure_resources(app)
    forget_everything()  # ids start again after a reset: what the last module's accounts resolved to is not theirs


@pytest.fixture(scope="session")
def client(aws_endpoint: str) -> Iterator[Client]:
    from app import app

    with Client(app, stage_name="local") as test_client:
        yield test_client


@pytest.fixture
def account(client: Client) -> Account:
    """A fresh account whose owner (an administrator) calls the API."""
    return new_account(client)


@pytest.fixture
def other_account(client: Client) -> Account:
    """A second fresh account, for isolation checks."""
    return new_account(client)
