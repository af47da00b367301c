"""The local container executor (chalicelib/executors/containers.py), through real builds: each job in a fresh
container of Conveyor's local image, its user with passwordless sudo, its own network namespace, nothing of the
service. Builds run through the SQS pump as ``make run`` runs them, with containers on (the other test modules run
jobs in the unshare sandbox).

These tests need podman, runc and slirp4netns, root, and the local image (``make test`` installs the first three
as root with apt-get and builds the image into .images/ once per machine); elsewhere they are skipped, saying why.
The first test installs a package from Debian's registry inside a job, as a build's ``sudo apt-get install`` does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.executors import containers
from chalicelib.local.pump import SqsPump
from tests.builds import appveyor_yml
from tests.functional.conftest import running_pump
from tests.functional.test_repository_credentials import (  # noqa: F401 (private_server: a fixture)
    TOKEN,
    USER,
    add_private_project,
    private_repository,
    private_server,
    run_build,
)
from tests.functional.test_sandbox import PLANT_IN_FOLDERS, host_processes_with, marker, output_lines, wait_for
from tests.gitserver import GitServer
from tests.support import Account

REFUSAL = containers.refusal()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
CONTRACT = Path(__file__).resolve().parents[2] / "images" / "ubuntu" / "contract.sh"


@pytest.fixture(scope="module")
def pump(fresh_resources: None, api_url: str) -> Iterator[SqsPump]:
    """The app's queue handlers with the local executor's containers on, as ``make run`` has them."""
    with running_pump(api_url, CONVEYOR_CONTAINERS="auto") as running:
        yield running


def test_a_package_one_job_installs_with_sudo_and_its_writes_to_usr_are_gone_for_the_next_job(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "image: Ubuntu2204",
                "build_script:",
                '  - if [ "$MODE" = install ]; then sudo apt-get install -y -q hello && hello; fi',
                '  - if [ "$MODE" = install ]; then echo left | sudo tee /usr/left-by-a-build; fi',
                "  - command -v hello || echo NO-HELLO",
                "  - test -e /usr/left-by-a-build && echo FOUND-LEFTOVER || echo NO-LEFTOVER",
            )
        }
    )

    first = project.run(environmentVariables={"MODE": "install"})
    first_log = project.log(first["jobs"][0]["jobId"])
    second = project.run(environmentVariables={"MODE": "look"})
    second_log = project.log(second["jobs"][0]["jobId"])

    assert first["status"] == "success", first_log
    assert "Hello, world!" in output_lines(first_log, "Hello, world!"), first_log
    assert output_lines(first_log, "FOUND-LEFTOVER") == ["FOUND-LEFTOVER"], first_log  # the write did land
    assert second["status"] == "success", second_log
    assert output_lines(second_log, "NO-HELLO") == ["NO-HELLO"], second_log
    assert output_lines(second_log, "NO-LEFTOVER") == ["NO-LEFTOVER"], second_log


def test_a_job_cannot_connect_to_a_port_another_running_job_listens_on_at_127_0_0_1(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    port = 18000 + int(marker()) % 1000
    listener = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                f"  - python3 -m http.server {port} --bind 127.0.0.1 > /dev/null 2>&1 &",
                f"  - until curl -s -o /dev/null http://127.0.0.1:{port}/; do sleep 0.1; done; echo LISTENING",
                "  - sleep 600",
            )
        }
    )
    prober = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                f"  - curl -s -o /dev/null -m 5 http://127.0.0.1:{port}/ && echo REACHED || echo UNREACHABLE",
            )
        }
    )

    listening = listener.start()
    job = listener.wait_for_log(listener.build(listening["version"])["jobs"][0]["jobId"], "\nLISTENING", 120)
    probe = prober.run()
    probe_log = prober.log(probe["jobs"][0]["jobId"])
    still_listening = listener.build(listening["version"])["status"]
    slug = listener.project["slug"]
    assert listener.account.api.delete(f"/builds/{listener.account.name}/{slug}/{listening['version']}").status == 204
    listener.wait(listening["version"])

    assert "LISTENING" in job and still_listening == "running"  # it listened the whole time
    assert probe["status"] == "success", probe_log
    assert output_lines(probe_log, "UNREACHABLE") == ["UNREACHABLE"], probe_log


def test_the_local_image_keeps_its_contract(make_project) -> None:  # type: ignore[no-untyped-def]
    yml = appveyor_yml("image: Ubuntu2204", "build_script:", "  - source contract.sh")  # nvm: the session's
    project = make_project({"contract.sh": CONTRACT.read_text(), "appveyor.yml": yml})

    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])

    assert output_lines(log, "CONTRACT BROKEN") == [], log
    assert len(output_lines(log, "CONTRACT ok: ")) >= 89, log  # one line per promise of docs/executors.md's table
    assert build["status"] == "success", log
    messages = project.account.api.get(f"/buildjobs/{build['jobs'][0]['jobId']}/messages").json
    texts = [message["message"] for message in messages]
    assert "The image contract was checked" in texts and "curl reached it" in texts, messages
    tests = project.account.api.get(f"/buildjobs/{build['jobs'][0]['jobId']}/tests").json
    assert "contract_results_upload" in str(tests), tests


def test_processes_a_job_leaves_behind_in_its_container_die_with_it(make_project) -> None:  # type: ignore[no-untyped-def]
    detached, daemon, rooted = f"600.{marker()}", f"600.{marker()}", f"600.{marker()}"
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                f"  - setsid sleep {detached} > /dev/null 2>&1 & sleep 1",
                f"  - nohup setsid sh -c 'sleep {daemon} & exit 0' > /dev/null 2>&1 & sleep 1",
                f"  - sudo setsid sh -c 'sleep {rooted} & exit 0' > /dev/null 2>&1 & sleep 1",
                "  - sleep 2 && echo still-running",
            )
        }
    )

    version = project.start()["version"]
    tags = (detached, daemon, rooted)
    seen_running = wait_for(lambda: all(host_processes_with(tag) for tag in tags), seconds=60)
    build = project.wait(version)

    log = project.log(build["jobs"][0]["jobId"])
    assert seen_running, f"the job's processes were never seen running: the test proves nothing\n{build}\n{log}"
    assert build["status"] == "success", log
    assert wait_for(lambda: not any(host_processes_with(tag) for tag in tags), seconds=10), (
        f"processes of the finished job are still running: {[host_processes_with(tag) for tag in tags]}"
    )


# Plants a file as root (sudo) in every folder of the container a build may write to, or looks for it there.
ROOT_PLANTER = (
    """\
import os, subprocess, sys
marker, mode = sys.argv[1], sys.argv[2]
found = subprocess.run(["find", "/", "-xdev", "-type", "d", "-perm", "-0002"], capture_output=True, text=True).stdout
folders = set(found.split()) | {"/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/usr/local/bin", "/etc", "/root",
                                "/home/appveyor", "/home/appveyor/projects", "/opt"}
"""
    + PLANT_IN_FOLDERS
)


def test_files_a_job_writes_anywhere_as_root_are_gone_for_the_next_job_and_never_reach_this_machine(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    project = make_project(
        {
            "planter.py": ROOT_PLANTER,
            "appveyor.yml": appveyor_yml("build_script:", "  - sudo python3 planter.py $MARKER $MODE"),
        }
    )
    name = marker()

    first = project.run(environmentVariables={"MARKER": name, "MODE": "plant"})
    planted_log = project.log(first["jobs"][0]["jobId"])
    planted = [line.split()[1] for line in output_lines(planted_log, "PLANTED ")]
    second = project.run(environmentVariables={"MARKER": name, "MODE": "check"})
    checked_log = project.log(second["jobs"][0]["jobId"])

    assert first["status"] == second["status"] == "success", (planted_log, checked_log)
    assert {"/tmp", "/etc", "/usr/local/bin", "/root", "/home/appveyor/projects"} <= set(planted), planted_log
    assert output_lines(checked_log, "LEFT ") == [], checked_log
    assert sorted(line.split()[1] for line in output_lines(checked_log, "CLEAN ")) == sorted(planted)
    assert [folder for folder in planted if Path(folder, f"planted-{name}").exists()] == []  # not on this machine


def test_a_job_whose_image_cannot_run_here_says_why_on_its_logs_first_line_and_in_its_message(  # type: ignore[no-untyped-def]
    make_project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_LOCAL_IMAGE", str(tmp_path / "never-built"))
    project = make_project({"appveyor.yml": appveyor_yml("image: Ubuntu2004", "build_script:", "  - echo ran")})

    build = project.run()
    job = build["jobs"][0]
    log = project.log(job["jobId"])

    assert build["status"] == job["status"] == "failed"
    assert log.splitlines()[0] == job["message"], log
    assert "'Ubuntu2004'" in job["message"] and "the local image is not built (make image" in job["message"]
    assert "ran" not in log.splitlines()


# Run in the job's container, as appveyor then as root: every process's memory, environment and command line there,
# and the files a build could look in, searched for the repository's password (the needle is put together here, so
# this file never holds it whole).
CREDENTIAL_SCAN = """\
import os
needle = ("s3cret-clone-" + "token").encode()
me = os.getpid()
for pid in sorted((int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me)):
    try:
        command = open(f"/proc/{pid}/cmdline", "rb").read().replace(bytes(1), b" ").decode(errors="replace")
    except OSError:
        continue
    print("PROCESS", pid, command[:100])
    try:
        environment = open(f"/proc/{pid}/environ", "rb").read()
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        memory = open(f"/proc/{pid}/mem", "rb", 0)
    except OSError as error:
        print("UNREADABLE", pid, error.strerror)
        continue
    print("SCANNED", pid, command[:100])
    if needle in environment or needle in command.encode():
        print("FOUND environment", pid)
    for line in maps:
        where, rights = line.split()[:2]
        if not rights.startswith("r"):
            continue
        start, end = (int(bound, 16) for bound in where.split("-"))
        try:
            memory.seek(start)
            if needle in memory.read(end - start):
                print("FOUND memory", pid, line)
        except (OSError, OverflowError, ValueError):
            continue
for root in ("/home", "/root", "/tmp", "/var/tmp", "/run", "/opt", "/etc"):
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            try:
                if needle in open(path, "rb").read(1 << 22):
                    print("FOUND file", path)
            except OSError:
                continue
print("SCAN DONE")
"""


def test_a_build_with_root_in_its_container_finds_the_repositorys_password_nowhere(
    account: Account,
    private_server: GitServer,  # noqa: F811 (the fixture imported above)
    pump: SqsPump,
) -> None:
    files = {
        "scan.py": CREDENTIAL_SCAN,
        "appveyor.yml": appveyor_yml("build_script:", "  - python3 scan.py", "  - sudo python3 scan.py"),
    }
    url = private_repository(private_server, files)
    reply = add_private_project(
        account, url, repositoryAuthentication="credentials", repositoryUsername=USER, repositoryPassword=TOKEN
    )
    assert reply.status == 200, reply.body

    build, log = run_build(account, reply.json)

    assert build["status"] == "success", log  # it built: the runner fetched the source with the password
    assert output_lines(log, "SCAN DONE") == ["SCAN DONE"] * 2, log  # as appveyor, then as root
    scanned = output_lines(log, "SCANNED ")
    assert len(scanned) >= 2, log  # it read the memory of the container's other processes: the shell, the first
    processes = output_lines(log, "PROCESS ")
    assert [line for line in processes if "chalicelib.runner" in line] == [], log  # the runner is not among them
    assert output_lines(log, "FOUND") == [], log
    assert TOKEN not in log


def test_a_powershell_line_fails_saying_the_image_has_no_pwsh_and_never_runs_beside_the_runner(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    project = make_project(
        {"appveyor.yml": appveyor_yml("image: Ubuntu2204", "build_script:", "  - ps: Write-Host hi", "  - echo after")}
    )

    failed = project.run()
    failed_log = project.log(failed["jobs"][0]["jobId"])
    skipped = project.run(environmentVariables={"APPVEYOR_YML_DISABLE_PS_LINUX": "true"})
    skipped_log = project.log(skipped["jobs"][0]["jobId"])

    message = failed["jobs"][0]["message"]
    assert failed["status"] == "failed", failed_log
    assert message.startswith("This image has no PowerShell: 'ps:' scripts need pwsh."), message
    assert message.endswith("in build_script: ps: Write-Host hi"), message
    assert failed_log.rstrip("\n").rsplit("\n", 1)[-1] == message, failed_log  # the log's last line says why
    assert "127" not in failed_log, failed_log
    assert "after" not in failed_log.splitlines()
    assert skipped["status"] == "success", skipped_log
    assert "after" in skipped_log.splitlines()


def broken_image(root: Path) -> Path:
    """A root filesystem that passes the executor's probe (``/bin/true`` runs in it) but holds no user ``appveyor``
    and no Python: a job's container cannot start in it."""
    wanted = [Path("/usr/bin/true")]
    linked = subprocess.run(["ldd", "/usr/bin/true"], capture_output=True, text=True, check=True).stdout
    wanted += [Path(word) for word in linked.split() if word.startswith("/")]
    for path in wanted:
        (root / path.relative_to("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path.resolve(), root / path.relative_to("/"))
    (root / "bin").mkdir(exist_ok=True)
    shutil.copy2("/usr/bin/true", root / "bin" / "true")
    (root / containers.IMAGE_STAMP).parent.mkdir(parents=True, exist_ok=True)
    (root / containers.IMAGE_STAMP).write_text("a broken image")
    shift = [sys.executable, str(containers.PROJECT_DIR / "images" / "ubuntu" / "shift_ids.py")]
    subprocess.run([*shift, str(root), str(containers.ID_SHIFT)], check=True)  # owned as make image owns its tree
    return root


def test_a_job_whose_container_cannot_start_fails_with_podmans_words_first_in_its_log(  # type: ignore[no-untyped-def]
    make_project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_LOCAL_IMAGE", str(broken_image(tmp_path / "image")))
    assert containers.refusal() is None  # the probe passes: the failure comes as the job's container starts
    project = make_project({"appveyor.yml": appveyor_yml("image: Ubuntu2204", "build_script:", "  - echo ran")})

    build = project.run()
    job = build["jobs"][0]
    log = project.log(job["jobId"])
    messages = [message["message"] for message in project.account.api.get(f"/buildjobs/{job['jobId']}/messages").json]

    assert build["status"] == job["status"] == "failed", log
    first = log.splitlines()[0]
    assert first.startswith("This job's container could not start: ") and "appveyor" in first, log
    assert messages == [first]
    assert "ran" not in log.splitlines()
    assert job["message"] == first == log.splitlines()[-1], job  # its only line: the first and the last


def test_appveyor_pushartifact_takes_the_build_folders_files_but_no_file_of_the_machine_the_runner_sees(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    # the runner reads a pushed file on the machine's side: a path or a link out of the build folder would hand a
    # container's build the machine's files (this project's own, the runner's)
    outside = str(containers.PROJECT_DIR / "pyproject.toml")
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - echo built > out.txt && appveyor PushArtifact out.txt",
                f"  - appveyor PushArtifact {outside} || echo REFUSED-PATH",
                f"  - ln -s {outside} link.txt && appveyor PushArtifact link.txt || echo REFUSED-LINK",
                "  - appveyor PushArtifact ../../../../etc/hostname || echo REFUSED-CLIMB",
            )
        }
    )

    build = project.run()
    job_id = build["jobs"][0]["jobId"]
    log = project.log(job_id)
    artifacts = [artifact["fileName"] for artifact in project.account.api.get(f"/buildjobs/{job_id}/artifacts").json]

    assert build["status"] == "success", log
    assert artifacts == ["out.txt"], log
    for refused in ("REFUSED-PATH", "REFUSED-LINK", "REFUSED-CLIMB"):
        assert output_lines(log, refused) == [refused], log


def test_powershell_in_a_container_is_started_by_its_bash_session_and_exchanges_variables_and_folder(  # type: ignore[no-untyped-def]
    make_project,
) -> None:
    stand_in = (Path(__file__).parents[1] / "standins" / "pwsh.py").read_text()  # the image has no pwsh: see there
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "image: Ubuntu2204",
                "install:",
                "  - mkdir -p bin sub && cp pwsh.py bin/pwsh && chmod +x bin/pwsh",
                '  - export PATH="$PWD/bin:$PATH" FROM_BASH=b1',
                "build_script:",
                '  - ps: echo "ps sees $FROM_BASH as $(id -un) in $PWD"',
                "  - ps: export FROM_PS=p1; cd sub",
                '  - echo "bash sees $FROM_PS in $PWD"',
            ),
            "pwsh.py": stand_in,
            "sub/keep.txt": "x\n",
        }
    )

    build = project.run()

    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    lines = log.splitlines()
    assert any(line.startswith("ps sees b1 as appveyor in /home/appveyor/projects/") for line in lines), log
    assert any(line.startswith("bash sees p1 in /home/appveyor/projects/") and line.endswith("/sub") for line in lines)
