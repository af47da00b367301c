"""What a job reaches from inside its container, as ``make run`` runs it: ID tokens (with curl, as GitHub Actions'
tools ask, and with ``appveyor GetIdToken``), test result uploads, artifacts, the cache and the ``appveyor``
command. The container's network reaches none of this machine's loopback, where ``make run`` serves the API: each
goes through the Build Worker API the runner serves the container (runner/worker_api.py).

Skipped, saying why, where no container can run (test_containers.py says what they need).
"""

from __future__ import annotations

import base64
import re
from typing import Any

import jwt
import pytest

from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_cache_outside_build_folder import FORGING_TAR, forged_archive
from tests.functional.test_containers import REFUSAL, pump  # noqa: F401 (pump: the module's fixture)
from tests.functional.test_sandbox import output_lines

pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
RESULTS = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites><testsuite name="s" tests="1">'
    '<testcase classname="c" name="uploaded" time="0.1"/></testsuite></testsuites>\n'
)
ASKS_FOR_EVERYTHING = appveyor_yml(
    "id_token: true",
    "cache:",
    "  - deps",
    "  - $HOME/.cargo",
    "install:",
    "  - test -f deps/kept && echo CACHE-RESTORED || { mkdir -p deps && echo kept > deps/kept; }",
    "  - test -f ~/.cargo/kept && echo HOME-RESTORED || { mkdir -p ~/.cargo && echo kept > ~/.cargo/kept; }",
    "build_script:",
    '  - echo "URL=$ACTIONS_ID_TOKEN_REQUEST_URL"',
    '  - \'R=$(curl -sS "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=sts.amazonaws.com" '
    '-H "Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN") && echo "CURL=${R:0:30} ${R:30}"\'',
    '  - \'echo "FORGED=$(curl -s -o /dev/null -w "%{http_code}" "$ACTIONS_ID_TOKEN_REQUEST_URL" '
    '-H "Authorization: Bearer cvyo_not-this-jobs")"\'',
    '  - T=$(appveyor GetIdToken -Audience cli.example) && echo "CLI=${T:0:20} ${T:20}"',
    '  - appveyor AddMessage "said from the container"',
    "  - appveyor SetVariable -Name FROM_CLI -Value set-inside",
    '  - echo "SEEN=$FROM_CLI"',
    "  - appveyor AddTest added -Framework xUnit -FileName t.dll -Outcome Running",
    "  - appveyor UpdateTest added -Outcome Passed -Duration 12",
    '  - appveyor AddCompilationMessage "unused variable" -Category Warning -FileName src/main.c -Line 3',
    '  - \'curl -sSf -X POST --data-binary @results.xml -H "Content-Type: application/xml" '
    '"${APPVEYOR_API_URL}api/testresults/junit/$APPVEYOR_JOB_ID"\'',
    "  - echo built > out.txt && appveyor PushArtifact out.txt -FileName pushed.txt",
    "artifacts:",
    "  - path: out.txt",
)


def printed(log: str, name: str) -> str:
    found = re.search(rf"^{name}=(.*)$", log, re.MULTILINE)
    assert found, f"no {name}= line in:\n{log}"
    return found.group(1).strip()


def claims(token: str) -> dict[str, Any]:
    """The token's claims (test_id_tokens.py verifies such tokens against the issuer's published keys)."""
    return dict(jwt.decode(token, options={"verify_signature": False}))


def test_a_container_job_reaches_id_tokens_test_uploads_artifacts_the_cache_and_the_appveyor_command(
    make_project,  # type: ignore[no-untyped-def]
) -> None:
    project: BuildProject = make_project({"appveyor.yml": ASKS_FOR_EVERYTHING, "results.xml": RESULTS})

    build = project.run()
    job_id = build["jobs"][0]["jobId"]
    log = project.log(job_id)

    assert build["status"] == "success", log
    assert printed(log, "URL").startswith("http://localhost:8008/"), log  # the container's own loopback
    curled = claims(re.sub(r'^\{"value": ?"|"\}$', "", "".join(printed(log, "CURL").split(" "))))
    assert (curled["aud"], curled["job_id"]) == ("sts.amazonaws.com", job_id)
    assert printed(log, "FORGED") == "401"
    assert claims("".join(printed(log, "CLI").split(" ")))["aud"] == "cli.example"
    assert printed(log, "SEEN") == "set-inside"
    api = project.account.api
    messages = [message["message"] for message in api.get(f"/buildjobs/{job_id}/messages").json]
    assert "said from the container" in messages and "unused variable" in messages
    tests = {test["testName"]: test["outcome"] for test in api.get(f"/buildjobs/{job_id}/tests").json}
    assert tests == {"added": "Passed", "c.uploaded": "Passed"}, tests
    artifacts = sorted(artifact["fileName"] for artifact in api.get(f"/buildjobs/{job_id}/artifacts").json)
    assert artifacts == ["out.txt", "pushed.txt"], log
    assert "CACHE-RESTORED" not in log.splitlines()

    again = project.run()
    log = project.log(again["jobs"][0]["jobId"])
    assert again["status"] == "success", log
    assert "CACHE-RESTORED" in log.splitlines(), log
    assert "HOME-RESTORED" in log.splitlines(), log  # the container's own home, which the runner never sees


def test_a_forged_cache_archive_plants_nothing_in_the_runners_folders_bound_into_the_container(
    make_project,  # type: ignore[no-untyped-def]
) -> None:
    # the runner's appveyor command and the Build Worker API's socket are the runner's files, bound in read-only:
    # the job's own tar restores the cache, as the job's user, and cannot write there
    forged = forged_archive("opt/appveyor/bin")
    project: BuildProject = make_project(
        {
            "forged.tgz.b64": base64.b64encode(forged).decode() + "\n",
            "appveyor.yml": appveyor_yml(
                "cache:",
                "  - /tmp/forged",
                "install:",
                "  - cat /tmp/forged/kept || true",
                "  - find /opt/appveyor/bin /run/conveyor -mindepth 1 ! -name appveyor ! -name api.sock | sed s/^/N-/",
                "build_script:",
                "  - mkdir -p /tmp/forged && base64 -d forged.tgz.b64 > /tmp/forged.tgz",
                "on_success:",
                f"  - '{FORGING_TAR}'",
            ),
        }
    )

    first = project.run()
    assert first["status"] == "success", project.log(first["jobs"][0]["jobId"])
    second = project.run()
    log = project.log(second["jobs"][0]["jobId"])

    assert second["status"] == "success", log
    assert output_lines(log, "restored from") == ["restored from the forged cache"], log
    assert output_lines(log, "N-") == [], log
