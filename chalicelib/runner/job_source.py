"""The job's source: the repository's credentials, taken once and held by this process alone, and the commit fetched
with them (or by clone_script, which gets none of them)."""

from __future__ import annotations

import ctypes
import sys

from chalicelib.protocol.job_spec import JobSpec
from chalicelib.runner.beneath import NotAFolder, pin
from chalicelib.runner.protocol import JobClient, ProtocolError
from chalicelib.runner.run import Credentials, Run, SshKey
from chalicelib.runner.scripts import JobFailed, run_phase


def take_clone_credentials(client: JobClient, spec: JobSpec) -> Credentials | None:
    """Take the repository's credentials before any script runs (the service hands them once), keep them in this
    process only, and mask the password. Scripts run as this process's user: it makes itself non-dumpable first,
    so they cannot read its memory (/proc/<pid>/mem, ptrace)."""
    not_dumpable()
    if not spec["source"]["credentials"] or spec["configuration"]["cloneScripts"]:
        return None  # a public repository, or clone_script fetches it: the credentials are never taken
    try:
        taken = client.clone_credentials()
    except ProtocolError as error:
        spec["warnings"].append(f"The repository's credentials could not be taken: {error}")
        return None
    if taken.get("sshPrivateKey"):
        spec["secrets"] = [*spec["secrets"], str(taken["sshPrivateKey"])]
        return SshKey(str(taken["sshPrivateKey"]), taken.get("sshHostKey"))
    # an old clone URL's https://TOKEN@host/ has the token as its user name and no password: then it is the secret
    spec["secrets"] = [*spec["secrets"], str(taken["password"] or taken["username"])]
    return (str(taken["username"]), str(taken["password"]))


def not_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0) on Linux: /proc/<pid>/mem, environ and ptrace of this process are root's only."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # 4: PR_SET_DUMPABLE


def clone(run: Run) -> None:
    """Fetch the job's commit into its build folder (or run its clone_script), with the credentials taken."""
    config = run.configuration
    if config["cloneFolder"] and run.windows is None:  # on Windows it is the build folder, or its log said why not
        run.say(
            f"clone_folder is not used on this runner; the build folder is {run.variables['APPVEYOR_BUILD_FOLDER']}."
        )
    clone_scripts = config["cloneScripts"]
    if clone_scripts:
        if run.spec["source"]["credentials"]:
            run.say("clone_script fetches the repository: the project's clone credentials are not given to scripts.")
        run_phase(run, "clone_script", clone_scripts)
        return
    if run.windows is not None:
        _clone_with_git_for_windows(run)
        return
    from chalicelib.scm import git  # dulwich loads only where a job clones
    from chalicelib.scm.git_remote import SourceError
    from chalicelib.scm.transport import SshAccess

    source = run.spec["source"]
    sha, ref, depth = source["commitId"], source["ref"], source["depth"]
    credentials, run.credentials = run.credentials, None  # used once, then dropped
    ssh = SshAccess(credentials.private_key, credentials.host_key) if isinstance(credentials, SshKey) else None
    run.say(f"Fetching commit {sha[:8]} of {ref}" + (f" (depth {depth})" if depth else ""))
    try:
        with pin(run.work, run.folder) as root:  # init's background processes may have swapped it for a link
            git.checkout(
                source["url"],
                ref,
                sha,
                root.path,
                depth=int(depth) if depth else None,
                credentials=credentials if isinstance(credentials, tuple) else None,
                ssh=ssh,
            )
    except NotAFolder as error:
        message = f"The source was not fetched: {error}."
        run.say(message)
        raise JobFailed(message) from error
    except SourceError as error:
        run.say(str(error))
        raise JobFailed(str(error)) from error


def _clone_with_git_for_windows(run: Run) -> None:
    """On a Windows build agent: the machine's Git for Windows fetches the commit (runner/windows/git.py)."""
    from chalicelib.runner.windows.git import GitFailed, fetch_source

    source = run.spec["source"]
    credentials, run.credentials = run.credentials, None  # used once, then dropped
    key = (credentials.private_key, credentials.host_key) if isinstance(credentials, SshKey) else None
    depth = f" (depth {source['depth']})" if source["depth"] else ""
    run.say(f"Fetching commit {source['commitId'][:8]} of {source['ref']}{depth} with git")
    login = credentials if isinstance(credentials, tuple) else None
    try:
        # the agent's environment, not the job's variables: a pull request's appveyor.yml writes those
        fetch_source(source, login, key, run.folder, run.work / "git", run.say)
    except GitFailed as error:
        run.say(str(error))
        raise JobFailed(str(error)) from error
