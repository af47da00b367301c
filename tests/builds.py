"""Helpers for tests that run real builds: a project on a repository of the test git server, and waiting."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from chalicelib.domain.shared import secrets
from chalicelib.notify.destinations import notification_destination
from chalicelib.store import builds as build_store
from tests.gitserver import GitServer, Repository
from tests.support import Account, add_project, project_path, unique

FINISHED = {"success", "failed", "cancelled"}
WAIT_SECONDS = 60
POLL_SECONDS = 0.1  # between two looks at a build, a log or a deployment


class BuildProject:
    """A project of ``account`` whose repository the git server serves."""

    def __init__(
        self,
        account: Account,
        server: GitServer,
        files: dict[str, str],
        hosted: dict[str, Any] | None = None,
        **commit: Any,
    ) -> None:
        """``hosted``: the project's fields for a hosted provider (repositoryProvider, repositoryName "owner/repo",
        credentials), its repository served at ``owner/repo.git``; else a ``git`` project of the server's URL."""
        self.account = account
        name = f"{hosted['repositoryName']}.git" if hosted else unique("repo") + ".git"
        self.repository = Repository.create(server.root, name)
        self.first_commit = self.repository.commit(files, **commit)
        if hosted:
            reply = account.api.post("/projects", hosted)
            assert reply.status == 200, reply.body
            self.project = reply.json
        else:
            self.project = add_project(account, server.url_of(name), provider="git")
        self.path = project_path(self.project)

    def start(self, **fields: Any) -> dict[str, Any]:
        """POST /api/builds for this project; returns the queued build."""
        body = {"accountName": self.project["accountName"], "projectSlug": self.project["slug"], **fields}
        reply = self.account.api.post("/builds", body)
        assert reply.status == 200, reply.body
        return reply.json

    def build(self, version: str) -> dict[str, Any]:
        reply = self.account.api.get(f"{self.path}/build/{version}")
        assert reply.status == 200, reply.body
        return reply.json["build"]

    def wait(self, version: str, statuses: set[str] = FINISHED, seconds: float = WAIT_SECONDS) -> dict[str, Any]:
        """The build, as the API shows it, once its status is one of ``statuses``."""

        def stored_status(build: dict[str, Any]) -> str | None:
            stored = build_store.get_build(build["projectId"], build["buildId"])
            return None if stored is None else stored.status

        return settle(lambda: self.build(version), stored_status, statuses, seconds, f"build {version}")

    def run(self, **fields: Any) -> dict[str, Any]:
        """Start a build and wait for it to finish."""
        return self.wait(self.start(**fields)["version"])

    def notification_token(self, entry: dict[str, Any], key: str, plain: str) -> str:
        """The token the project's settings would show for the secure setting ``key`` of a notifications ``entry``
        (its provider and settings, as written): bound to where the entry sends."""
        owner = secrets.Owner(self.project["accountId"], "project", self.project["projectId"])
        field = secrets.notification_field(key, notification_destination(entry))
        return secrets.encrypt(owner, field, plain)

    def log(self, job_id: str) -> str:
        reply = self.account.api.get(f"/buildjobs/{job_id}/log")
        assert reply.status == 200, reply.body
        return reply.body.decode()

    def wait_for_log(self, job_id: str, text: str, seconds: float = WAIT_SECONDS) -> str:
        deadline = time.monotonic() + seconds
        while text not in (log := self.log(job_id)):
            if time.monotonic() > deadline:
                raise AssertionError(f"'{text}' not in the log of {job_id} after {seconds} s:\n{log}")
            time.sleep(POLL_SECONDS)
        return log


def settle(
    read: Callable[[], dict[str, Any]],
    stored_status: Callable[[dict[str, Any]], str | None],
    statuses: set[str],
    seconds: float,
    what: str,
) -> dict[str, Any]:
    """``read()`` (through the API) once its status is one of ``statuses``.

    Between two reads it looks at the stored status alone (one DynamoDB read, a tenth of an API read's CPU, which
    three test processes on two cores share with the service) and reads through the API again when that changed.
    """
    deadline = time.monotonic() + seconds
    shown = read()
    seen = shown["status"]
    while shown["status"] not in statuses:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} is still {shown['status']} after {seconds} s: {shown}")
        time.sleep(POLL_SECONDS)
        stored = stored_status(shown)
        if stored != seen:
            shown = read()
            seen = shown["status"] if stored is None else stored
    return shown


def appveyor_yml(*lines: str) -> str:
    return "\n".join(lines) + "\n"
