"""max_jobs: a project runs at most that many of its jobs at once; the next one waits, queued and saying why, and
starts when one of them ends, on the service's runner and on build agents alike.

The test holds a job as a build agent would (it takes it, then finishes it through the job protocol), so what runs
when is decided by the test, never by how long a script takes.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from chalicelib.local.pump import SqsPump
from chalicelib.store import job_slots as slot_store
from chalicelib.store import jobs as job_store
from chalicelib.store.models import CounterModel, JobModel
from tests.builds import POLL_SECONDS, WAIT_SECONDS, BuildProject, appveyor_yml
from tests.functional.test_build_agents import register
from tests.gitserver import GitServer
from tests.support import Account, Caller, unique

WAITING = "Waiting: this project runs at most 1 job at once (max_jobs: 1)"


def finish(account: Account, ticket: dict[str, Any]) -> None:
    """End a job an agent took, as its runner would: success, no log, no artifacts."""
    runner = Caller(account.client, ticket["token"], prefix="")
    body = {"result": "success", "logChunks": 0, "artifacts": []}
    reply = runner.post(f"/api/runner/jobs/{ticket['jobId']}/finish", body)
    assert reply.status == 204, reply.body


def job_saying(project: BuildProject, version: str, text: str) -> dict[str, Any]:
    """The build's first job, once its message says ``text``."""
    deadline = time.monotonic() + WAIT_SECONDS
    while text not in ((job := project.build(version)["jobs"][0]).get("message") or ""):
        assert time.monotonic() < deadline, f"the job never said '{text}': {job}"
        time.sleep(POLL_SECONDS)
    return job


def test_a_build_agent_gets_a_projects_next_job_only_once_its_running_one_ends(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    image = unique("Team Box")
    agent = Caller(account.client, register(account, image)["key"])
    yml = appveyor_yml(f"image: {image}", "max_jobs: 1", "environment:", "  matrix:", "    - N: 1", "    - N: 2")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    version = project.start()["version"]

    first = agent.post("/agent/builds/next")
    assert first.status == 200, first.body
    assert agent.post("/agent/builds/next").status == 204  # the project's one slot is taken: nothing for it
    finish(account, first.json)
    second = agent.post("/agent/builds/next")
    assert second.status == 200 and second.json["jobId"] != first.json["jobId"]
    finish(account, second.json)

    assert project.wait(version)["status"] == "success"


def test_a_runner_job_waits_queued_saying_why_and_runs_once_the_running_job_ends(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    image = unique("Team Box")
    agent = Caller(account.client, register(account, image)["key"])
    yml = appveyor_yml(
        "max_jobs: 1",
        f"image: {image}",
        "build_script:",
        "  - echo ran on the runner",
        "for:",
        "  - branches: {only: [runner]}",
        "    image: Ubuntu",
    )
    project = BuildProject(account, git_server, {"appveyor.yml": yml})
    project.repository.branch("runner", project.first_commit)
    on_agent = project.start()["version"]
    held = agent.post("/agent/builds/next")  # the agent's job holds the project's one slot
    assert held.status == 200, held.body

    on_runner = project.start(branch="runner")["version"]
    waiting = job_saying(project, on_runner, WAITING)
    assert waiting["status"] == "queued" and "started" not in waiting
    finish(account, held.json)
    build = project.wait(on_runner)

    assert (build["status"], project.wait(on_agent)["status"]) == ("success", "success")
    assert "ran on the runner" in project.log(build["jobs"][0]["jobId"])
    assert "message" not in build["jobs"][0] or WAITING not in build["jobs"][0]["message"]


def test_jobs_of_a_project_with_max_jobs_one_never_run_at_the_same_time(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    rows = ["environment:", "  matrix:", "    - N: 1", "    - N: 2", "    - N: 3"]
    yml = appveyor_yml("max_jobs: 1", *rows, "build_script:", "  - echo job $N", "  - sleep 1")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})

    build = project.run()

    assert build["status"] == "success"
    jobs = sorted(job_store.get_jobs([job["jobId"] for job in build["jobs"]]), key=lambda job: job.started)
    for earlier, later in zip(jobs, jobs[1:], strict=False):
        assert earlier.finished is not None and later.started is not None
        assert later.started >= earlier.finished  # claimed only once the one before had ended


def test_a_projects_waiting_jobs_keep_no_other_projects_job_from_a_build_agent(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    image = unique("Team Box")
    agent = Caller(account.client, register(account, image)["key"])
    rows = ["environment:", "  matrix:", *(f"    - N: {number}" for number in range(60))]
    hog = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}", "max_jobs: 1", *rows)})
    hog_versions = [hog.start()["version"] for _ in range(2)]  # 120 jobs, one may run at a time
    for version in hog_versions:  # queued a minute before the other project's job, whatever the clock says
        for job in hog.build(version)["jobs"]:
            JobModel(job["jobId"]).update(actions=[JobModel.sent_at.add(-60)])
    other = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}")})
    other_job = other.build(other.start()["version"])["jobs"][0]["jobId"]

    held = agent.post("/agent/builds/next")  # the oldest job: the hog's first, which takes its one slot
    assert held.status == 200, held.body
    taken = agent.post("/agent/builds/next")  # the hog's 119 others wait for its slot: the other project's goes

    assert taken.status == 200, taken.body
    assert taken.json["jobId"] == other_job
    first_build = hog.build(hog_versions[0])["jobs"]
    next_in_line = next(job for job in first_build if job["jobId"] != held.json["jobId"])
    assert WAITING in next_in_line["message"]
    finish(account, held.json)
    again = agent.post("/agent/builds/next")  # the hog's slot is free again: its oldest waiting job goes
    assert again.status == 200, again.body
    assert again.json["jobId"] == next_in_line["jobId"]


def test_waiting_jobs_past_the_slots_items_cap_are_not_noted_and_nothing_fails(
    account: Account, git_server: GitServer, pump: SqsPump, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slot_store, "MAX_WAITERS", 2)  # as 5,000 would keep the item under DynamoDB's 400 KB
    image = unique("Team Box")
    agent = Caller(account.client, register(account, image)["key"])
    rows = ["environment:", "  matrix:", *(f"    - N: {number}" for number in range(4))]
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}", "max_jobs: 1", *rows)})
    version = project.start()["version"]

    held = agent.post("/agent/builds/next")
    over = agent.post("/agent/builds/next")  # three jobs wait: two are noted, the third is held back all the same

    assert (held.status, over.status) == (200, 204)
    assert len(slot_store.slots(project.project["projectId"]).waiters) == 2
    waiting = [job for job in project.build(version)["jobs"] if job["jobId"] != held.json["jobId"]]
    assert [WAITING in job["message"] for job in waiting] == [True, True, True]


def test_deleting_a_project_drops_its_job_slots(account: Account, git_server: GitServer, pump: SqsPump) -> None:
    image = unique("Team Box")
    agent = Caller(account.client, register(account, image)["key"])
    rows = ["environment:", "  matrix:", "    - N: 1", "    - N: 2"]
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {image}", "max_jobs: 1", *rows)})
    project.start()
    assert agent.post("/agent/builds/next").status == 200  # one job holds the slot, the other waits for it
    project_id = project.project["projectId"]
    assert slot_store.slots(project_id) != slot_store.Slots(frozenset(), frozenset())

    assert account.api.delete(project.path).status == 204

    with pytest.raises(CounterModel.DoesNotExist):
        CounterModel.get(f"job-slots#{project_id}", consistent_read=True)
