"""mocha-appveyor-reporter, unmodified, in a real build: a mocha run's tests reach the Build Worker API, and the job's
counts and tests show them.

mocha and the reporter come from npm into .mocha/ (the Makefile's MOCHA rule). The build's runner reads them there
as the sandbox's user (nobody), from the project folder the sandbox shows read-only.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account

MOCHA = Path(__file__).resolve().parents[2] / ".mocha"
NODE_MODULES = MOCHA / "node_modules"
MOCHA_JS = NODE_MODULES / "mocha" / "bin" / "mocha.js"
REPORTER = NODE_MODULES / "mocha-appveyor-reporter" / "mocha-appveyor-reporter.js"
TEST_JS = """\
const assert = require("assert");

describe("arithmetic", function () {
  it("adds", function () {
    console.log("adding 1 and 1");
    assert.strictEqual(1 + 1, 2);
  });
  it("multiplies", function () {
    assert.strictEqual(2 * 3, 6);
  });
  it("divides", function () {
    assert.strictEqual(7 / 2, 3, "7 / 2 is not 3 in JavaScript");
  });
});
"""


def require_mocha() -> None:
    """Skip where mocha is not installed (no npm); under CI, which has npm, fail instead: a broken install."""
    if MOCHA_JS.is_file() and REPORTER.is_file() and shutil.which("node") is not None:
        return
    if shutil.which("npm") is None or shutil.which("node") is None:
        reason = "mocha needs node and npm, and they are not installed: the mocha reporter test is skipped"
    else:
        reason = f"mocha is not installed in {MOCHA}: `make test` installs it with npm"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def test_the_installed_packages_are_readable_by_the_builds_user() -> None:
    require_mocha()

    unreadable = [
        str(path)
        for path in (MOCHA_JS, REPORTER, NODE_MODULES / "request-json" / "package.json")
        if not path.stat().st_mode & stat.S_IROTH
    ]

    assert not unreadable, f"builds run as nobody and cannot read {unreadable}: chmod -R a+rX {MOCHA}"


def test_mocha_appveyor_reporter_reports_each_test_of_a_mocha_run(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    require_mocha()
    project = BuildProject(
        account,
        git_server,
        {
            "test.js": TEST_JS,
            "appveyor.yml": appveyor_yml(
                "environment:",
                f"  NODE_PATH: {NODE_MODULES}",
                "build: off",
                "test_script:",  # the failing test must not fail the build: its result is what is reported
                f"  - node {MOCHA_JS} --reporter mocha-appveyor-reporter test.js || true",
            ),
        },
    )

    build = project.run()

    (job,) = build["jobs"]
    log = project.log(job["jobId"])
    assert build["status"] == "success", log
    assert (job["testsCount"], job["passedTestsCount"], job["failedTestsCount"]) == (3, 2, 1), log
    reply = project.account.api.get(f"/buildjobs/{job['jobId']}/tests")
    assert reply.status == 200, reply.body
    tests = {test["testName"]: test for test in reply.json}
    assert {name: test["outcome"] for name, test in tests.items()} == {
        "arithmetic adds": "Passed",
        "arithmetic multiplies": "Passed",
        "arithmetic divides": "Failed",
    }
    assert {test["testFramework"] for test in tests.values()} == {"Mocha"}
    assert all(test["fileName"].endswith("/test.js") for test in tests.values())
    assert all(isinstance(test["durationMilliseconds"], int) for test in tests.values())
    assert "7 / 2 is not 3 in JavaScript" in tests["arithmetic divides"]["ErrorMessage"]
    assert "test.js" in tests["arithmetic divides"]["ErrorStackTrace"]
    assert tests["arithmetic adds"]["StdOut"] == "adding 1 and 1\n"
