"""Which projects' builds post commit statuses: a forge that takes them, and a token to post with. No IO."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from chalicelib.core.projects import Project
from chalicelib.domain.forges.commit_statuses import reports_statuses

PROJECT = Project(1, "acme", 2, "app", "App", "gitHub", "git", "acme/app", "hook", "1.0.{build}", {}, datetime.now(UTC))
WITH_TOKEN = replace(PROJECT, repository_authentication="credentials", repository_password="cvy2:token")


def test_a_github_project_with_a_stored_token_posts_statuses_and_one_without_does_not() -> None:
    assert reports_statuses(WITH_TOKEN) is True
    assert reports_statuses(PROJECT) is False


def test_a_repository_of_a_forge_without_statuses_posts_none_whatever_its_token() -> None:
    assert reports_statuses(replace(WITH_TOKEN, repository_type="git")) is False
