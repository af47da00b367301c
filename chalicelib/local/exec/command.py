"""``conveyor exec``: the checkout's appveyor.yml run on this machine, each job as a build runs it (docs/exec.md).

The working tree becomes one commit (local/exec/snapshot.py), appveyor.yml is read for its branch by the domain's
functions (local/exec/plan.py), and each job runs on the local container executor (executors/containers.py): a fresh
container of Conveyor's local image, its runner beside it in the sandbox, the runner talking to an in-process job
protocol (local/exec/service.py) with a token of its own; a Windows job's runner runs under Wine instead, as a
Windows build agent runs it (local/exec/wine.py). The exit status is 0 only when every job that ran passed
(a failure ``matrix: allow_failures`` allows does not count, as on the service); 130 after Ctrl-C, which cancels the
running jobs (their containers are removed as any job's are) and starts no other; so does SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chalicelib.core.os_types import is_windows
from chalicelib.core.status import JobState, Status, build_status
from chalicelib.errors import Invalid
from chalicelib.executors import containers
from chalicelib.local.exec import console as out
from chalicelib.protocol.ticket import Ticket

if TYPE_CHECKING:
    from chalicelib.local.exec.folders import StateFolders
    from chalicelib.local.exec.jobs import ExecJob
    from chalicelib.local.exec.plan import PlannedJob
    from chalicelib.local.exec.snapshot import Snapshot

CONFIG_FILES = ("appveyor.yml", ".appveyor.yml")  # the service's order (scm/git_commits.py)
INTERRUPTED = 130
_GRACE_SECONDS = 120


class ExecError(Exception):
    """exec cannot go on; the message says why and what to do."""


def run_exec(args: argparse.Namespace, folder: Path | None = None) -> int:
    """Run the checkout's jobs; the exit status."""
    probe = None
    if not args.list and _image().joinpath(containers.IMAGE_STAMP).is_file():
        # podman's first container (runtime()'s probe) runs while exec loads, reads the tree and plans the jobs
        probe = threading.Thread(target=containers.runtime, name="container-probe", daemon=True)
        probe.start()
    from chalicelib.local.exec.folders import UnsafeFolder
    from chalicelib.local.exec.snapshot import NotACheckout

    handlers = {}
    if threading.current_thread() is threading.main_thread():  # a kill stops the jobs as Ctrl-C does
        handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    console = out.Console()
    try:
        return _run(args, Path(folder or Path.cwd()), console, probe)
    except KeyboardInterrupt:  # before any job started: nothing to stop
        return INTERRUPTED
    except (ExecError, NotACheckout, UnsafeFolder, Invalid, OSError) as error:
        console.say(f"conveyor exec: {getattr(error, 'message', None) or error}")
        return 2
    finally:
        for number, handler in handlers.items():  # as they were (a second Ctrl-C's is exec's own)
            if handler is not None:
                signal.signal(number, handler)


def _run(args: argparse.Namespace, folder: Path, console: out.Console, probe: threading.Thread | None) -> int:
    from chalicelib.local.exec.snapshot import take

    given = _given(args.variables)
    root = _root(folder)
    text = _configuration_text(root, args.config)
    snapshot = take(root, args.branch, untracked=args.untracked)
    try:
        return _build(args, root, text, snapshot, given, console, probe)
    finally:
        snapshot.close()


def _build(
    args: argparse.Namespace,
    root: Path,
    text: str,
    snapshot: Snapshot,
    given: dict[str, str],
    console: out.Console,
    probe: threading.Thread | None,
) -> int:
    """Plan the jobs of the snapshot's branch and run them (or, with --list, print them)."""
    from chalicelib.local.exec.folders import StateFolders
    from chalicelib.local.exec.jobs import ExecJob
    from chalicelib.local.exec.plan import Checkout, job_spec, plan
    from chalicelib.local.exec.service import LocalService

    checkout = Checkout(
        root.name, snapshot.branch, snapshot.ref, _commit_fields(snapshot), repository=snapshot.origin or root.name
    )
    built = plan(text, checkout, given, cache=args.cache)
    chosen = [job for job in built.jobs if args.job is None or args.job in job.name]
    if not chosen:
        names = "; ".join(job.title for job in built.jobs)
        raise ExecError(f"no job's name contains {args.job!r}. The jobs: {names}")
    if args.list:
        for job in chosen:
            console.say(f"{job.number}. {job.title}" + (f"  ({job.skipped})" if job.skipped else ""))
        return 0
    several = len(chosen) > 1
    changes = "with its uncommitted changes" if snapshot.dirty else "clean"
    console.say(f"Building {root.name} {built.version}, branch {snapshot.branch}: the working tree ({changes}).")
    _say_untracked(snapshot, args.untracked, console)
    for note in built.notes:
        console.say(f"Note: {note}")
    if any(job.skipped is None and not is_windows(job.image) for job in chosen):  # Windows ones run under Wine
        if probe is not None:
            probe.join()  # its answer is kept: runtime() below reads it rather than starting a second probe
        _check_runtime(console)
    state = StateFolders(root)
    stopping = threading.Event()
    with LocalService(snapshot.repository, state, cache=args.cache) as service:
        jobs = [
            ExecJob(job_spec(job, built, checkout, service.source_url, given, args.cache), console,
                    out.prefix_for(job.title, several))
            for job in chosen
        ]  # fmt: skip
        for exec_job in jobs:
            service.add(exec_job)
        work = [(planned, job) for planned, job in zip(chosen, jobs, strict=True)]
        with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
            futures = [
                pool.submit(_run_job, planned, job, service.url, state, stopping, snapshot) for planned, job in work
            ]
            try:
                for future in futures:
                    future.result()
            except KeyboardInterrupt:
                _stop(jobs, stopping, console)
                for future in futures:
                    future.result()
    console.say(out.summary([_row(planned, job) for planned, job in work], str(state.artifacts)))
    if stopping.is_set():
        return INTERRUPTED
    return 0 if _passed(work) else 1


def _run_job(
    planned: PlannedJob, job: ExecJob, url: str, state: StateFolders, stopping: threading.Event, snapshot: Snapshot
) -> None:
    """Run one job in its container (a Windows one under Wine), unless it is skipped or refused, or Ctrl-C came
    first."""
    if stopping.is_set():
        return
    if planned.skipped or planned.refused:
        job.console.say(planned.skipped or str(planned.refused), job.prefix)
        job.result = None if planned.skipped else "failed"
        job.finished.set()
        return
    from chalicelib.local.exec.plan import TIMEOUT_SECONDS

    state.job_folder(job)
    job.started = time.monotonic()
    ticket = Ticket(api_url=url, job_id=job.spec["jobId"], token=job.token)
    if is_windows(planned.image):
        from chalicelib.local.exec import wine

        job.console.say(wine.NOTICE, job.prefix)
        timeout = TIMEOUT_SECONDS + _GRACE_SECONDS
        wine.run_job(
            job.spec,
            snapshot.repository,
            snapshot.commit.tree,
            ticket,
            timeout,
            lambda line: job.console.say(line, job.prefix),
        )
    else:
        containers.run(ticket, TIMEOUT_SECONDS + _GRACE_SECONDS)
    if not job.finished.is_set():  # the runner ended without a word: the job failed, as a lost one does
        job.console.say("The job's runner ended without finishing the job.", job.prefix)
        job.finish({"result": "failed", "message": "The job's runner ended without finishing the job."})


def _say_untracked(snapshot: Snapshot, taken: bool, console: out.Console) -> None:
    """Which untracked files the build takes (with --untracked), or how many it leaves out."""
    count = len(snapshot.untracked)
    files = f"{count} untracked file{'s' if count != 1 else ''} git does not ignore"
    if taken and count:
        console.say(f"Taken into the build (--untracked): {files}:")
        for path in snapshot.untracked:
            console.say(f"  {path}")
    elif count:
        console.say(f"Left out of the build: {files} (conveyor exec --untracked takes them).")


def _stop(jobs: list[ExecJob], stopping: threading.Event, console: out.Console) -> None:
    """Ctrl-C: the running jobs are cancelled (their runners stop them at their next heartbeat, within a second),
    and no other starts; a second Ctrl-C waits as well, so that no container is left behind."""
    stopping.set()
    signal.signal(signal.SIGINT, lambda *_: console.say("conveyor exec: still stopping the jobs..."))
    console.say("conveyor exec: stopping the running jobs and removing their containers...")
    for job in jobs:
        job.cancelling = True


def _check_runtime(console: out.Console) -> None:
    """podman and the local image, built first (``make image``) where it is missing and can be built here."""
    image = _image()
    makefile = containers.PROJECT_DIR / "Makefile"
    if not (image / containers.IMAGE_STAMP).is_file() and image == containers.IMAGE_ROOT:
        if os.geteuid() != 0 or not makefile.is_file() or shutil.which("make") is None:
            raise ExecError(f"the local image is not built: run `make image` as root in {containers.PROJECT_DIR}.")
        console.say(f"The local image is not built: building it now with `make image` in {containers.PROJECT_DIR} "
                    "(once per machine, about 90 s)...")  # fmt: skip
        subprocess.run(["make", "-C", str(containers.PROJECT_DIR), "image"], check=False)
    made = containers.runtime()
    if not isinstance(made, containers.Runtime):
        raise ExecError(f"jobs cannot run in containers here: {made}.")


def _image() -> Path:
    """The local image containers.runtime() runs."""
    return Path(os.environ.get("CONVEYOR_LOCAL_IMAGE") or containers.IMAGE_ROOT)


def _row(planned: PlannedJob, job: ExecJob) -> out.Row:
    status = "skipped" if planned.skipped else job.result or "not run"
    if status == "failed" and planned.allow_failure:
        status = "failed (allowed)"
    passed, failed = job.counts()
    return out.Row(planned.title, status, job.seconds, passed, failed, len(job.artifacts))


def _passed(work: list[tuple[PlannedJob, ExecJob]]) -> bool:
    """Whether the build of the jobs that ran succeeded, by the service's rule (core/status.py build_status): a job
    ``allow_failures`` allows to fail does not fail it, unless every job may fail and one did."""
    ran = [
        JobState(Status(job.result or "failed"), planned.allow_failure) for planned, job in work if not planned.skipped
    ]
    return bool(ran) and build_status(ran) is Status.SUCCESS


def _given(variables: list[str]) -> dict[str, str]:
    given = {}
    for text in variables:
        name, equals, value = text.partition("=")
        if not equals or not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise ExecError(f"-e takes NAME=VALUE, a name of letters, digits and underscores; not {text!r}")
        given[name] = value
    return given


def _root(folder: Path) -> Path:
    from dulwich.repo import Repo

    from chalicelib.local.exec.snapshot import NotACheckout

    try:
        return Path(Repo.discover(str(folder)).path).resolve()
    except Exception as error:  # dulwich's NotGitRepository
        raise NotACheckout(f"{folder} is not in a git checkout: run conveyor exec in a repository's folder.") from error


def _configuration_text(root: Path, config: str | None) -> str:
    """appveyor.yml's text; never a file a link (one a pull request may commit) names elsewhere on this machine."""
    candidates = [Path(config)] if config else [root / name for name in CONFIG_FILES]
    for path in candidates:
        if path.is_symlink():
            raise ExecError(f"{path} is a link: conveyor exec reads the configuration only from a file itself, "
                            "not from what a link names (the service would not follow it either).")  # fmt: skip
        if path.is_file():
            # bytes not UTF-8 read as U+FFFD, as the service reads a repository's appveyor.yml (scm/git_commits.py)
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), encoding="utf-8", errors="replace") as file:
                return file.read()
    raise ExecError(f"{config or 'appveyor.yml or .appveyor.yml'} not found in {root if not config else '.'}")


def _commit_fields(snapshot: Snapshot) -> dict[str, Any]:
    commit = snapshot.commit
    title, _, rest = commit.message.decode(errors="replace").partition("\n")
    author, author_email = _person(commit.author)
    committer, committer_email = _person(commit.committer)
    return {
        "commitId": snapshot.commit_id, "message": title, "messageExtended": rest.strip() or None,
        "authorName": author, "authorEmail": author_email, "committerName": committer,
        "committerEmail": committer_email,
        "committed": datetime.fromtimestamp(commit.commit_time, UTC).isoformat(),
    }  # fmt: skip


def _person(who: bytes) -> tuple[str, str]:
    name, _, email = who.decode(errors="replace").partition("<")
    return name.strip(), email.rstrip(">").strip()
