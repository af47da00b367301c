"""AppVeyor's test results uploads (POST /api/testresults/{format}/{jobId}), without a pump: a build's job is claimed
and its token minted as dispatch does, then files are sent as a runner forwards them (the job token) or from
outside (a key), and read back at GET /api/buildjobs/{jobId}/tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chalicelib.api import result_uploads as test_result_views
from chalicelib.domain.job_protocol.result_uploads import job_for_caller
from chalicelib.domain.team.auth import authenticate
from chalicelib.errors import Forbidden
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.runners import dispatch
from tests.support import Account, Caller, Reply, request_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "testresults"
PYTEST_TESTS = """\
import time

def test_adds():
    time.sleep(0.02)
    assert 1 + 1 == 2

def test_divides():
    assert 7 / 2 == 3, "7 / 2 is not 3"

def test_prints():
    print("hello from a test")
"""
BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuite name="laughs"><testcase classname="x" name="&lol9;"/></testsuite>
"""
EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<testsuite name="xxe"><testcase classname="x" name="leak"><failure message="&secret;"/></testcase></testsuite>
"""
HUGE_ATTRIBUTE = (
    b'<testsuite name="big"><testcase classname="x" name="big" time="0"><failure message="'
    + b"A" * (10 * 1024 * 1024)
    + b'"/></testcase></testsuite>'
)


@pytest.fixture
def running(account: Account, git_server: GitServer, api_url: str) -> tuple[BuildProject, str, str]:
    """A project whose build's one job is running: the project, the job's id, and its token."""
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    build = project.start()
    job_id = project.build(build["version"])["jobs"][0]["jobId"]
    ticket = dispatch(job_id, api_url)
    return project, job_id, ticket.token


def upload(caller: Caller, results_format: str, job_id: str, data: bytes, multipart: bool = False) -> Reply:
    path = f"/testresults/{results_format}/{job_id}"
    if not multipart:
        return caller.call("POST", path, raw=data, headers={"Content-Type": "application/xml"})
    boundary = "----conveyor-test-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="results.xml"\r\n'
            "Content-Type: application/xml\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return caller.call("POST", path, raw=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


def job_tests(account: Account, job_id: str) -> dict[str, dict[str, Any]]:
    reply = account.api.get(f"/buildjobs/{job_id}/tests")
    assert reply.status == 200, reply.body
    return {test["testName"]: test for test in reply.json}


def pytest_junitxml(folder: Path) -> bytes:
    """What pytest's --junitxml writes for three tests, one of them failing."""
    (folder / "test_math.py").write_text(PYTEST_TESTS)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=results.xml", "test_math.py"]
    subprocess.run(command, cwd=folder, capture_output=True, check=False, timeout=120)
    return (folder / "results.xml").read_bytes()


def test_a_jobs_token_uploads_pytests_junitxml_as_the_jobs_tests(
    account: Account, running: tuple[BuildProject, str, str], tmp_path: Path
) -> None:
    _, job_id, token = running

    reply = upload(
        Caller(account.client, None, authorization=f"Bearer {token}"), "junit", job_id, pytest_junitxml(tmp_path)
    )

    assert reply.status == 200, reply.body
    assert reply.json == {"testsCount": 3, "passedTestsCount": 2, "failedTestsCount": 1}
    tests = job_tests(account, job_id)
    assert {name: test["outcome"] for name, test in tests.items()} == {
        "test_math.test_adds": "Passed",
        "test_math.test_divides": "Failed",
        "test_math.test_prints": "Passed",
    }
    assert {test["testFramework"] for test in tests.values()} == {"JUnit"}
    assert tests["test_math.test_adds"]["durationMilliseconds"] >= 20
    assert "7 / 2 is not 3" in tests["test_math.test_divides"]["ErrorMessage"]
    assert "test_math.py" in tests["test_math.test_divides"]["ErrorStackTrace"]


@pytest.mark.parametrize(
    ("results_format", "fixture", "framework"),
    [
        ("junit", "surefire-junit5.xml", "JUnit"),
        ("xunit", "xunit-v2.xml", "xUnit"),
        ("nunit3", "nunit3.xml", "NUnit3"),
        ("nunit", "nunit2.xml", "NUnit"),
        ("mstest", "mstest.trx", "MSTest"),
    ],
)
def test_a_key_that_may_run_builds_uploads_each_format_as_multipart(
    account: Account, running: tuple[BuildProject, str, str], results_format: str, fixture: str, framework: str
) -> None:
    _, job_id, _ = running

    reply = upload(account.api, results_format, job_id, (FIXTURES / fixture).read_bytes(), multipart=True)

    assert reply.status == 200, reply.body
    tests = job_tests(account, job_id)
    failed = [test for test in tests.values() if test["outcome"] == "Failed"]
    assert len(failed) == 1 and failed[0]["ErrorMessage"] and failed[0]["ErrorStackTrace"], tests
    assert any(test["outcome"] == "Passed" for test in tests.values())
    assert {test["testFramework"] for test in tests.values()} == {framework}
    assert all(isinstance(test["durationMilliseconds"], int) for test in tests.values())


def test_a_key_without_run_build_cannot_upload_results_into_a_job(
    account: Account, running: tuple[BuildProject, str, str]
) -> None:
    _, job_id, _ = running
    account.add_role("Results readers")  # every member sees every project; this role runs no builds
    reader = account.caller_for(account.add_user("reader-results@example.com", role="Results readers")["email"])

    reply = upload(reader, "junit", job_id, (FIXTURES / "surefire-junit5.xml").read_bytes())

    assert reply.status == 403, reply.body
    assert job_tests(account, job_id) == {}
    with pytest.raises(Forbidden):  # the job a file goes to needs RunBuild on its project
        job_for_caller(authenticate(f"Bearer {reader.key}", None), job_id)
    sent = request_of(
        "POST", "/", {"Authorization": f"Bearer {reader.key}"}, (FIXTURES / "surefire-junit5.xml").read_bytes()
    )
    assert test_result_views.upload_test_results(sent, "junit", job_id).status_code == 403  # the route's view
    assert job_for_caller(authenticate(f"Bearer {account.key}", None), job_id).job_id == job_id


def test_another_jobs_token_cannot_upload_into_this_job(
    account: Account, git_server: GitServer, api_url: str, running: tuple[BuildProject, str, str]
) -> None:
    _, job_id, _ = running
    other = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo other")})
    other_job = other.build(other.start()["version"])["jobs"][0]["jobId"]
    other_token = dispatch(other_job, api_url).token

    reply = upload(
        Caller(account.client, None, authorization=f"Bearer {other_token}"),
        "junit",
        job_id,
        (FIXTURES / "surefire-junit5.xml").read_bytes(),
    )

    assert reply.status == 401, reply.body
    assert job_tests(account, job_id) == {}


def test_no_key_cannot_upload_results(account: Account, running: tuple[BuildProject, str, str]) -> None:
    _, job_id, _ = running

    reply = upload(Caller(account.client, None), "junit", job_id, (FIXTURES / "surefire-junit5.xml").read_bytes())

    assert reply.status == 401, reply.body
    assert job_tests(account, job_id) == {}


@pytest.mark.parametrize(
    ("hostile", "named"),
    [(BILLION_LAUGHS, "DTD"), (EXTERNAL_ENTITY, "DTD"), (HUGE_ATTRIBUTE, "at most")],
    ids=["billion-laughs", "external-entity", "ten-megabyte-attribute"],
)
def test_a_hostile_results_file_is_a_400_that_changes_nothing(
    account: Account, running: tuple[BuildProject, str, str], hostile: bytes, named: str
) -> None:
    _, job_id, token = running
    runner = Caller(account.client, None, authorization=f"Bearer {token}")
    assert upload(runner, "junit", job_id, (FIXTURES / "surefire-junit5.xml").read_bytes()).status == 200
    before = job_tests(account, job_id)

    reply = upload(runner, "junit", job_id, hostile)

    assert reply.status == 400, reply.body
    assert named in reply.json["message"], reply.body
    assert job_tests(account, job_id) == before


def test_a_malformed_results_file_is_a_400_naming_its_line(
    account: Account, running: tuple[BuildProject, str, str]
) -> None:
    _, job_id, _ = running
    broken = b'<?xml version="1.0"?>\n<testsuite name="x">\n  <testcase name="a">\n</testsuite>\n'

    reply = upload(account.api, "junit", job_id, broken)

    assert reply.status == 400, reply.body
    assert "line 4" in reply.json["message"], reply.body
    assert job_tests(account, job_id) == {}


def test_a_format_appveyor_does_not_take_is_a_400(account: Account, running: tuple[BuildProject, str, str]) -> None:
    _, job_id, _ = running

    reply = upload(account.api, "tap", job_id, (FIXTURES / "surefire-junit5.xml").read_bytes())

    assert reply.status == 400, reply.body
    assert "junit" in reply.json["message"]
