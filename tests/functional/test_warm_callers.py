"""A warm function reuses who a key is for a few seconds; a change to who may do what is never served stale here."""

from __future__ import annotations

import time
import uuid

import pytest

from chalicelib.domain.shared import warm_cache
from chalicelib.domain.team.accounts import create_api_key
from chalicelib.store import members
from tests.support import Account, Caller, member_of_role, unique


def test_a_removed_user_is_refused_at_once(account: Account) -> None:
    email = f"{unique('leaver')}@team.example"
    user = account.add_user(email)
    leaver = account.caller_for(email)
    assert leaver.get("/projects").status == 200

    assert account.api.delete(f"/users/{user['userId']}").status == 204

    assert leaver.get("/projects").status == 401


def test_a_role_granting_more_applies_to_its_members_at_once(account: Account) -> None:
    account.add_role("Builders")
    builder = member_of_role(account, "Builders")
    project = {"repositoryProvider": "gitHub", "repositoryName": f"octo/{unique('repo')}"}
    assert builder.post("/projects", project).status == 403

    _grant(account, "Builders", "ManageProjects")

    assert builder.post("/projects", project).status == 200


def test_a_key_refused_once_is_looked_up_again(account: Account) -> None:
    key = uuid.uuid4().hex
    newcomer = Caller(account.client, key)
    assert newcomer.get("/projects").status == 401

    create_api_key(account.name, account.owner_email, key)

    assert newcomer.get("/projects").status == 200


def test_a_change_made_by_another_function_is_seen_within_the_reuse_time(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_cache, "REUSE_SECONDS", 0.5)
    email = f"{unique('leaver')}@team.example"
    account.add_user(email)
    leaver = account.caller_for(email)
    assert leaver.get("/projects").status == 200
    member = next(m for m in members.memberships_of_email(email))

    members.delete_member(member)  # as another warm function would: this one is not told

    assert leaver.get("/projects").status == 200
    time.sleep(0.6)
    assert leaver.get("/projects").status == 401


def _grant(account: Account, role_name: str, permission: str) -> None:
    role = next(r for r in account.api.get("/roles").json if r["name"] == role_name)
    details = account.api.get(f"/roles/{role['roleId']}").json
    for group in details["groups"]:
        for entry in group["permissions"]:
            entry["allowed"] = entry["allowed"] or entry["name"] == permission
    assert account.api.put("/roles", details).status == 200
