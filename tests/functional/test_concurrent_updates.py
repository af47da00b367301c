"""Two writers updating the same project, role, user or environment at once: one wins, the other gets 409.

Each test makes both requests read the resource before either writes (a barrier in front of the store's write),
the interleaving in which an unguarded read-modify-write would lose the first update without a word. Two builds
started at once that read the same build number both start: the one stored second takes the next number. A build
started while its project is deleted is refused as if the project were already gone.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.store import batch, build_states, counters
from chalicelib.store import environments as environment_store
from chalicelib.store import members as member_store
from chalicelib.store import projects as project_store
from chalicelib.store import roles as role_store
from chalicelib.store.models import JobModel, ProjectModel, RoleModel
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment
from tests.gitserver import GitServer
from tests.support import Account, Reply, add_project, in_parallel, project_path, unique

Read = Callable[[], Any]


def writes_meet(monkeypatch: pytest.MonkeyPatch, store: Any, write: str) -> None:
    """Hold each call of ``store.write`` until a second one arrives: both writers have read by then."""
    both_read = threading.Barrier(2, timeout=10)
    original = getattr(store, write)

    def write_after_the_other_read(*args: Any, **kwargs: Any) -> Any:
        both_read.wait()
        return original(*args, **kwargs)

    monkeypatch.setattr(store, write, write_after_the_other_read)


def at_once(first: Callable[[], Reply], second: Callable[[], Reply]) -> list[Reply]:
    return in_parallel([first, second])


def assert_one_wins(replies: list[Reply], success: int, bodies: list[Any], read: Read, shown: Callable[[Any], Any]):
    """One reply is ``success``, the other a 409 saying so; what is stored now is the winner's change."""
    statuses = [reply.status for reply in replies]
    assert sorted(statuses) == sorted([success, 409]), [reply.body for reply in replies]
    loser = replies[statuses.index(409)]
    assert "changed" in loser.json["message"]
    winner = bodies[statuses.index(success)]
    assert shown(read()) == shown(winner)


def test_project_settings_written_at_once_keep_one_update_and_refuse_the_other(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = add_project(account)
    path = project_path(project) + "/settings"
    settings = account.api.get(path).json["settings"]
    bodies = []
    for script in ("echo from the first writer", "echo from the second writer"):
        body = copy.deepcopy(settings)
        body["configuration"]["buildScripts"] = [{"language": "cmd", "script": script}]
        bodies.append(body)
    writes_meet(monkeypatch, project_store, "save_settings")

    replies = at_once(*(lambda body=body: account.api.put("/projects", body) for body in bodies))

    assert_one_wins(
        replies,
        204,
        bodies,
        lambda: account.api.get(path).json["settings"],
        lambda settings: settings["configuration"]["buildScripts"],
    )


def test_a_role_written_at_once_keeps_one_update_and_refuses_the_other(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    role = account.add_role(unique("Releasers"))
    bodies = []
    for allowed in ("RunProjectBuild", "ManageProjects"):
        body = copy.deepcopy(role)
        for group in body["groups"]:
            for permission in group["permissions"]:
                permission["allowed"] = permission["name"] == allowed
        bodies.append(body)
    writes_meet(monkeypatch, role_store, "update_role")

    replies = at_once(*(lambda body=body: account.api.put("/roles", body) for body in bodies))

    def allowed(role: dict[str, Any]) -> set[str]:
        return {p["name"] for group in role["groups"] for p in group["permissions"] if p["allowed"]}

    assert_one_wins(replies, 200, bodies, lambda: account.api.get(f"/roles/{role['roleId']}").json, allowed)


def test_a_user_written_at_once_keeps_one_update_and_refuses_the_other(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = account.add_user(f"{unique('pat')}@team.example")
    bodies = [
        {**{key: user[key] for key in ("userId", "fullName", "email", "roleId")}, "fullName": name}
        for name in ("Pat First", "Pat Second")
    ]
    writes_meet(monkeypatch, member_store, "update_member")

    replies = at_once(*(lambda body=body: account.api.put("/users", body) for body in bodies))

    assert_one_wins(
        replies,
        204,
        bodies,
        lambda: account.api.get(f"/users/{user['userId']}").json["user"],
        lambda user: user["fullName"],
    )


def test_an_environment_written_at_once_keeps_one_update_and_refuses_the_other(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = add_environment(account, "FTP", {"server": "ftp.example", "username": "deployer"})
    path = f"/environments/{created['deploymentEnvironmentId']}/settings"
    environment = account.api.get(path).json["environment"]
    bodies = []
    for server in ("first.example", "second.example"):
        body = copy.deepcopy(environment)
        for setting in body["settings"]["providerSettings"]:
            if setting["name"] == "server":
                setting["value"]["value"] = server
        bodies.append(body)
    writes_meet(monkeypatch, environment_store, "save_environment")

    replies = at_once(*(lambda body=body: account.api.put("/environments", body) for body in bodies))

    def server(environment: dict[str, Any]) -> str:
        return next(s["value"]["value"] for s in environment["settings"]["providerSettings"] if s["name"] == "server")

    assert_one_wins(replies, 200, bodies, lambda: account.api.get(path).json["environment"], server)


def test_a_build_started_while_its_project_is_deleted_is_a_404_not_a_500(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    original = build_states.add_build

    def deleted_first(*args: Any, **kwargs: Any) -> Any:
        assert account.api.delete(project.path).status == 204
        return original(*args, **kwargs)

    monkeypatch.setattr(build_states, "add_build", deleted_first)
    reply = account.api.post("/builds", {"accountName": account.name, "projectSlug": project.project["slug"]})

    assert reply.status == 404, reply.body
    assert reply.json["message"] == "Project not found or access denied."
    assert account.api.get(project.path).status == 404


def test_callers_of_a_sequence_at_once_each_get_a_value_of_their_own() -> None:
    sequence = unique("sequence")

    values = in_parallel([lambda: counters.next_value(sequence) for _ in range(4)])

    assert sorted(values) == [1, 2, 3, 4]
    assert counters.next_value(sequence, count=3) == 7  # 5, 6 and 7 reserved at once


def test_a_batch_read_finds_the_items_named_by_table_and_leaves_out_those_missing(account: Account) -> None:
    first, second = add_project(account, unique("octo/first")), add_project(account, unique("octo/second"))
    role = role_store.list_roles(first["accountId"])[0]
    keys: list[batch.Key] = [
        (ProjectModel, first["accountId"], first["slug"]),
        (ProjectModel, second["accountId"], second["slug"]),
        (ProjectModel, first["accountId"], "no-such-project"),
        (RoleModel, role.account_id, role.role_id),
        (ProjectModel, first["accountId"], first["slug"]),  # named twice: read once
    ]

    found = batch.get_items(keys)

    assert sorted(model.slug for model in batch.of_model(found, ProjectModel)) == sorted(
        [first["slug"], second["slug"]]
    )
    assert [model.role_id for model in batch.of_model(found, RoleModel)] == [role.role_id]
    assert batch.of_model(found, JobModel) == []


def test_two_starts_that_read_the_same_build_number_both_start_numbered_one_after_the_other(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    writes_meet(monkeypatch, build_states, "add_build")

    replies = at_once(project.start, project.start)

    assert sorted((build["buildNumber"], build["version"]) for build in replies) == [(1, "1.0.1"), (2, "1.0.2")]
    history = account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"]
    assert sorted(build["version"] for build in history) == ["1.0.1", "1.0.2"]
    assert account.api.get(f"{project.path}/settings").json["settings"]["nextBuildNumber"] == 3
