"""A job printing megabytes: its runner stays under 100 MB, the first line is readable within seconds, and the
finished log is a redirect to S3 holding every byte printed (not megabytes through Lambda).

The job's runner runs as an executor starts it, in a fresh process, which reports its own peak memory
(tests/jobprocess.py; ``make bench BENCH=logs`` does the same with 200 MB).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from chalice.test import Client

from tests import jobprocess
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.runners import dispatch
from tests.support import new_account

LINES = 200_000  # 20 MB, four log chunks
MB = 1_000_000


@dataclass
class BigJob:
    project: BuildProject
    job_id: str
    build: dict[str, Any]
    memory: dict[str, float]
    first_line_seconds: float | None  # from printed to read through the API


@pytest.fixture(scope="module")
def big_job(fresh_resources: None, client: Client, git_server: GitServer, api_url: str) -> BigJob:
    yml = appveyor_yml("build: off", "test_script:", f"  - python3 print_log.py {LINES}")
    project = BuildProject(new_account(client), git_server, {"appveyor.yml": yml, "print_log.py": jobprocess.PRINTER})
    version = project.start()["version"]
    job_id = project.build(version)["jobs"][0]["jobId"]
    runner = jobprocess.start_runner(dispatch(job_id, api_url))
    first_line_seconds = None
    while runner.poll() is None and first_line_seconds is None:
        start = project.account.api.get(f"/buildjobs/{job_id}/log", headers={"Range": "bytes=0-4095"}).body
        if b"\n" in start.partition(jobprocess.MARKER.encode())[2]:
            first_line_seconds = time.time() - jobprocess.after_first_line(start)[0]
        time.sleep(0.05)
    memory = jobprocess.runner_result(runner)
    return BigJob(project, job_id, project.wait(version), memory, first_line_seconds)


def test_runner_of_a_job_printing_20_mb_stays_under_100_mb(big_job: BigJob) -> None:
    assert big_job.build["status"] == "success"
    assert big_job.memory["peakBytes"] < 100 * MB, big_job.memory


def test_first_line_printed_is_readable_within_5_seconds(big_job: BigJob) -> None:
    assert big_job.first_line_seconds is not None, "the first line was not readable while the job ran"
    assert big_job.first_line_seconds < 5


def test_finished_big_log_is_a_redirect_to_every_byte_printed(big_job: BigJob) -> None:
    reply = big_job.project.account.api.get(f"/buildjobs/{big_job.job_id}/log")

    assert reply.status == 302 and reply.body == b""
    download = requests.get(reply.headers["Location"], timeout=30)
    assert download.status_code == 200
    assert download.headers["Content-Type"].startswith("text/plain")
    printed = b"".join(jobprocess.printed_blocks(LINES))
    _, rest = jobprocess.after_first_line(download.content)
    assert rest == printed + b"Build success\n"


def test_range_of_a_finished_big_log_is_served_at_the_redirect(big_job: BigJob) -> None:
    reply = big_job.project.account.api.get(f"/buildjobs/{big_job.job_id}/log", headers={"Range": "bytes=-14"})

    assert reply.status == 302
    download = requests.get(reply.headers["Location"], headers={"Range": "bytes=-14"}, timeout=30)
    assert download.status_code == 206 and download.content == b"Build success\n"
