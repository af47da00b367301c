"""Real builds, end to end: started through the API, run from the jobs queue by the SQS pump, read back."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import requests

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.store import jobs as job_store
from tests.awscalls import s3_calls
from tests.builds import appveyor_yml
from tests.support import Caller, assert_refused


def wait_until_empty(url: str, seconds: float = 10) -> None:
    """Until every message of the queue was received and deleted."""
    sqs = aws.client("sqs")
    deadline = time.monotonic() + seconds
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    while any(int(v) for v in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"].values()):
        assert time.monotonic() < deadline, "the queue still holds messages"
        time.sleep(0.2)


def processes_running(marker: str) -> list[int]:
    """The processes on this machine whose command line has ``marker`` as an argument."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in arguments:
            found.append(int(entry.name))
    return found


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.1)


def output(log: str) -> str:
    """What a job's scripts printed: its log without the echoed commands."""
    return "\n".join(line for line in log.splitlines() if not line.startswith("$ "))


def job_ids(build: dict[str, object]) -> list[str]:
    return [job["jobId"] for job in build["jobs"]]  # type: ignore[attr-defined, index]


def test_two_job_matrix_succeeds_and_each_log_shows_its_own_output(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "environment:",
                "  matrix:",
                "    - FLAVOR: alpha",
                "    - FLAVOR: beta",
                "build_script:",
                "  - echo building $FLAVOR of $APPVEYOR_PROJECT_SLUG",
            ),
        }
    )

    queued = project.start()
    assert queued["status"] == "queued"
    assert "started" not in queued and "finished" not in queued
    build = project.wait(queued["version"])

    assert build["status"] == "success"
    assert [job["name"] for job in build["jobs"]] == ["Environment: FLAVOR=alpha", "Environment: FLAVOR=beta"]
    assert [job["status"] for job in build["jobs"]] == ["success", "success"]
    assert build["started"] and build["finished"]
    slug = project.project["slug"]
    assert f"building alpha of {slug}" in project.log(build["jobs"][0]["jobId"])
    assert f"building beta of {slug}" in project.log(build["jobs"][1]["jobId"])


def test_failing_script_fails_the_job_and_the_build_and_runs_on_failure(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build: off",
                "test_script:",
                "  - echo before the failure",
                "  - sh -c 'exit 3'",  # a failing command (exit 3 itself would end the job at once, AppVeyor's rule)
                "  - echo never printed",
                "on_failure:",
                "  - echo cleaning up after failure",
            ),
        }
    )

    build = project.run()

    assert build["status"] == "failed"
    (job,) = build["jobs"]
    assert job["status"] == "failed"
    log = project.log(job["jobId"])
    assert "before the failure" in log
    assert "Command exited with code 3" in log
    assert "never printed" not in output(log)
    assert "cleaning up after failure" in log


def test_an_echo_builds_log_rides_on_its_runners_finish_and_is_stored_with_one_s3_put(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo hello")})

    with s3_calls(f"builds/{project.project['accountId']}/{project.project['projectId']}/") as calls:
        build = project.run()

    assert build["status"] == "success"
    assert "hello" in output(project.log(job_ids(build)[0]))
    job = f"{build['buildId']}/{job_ids(build)[0]}/"
    made = [call.replace(job, "", 1) for call in calls]
    flushes = [call for call in made if call.startswith("PutObject log/chunks/")]  # if it outlived the 2 s flush
    sealed = ["PutObject log/log.txt"] + (
        ["ListObjectsV2 log/chunks/", "DeleteObjects log/chunks/000000"] if flushes else []
    )
    assert made == flushes + sealed


def test_pull_request_build_builds_the_pull_request_head(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo PR $APPVEYOR_PULL_REQUEST_NUMBER")})
    head = project.repository.commit(
        {
            "appveyor.yml": appveyor_yml("build_script:", "  - echo PR $APPVEYOR_PULL_REQUEST_NUMBER - $(cat pr.txt)"),
            "pr.txt": "from the pull request",
        },
        message="Add the PR file\n\nLonger description.",
        branch="feature",
    )
    project.repository.set_ref("refs/pull/7/head", head)

    queued = project.start(pullRequestId=7)
    assert queued["pullRequestId"] == "7"
    assert queued["pullRequestName"] == "Add the PR file"
    assert queued["commitId"] == head
    build = project.wait(queued["version"])

    assert build["status"] == "success"
    assert "PR 7 - from the pull request" in project.log(job_ids(build)[0])


def test_pull_request_build_checks_out_its_merge_commit_with_the_head_in_its_variables(make_project) -> None:  # type: ignore[no-untyped-def]
    script = appveyor_yml(
        "build_script:",
        "  - echo built $(cat base.txt) + $(cat pr.txt) at $APPVEYOR_REPO_COMMIT",
        "  - echo head $APPVEYOR_PULL_REQUEST_HEAD_COMMIT of PR $APPVEYOR_PULL_REQUEST_NUMBER",
    )
    project = make_project({"appveyor.yml": script, "base.txt": "old base"})
    head = project.repository.commit({"appveyor.yml": script, "base.txt": "old base", "pr.txt": "pr"}, branch="pr")
    project.repository.set_ref("refs/pull/5/head", head)
    base = project.repository.commit({"appveyor.yml": script, "base.txt": "new base"})  # master moved on
    merged = {"appveyor.yml": script, "base.txt": "new base", "pr.txt": "pr"}
    merge = project.repository.commit(merged, branch="merge", parent_from=base, merged=head, message="Merge")
    project.repository.set_ref("refs/pull/5/merge", merge)

    build = project.wait(project.start(pullRequestId=5)["version"])

    assert (build["status"], build["commitId"], build["pullRequestHeadCommitId"]) == ("success", merge, head)
    log = project.log(job_ids(build)[0])
    assert f"built new base + pr at {merge}" in log
    assert f"head {head} of PR 5" in log


def test_build_of_a_given_commit_builds_that_commit(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - cat version.txt"), "version.txt": "old"})
    project.repository.commit(
        {"appveyor.yml": appveyor_yml("build_script:", "  - cat version.txt"), "version.txt": "new"}
    )

    queued = project.start(branch="master", commitId=project.first_commit)
    assert queued["commitId"] == project.first_commit
    build = project.wait(queued["version"])

    log = project.log(job_ids(build)[0])
    assert "old" in log and "new" not in log


def test_cancelled_running_build_stops_its_processes_and_ends_cancelled(make_project) -> None:  # type: ignore[no-untyped-def]
    marker = f"{60 + random.random():.9f}"  # a sleep this long is the job's and nothing else's
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - echo slow build started",
                "  - (setsid sleep $MARKER &) ; sleep $MARKER",
            ),
        }
    )
    queued = project.start(environmentVariables={"MARKER": marker})
    job_id = project.wait(queued["version"], {"running"})["jobs"][0]["jobId"]
    project.wait_for_log(job_id, "slow build started")
    wait_for(lambda: len(processes_running(marker)) == 2, "both sleeps of the job to run")

    reply = project.account.api.delete(
        f"/builds/{project.project['accountName']}/{project.project['slug']}/{queued['version']}"
    )
    assert reply.status == 204
    assert project.build(queued["version"])["status"] in {"cancelling", "cancelled"}
    build = project.wait(queued["version"], seconds=15)

    assert build["status"] == "cancelled"
    assert build["jobs"][0]["status"] == "cancelled"
    wait_for(lambda: processes_running(marker) == [], "the cancelled job's processes (setsid's too) to end", 10)
    message = build["jobs"][0]["message"]
    owner = project.account.api.get(f"/users/{project.account.api.get('/users').json[0]['userId']}").json["user"]
    # the owner never set a name: the one the account was made with is their e-mail's, which is never shown
    assert message == "Cancelled by a user.", message
    assert owner["email"].split("@")[0] not in message
    assert project.log(job_id).rstrip("\n").rsplit("\n", 1)[-1] == message  # the log's last line says so too


def test_a_cancelled_build_names_who_cancelled_it_by_the_name_they_set(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo started", "  - sleep 60")})
    api = project.account.api
    owner = api.get(f"/users/{api.get('/users').json[0]['userId']}").json["user"]
    named = {key: owner[key] for key in ("userId", "email", "roleId")}
    assert api.put("/users", {**named, "fullName": "Jane Doe", "password": None}).status == 204
    queued = project.start()
    job_id = project.wait(queued["version"], {"running"})["jobs"][0]["jobId"]
    project.wait_for_log(job_id, "started")

    assert (
        api.delete(f"/builds/{project.project['accountName']}/{project.project['slug']}/{queued['version']}").status
        == 204
    )
    build = project.wait(queued["version"], seconds=15)

    assert build["jobs"][0]["message"] == "Cancelled by Jane Doe.", build["jobs"][0]


def test_cancelling_a_finished_build_changes_nothing(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo done")})
    build = project.run()

    reply = project.account.api.delete(
        f"/builds/{project.project['accountName']}/{project.project['slug']}/{build['version']}"
    )

    assert reply.status == 204
    assert project.build(build["version"])["status"] == "success"


def test_rebuild_is_a_new_build_of_the_same_commit(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo rebuild=$APPVEYOR_RE_BUILD")})
    first = project.run()

    reply = project.account.api.put("/builds", {"buildId": first["buildId"], "reRunIncomplete": False})
    assert reply.status == 200, reply.body
    again = reply.json
    assert again["buildId"] != first["buildId"]
    assert again["version"] != first["version"]
    assert again["commitId"] == first["commitId"]
    rebuilt = project.wait(again["version"])

    assert rebuilt["status"] == "success"
    assert "rebuild=True" in project.log(job_ids(rebuilt)[0])


def test_rerun_incomplete_runs_only_the_failed_job_again(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "environment:",
                "  matrix:",
                "    - PART: steady",
                "    - PART: flaky",
                "build_script:",
                '  - sh: if [ "$PART" = flaky ]; then test "$APPVEYOR_RE_RUN_INCOMPLETE" = True; fi',
                "  - echo run of $PART",
            ),
        }
    )
    first = project.wait(project.start()["version"])
    assert first["status"] == "failed"
    steady, flaky = first["jobs"]
    assert (steady["status"], flaky["status"]) == ("success", "failed")

    reply = project.account.api.put("/builds", {"buildId": first["buildId"], "reRunIncomplete": True})
    assert reply.status == 200, reply.body
    assert reply.json["buildId"] == first["buildId"]
    rerun = project.wait(first["version"])

    assert rerun["status"] == "success"
    assert rerun["jobs"][0]["finished"] == steady["finished"]  # the steady job did not run again
    assert "run of flaky" in project.log(flaky["jobId"])
    assert output(project.log(steady["jobId"])).count("run of steady") == 1


def test_rerun_incomplete_of_a_successful_build_is_a_conflict(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo fine")})
    build = project.run()

    reply = project.account.api.put("/builds", {"buildId": build["buildId"], "reRunIncomplete": True})

    assert reply.status == 409
    assert reply.json == {"message": f"No failed or cancelled jobs in build with ID {build['buildId']}"}


def test_deleted_build_is_gone_with_its_log_and_artifacts(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml("build_script:", "  - echo keep > out.txt", "artifacts:", "  - path: out.txt"),
        }
    )
    build = project.run()
    job_id = job_ids(build)[0]

    assert project.account.api.delete(f"/builds/{build['buildId']}").status == 204

    assert project.account.api.get(f"{project.path}/build/{build['version']}").status == 404
    assert project.account.api.get(f"/buildjobs/{job_id}/log").status == 404
    objects = aws.client("s3").list_objects_v2(Bucket=settings().bucket, Prefix="builds/").get("Contents", [])
    assert not [entry["Key"] for entry in objects if job_id in entry["Key"]]
    assert "build" not in project.account.api.get(project.path).json


def test_artifacts_are_listed_and_downloaded(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - mkdir -p out && echo hello artifact > out/app.txt",
                "artifacts:",
                "  - path: out/*.txt",
                "    name: app",
            ),
        }
    )
    build = project.run()
    job_id = job_ids(build)[0]

    listed = project.account.api.get(f"/buildjobs/{job_id}/artifacts").json
    assert [(a["fileName"], a["name"], a["size"]) for a in listed] == [("out/app.txt", "app", 15)]
    assert build["jobs"][0]["artifactsCount"] == 1
    for path in ("out/app.txt", "out%2Fapp.txt"):
        download = project.account.api.get(f"/buildjobs/{job_id}/artifacts/{path}")
        assert download.status == 302
        assert requests.get(download.headers["Location"], timeout=10).content == b"hello artifact\n"
    assert project.account.api.get(f"/buildjobs/{job_id}/artifacts/out/other.txt").status == 404


def test_a_client_that_cannot_follow_a_redirect_with_its_key_is_given_the_artifacts_url_in_json(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    project = make_project(
        {"appveyor.yml": appveyor_yml("build_script:", "  - echo fetched > out.txt", "artifacts:", "  - path: out.txt")}
    )
    job_id = job_ids(project.run())[0]

    reply = project.account.api.get(f"/buildjobs/{job_id}/artifacts/out.txt?redirect=false")

    assert reply.status == 200 and reply.headers["Cache-Control"] == "no-store"
    assert requests.get(reply.json["url"], timeout=10).content == b"fetched\n"
    permalink = project.account.api.get(f"{project.path}/artifacts/out.txt?redirect=false")
    assert permalink.status == 200 and requests.get(permalink.json["url"], timeout=10).content == b"fetched\n"
    assert project.account.api.get(f"/buildjobs/{job_id}/artifacts/out.txt?redirect=true").status == 302
    assert "redirect is true or false" in assert_refused(
        project.account.api.get(f"/buildjobs/{job_id}/artifacts/out.txt?redirect=maybe"), 400
    )
    assert project.account.api.get(f"/buildjobs/{job_id}/artifacts/gone.txt?redirect=false").status == 404
    anonymous = Caller(project.account.client, None).get(f"/buildjobs/{job_id}/artifacts/out.txt?redirect=false")
    assert anonymous.status == 401  # the same rights as the redirect: a private project's file needs a key


def test_cache_is_restored_in_the_next_build_and_cleared_by_delete(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "cache:",
                "  - deps",
                "install:",
                "  - if [ -f deps/made-by ]; then echo restored from $(cat deps/made-by); else mkdir -p deps; "
                "echo build-$APPVEYOR_BUILD_NUMBER > deps/made-by; fi",
            ),
        }
    )
    first = project.run()
    second = project.run()

    assert "restored from build-1" in output(project.log(job_ids(second)[0]))
    assert "restored from" not in output(project.log(job_ids(first)[0]))

    assert project.account.api.delete(f"{project.path}/buildcache").status == 204
    third = project.run()
    assert "restored from" not in output(project.log(job_ids(third)[0]))


def test_secret_values_never_reach_the_log(make_project) -> None:  # type: ignore[no-untyped-def]
    secret = "hunter2-the-secret-value"
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo the secret is $SECRET")})
    reply = project.account.api.put(
        f"{project.path}/settings/environment-variables",
        [{"name": "SECRET", "value": {"isEncrypted": True, "value": secret}}],
    )
    assert reply.status == 204, reply.body

    build = project.run()

    assert build["status"] == "success"
    log = project.log(job_ids(build)[0])
    assert "the secret is [secure]" in log
    s3 = aws.client("s3")
    for entry in s3.list_objects_v2(Bucket=settings().bucket, Prefix="builds/").get("Contents", []):
        assert secret.encode() not in s3.get_object(Bucket=settings().bucket, Key=entry["Key"])["Body"].read()


def test_a_secret_value_written_in_a_failing_command_is_masked_in_the_jobs_message(make_project) -> None:  # type: ignore[no-untyped-def]
    secret = "hunter2-written-in-the-yml"
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", f"  - test x = {secret}")})
    reply = project.account.api.put(
        f"{project.path}/settings/environment-variables",
        [{"name": "SECRET", "value": {"isEncrypted": True, "value": secret}}],
    )
    assert reply.status == 204, reply.body

    build = project.run()
    job = build["jobs"][0]

    assert build["status"] == "failed"
    assert job["message"] == "Command exited with code 1 in build_script: test x = [secure]", job
    assert secret not in project.log(job["jobId"])


def test_duplicate_delivery_of_a_job_message_runs_the_job_once(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - echo ran once")})
    build = project.run()
    job_id = job_ids(build)[0]
    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=settings().jobs_queue)["QueueUrl"]

    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"jobId": job_id}))
    wait_until_empty(url)

    job = job_store.get_job(job_id)
    assert job is not None and job.attempts == 1
    assert project.build(build["version"])["status"] == "success"
    assert project.log(job_id).count("Build started") == 1


def test_fast_finish_cancels_the_other_jobs_at_the_first_failure(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "matrix:",
                "  fast_finish: true",
                "environment:",
                "  matrix:",
                "    - ROLE: breaks",
                "    - ROLE: lingers",
                "build_script:",
                '  - sh: if [ "$ROLE" = breaks ]; then exit 1; else sleep 60; fi',
            ),
        }
    )

    build = project.run()

    assert build["status"] == "failed"
    assert [job["status"] for job in build["jobs"]] == ["failed", "cancelled"]


def test_allowed_failure_does_not_fail_the_build(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "environment:",
                "  matrix:",
                "    - ROLE: solid",
                "    - ROLE: experimental",
                "matrix:",
                "  allow_failures:",
                "    - ROLE: experimental",
                "build_script:",
                '  - sh: test "$ROLE" = solid',
            ),
        }
    )

    build = project.run()

    assert [(job["allowFailure"], job["status"]) for job in build["jobs"]] == [(False, "success"), (True, "failed")]
    assert build["status"] == "success"


def test_build_deleted_while_running_stops_and_leaves_nothing(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:", "  - echo started; while true; do echo still running; sleep 0.1; done"
            )
        }
    )
    queued = project.start()
    job_id = project.wait(queued["version"], {"running"})["jobs"][0]["jobId"]
    project.wait_for_log(job_id, "started")

    assert project.account.api.delete(f"/builds/{queued['buildId']}").status == 204

    time.sleep(3)  # the runner notices within a heartbeat (0.5 s here), kills the script and cleans up

    stored = aws.client("s3").list_objects_v2(Bucket=settings().bucket, Prefix="builds/").get("Contents", [])
    assert not [entry["Key"] for entry in stored if job_id in entry["Key"]]
    assert project.account.api.get(f"{project.path}/build/{queued['version']}").status == 404
