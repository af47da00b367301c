"""conveyor exec's command (chalicelib/local/exec/command.py): its -e variables, its exit status, its refusals."""

from __future__ import annotations

import argparse
import io
import os
import shutil
from pathlib import Path

import pytest

from chalicelib.local.exec.command import ExecError, _given, _passed, run_exec
from chalicelib.local.exec.console import Console
from chalicelib.local.exec.jobs import ExecJob
from chalicelib.local.exec.plan import Checkout, plan

TWO_JOBS = "environment:\n  matrix:\n    - A: 1\n    - A: 2\nmatrix:\n  allow_failures:\n    - A: 2\n"


def ended(results: list[str | None]) -> list[tuple[object, ExecJob]]:
    checkout = Checkout(name="app", branch="main", ref="refs/heads/main", commit={"commitId": "0" * 40})
    jobs = plan(TWO_JOBS + "image: [Ubuntu, macos]\n", checkout, {}).jobs
    pairs = []
    for planned, result in zip(jobs, results, strict=True):
        job = ExecJob(
            spec={"jobId": planned.job.job_id, "jobName": planned.name}, console=Console(io.StringIO()), prefix=""
        )  # type: ignore[typeddict-item]
        job.result = result
        pairs.append((planned, job))
    return pairs


def test_the_exit_status_counts_only_jobs_that_ran_and_failures_not_allowed() -> None:
    # jobs: Ubuntu A=1, Ubuntu A=2 (allowed to fail), macos A=1, macos A=2 (both skipped here)
    assert _passed(ended(["success", "failed", None, None]))  # type: ignore[arg-type]
    assert not _passed(ended(["failed", "success", None, None]))  # type: ignore[arg-type]
    assert not _passed(ended(["cancelled", "success", None, None]))  # type: ignore[arg-type]


def test_when_every_job_may_fail_one_failing_fails_the_build_as_on_the_service() -> None:
    every_job_may_fail = TWO_JOBS + "    - A: 1\n"  # both rows of allow_failures
    checkout = Checkout(name="app", branch="main", ref="refs/heads/main", commit={"commitId": "0" * 40})
    jobs = plan(every_job_may_fail, checkout, {}).jobs
    assert all(job.allow_failure for job in jobs), jobs
    pairs = []
    for planned, result in zip(jobs, ["success", "failed"], strict=True):
        job = ExecJob(
            spec={"jobId": planned.job.job_id, "jobName": planned.name}, console=Console(io.StringIO()), prefix=""
        )  # type: ignore[typeddict-item]
        job.result = result
        pairs.append((planned, job))

    assert not _passed(pairs)  # type: ignore[arg-type]


def test_minus_e_takes_name_equals_value_the_value_as_it_is() -> None:
    assert _given(["A=1", "B_2=x=y", "EMPTY="]) == {"A": "1", "B_2": "x=y", "EMPTY": ""}
    for wrong in ("A", "=1", "1A=1", "A-B=1"):
        with pytest.raises(ExecError, match="NAME=VALUE"):
            _given([wrong])


def test_outside_a_checkout_or_without_appveyor_yml_it_says_so_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(
        config=None, job=None, list=True, variables=[], branch=None, cache=False, parallel=1, untracked=False
    )
    (tmp_path / "plain").mkdir()

    assert run_exec(args, tmp_path / "plain") == 2
    assert "not in a git checkout" in capsys.readouterr().out


def test_without_the_image_the_command_says_so_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dulwich import porcelain

    porcelain.init(str(tmp_path / "app"))
    (tmp_path / "app" / "appveyor.yml").write_text("build_script: [echo]\n")
    monkeypatch.setenv("CONVEYOR_LOCAL_IMAGE", str(tmp_path / "no-image"))
    args = argparse.Namespace(
        config=None, job=None, list=False, variables=[], branch=None, cache=False, parallel=1, untracked=False
    )

    assert run_exec(args, tmp_path / "app") == 2
    assert "conveyor exec: jobs cannot run in containers here:" in capsys.readouterr().out
    assert not (tmp_path / "app" / ".conveyor" / "exec" / "artifacts").exists()


def test_a_missing_local_image_is_built_first_with_make_image_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dulwich import porcelain

    from chalicelib.executors import containers

    if os.geteuid() != 0 or shutil.which("make") is None:
        pytest.skip("the image is built only as root, with make")
    conveyor = tmp_path / "conveyor"  # a Conveyor folder whose make image only leaves the image's stamp
    conveyor.mkdir()
    (conveyor / "Makefile").write_text(
        "image:\n\tmkdir -p .images/ubuntu/etc && touch .images/ubuntu/etc/conveyor-image\n"
    )
    monkeypatch.setattr(containers, "PROJECT_DIR", conveyor)
    monkeypatch.setattr(containers, "IMAGE_ROOT", conveyor / ".images" / "ubuntu")
    monkeypatch.delenv("CONVEYOR_LOCAL_IMAGE", raising=False)
    porcelain.init(str(tmp_path / "app"))
    (tmp_path / "app" / "appveyor.yml").write_text("build_script: [echo]\n")
    args = argparse.Namespace(
        config=None, job=None, list=False, variables=[], branch=None, cache=False, parallel=1, untracked=False
    )

    status = run_exec(args, tmp_path / "app")

    printed = capsys.readouterr().out
    assert f"The local image is not built: building it now with `make image` in {conveyor}" in printed
    assert (conveyor / ".images" / "ubuntu" / "etc" / "conveyor-image").is_file()
    assert status == 2 and "jobs cannot run in containers here" in printed  # a stamp alone is no image


@pytest.mark.parametrize("name", ["appveyor.yml", ".appveyor.yml"])
def test_a_configuration_file_that_is_a_link_is_refused_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    from dulwich import porcelain

    host_file = tmp_path / "host.yml"
    host_file.write_text("environment:\n  matrix:\n    - HOST_SECRET: the-hosts-own\nbuild_script: [echo]\n")
    porcelain.init(str(tmp_path / "app"))
    (tmp_path / "app" / name).symlink_to(host_file)  # as a pull request may commit it
    args = argparse.Namespace(
        config=None, job=None, list=True, variables=[], branch=None, cache=False, parallel=1, untracked=False
    )

    assert run_exec(args, tmp_path / "app") == 2
    printed = capsys.readouterr().out
    assert f"{tmp_path / 'app' / name} is a link" in printed
    assert "the-hosts-own" not in printed


def test_an_appveyor_yml_that_is_not_utf8_is_read_as_the_service_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dulwich import porcelain

    porcelain.init(str(tmp_path / "app"))
    (tmp_path / "app" / "appveyor.yml").write_bytes(
        b"environment:\n  matrix:\n    - NAME: caf\xe9\n    - NAME: tea\nbuild_script: [echo]\n"
    )
    args = argparse.Namespace(
        config=None, job=None, list=True, variables=[], branch=None, cache=False, parallel=1, untracked=False
    )

    assert run_exec(args, tmp_path / "app") == 0
    assert "1. Environment: NAME=caf\ufffd" in capsys.readouterr().out  # no traceback: the byte reads as U+FFFD
