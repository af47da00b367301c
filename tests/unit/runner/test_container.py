"""The job's container as the runner sees it: handed over in the ticket, and where the job's folder is inside it."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.container import PROJECTS, JobContainer


def test_the_container_crosses_in_the_ticket_and_a_ticket_without_one_runs_beside_the_runner() -> None:
    container = JobContainer(Path("/var/lib/conveyor/jobs/job-1"), 5, 6)

    assert JobContainer.from_ticket(container.to_ticket()) == container
    assert JobContainer.from_ticket(None) is None and JobContainer.from_ticket({}) is None


def test_the_build_folder_is_found_in_the_container_under_appveyors_projects_folder() -> None:
    container = JobContainer(Path("/var/lib/conveyor/jobs/job-1"), 5, 6)

    assert container.inside(container.work / "projects" / "web-app" / "src") == f"{PROJECTS}/web-app/src"
    assert PROJECTS.endswith("/projects")
