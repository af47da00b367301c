"""AppVeyor's Build Worker API through real builds: what a build's scripts report with the ``appveyor`` command or
raw HTTP to ``$APPVEYOR_API_URL``, and what a user then sees through the API."""

from __future__ import annotations

import time
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.api import builds as build_views
from chalicelib.local.pump import SqsPump
from chalicelib.store import reports
from tests.builds import FINISHED, WAIT_SECONDS, BuildProject, appveyor_yml
from tests.functional.test_openapi import assert_conforms
from tests.gitserver import GitServer
from tests.support import Account, Caller, new_account, view_answer

# Every verb of the command, then raw HTTP as test reporters send it: a batch of tests with both field casings
# and a duration as a string (at base + "api/..."), and a message with the category "info" (at an absolute path).
EVERY_VERB_YML = appveyor_yml(
    "build_script:",
    '  - appveyor AddMessage "Deprecated option used" -Category Warning -Details "use --new instead"',
    '  - appveyor AddCompilationMessage "unused variable x" -Category Warning -FileName src/main.c -Line 12',
    '  - appveyor SetVariable -Name GREETING -Value "hello from an earlier script"',
    '  - echo "greeting=$GREETING"',
    "  - appveyor UpdateBuild -Version 7.0.$APPVEYOR_BUILD_NUMBER-custom",
    '  - echo "version=$APPVEYOR_BUILD_VERSION"',
    "  - echo package contents > package.bin",
    "  - appveyor PushArtifact package.bin -FileName dist/app.nupkg -DeploymentName app-package -Type NuGetPackage",
    "test_script:",
    '  - appveyor AddTest "adds" -Framework NUnit -FileName tests/math.cs -Outcome Passed -Duration 12',
    '  - appveyor AddTest "subtracts" -Framework NUnit -FileName tests/math.cs -Outcome Passed -Duration 7',
    '  - appveyor AddTest "divides" -Framework NUnit -FileName tests/math.cs -Outcome Failed -Duration 3'
    ' -ErrorMessage "division by zero" -ErrorStackTrace "at Math.Divide()" -StdOut "dividing 1 by 0"',
    '  - appveyor UpdateTest "subtracts" -Outcome Ignored',
    '  - appveyor UpdateTest "adds" -Duration 15',
    "  - |",
    "    python3 -c '",
    "    import json, os, urllib.error, urllib.parse, urllib.request",
    '    base = os.environ["APPVEYOR_API_URL"]',
    "    def post(url, body):",
    '        headers = {"Content-Type": "application/json"}',
    '        request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")',
    "        with urllib.request.urlopen(request) as reply:",
    '            print("worker API answered", reply.status)',
    '    post(base + "api/tests/batch", [',
    '        {"testName": "multiplies", "testFramework": "pytest", "fileName": "test_math.py",',
    '         "outcome": "Passed", "durationMilliseconds": "25"},',
    '        {"TestName": "rounds", "TestFramework": "pytest", "FileName": "test_math.py", "Outcome": "Failed",',
    '         "DurationMilliseconds": "4.5", "ErrorMessage": "expected 3, got 2", "StdErr": "rounding down"},',
    "    ])",
    '    message = {"message": "Reported over HTTP", "category": "info"}',
    '    post(urllib.parse.urljoin(base, "api/build/messages"), message)',
    "    try:",
    '        post(urllib.parse.urljoin(base, "/api/build/messages"), {"message": "forged", "category": "error"})',
    "    except urllib.error.HTTPError as error:",
    '        print("without the URL path:", error.code)',
    "    '",
)


def run_by_id(project: BuildProject) -> dict[str, Any]:
    """Start a build and wait for it to finish, following it by id: its scripts may change its version."""
    build_id = project.start()["buildId"]
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        history = project.account.api.get(f"{project.path}/history?recordsNumber=10").json["builds"]
        (listed,) = [build for build in history if build["buildId"] == build_id]
        if listed["status"] in FINISHED:
            return project.build(listed["version"])
        assert time.monotonic() < deadline, f"build {build_id} is still {listed['status']}"
        time.sleep(0.2)


def read(project: BuildProject, path: str) -> Any:
    reply = project.account.api.get(path)
    assert reply.status == 200, reply.body
    return reply.json


@pytest.fixture(scope="module")
def every_verb(client: Client, git_server: GitServer, pump: SqsPump) -> tuple[BuildProject, dict[str, Any]]:
    """One build whose scripts use every verb and raw HTTP; the tests below read what it reported."""
    project = BuildProject(new_account(client), git_server, {"appveyor.yml": EVERY_VERB_YML})
    build = run_by_id(project)
    assert build["status"] == "success", project.log(build["jobs"][0]["jobId"])
    return project, build


def test_reports_show_in_the_jobs_counts(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    _, build = every_verb
    (job,) = build["jobs"]

    counts = {name: value for name, value in job.items() if name.endswith("Count")}
    assert counts == {
        "messagesCount": 2,
        "compilationMessagesCount": 1,
        "compilationErrorsCount": 0,
        "compilationWarningsCount": 1,
        "testsCount": 5,
        "passedTestsCount": 2,  # adds, multiplies
        "failedTestsCount": 2,  # divides, rounds; subtracts was updated to Ignored
        "artifactsCount": 1,
    }


def test_update_build_gives_the_build_its_new_version(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = every_verb

    assert build["version"] == f"7.0.{build['buildNumber']}-custom"
    assert project.account.api.get(f"{project.path}/build/1.0.{build['buildNumber']}").status == 404
    log = project.log(build["jobs"][0]["jobId"])
    assert f"version=7.0.{build['buildNumber']}-custom" in log  # later scripts see it too


def test_set_variable_reaches_the_later_scripts(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = every_verb

    assert "greeting=hello from an earlier script" in project.log(build["jobs"][0]["jobId"])


def test_the_worker_api_refuses_a_call_without_its_urls_path(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    """The path is the job's own secret: another job on the machine sees the port, never the path."""
    project, build = every_verb

    assert "without the URL path: 403" in project.log(build["jobs"][0]["jobId"])
    messages = project.account.api.get(f"/buildjobs/{build['jobs'][0]['jobId']}/messages").json
    assert "forged" not in [message["message"] for message in messages]


def test_pushed_artifact_is_listed_with_its_name_and_type(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = every_verb

    listed = read(project, f"/buildjobs/{build['jobs'][0]['jobId']}/artifacts")

    assert [(a["fileName"], a["name"], a["type"], a["size"]) for a in listed] == [
        ("dist/app.nupkg", "app-package", "NuGetPackage", len("package contents\n"))
    ]


def test_messages_list_build_and_compilation_messages_in_order(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = every_verb

    messages = read(project, f"/buildjobs/{build['jobs'][0]['jobId']}/messages")

    assert [(m["type"], m["category"], m["message"], m["details"]) for m in messages] == [
        ("Message", "warning", "Deprecated option used", "use --new instead"),
        ("Compilation", "warning", "unused variable x", None),
        ("Message", "information", "Reported over HTTP", None),
    ]
    compilation = messages[1]
    assert (compilation["fileName"], compilation["line"], compilation["column"]) == ("src/main.c", 12, None)
    assert all(message["created"].endswith("+00:00") for message in messages)
    job_id = build["jobs"][0]["jobId"]
    assert view_answer(project.account, build_views.list_job_messages, "/messages", jobId=job_id) == messages


def test_tests_list_each_test_as_last_reported(every_verb: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = every_verb

    tests = {test["testName"]: test for test in read(project, f"/buildjobs/{build['jobs'][0]['jobId']}/tests")}

    assert list(tests) == ["adds", "subtracts", "divides", "multiplies", "rounds"]  # an update keeps its place
    assert {name: test["outcome"] for name, test in tests.items()} == {
        "adds": "Passed",  # an update without -Outcome leaves it as it was
        "subtracts": "Ignored",
        "divides": "Failed",
        "multiplies": "Passed",
        "rounds": "Failed",
    }
    assert {name: test["durationMilliseconds"] for name, test in tests.items()} == {
        "adds": 15,
        "subtracts": 7,
        "divides": 3,
        "multiplies": 25,
        "rounds": 4,
    }
    divides = tests["divides"]
    assert (divides["testFramework"], divides["fileName"]) == ("NUnit", "tests/math.cs")
    assert (divides["ErrorMessage"], divides["ErrorStackTrace"]) == ("division by zero", "at Math.Divide()")
    assert (divides["StdOut"], divides["StdErr"]) == ("dividing 1 by 0", None)
    rounds = tests["rounds"]  # sent PascalCase
    assert (rounds["testFramework"], rounds["fileName"]) == ("pytest", "test_math.py")
    assert (rounds["ErrorMessage"], rounds["StdErr"]) == ("expected 3, got 2", "rounding down")
    assert set(divides) == {
        "testName",
        "testFramework",
        "fileName",
        "outcome",
        "durationMilliseconds",
        "ErrorMessage",
        "ErrorStackTrace",
        "StdOut",
        "StdErr",
        "created",
        "sentFromOutside",
    }
    assert divides["sentFromOutside"] is False  # the build's own


def test_reports_and_the_job_protocols_refusals_match_their_documented_shapes(
    every_verb: tuple[BuildProject, dict[str, Any]], client: Client
) -> None:
    project, build = every_verb
    job_id = build["jobs"][0]["jobId"]
    api = project.account.api

    assert_conforms(api.get(f"/buildjobs/{job_id}/messages"), "GET /buildjobs/{jobId}/messages")
    assert_conforms(api.get(f"/buildjobs/{job_id}/tests"), "GET /buildjobs/{jobId}/tests")
    assert_conforms(api.get("/buildjobs/nothing/tests"), "GET /buildjobs/{jobId}/tests")  # 404
    assert_conforms(api.get(f"/runner/jobs/{job_id}"), "GET /runner/jobs/{jobId}")  # 401: a key is no job token
    ended = Caller(client, "cvyj_not-this-jobs-token").post(f"/runner/jobs/{job_id}/finish", {"result": "success"})
    assert_conforms(ended, "POST /runner/jobs/{jobId}/finish")  # 401


def test_another_account_cannot_read_the_reports(
    every_verb: tuple[BuildProject, dict[str, Any]], other_account: Account
) -> None:
    _, build = every_verb
    job_id = build["jobs"][0]["jobId"]

    assert other_account.api.get(f"/buildjobs/{job_id}/messages").status == 404
    assert other_account.api.get(f"/buildjobs/{job_id}/tests").status == 404


def test_a_bad_command_exits_non_zero_and_says_why_and_the_build_goes_on(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                '  - appveyor Frobnicate now || echo "unknown verb exited $?"',
                '  - appveyor SetVariable -Value orphan || echo "missing name exited $?"',
                '  - appveyor AddTest t -Framework f -FileName g -Outcome Exploded || echo "bad outcome exited $?"',
                '  - appveyor AddMessage "still reporting"',
            ),
        }
    )

    build = project.run()

    assert build["status"] == "success"
    job = build["jobs"][0]
    log = project.log(job["jobId"])
    assert "appveyor: unknown verb 'Frobnicate'" in log and "unknown verb exited 2" in log
    assert "appveyor: missing -name" in log and "missing name exited 2" in log
    assert "A test's outcome is one of" in log and "bad outcome exited 1" in log
    assert (job["messagesCount"], job["testsCount"]) == (1, 0)
    messages = read(project, f"/buildjobs/{job['jobId']}/messages")
    assert [message["message"] for message in messages] == ["still reporting"]


def test_a_failing_command_fails_the_script_that_runs_it(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml("build_script:", "  - appveyor AddTest only-a-name")})

    build = project.run()

    assert build["status"] == "failed"
    assert "appveyor: missing -framework, -filename" in project.log(build["jobs"][0]["jobId"])


def test_deleting_the_build_deletes_what_its_jobs_reported(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                '  - appveyor AddMessage "to be deleted"',
                "  - appveyor AddTest doomed -Framework f -FileName g -Outcome Passed",
            ),
        }
    )
    build = project.run()
    job_id = build["jobs"][0]["jobId"]
    assert len(read(project, f"/buildjobs/{job_id}/tests")) == 1

    assert project.account.api.delete(f"/builds/{build['buildId']}").status == 204

    assert project.account.api.get(f"/buildjobs/{job_id}/messages").status == 404
    kinds = (reports.MESSAGE, reports.COMPILATION, reports.TEST)
    assert [report for kind in kinds for report in reports.list_reports(job_id, kind)] == []


def test_a_job_run_again_shows_only_what_its_new_run_reported(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - appveyor AddMessage attempt",
                "  - appveyor AddTest flaky -Framework f -FileName g -Outcome Passed",
                '  - test "$APPVEYOR_RE_RUN_INCOMPLETE" = True',
            ),
        }
    )
    first = project.run()
    assert first["status"] == "failed"
    job_id = first["jobs"][0]["jobId"]
    assert [m["message"] for m in read(project, f"/buildjobs/{job_id}/messages")] == [
        "attempt",
        'Command exited with code 1 in build_script: test "$APPVEYOR_RE_RUN_INCOMPLETE" = True',
    ]

    reply = project.account.api.put("/builds", {"buildId": first["buildId"], "reRunIncomplete": True})
    assert reply.status == 200, reply.body
    again = project.wait(first["version"])

    assert again["status"] == "success"
    assert [m["message"] for m in read(project, f"/buildjobs/{job_id}/messages")] == ["attempt"]
    assert (again["jobs"][0]["messagesCount"], again["jobs"][0]["testsCount"]) == (1, 1)
