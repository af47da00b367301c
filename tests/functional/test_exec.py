"""``conveyor exec`` in temporary checkouts: each job of the appveyor.yml run as a build runs it, in a container of the
local image, its runner answered by the command's own job protocol (chalicelib/local/exec/).

These tests need podman, runc and slirp4netns, root, and the local image, as the container tests do; elsewhere they
are skipped, saying why (but for --list, which runs nothing).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dulwich import porcelain

from chalicelib.executors import containers
from chalicelib.local.exec import wine

REFUSAL = containers.refusal()
needs_containers = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
PROJECT_DIR = Path(__file__).resolve().parents[2]
WINE_MISSING = wine.missing()  # why Windows jobs are skipped here (make windows installs Wine and the Windows CPython)
EXEC_SECONDS = 180


def checkout(folder: Path, files: dict[str, str], committed: bool = True) -> Path:
    """A git checkout of ``files`` on branch master, committed (or, with ``committed`` false, only written)."""
    porcelain.init(str(folder))
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    if committed:
        porcelain.add(str(folder), [str(folder / name) for name in files])
        porcelain.commit(str(folder), message=b"First", author=b"Ann <ann@example.com>", committer=b"Ann <ann@e.com>")
    return folder


def yml(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def conveyor_exec(folder: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """``conveyor exec`` run in ``folder``: its exit status and what it printed."""
    return subprocess.run(
        [sys.executable, "-m", "chalicelib.cli", "exec", *arguments],
        cwd=folder, capture_output=True, text=True, timeout=EXEC_SECONDS, env={**os.environ, **environment},
    )  # fmt: skip


MATRIX = yml(
    "environment:",
    "  matrix:",
    "    - FLAVOUR: vanilla",
    "    - FLAVOUR: chocolate",
    "build_script:",
    "  - echo made-of-$FLAVOUR",
)


@needs_containers
def test_a_two_job_matrix_prints_each_jobs_output_under_its_name_and_exits_0(tmp_path: Path) -> None:
    done = conveyor_exec(checkout(tmp_path, {"appveyor.yml": MATRIX}))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "[Environment: FLAVOUR=vanilla] made-of-vanilla" in done.stdout.splitlines(), done.stdout
    assert "[Environment: FLAVOUR=chocolate] made-of-chocolate" in done.stdout.splitlines(), done.stdout
    summary = done.stdout.split("job ", 1)[1] if "job " in done.stdout else ""
    assert [line.split("  ")[0] for line in done.stdout.splitlines() if "  success  " in line] == [
        "Environment: FLAVOUR=vanilla",
        "Environment: FLAVOUR=chocolate",
    ], summary


@needs_containers
def test_a_changed_tracked_file_is_what_the_job_sees_an_untracked_one_only_with_untracked_an_ignored_one_never(
    tmp_path: Path,
) -> None:
    files = {
        ".gitignore": "secret.env\n",
        "appveyor.yml": yml(
            "build_script:",
            "  - cat changed.txt",
            "  - test -e new.txt && cat new.txt || echo NO-UNTRACKED-FILE",
            "  - test -e secret.env && echo IGNORED-FILE-SEEN || echo NO-IGNORED-FILE",
        ),
        "changed.txt": "as committed\n",
    }
    folder = checkout(tmp_path, files)
    (folder / "changed.txt").write_text("changed, not committed\n")
    (folder / "new.txt").write_text("new, never added\n")
    (folder / "secret.env").write_text("TOKEN=kept-out\n")

    default = conveyor_exec(folder)
    asked = conveyor_exec(folder, "--untracked")

    assert default.returncode == 0, default.stdout + default.stderr
    lines = default.stdout.splitlines()
    assert "changed, not committed" in lines and "NO-UNTRACKED-FILE" in lines, default.stdout
    assert "NO-IGNORED-FILE" in lines, default.stdout
    assert "with its uncommitted changes" in lines[0], default.stdout
    left_out = "Left out of the build: 1 untracked file git does not ignore (conveyor exec --untracked takes them)."
    assert lines[1] == left_out, default.stdout
    assert asked.returncode == 0, asked.stdout + asked.stderr
    lines = asked.stdout.splitlines()
    assert lines[1:3] == ["Taken into the build (--untracked): 1 untracked file git does not ignore:", "  new.txt"]
    assert "changed, not committed" in lines and "new, never added" in lines, asked.stdout
    assert "NO-IGNORED-FILE" in lines, asked.stdout


@needs_containers
def test_a_pull_requests_gitignore_cannot_hand_the_job_the_users_untracked_env_file(tmp_path: Path) -> None:
    files = {
        ".gitignore": "*.log\n!.env\n",  # the pull request un-ignores .env
        "appveyor.yml": yml("build_script:", "  - test -e .env && cat .env || echo NO-ENV-FILE"),
    }
    folder = checkout(tmp_path, files)
    (folder / ".env").write_text("AWS_SECRET_ACCESS_KEY=the-users-own-key\n")

    done = conveyor_exec(folder)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "NO-ENV-FILE" in done.stdout.splitlines(), done.stdout
    assert "the-users-own-key" not in done.stdout, done.stdout


@needs_containers
def test_job_runs_only_the_jobs_whose_name_holds_the_text(tmp_path: Path) -> None:
    done = conveyor_exec(checkout(tmp_path, {"appveyor.yml": MATRIX}), "--job", "chocolate")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "made-of-chocolate" in done.stdout.splitlines(), done.stdout  # one job: its lines carry no prefix
    assert "made-of-vanilla" not in done.stdout, done.stdout


@needs_containers
def test_a_failing_job_makes_the_exit_status_non_zero_unless_allow_failures_allows_it(tmp_path: Path) -> None:
    failing = yml(
        "environment:",
        "  matrix:",
        "    - FLAVOUR: good",
        "    - FLAVOUR: bad",
        "build_script:",
        '  - test "$FLAVOUR" = good',
    )
    folder = checkout(tmp_path / "strict", {"appveyor.yml": failing})
    done = conveyor_exec(folder)
    allowed = conveyor_exec(
        checkout(
            tmp_path / "lenient", {"appveyor.yml": failing + yml("matrix:", "  allow_failures:", "    - FLAVOUR: bad")}
        )
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        '[Environment: FLAVOUR=bad] Command exited with code 1 in build_script: test "$FLAVOUR" = good'
        in done.stdout.splitlines()
    ), done.stdout
    assert any(line.startswith("Environment: FLAVOUR=bad") and " failed " in line for line in done.stdout.splitlines())
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "failed (allowed)" in allowed.stdout, allowed.stdout


@needs_containers
def test_tests_a_file_of_results_and_an_artifact_the_job_reports_are_in_the_summary_the_artifact_in_the_checkout(
    tmp_path: Path,
) -> None:
    files = {
        "appveyor.yml": yml(
            "build_script:",
            "  - echo built > app.bin",
            "  - appveyor PushArtifact app.bin",
            "test_script:",
            "  - appveyor AddTest adds-up -Framework pytest -FileName t.py -Outcome Passed -Duration 12",
            "  - appveyor AddTest divides -Framework pytest -FileName t.py -Outcome Failed",
            "  - appveyor AddMessage 'made by exec' -Category Warning",
            '  - curl -sf -F file=@results.xml "${APPVEYOR_API_URL}api/testresults/junit/$APPVEYOR_JOB_ID"',
        ),
        "results.xml": '<testsuite><testcase classname="suite" name="from-a-file"/></testsuite>\n',
    }
    folder = checkout(tmp_path, files)

    done = conveyor_exec(folder)

    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("job 1 ")]
    assert rows == [["job", "1", "success", rows[0][3], "s", "2", "1", "1"]], done.stdout  # passed, failed, artifacts
    assert "Test Failed: divides" in done.stdout and "Message (warning): made by exec" in done.stdout, done.stdout
    assert (folder / ".conveyor" / "exec" / "artifacts" / "1" / "app.bin").read_text() == "built\n"
    assert porcelain.status(str(folder)).untracked == [], "exec's own folder is ignored by git"


@needs_containers
def test_the_jobs_environment_holds_no_variable_of_the_command_and_a_secure_one_only_given(tmp_path: Path) -> None:
    files = {
        "appveyor.yml": yml(
            "environment:",
            "  DEPLOY_KEY:",
            "    secure: c29tZXRoaW5nIGVuY3J5cHRlZA==",
            "build_script:",
            "  - env | sort",
            '  - echo "key is ${DEPLOY_KEY:-unset}"',
        )
    }
    folder = checkout(tmp_path, files)
    planted = {"AWS_SECRET_ACCESS_KEY": "planted-aws-secret", "CONVEYOR_AGENT_KEY": "planted-agent-key"}

    unset = conveyor_exec(folder, **planted)
    given = conveyor_exec(folder, "-e", "DEPLOY_KEY=given-on-the-command-line")

    assert unset.returncode == 0, unset.stdout + unset.stderr
    assert "planted-aws-secret" not in unset.stdout and "planted-agent-key" not in unset.stdout, unset.stdout
    assert "AWS_" not in unset.stdout, unset.stdout
    assert "key is unset" in unset.stdout.splitlines(), unset.stdout
    assert unset.stdout.count("Secure variable DEPLOY_KEY is not set") == 1, unset.stdout
    assert "key is [secure]" in given.stdout.splitlines(), given.stdout  # given, and masked as a secret is
    assert "given-on-the-command-line" not in given.stdout, given.stdout


@needs_containers
@pytest.mark.skipif(WINE_MISSING is None, reason="Wine is installed here: Windows jobs run (the test below)")
def test_a_windows_job_is_skipped_saying_why_and_the_others_run(tmp_path: Path) -> None:
    files = {"appveyor.yml": yml("image:", "  - Ubuntu2204", "  - Visual Studio 2022", "build_script:", "  - echo ran")}

    done = conveyor_exec(checkout(tmp_path, files))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "[Image: Ubuntu2204] ran" in done.stdout.splitlines(), done.stdout
    assert "[Image: Visual Studio 2022] skipped: 'Visual Studio 2022' is a Windows image" in done.stdout, done.stdout
    assert "`make windows`, as root" in done.stdout, done.stdout


def test_a_windows_job_runs_under_wine_as_a_windows_agent_runs_it_its_api_calls_answered_by_exec(
    tmp_path: Path,
) -> None:
    if WINE_MISSING is not None:
        if os.environ.get("CI"):  # make test installs Wine there: the test must run
            pytest.fail(f"{WINE_MISSING}, and CI must run this test")
        pytest.skip(WINE_MISSING)
    build = ("image: Visual Studio 2019", "build_script:", "  - set X=1", "  - echo %X%", "  - type hello.txt")
    files = {"appveyor.yml": yml(*build, "  - appveyor AddMessage hi"), "hello.txt": "committed\n"}
    folder = checkout(tmp_path, files)
    (folder / "hello.txt").write_text("changed in the working tree\n")

    done = conveyor_exec(folder)

    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines.index(wine.NOTICE) < lines.index("1"), done.stdout  # said before the job's log
    assert "changed in the working tree" in lines, done.stdout
    assert "Message (information): hi" in lines, done.stdout
    assert [line.split()[:3] for line in lines if line.startswith("job 1")] == [["job", "1", "success"]], done.stdout


@needs_containers
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_the_running_job_and_leaves_no_container_behind(tmp_path: Path, stop: signal.Signals) -> None:
    folder = checkout(tmp_path, {"appveyor.yml": yml("build_script:", "  - echo started-sleeping", "  - sleep 300")})
    process = subprocess.Popen(
        [sys.executable, "-m", "chalicelib.cli", "exec"],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    printed = []
    for line in process.stdout:
        printed.append(line)
        if line.strip() == "started-sleeping":
            break
    names = _containers("conveyor-job-exec1-")
    process.send_signal(stop)
    started = time.monotonic()
    rest, _ = process.communicate(timeout=60)

    assert names, "".join(printed)  # the job's container was running
    assert process.returncode == 130, "".join(printed) + rest
    assert time.monotonic() - started < 30
    assert "cancelled" in rest, rest
    assert [name for name in _containers("conveyor-job-exec1-") if name in names] == [], rest


def test_list_prints_the_jobs_by_name_and_runs_none(tmp_path: Path) -> None:
    done = conveyor_exec(
        checkout(tmp_path, {"appveyor.yml": MATRIX + yml("image:", "  - Ubuntu", "  - macos")}), "--list"
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "1. Image: Ubuntu; Environment: FLAVOUR=vanilla",
        "2. Image: Ubuntu; Environment: FLAVOUR=chocolate",
        "3. Image: macos; Environment: FLAVOUR=vanilla  (skipped: conveyor exec does not provide the image 'macos' "
        "(it runs no image, Ubuntu and Ubuntu1604 ... Ubuntu2204 in Conveyor's local image); the service runs it on a "
        "build agent or AWS CodeBuild.)",
        "4. Image: macos; Environment: FLAVOUR=chocolate  (skipped: conveyor exec does not provide the image 'macos' "
        "(it runs no image, Ubuntu and Ubuntu1604 ... Ubuntu2204 in Conveyor's local image); the service runs it on a "
        "build agent or AWS CodeBuild.)",
    ]
    assert not (tmp_path / ".conveyor").exists()


def test_a_job_text_no_name_holds_is_refused_naming_the_jobs(tmp_path: Path) -> None:
    done = conveyor_exec(checkout(tmp_path, {"appveyor.yml": MATRIX}), "--job", "strawberry", "--list")

    assert done.returncode == 2
    assert "no job's name contains 'strawberry'" in done.stdout and "FLAVOUR=chocolate" in done.stdout, done.stdout


def _containers(prefix: str) -> list[str]:
    listed = subprocess.run(
        [shutil.which("podman") or "podman", "ps", "-a", "--format", "{{.Names}}"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return [name for name in listed.stdout.split() if name.startswith(prefix)]


@needs_containers
def test_the_cache_is_kept_in_the_checkout_only_when_asked_and_restored_by_the_next_run(tmp_path: Path) -> None:
    files = {"appveyor.yml": yml("cache:", "  - deps", "install:", "  - test -d deps && echo RESTORED || mkdir deps")}
    folder = checkout(tmp_path, files)

    without = conveyor_exec(folder)
    first, second = conveyor_exec(folder, "--cache"), conveyor_exec(folder, "--cache")

    assert "Note: cache: off under conveyor exec" in without.stdout, without.stdout
    assert "RESTORED" not in first.stdout.splitlines(), first.stdout
    assert "RESTORED" in second.stdout.splitlines(), second.stdout
    assert list((folder / ".conveyor" / "exec" / "cache").glob("*/*.tgz"))


@needs_containers
def test_a_checkout_committing_a_link_in_execs_folder_is_refused_and_the_host_file_untouched(tmp_path: Path) -> None:
    host_file = tmp_path / "shadow"
    host_file.write_text("root:$6$hash:19000::::::\n")
    folder = checkout(tmp_path / "checkout", {"appveyor.yml": yml("build_script:", "  - echo ran")})
    (folder / ".conveyor" / "exec").mkdir(parents=True)
    (folder / ".conveyor" / "exec" / ".gitignore").symlink_to(host_file)
    porcelain.add(str(folder), [str(folder / ".conveyor" / "exec" / ".gitignore")])
    porcelain.commit(str(folder), message=b"A pull request", author=b"M <m@e>", committer=b"M <m@e>")

    done = conveyor_exec(folder)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "git tracks .conveyor/exec/.gitignore" in done.stdout, done.stdout
    assert "ran" not in done.stdout.splitlines(), done.stdout
    assert host_file.read_text() == "root:$6$hash:19000::::::\n"


@needs_containers
def test_a_jobs_terminal_escape_sequences_never_reach_the_terminal(tmp_path: Path) -> None:
    files = {
        "appveyor.yml": yml(
            "build_script:",
            "  - printf 'log\\033]52;c;ZXZpbA==\\007line\\n'",
            "  - appveyor AddMessage \"$(printf 'message\\033[2J\\033[H')\"",
        )
    }

    done = conveyor_exec(checkout(tmp_path, files))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "log]52;c;ZXZpbA==line" in done.stdout.splitlines(), done.stdout
    assert "message[2J[H" in done.stdout, done.stdout
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout, done.stdout
