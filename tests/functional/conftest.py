"""Fixtures the functional tests share: the embedded AWS emulator's (tests/emulator.py: loading it starts the
emulator), the API served on loopback, the SQS pump running the app's handlers, a built project."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject
from tests.deployments import ARTIFACTS_YML
from tests.emulator import *  # noqa: F403 (its fixtures: aws_endpoint, fresh_resources, client, account, ...)
from tests.gitserver import GitServer
from tests.support import Account


@pytest.fixture(scope="session")
def api_url(aws_endpoint: str) -> Iterator[str]:
    """The API served over HTTP on loopback, as the local stack serves it: what runners call (the job protocol)."""
    from chalicelib.local.stack import local_config, serve_api

    config = local_config()
    server = serve_api(config.chalice_app, config, 0)
    yield f"http://127.0.0.1:{server.server.server_address[1]}"
    server.shutdown()


@contextlib.contextmanager
def running_pump(api_url: str, **settings: str) -> Iterator[SqsPump]:
    """The app's queue handlers, run as the local stack runs them, with ``settings`` (environment variables) set;
    runners heartbeat twice a second."""
    from app import app

    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "CONVEYOR_HEARTBEAT_SECONDS": "0.5",
            "CONVEYOR_RUNNER_API_URL": api_url,
            **settings,
        }.items():
            patch.setenv(name, value)
        running = SqsPump(app, max_concurrency=4, wait_seconds=1)
        running.start()
        yield running
        running.stop()


@pytest.fixture(scope="module")
def pump(fresh_resources: None, api_url: str) -> Iterator[SqsPump]:
    """The app's queue handlers, run as the local stack runs them; runners heartbeat twice a second."""
    with running_pump(api_url) as running:
        yield running


@pytest.fixture
def make_project(account: Account, git_server: GitServer, pump: SqsPump):  # type: ignore[no-untyped-def]
    """Makes a project of ``account`` whose repository holds ``files`` (its first commit's fields in ``commit``),
    built by the pump's handlers."""

    def make(files: dict[str, str], **commit: object) -> BuildProject:
        return BuildProject(account, git_server, files, **commit)

    return make


@pytest.fixture
def built(account: Account, git_server: GitServer, pump: SqsPump) -> tuple[BuildProject, dict[str, Any]]:
    """A project with a successful build whose artifacts are out/app.txt (named app) and site/index.html (site)."""
    project = BuildProject(account, git_server, {"appveyor.yml": ARTIFACTS_YML})
    build = project.run()
    assert build["status"] == "success"
    return project, build
