"""Fetching the job's commit with Git for Windows (``git`` on the machine's PATH), as AppVeyor's Windows images do:
the machine's own git settings apply (``core.autocrlf``), and ``core.longpaths`` is on for the fetch, so paths past
260 characters check out. Credentials reach git through its environment (``GIT_CONFIG_*``), never its command line,
which every process of the machine can list; an SSH key through a file of the job's, removed with it.

git runs with the machine's environment (the agent's own) less every ``GIT_*`` variable, plus what the runner sets,
and is looked up on the machine's PATH: never with the job's variables, which a pull request's appveyor.yml writes
(``GIT_CONFIG_PARAMETERS`` could send the credentials to another server, ``GIT_TRACE_CURL`` write them to a file,
``PATH`` start a git of its own)."""

from __future__ import annotations

import base64
import os
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


def git_environment(machine: Mapping[str, str], settings: Mapping[str, str]) -> dict[str, str]:
    """git's environment: the machine's without any ``GIT_*`` variable (in any case: Windows's names are not
    case-sensitive), then the runner's settings."""
    kept = {name: value for name, value in machine.items() if not name.upper().startswith("GIT_")}
    return {**kept, **settings, "GIT_TERMINAL_PROMPT": "0"}


def checkout(
    url: str,
    ref: str,
    sha: str,
    folder: Path,
    depth: int | None,
    settings: Mapping[str, str],
    say: Callable[[str], None],
    machine: Mapping[str, str] | None = None,
) -> None:
    """Fetch and check out the commit with the machine's git, with the runner's ``settings`` for it (credentials)
    and ``machine``'s environment (the runner's own when None); raises GitFailed saying why."""
    if not _SHA.fullmatch(sha):
        raise GitFailed(f"Commit '{sha}' not found on '{ref}'.")
    environment = git_environment(os.environ if machine is None else machine, settings)
    path = console.variable(environment, "PATH")
    git = shutil.which("git", path=path)
    if git is None:
        raise GitFailed(
            "The source was not fetched: this build agent's machine has no git on its PATH (install Git for "
            "Windows), or use clone_script."
        )
    for command in commands(git, url, ref, sha, folder, depth):
        done = subprocess.run(
            command, env=environment, stdin=subprocess.DEVNULL, capture_output=True, timeout=600, check=False
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
    say: Callable[[str], None],
    machine: Mapping[str, str] | None = None,
) -> None:
    """Fetch the job's source (its spec's ``source``) into ``folder`` with the repository's credentials (a user name
    and password, or an SSH key and the host key expected), which go no further than git's environment; ``machine``:
    the environment git starts from (the runner's own when None), never the job's variables."""
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
        checkout(source["url"], source["ref"], source["commitId"], folder, depth, extra, say, machine)
    finally:
        for name in ("repository-key", "known_hosts"):
            (scratch / name).unlink(missing_ok=True)
