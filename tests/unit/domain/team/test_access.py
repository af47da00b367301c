"""Who may do what to a project: a role's permission, the project's restrictions, a visitor's public reads. No IO."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from chalicelib.core.projects import Project
from chalicelib.domain.team.access import Right, has_right, require_right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Forbidden, NotFound, Unauthorized

PROJECT = Project(1, "acme", 3, "app", "app", "gitHub", "git", "acme/app", "hook", "1.0.{build}", {}, datetime.now(UTC))
BUILDER = Caller(1, "acme", 4, 2, "Builder", frozenset({"RunProjectBuild"}))
VISITOR = Caller(1, "acme", 0, 0, "", frozenset(), is_visitor=True)


def test_a_role_with_the_permission_runs_builds_until_the_project_takes_the_right_away() -> None:
    assert has_right(BUILDER, PROJECT, Right.RUN_BUILD)
    assert not has_right(BUILDER, PROJECT, Right.UPDATE)  # no UpdateProjectSettings permission
    assert not has_right(BUILDER, replace(PROJECT, role_rights={2: {"RunBuild": False}}), Right.RUN_BUILD)


def test_a_visitor_views_a_public_project_only() -> None:
    assert has_right(VISITOR, replace(PROJECT, is_private=False), Right.VIEW)
    assert not has_right(VISITOR, PROJECT, Right.VIEW)
    with pytest.raises(Unauthorized):
        require_right(VISITOR, PROJECT, Right.VIEW)


def test_who_may_not_see_a_project_is_told_it_is_not_found_and_who_may_see_it_what_they_lack() -> None:
    hidden = replace(PROJECT, role_rights={2: {"View": False}})

    with pytest.raises(NotFound):
        require_right(BUILDER, hidden, Right.RUN_BUILD)
    with pytest.raises(Forbidden, match="'UpdateProjectSettings' permission"):
        require_right(BUILDER, PROJECT, Right.UPDATE)
