"""Fetching the job's commit with Git for Windows (``git`` on the machine's PATH), as AppVeyor's Windows images do:
the machine's own git settings apply (``core.autocrlf``), and ``core.longpaths`` is on for the fetch, so paths past
260 characters check out. Credentials reach git through its environment (``GIT_CONFIG_*``), never its command line,
which every process of the machine can list; an SSH key through a file of the job's, removed with it."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chalicelib.runner.windows import console

_SHA = re.compile(r"[0-9a-f]{40}")
_VERBS = ("init", "config", "remote", "fetch", "checkout")


class GitFailed(Exception):
    """The commit could not be fetched; str() says why."""


def commands(git: str, url: str, ref: str, sha: str, folder: Path, depth: int | None) -> list[list[str]]:
    """The git commands that make ``folder`` a working tree of commit ``sha`` of ``ref``, HEAD detached at it."""
    into = ["-C", str(folder)]
    fetch = [git, *into, "-c", "core.longpaths=true", "fetch", "-q", "--no-tags"]
    if depth:
        fetch.append(f"--depth={depth}")
    return [
        [git, "init", "-q", str(folder)],
        [git, *into, "config", "core.longpaths", "true"],
        [git, *into, "remote", "add", "origin", url],
        [*fetch, "origin", f"+{ref}:refs/remotes/origin/conveyor-build"],
        [git, *into, "-c", "core.longpaths=true", "checkout", "-qf", sha],
    ]


def credential_environment(username: str, password: str) -> dict[str, str]:
    """Git's settings, in its environment, that send the repository's user name and password (HTTP basic)."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {token}",
    }


def ssh_environment(key_file: Path, known_hosts: Path, host_key: str | None) -> dict[str, str]:
    """Git's SSH command with the job's key, and the host key expected (any host: the clone URL names one)."""
    if host_key:
        known_hosts.write_text(f"* {host_key}\n", encoding="ascii")
        checking = f'-o StrictHostKeyChecking=yes -o UserKnownHostsFile="{known_hosts.as_posix()}"'
    else:
        checking = f'-o StrictHostKeyChecking=accept-new -o UserKnownHostsFile="{known_hosts.as_posix()}"'
    return {"GIT_SSH_COMMAND": f'ssh -i "{key_file.as_posix()}" -o IdentitiesOnly=yes {checking}'}


def checkout(
    url: str,
    ref: str,
    sha: str,
    folder: Path,
    depth: int | None,
    environment: Mapping[str, str],
    say: Callable[[str], None],
) -> None:
    """Fetch and check out the commit with the machine's git; raises GitFailed saying why."""
    if not _SHA.fullmatch(sha):
        raise GitFailed(f"Commit '{sha}' not found on '{ref}'.")
    path = next((value for name, value in environment.items() if name.upper() == "PATH"), None)
    git = shutil.which("git", path=path)
    if git is None:
        raise GitFailed(
            "The source was not fetched: this build agent's machine has no git on its PATH (install Git for "
            "Windows), or use clone_script."
        )
    run_environment = {**environment, "GIT_TERMINAL_PROMPT": "0"}
    for command in commands(git, url, ref, sha, folder, depth):
        done = subprocess.run(
            command, env=run_environment, stdin=subprocess.DEVNULL, capture_output=True, timeout=600, check=False
        )
        for line in console.decode(done.stdout + done.stderr).splitlines():
            say(line)
        if done.returncode != 0:
            verb = next(word for word in command[1:] if word in _VERBS)
            raise GitFailed(f"git {verb} failed with code {done.returncode}: the source was not fetched.")


def fetch_source(
    source: Mapping[str, Any],
    credentials: tuple[str, str] | tuple[str, str | None] | None,
    ssh_key: tuple[str, str | None] | None,
    folder: Path,
    scratch: Path,
    environment: Mapping[str, str],
    say: Callable[[str], None],
) -> None:
    """Fetch the job's source (its spec's ``source``) into ``folder`` with the repository's credentials (a user name
    and password, or an SSH key and the host key expected), which go no further than git's environment."""
    extra: dict[str, str] = {}
    if credentials is not None:
        extra = credential_environment(credentials[0], credentials[1] or "")
    elif ssh_key is not None:
        scratch.mkdir(parents=True, exist_ok=True)
        key_file = scratch / "repository-key"
        key_file.write_text(ssh_key[0].rstrip("\n") + "\n", encoding="ascii")
        extra = ssh_environment(key_file, scratch / "known_hosts", ssh_key[1])
    depth = int(source["depth"]) if source["depth"] else None
    try:
        checkout(source["url"], source["ref"], source["commitId"], folder, depth, {**environment, **extra}, say)
    finally:
        for name in ("repository-key", "known_hosts"):
            (scratch / name).unlink(missing_ok=True)
