"""Attacks on the local stack's kept state (review of issue 36), as a developer runs ``make run``: as their own user,
not root, so a build's sandbox runs as that user to the kernel and only the sandbox's cover keeps it out of the
state folder (runner/sandbox.py). The stack runs in a user namespace whose only user is this one: to itself it is
root, but it cannot become nobody, so it makes the sandbox a user's stack makes, and its files are its user's."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from tests.e2e.test_local_stack import (
    CONVEYOR,
    KNOWN_KEY,
    PROJECT_DIR,
    LocalStack,
    child_environment,
    finished,
    free_ports,
)
from tests.gitserver import GitServer, Repository


def start_as_developer(logs: Path, **settings: str) -> LocalStack:
    port, emulator_port = free_ports(2)
    logs.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = logs / f"stack-{port}.out", logs / f"stack-{port}.err"
    environment = child_environment(
        PORT=str(port), EMULATOR_PORT=str(emulator_port), CONVEYOR_API_KEY=KNOWN_KEY, **settings
    )
    drop = ["unshare", "--user", "--map-root-user"]  # the developer's own user: no other uid to drop to
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [*drop, str(CONVEYOR), "local"], env=environment, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL
        )
    return LocalStack(process, port, emulator_port, stdout_path, stderr_path)


def test_a_build_of_a_stack_that_keeps_nothing_cannot_read_the_state_an_earlier_make_run_kept(tmp_path: Path) -> None:
    """``make run`` kept its state in .conveyor (every table and the key of every secret); the developer now runs a
    stack with CONVEYOR_STATE_DIR=none (or a second one beside the first: its claim of the folder fails). That
    stack's builds must not read the folder either."""
    state = PROJECT_DIR / ".conveyor"  # the default folder: where make run keeps it
    if state.exists():
        pytest.skip(f"{state} exists: this test would not touch a real stack's state")
    state.mkdir(mode=0o700)
    (state / "emulator.pickle").write_text("every-table-and-the-kms-key\n")
    (state / "emulator.pickle").chmod(0o600)
    probe = f"cat {state}/emulator.pickle || echo UNREADABLE"
    try:
        with GitServer(tmp_path) as server:
            Repository.create(tmp_path, "probe.git").commit({"appveyor.yml": f"build_script:\n  - {probe}\n"})
            local = start_as_developer(tmp_path / "stack", CONVEYOR_STATE_DIR="none").wait_until_ready()
            try:
                api = requests.Session()
                api.headers["Authorization"] = f"Bearer {KNOWN_KEY}"
                slug = api.post(
                    f"{local.base_url}/api/projects",
                    json={"repositoryProvider": "git", "repositoryName": server.url_of("probe.git")},
                    timeout=10,
                ).json()["slug"]
                version = api.post(
                    f"{local.base_url}/api/builds", json={"accountName": "local", "projectSlug": slug}, timeout=30
                ).json()["version"]
                build = finished(local, f"/api/projects/local/{slug}/build/{version}", "build")
                log = local.get(f"/api/buildjobs/{build['jobs'][0]['jobId']}/log", KNOWN_KEY).text
            finally:
                local.stop()
    finally:
        shutil.rmtree(state, ignore_errors=True)

    assert build["status"] == "success", local.stderr
    assert "every-table-and-the-kms-key" not in log, log
    assert "UNREADABLE" in log, log
