"""A build's max_jobs: which jobs it limits, and what a job waiting for a slot says. No IO (a job without
max_jobs takes no slot from the store)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.core.jobs import Job
from chalicelib.domain.execution.job_slots import admit, limit_of, waiting_message


def job(spec: dict[str, Any]) -> Job:
    return Job("job-1", 3, 2, 1, 1, "Image: Ubuntu", spec, False, "queued", datetime.now(UTC))


def test_a_job_of_a_build_without_max_jobs_starts_at_once() -> None:
    assert limit_of(job({})) is None
    assert admit(job({})) is True


def test_a_job_of_a_limited_build_knows_its_limit_and_says_what_it_waits_for() -> None:
    assert limit_of(job({"maxJobs": "2"})) == 2
    assert waiting_message(1) == (
        "Waiting: this project runs at most 1 job at once (max_jobs: 1); it starts when one of them finishes."
    )
    assert "at most 3 jobs at once (max_jobs: 3)" in waiting_message(3)
