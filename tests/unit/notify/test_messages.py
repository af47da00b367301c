"""What a finished build's e-mail says, and where its link points: no IO."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.notify.messages import build_body, build_link, build_subject

NOW = datetime(2026, 3, 4, tzinfo=UTC)
PROJECT = Project(1, "acme", 2, "web-app", "Web App", "gitHub", "git", "acme/web", "hook", "1.0.{build}", {}, NOW)
COMMIT = {"commitId": "0123456789abcdef", "authorName": "Ada", "message": "Fix the header"}
BUILD = Build(1, 2, 3, 12, "1.0.12+rc/1", "main", "refs/heads/main", COMMIT, {}, [], "success", NOW)


@pytest.mark.parametrize(
    ("status", "subject"),
    [
        ("success", "Build Web App 1.0.12+rc/1 completed"),
        ("failed", "Build Web App 1.0.12+rc/1 failed"),
        ("cancelled", "Build Web App 1.0.12+rc/1 was cancelled"),
    ],
)
def test_the_subject_says_how_the_build_ended_as_appveyors_do(status: str, subject: str) -> None:
    assert build_subject(PROJECT, replace(BUILD, status=status)) == subject


def test_the_body_names_the_commit_its_duration_and_links_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_BASE_URL", "https://ci.example.com/")
    build = replace(BUILD, started=NOW, finished=NOW + timedelta(minutes=1, seconds=2.5))

    body = build_body(PROJECT, build)

    assert "Commit:   0123456789ab by Ada\n" in body
    assert "Duration: 00:01:02.5000000\n" in body
    assert body.endswith("https://ci.example.com/api/projects/acme/web-app/build/1.0.12%2Brc%2F1\n")


def test_without_a_base_url_the_link_is_the_path_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVEYOR_BASE_URL", raising=False)

    assert build_link(PROJECT, BUILD) == "/api/projects/acme/web-app/build/1.0.12%2Brc%2F1"
