"""Every way a job ends without its script deciding it says why, as the job's ``message`` and as its log's last line
(issue 43, section 3): its time limit, the image cannot run here, its runner's lease ran out. (A limit of its
container: test_job_limits.py; a cancel, by whom: test_build_runs.py; a ps: line without PowerShell:
test_containers.py; its runner killed, and the stack stopped while it ran: tests/e2e/test_job_endings.py.)"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from chalicelib.domain.execution import lost_jobs
from chalicelib.executors.kind import LEASE_EXPIRED
from chalicelib.local.pump import SqsPump
from chalicelib.store import job_moves
from chalicelib.store import jobs as job_store
from tests.builds import appveyor_yml
from tests.functional.conftest import running_pump


@pytest.fixture(scope="module")
def pump(fresh_resources: None, api_url: str) -> Iterator[SqsPump]:
    """The queue handlers with jobs limited to 4 seconds, and no containers (versioned Ubuntu images are refused)."""
    with running_pump(api_url, CONVEYOR_JOB_TIMEOUT_SECONDS="4", CONVEYOR_CONTAINERS="off") as running:
        yield running


def last_line(log: str) -> str:
    return log.rstrip("\n").rsplit("\n", 1)[-1]


def test_a_job_past_its_time_limit_ends_failed_saying_so_last(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - sleep 30", "on_finish:", "  - echo x")})

    build = project.run()
    job = build["jobs"][0]
    log = project.log(job["jobId"])

    assert build["status"] == "failed", log
    assert job["message"] == "The job exceeded its time limit of 0 min 4 s.", job
    assert last_line(log) == job["message"], log


def test_a_job_whose_image_cannot_run_here_says_why_as_its_only_line(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("image: Ubuntu2204", "build_script:", "  - echo ran")})

    build = project.run()
    job = build["jobs"][0]
    log = project.log(job["jobId"])

    assert build["status"] == "failed", log
    assert job["message"].startswith("No executor here provides the image 'Ubuntu2204'"), job
    assert log.splitlines() == [job["message"]], log


def test_a_job_whose_runner_stopped_renewing_its_lease_says_so_last_in_its_log(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo never")})
    queued = project.start(environmentVariables={"UNUSED": "1"})
    job_id = project.build(queued["version"])["jobs"][0]["jobId"]
    # a runner that claimed the job and logged a line without its newline, then died: the pump's own runner
    # may have claimed it first, so the claim is taken over as a dead runner's would be
    job = job_store.get_job(job_id)
    assert job is not None
    if job.status == "queued":
        assert job_moves.claim_job(job_id, lease_expires=int(time.time()) - 1)
    else:
        job_store.renew_lease(job_id, int(time.time()) - 1)
    job = job_store.get_job(job_id)
    assert job is not None and job.status in ("running", "failed", "success")
    if job.status != "running":
        pytest.skip("the pump's runner finished the job before the test could play a dead runner")

    assert lost_jobs.end_expired(job, int(time.time())) is True
    build = project.wait(queued["version"])
    log = project.log(job_id)

    assert build["jobs"][0]["message"] == LEASE_EXPIRED
    assert last_line(log) == LEASE_EXPIRED, log
