"""The local executor's sandbox, attacked by real builds: what a build's scripts leave behind, see and can change.

Every build here runs through the SQS pump in the local executor's sandbox (chalicelib/runner/sandbox.py), as
``make run`` runs them. What the scripts find they print; the tests read it back from the job's log, and look at
this machine (its /proc, its folders) from outside for what the build left behind.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib import executors
from chalicelib.runner import sandbox as local
from tests.builds import BuildProject, appveyor_yml

SANDBOX = local.sandbox()
needs_sandbox = pytest.mark.skipif(
    isinstance(SANDBOX, str), reason=f"the local executor cannot make a sandbox on this machine: {SANDBOX}"
)
AS_ROOT = os.geteuid() == 0
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")

# Plants a file (mode "plant") in, or looks for it in (mode "check"), each folder of ``folders``.
PLANT_IN_FOLDERS = """\
for folder in sorted(folders):
    path = os.path.join(folder, "planted-" + marker)
    if mode == "plant":
        try:
            with open(path, "w") as planted:
                planted.write("left by an earlier build")
            print("PLANTED", folder)
        except OSError as error:
            print("CANNOT-PLANT", folder, error.strerror)
    else:
        print("LEFT" if os.path.exists(path) else "CLEAN", folder)
"""
PLANTER = (
    """\
import os, subprocess
marker, mode = os.environ["MARKER"], os.environ["MODE"]
found = subprocess.run(
    ["find", "/", "/dev", "/run", "-xdev", "-type", "d", "-perm", "-0002"],
    capture_output=True, text=True, check=False,
).stdout.split()
folders = set(found) | {"/tmp", "/var/tmp", "/dev/shm", "/run/lock"}
"""
    + PLANT_IN_FOLDERS
)  # in every folder the build's user may write to (MODE, MARKER): the usual ones, and any other world-writable one

# Who the scripts run as, what they can see of the machine and what they can change of the service's code.
INSPECTOR = """\
import os, sys
print("UID", os.getuid(), os.geteuid())
for line in open("/proc/self/status"):
    if line.startswith(("Cap", "NoNewPrivs")):
        print("STATUS", line.strip().replace(chr(9), " "))
pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
print("PIDS", len(pids))
for pid in pids:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            print("PROCESS", pid, cmdline.read().replace(bytes(1), b" ").decode(errors="replace"))
    except OSError as error:
        print("PROCESS", pid, "unreadable", error.strerror)
for folder in sys.argv[1:]:
    path = os.path.join(folder, "planted-" + os.environ["MARKER"])
    try:
        with open(path, "w") as planted:
            planted.write("the service's code, changed by a build")
        print("WROTE", folder)
    except OSError as error:
        print("CANNOT-WRITE", folder, error.strerror)
"""


def marker() -> str:
    return str(random.randrange(10**8, 10**9))


def output_lines(log: str, prefix: str) -> list[str]:
    """The log's lines a script printed starting with ``prefix`` (not the echoed commands)."""
    return [line for line in log.splitlines() if line.startswith(prefix)]


def host_processes_with(argument: str) -> list[int]:
    """PIDs of this machine's processes (seen from outside any sandbox) with ``argument`` in their command line."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            arguments = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argument.encode() in arguments:
            found.append(int(name))
    return found


def sandboxed_sleep(argument: str) -> bool:
    """Whether a process runs exactly ``sleep argument``: a sandbox's first process, once the sandbox is made."""
    for pid in host_processes_with(argument):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", argument.encode()]:
                return True
        except OSError:  # it ended meanwhile
            continue
    return False


def wait_for(condition, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture
def planted_on_host() -> Iterator[list[Path]]:
    """Files a test expects no build to have left on this machine; removed afterwards if one did."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        path.unlink(missing_ok=True)


@needs_sandbox
def test_processes_a_job_leaves_behind_die_with_it(make_project) -> None:  # type: ignore[no-untyped-def]
    detached, daemon = f"600.{marker()}", f"600.{marker()}"
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                # each line waits a moment: the runner kills a script's process group when it ends, and would
                # otherwise catch a child before it has left the group (then the test would prove nothing)
                f"  - setsid sleep {detached} > /dev/null 2>&1 & sleep 1",
                f"  - nohup setsid sh -c 'sleep {daemon} & exit 0' > /dev/null 2>&1 & sleep 1",
                "  - sleep 2 && echo still-running",
            )
        }
    )

    version = project.start()["version"]
    seen_running = wait_for(lambda: host_processes_with(detached) and host_processes_with(daemon), seconds=30)
    build = project.wait(version)

    log = project.log(build["jobs"][0]["jobId"])
    assert seen_running, f"the job's processes were never seen running: the test proves nothing\n{build}\n{log}"
    assert build["status"] == "success", log
    assert wait_for(lambda: not host_processes_with(detached) and not host_processes_with(daemon), seconds=10), (
        f"processes of the finished job are still running: {host_processes_with(detached)} (setsid), "
        f"{host_processes_with(daemon)} (double-forked daemon)"
    )


# Starts a sandbox as the local executor and a build agent do (setpriv's parent-death signal, then the sandbox),
# whose first process waits (``sleep 600.<tag>``); then waits itself, to be killed.
STARTER = """
import subprocess, sys, time
from chalicelib.runner import sandbox
made = sandbox.sandbox()
subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--", *made.prefix, "sleep", sys.argv[1]])
time.sleep(600)
"""


@needs_sandbox
def test_a_sandbox_dies_with_the_process_that_started_it() -> None:
    """A stack or build agent killed outright (SIGKILL, OOM) leaves no runner behind renewing its job's lease."""
    tag = f"600.{marker()}"
    starter = subprocess.Popen([sys.executable, "-c", STARTER, tag], cwd=Path(local.PROJECT_DIR))
    try:
        # killed once the sandbox is made and its first process runs: killed sooner, setpriv may not yet have set
        # its parent-death signal, and the test would not test the sandbox
        assert wait_for(lambda: sandboxed_sleep(tag), seconds=30), "the sandbox never started"
    finally:
        starter.kill()
        starter.wait()
    assert wait_for(lambda: not host_processes_with(tag), seconds=10), (
        f"the sandbox outlived the process that started it: {host_processes_with(tag)}"
    )


@needs_sandbox
def test_files_one_job_writes_to_shared_folders_are_gone_for_the_next_job(  # type: ignore[no-untyped-def]
    make_project, planted_on_host: list[Path]
) -> None:
    project = make_project(
        {"planter.py": PLANTER, "appveyor.yml": appveyor_yml("build_script:", "  - python3 planter.py")}
    )
    name = marker()

    first = project.run(environmentVariables={"MARKER": name, "MODE": "plant"})
    planted_log = project.log(first["jobs"][0]["jobId"])
    planted = [line.split()[1] for line in output_lines(planted_log, "PLANTED ")]
    planted_on_host += [Path(folder, f"planted-{name}") for folder in planted]
    second = project.run(environmentVariables={"MARKER": name, "MODE": "check"})
    checked_log = project.log(second["jobs"][0]["jobId"])

    assert first["status"] == second["status"] == "success", (planted_log, checked_log)
    assert set(SHARED_FOLDERS) <= set(planted), planted_log  # the scripts could write there: the test proves something
    assert output_lines(checked_log, "LEFT ") == [], checked_log
    assert sorted(line.split()[1] for line in output_lines(checked_log, "CLEAN ")) == sorted(planted)
    assert [str(path) for path in planted_on_host if path.exists()] == []  # nor did they land on this machine


@needs_sandbox
def test_scripts_run_without_privileges_see_only_their_sandbox_and_cannot_change_the_services_code(  # type: ignore[no-untyped-def]
    make_project, planted_on_host: list[Path]
) -> None:
    project = make_project(
        {"inspector.py": INSPECTOR, "appveyor.yml": appveyor_yml("build_script:", "  - python3 inspector.py $TARGETS")}
    )
    name = marker()
    runner_code = (local.PROJECT_DIR, local.PROJECT_DIR / "chalicelib" / "runner", sys.prefix, sys.base_prefix)
    targets = sorted({os.path.realpath(folder) for folder in runner_code})
    planted_on_host += [Path(folder, f"planted-{name}") for folder in targets]

    build = project.run(environmentVariables={"MARKER": name, "TARGETS": " ".join(targets)})
    log = project.log(build["jobs"][0]["jobId"])

    assert build["status"] == "success", log
    processes = output_lines(log, "PROCESS ")
    pid_count = int(output_lines(log, "PIDS ")[0].split()[1])
    assert 1 <= pid_count <= 8, log  # the runner, the scripts' shell and this script: not the machine's processes
    assert len(processes) == pid_count
    assert "chalicelib.runner" in processes[0], log  # PID 1 of the sandbox is the runner
    # none of the stack's: the project's own path (a clone named conveyor) in the runner's and inspector's aside
    named = [line.replace(os.path.realpath(local.PROJECT_DIR), "<project>") for line in processes]
    assert [line for line in named if "pytest" in line or "conveyor" in line] == [], log
    assert [line.split()[1] for line in output_lines(log, "CANNOT-WRITE ")] == targets, log
    assert output_lines(log, "WROTE ") == []
    assert [str(path) for path in planted_on_host if path.exists()] == []
    if AS_ROOT:
        assert output_lines(log, "UID ") == [f"UID {local.NOBODY} {local.NOBODY}"], log
        status = dict(line.split()[1:3] for line in output_lines(log, "STATUS "))
        assert status["CapEff:"] == status["CapPrm:"] == status["CapBnd:"] == status["CapAmb:"] == "0" * 16, log
        assert status["NoNewPrivs:"] == "1", log


HOSTILE_VARIABLES = {
    "LD_PRELOAD": "/nonexistent.so",
    "BASH_ENV": "/tmp/pwn/bashenv",
    "PYTHONPATH": "/tmp/pwn",
    "PYTHONSTARTUP": "/tmp/pwn/startup.py",
    "PATH": "/tmp/pwn/bin:/usr/bin:/bin",
}
RUNNERS_OWN = {"APPVEYOR_API_URL": "http://127.0.0.1:9/"}  # the runner sets these after the request's
PROXIES = {"http_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
PWN_FILES = {
    "pwn/sitecustomize.py": 'import sys\nsys.stderr.write("PWNED by sitecustomize\\n")\n',
    "pwn/startup.py": 'print("PWNED by PYTHONSTARTUP")\n',
    "pwn/bashenv": "echo PWNED by BASH_ENV\n",
}
CLI_LINE = "$APPVEYOR_BUILD_FOLDER/../bin/appveyor AddMessage from-the-appveyor-command"


def hostile_project(make_project, names: list[str], environment: dict[str, str] | None = None) -> BuildProject:  # type: ignore[no-untyped-def]
    """A project whose scripts echo ``names``, run a plain python and the runner's appveyor command, and make an
    artifact; its appveyor.yml sets ``environment``."""
    return make_project(
        {
            **PWN_FILES,
            "appveyor.yml": appveyor_yml(
                *(
                    ["environment:", *[f"  {name}: {value}" for name, value in environment.items()]]
                    if environment
                    else []
                ),
                "before_build:",
                "  - cp -r pwn /tmp/pwn && mkdir -p /tmp/pwn/bin",
                "build_script:",
                *[f"  - echo SEEN {name}=${name}" for name in names],
                "  - python3 -c \"print('a plain python ran')\"",
                f"  - {CLI_LINE}",
                "  - echo built > out.txt",
                "artifacts:",
                "  - path: out.txt",
            ),
        }
    )


def assert_the_runner_carried_on_as_itself(project: BuildProject, build: dict[str, Any], log: str) -> None:
    """The job succeeded, and what the runner does itself (clone, the appveyor command, artifacts) all worked."""
    job = build["jobs"][0]
    assert build["status"] == job["status"] == "success", log
    assert "Fetching commit" in log
    assert "PWNED" not in section_after(log, f"$ {CLI_LINE}"), log  # the runner's command runs as the runner made it
    lines = log.splitlines()
    assert lines[-1] == "Build success", log  # the runner went on after the scripts, as itself
    assert lines.index("Build success") > max(index for index, line in enumerate(lines) if line.startswith("SEEN "))
    assert job["messagesCount"] == 1 and job["artifactsCount"] == 1, job
    artifacts = project.account.api.get(f"/buildjobs/{job['jobId']}/artifacts").json
    assert [artifact["fileName"] for artifact in artifacts] == ["out.txt"]


def test_hostile_variables_reach_the_scripts_but_not_the_runner(make_project) -> None:  # type: ignore[no-untyped-def]
    # A start request may not set these (a 400: test_start_request_variables.py); appveyor.yml, which whoever
    # pushes writes, may, and its scripts see them while the runner carries on as itself.
    project = hostile_project(make_project, [*HOSTILE_VARIABLES, *RUNNERS_OWN], HOSTILE_VARIABLES)

    build = project.run(environmentVariables=RUNNERS_OWN)
    log = project.log(build["jobs"][0]["jobId"])

    seen = output_lines(log, "SEEN ")
    assert seen[: len(HOSTILE_VARIABLES)] == [f"SEEN {name}={value}" for name, value in HOSTILE_VARIABLES.items()], log
    assert seen[-1].startswith("SEEN APPVEYOR_API_URL=http://localhost:"), log  # the runner's, not the request's
    assert "PWNED by sitecustomize" in section_after(log, "$ python3 -c"), log  # PYTHONPATH did reach the scripts
    assert_the_runner_carried_on_as_itself(project, build, log)


def test_proxy_variables_do_not_cut_the_appveyor_command_off_from_the_runner(make_project) -> None:  # type: ignore[no-untyped-def]
    project = hostile_project(make_project, list(PROXIES))

    build = project.run(environmentVariables=PROXIES)
    log = project.log(build["jobs"][0]["jobId"])

    assert output_lines(log, "SEEN ") == [f"SEEN {name}={value}" for name, value in PROXIES.items()], log
    assert_the_runner_carried_on_as_itself(project, build, log)


def section_after(log: str, command: str) -> str:
    """What the log shows between an echoed command (starting with ``command``) and the runner's next line."""
    lines = log.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(command))
    end = next((index for index in range(start + 1, len(lines)) if lines[index].startswith("$ ")), len(lines))
    return "\n".join(lines[start + 1 : end])


@pytest.fixture
def clone_in_a_private_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The runner's code as a new user's clone has it: in a folder of mode 0700 (``mktemp -d``, a home folder on
    Debian), outside the folders the sandbox empties anyway; beside it, a file of that user's."""
    private = Path(tempfile.mkdtemp(prefix="conveyor-private-", dir="/run"))
    clone = private / "conveyor"
    shutil.copytree(
        local.PROJECT_DIR / "chalicelib", clone / "chalicelib", ignore=shutil.ignore_patterns("__pycache__")
    )
    (private / "notes.txt").write_text("the user's own\n")
    monkeypatch.setattr(local, "PROJECT_DIR", clone)
    yield clone
    shutil.rmtree(private)


@pytest.mark.skipif(not AS_ROOT, reason="only root's sandbox drops to nobody")
@needs_sandbox
def test_a_runner_cloned_in_a_folder_of_mode_0700_starts_in_its_sandbox_which_sees_nothing_else_of_that_folder(
    clone_in_a_private_folder: Path,
) -> None:
    clone = clone_in_a_private_folder
    assert stat.S_IMODE(clone.parent.stat().st_mode) == 0o700
    program = (
        f"import os, sys; sys.path.insert(0, {str(clone)!r}); import chalicelib.runner.job as job; "
        f"print(os.getuid(), job.__file__); print(sorted(os.listdir({str(clone.parent)!r})))"
    )
    prefix = local.as_user(local.NOBODY, ()).prefix

    ran = subprocess.run([*prefix, sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=60)

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [f"{local.NOBODY} {clone}/chalicelib/runner/job.py", "['conveyor']"]


@pytest.mark.skipif(not AS_ROOT, reason="only root's sandbox drops to nobody")
@needs_sandbox
def test_a_clone_other_users_may_not_read_refuses_jobs_at_once_saying_how_to_make_it_readable(
    clone_in_a_private_folder: Path,
) -> None:
    clone = clone_in_a_private_folder
    assert executors.refusal() is None  # below a folder of mode 0700: the sandbox reaches it
    clone.chmod(0o700)  # as git clone makes it with umask 077

    refusal = executors.refusal()

    assert refusal is not None and f"{clone} is not readable by other users (mode 0700" in refusal
    assert f"chmod -R o+rX {clone}" in refusal
    assert executors.refusal("Ubuntu2204") == refusal  # a container's runner runs as nobody too


@pytest.fixture
def two_job_disks() -> Iterator[tuple[Path, Path]]:
    """Two folders below /var/tmp, each with a file system mounted on it (tmpfs: a job's disk, as the container
    executor mounts them): another job's, and the one a sandbox is made for."""
    root = Path(tempfile.mkdtemp(prefix="conveyor-disks-", dir="/var/tmp"))
    disks = (root / "other-job", root / "own-job")
    for disk in disks:
        disk.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
    yield disks
    for disk in disks:
        subprocess.run(["umount", "--lazy", str(disk)], check=False)
    shutil.rmtree(root)


@pytest.mark.skipif(not AS_ROOT, reason="only root mounts jobs' disks")
@needs_sandbox
def test_a_sandbox_holds_no_copy_of_another_jobs_disk(two_job_disks: tuple[Path, Path]) -> None:
    """A disk the sandbox's namespace copied would stay allocated until its runner ends, though its job ended and
    unmounted it: the sandbox keeps its own job's only."""
    other, own = two_job_disks
    prefix = local.as_user(local.NOBODY, (str(own),)).prefix

    ran = subprocess.run([*prefix, "cat", "/proc/self/mountinfo"], capture_output=True, text=True, timeout=60)

    assert ran.returncode == 0, ran.stderr
    mount_points = [line.split()[4] for line in ran.stdout.splitlines()]
    assert str(own) in mount_points, ran.stdout
    assert str(other) not in mount_points, ran.stdout
