"""Where a build's jobs run, decided when it is queued: no IO (jobs that name no image other than the runner's own
ask no store for the account's build agents; tests/functional/test_build_agents.py places jobs on agents)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.jobs import Executor, Job
from chalicelib.domain.execution.routing import check_images, place
from chalicelib.errors import Invalid
from chalicelib.executors.images import MAX_IMAGE_LENGTH


def job(number: int, image: str | None) -> Job:
    spec = {} if image is None else {"image": image}
    return Job(f"job-{number}", 5, 2, 1, number, f"Image: {image}", spec, False, "queued", datetime.now(UTC))


def test_an_image_name_longer_than_any_executor_takes_is_refused_before_anything_is_stored() -> None:
    check_images([None, "Ubuntu", "x" * MAX_IMAGE_LENGTH])

    with pytest.raises(Invalid, match=f"at most {MAX_IMAGE_LENGTH} characters; one has {MAX_IMAGE_LENGTH + 1}"):
        check_images(["Ubuntu", "x" * (MAX_IMAGE_LENGTH + 1)])


def test_jobs_naming_no_image_or_the_runners_own_run_on_the_runner_and_none_is_refused() -> None:
    placed, refused = place([job(1, None), job(2, "ubuntu")], pull_request=False)

    assert [(placed_job.job_id, placed_job.executor) for placed_job in placed] == [
        ("job-1", Executor.RUNNER),
        ("job-2", Executor.RUNNER),
    ]
    assert refused == {}
