"""The Git for Windows commands a Windows build agent fetches a job's commit with (no git runs under Wine: the
commands are checked here, and, where git is installed, run against a repository of this machine)."""

from __future__ import annotations

import base64
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import cast

import pytest

from chalicelib.protocol.job_spec import JobSpec
from chalicelib.runner.job_source import _clone_with_git_for_windows
from chalicelib.runner.scripts import JobFailed
from chalicelib.runner.windows.git import (
    GitFailed,
    checkout,
    commands,
    credential_environment,
    ssh_environment,
)
from tests.unit.runner.runs import Log, new_run

SHA = "0123456789abcdef0123456789abcdef01234567"
SOURCE = {"url": "http://127.0.0.1:9/org/private.git", "ref": "refs/heads/main", "commitId": SHA, "depth": None}


def test_the_commands_fetch_the_ref_then_check_out_the_commit_detached_with_long_paths_on() -> None:
    folder = Path("C:/projects/app")
    ran = commands("git", "https://git.example/app.git", "refs/heads/main", SHA, folder, depth=None)

    assert ran == [
        ["git", "init", "-q", str(folder)],
        ["git", "-C", str(folder), "config", "core.longpaths", "true"],
        ["git", "-C", str(folder), "remote", "add", "origin", "https://git.example/app.git"],
        [
            "git", "-C", str(folder), "-c", "core.longpaths=true", "fetch", "-q", "--no-tags", "origin",
            "+refs/heads/main:refs/remotes/origin/conveyor-build",
        ],
        ["git", "-C", str(folder), "-c", "core.longpaths=true", "checkout", "-qf", SHA],
    ]  # fmt: skip


def test_a_clone_depth_is_the_fetchs_depth() -> None:
    fetch = commands("git", "u", "refs/heads/main", SHA, Path("f"), depth=5)[3]
    assert "--depth=5" in fetch


def test_credentials_go_in_gits_environment_never_on_its_command_line() -> None:
    environment = credential_environment("builder", "s3cret")
    ran = commands("git", "https://git.example/app.git", "refs/heads/main", SHA, Path("f"), None)

    header = environment["GIT_CONFIG_VALUE_0"]
    assert (environment["GIT_CONFIG_COUNT"], environment["GIT_CONFIG_KEY_0"]) == ("1", "http.extraHeader")
    assert base64.b64decode(header.removeprefix("Authorization: Basic ")) == b"builder:s3cret"
    assert not any("s3cret" in word or header in word for command in ran for word in command)


def test_an_ssh_key_is_used_from_its_file_with_the_host_key_expected(tmp_path: Path) -> None:
    environment = ssh_environment(tmp_path / "key", tmp_path / "known_hosts", "ssh-ed25519 AAAAC3Nza")

    assert (tmp_path / "known_hosts").read_text() == "* ssh-ed25519 AAAAC3Nza\n"
    assert f'-i "{(tmp_path / "key").as_posix()}"' in environment["GIT_SSH_COMMAND"]
    assert "StrictHostKeyChecking=yes" in environment["GIT_SSH_COMMAND"]


def test_a_machine_without_git_fails_the_fetch_saying_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(GitFailed, match="Git for Windows"):
        checkout(
            "https://git.example/a.git", "refs/heads/main", SHA, tmp_path, None, {}, print, {"PATH": str(tmp_path)}
        )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed here")
def test_the_commands_check_out_the_commit_of_a_real_repository(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    run = ["git", "-C", str(origin), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(origin)], check=True)
    (origin / "README.txt").write_text("first\n")
    subprocess.run([*run, "add", "README.txt"], check=True)
    subprocess.run([*run, "commit", "-qm", "first"], check=True)
    sha = subprocess.run([*run, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    (origin / "README.txt").write_text("second\n")
    subprocess.run([*run, "commit", "-qam", "second"], check=True)
    said: list[str] = []

    checkout(origin.as_uri(), "refs/heads/main", sha, tmp_path / "build", 5, {}, said.append, {"PATH": "/usr/bin:/bin"})

    assert (tmp_path / "build" / "README.txt").read_text() == "first\n"
    with pytest.raises(GitFailed, match="git checkout failed"):
        checkout(
            origin.as_uri(), "refs/heads/main", SHA, tmp_path / "other", None, {}, print, {"PATH": "/usr/bin:/bin"}
        )


class _Forge(BaseHTTPRequestHandler):
    """An attacker's loopback server, where a pull request's appveyor.yml would send the clone."""

    seen: list[str | None]

    def do_GET(self) -> None:  # noqa: N802 (http.server's names)
        self.seen.append(self.headers.get("Authorization"))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: object) -> None:
        return


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed here")
def test_the_jobs_variables_and_the_machines_git_variables_do_not_steer_the_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []
    server = HTTPServer(("127.0.0.1", 0), type("Forge", (_Forge,), {"seen": seen}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    evil = f"http://127.0.0.1:{server.server_address[1]}/"
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "git").write_text(f"#!/bin/sh\ntouch {tmp_path / 'planted-git-ran'}\nexit 1\n")
    (planted / "git").chmod(0o755)
    monkeypatch.setenv("GIT_TRACE_CURL", str(tmp_path / "machine-trace"))  # a stray GIT_* of the machine's too
    run = new_run(tmp_path / "build", Log(), cast(JobSpec, {"source": SOURCE, "configuration": {}}))
    run.credentials = ("x-access-token", "SECRET-CLONE-TOKEN")
    run.variables.update(  # what a pull request's appveyor.yml environment: puts there
        {
            "PATH": f"{planted}:/usr/bin:/bin",
            "GIT_CONFIG_PARAMETERS": f"'url.{evil}.insteadof'='http://127.0.0.1:9/'",
            "GIT_TRACE_CURL": str(tmp_path / "trace"),
            "GIT_TRACE_REDACT": "0",
        }
    )
    try:
        with pytest.raises(JobFailed, match="git fetch failed"):
            _clone_with_git_for_windows(run)
    finally:
        server.shutdown()
        server.server_close()

    assert seen == []
    assert not (tmp_path / "planted-git-ran").exists()
    assert not (tmp_path / "trace").exists() and not (tmp_path / "machine-trace").exists()
