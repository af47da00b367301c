"""A local stack (``conveyor local``, as ``make run`` serves it) with one project of a one-file repository."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests


@contextmanager
def stack_with_project(
    root: Path, repository: str, yml: str, containers: bool = False
) -> Iterator[tuple[Any, requests.Session, dict[str, Any]]]:
    """A stack under ``root`` and a project building ``yml``: (the stack, a session with its key, the project). Its
    jobs run in the unshare sandbox, or with ``containers`` in containers of the local image where it can."""
    from tests.e2e.test_local_stack import LocalStack
    from tests.gitserver import GitServer, Repository

    with GitServer(root / "git") as git:
        Repository.create(git.root, repository).commit({"appveyor.yml": yml})
        where = "auto" if containers else "off"
        stack = LocalStack.start(root / "stack", CONVEYOR_CONTAINERS=where).wait_until_ready()
        try:
            api = requests.Session()
            api.headers["Authorization"] = f"Bearer {stack.key}"
            project = api.post(
                f"{stack.base_url}/api/projects",
                json={"repositoryProvider": "git", "repositoryName": git.url_of(repository)},
            ).json()
            yield stack, api, project
        finally:
            stack.stop()
