"""The build cache in a job: restored after the clone and saved after a success, by path on a Windows build agent,
else beneath the build folder and, for entries outside it, through the job's own shell (runner/outside_cache.py)."""

from __future__ import annotations

from chalicelib.runner import container as job_container
from chalicelib.runner.cache import restore_cache, save_cache
from chalicelib.runner.outside_cache import EXCHANGE, JobShell
from chalicelib.runner.remote_cache import RemoteCache
from chalicelib.runner.run import Run


def job_shell(run: Run) -> JobShell:
    """The job's shell as the cache reaches it for entries outside the build folder: quiet commands, and a folder
    beside the build folder that both the runner and the shell (in the container, too) reach."""
    folder = run.folder.parent / EXCHANGE
    inside = run.container.inside(folder) if run.container is not None else str(folder)
    home = run.variables.get("HOME") or job_container.HOME

    def quietly(command: str) -> bool:
        return run.session.run(command, run.variables, run.should_stop).exit_code is not None

    return JobShell(home=home, base=run.work, folder=folder, inside=inside, run=quietly)


def restore_job_cache(run: Run, entries: list[str], cache: RemoteCache) -> None:
    """Restore the cache entries before install, where the job's runner reaches them."""
    if run.windows is not None:  # a Windows build agent: by path, entries anywhere on the machine
        from chalicelib.runner.windows import cache as windows_cache

        windows_cache.restore(run.folder, entries, run.variables, cache, run.say)
    else:
        restore_cache(run.folder, entries, cache, run.say, base=run.work, shell=job_shell(run))


def save_job_cache(run: Run, entries: list[str], cache: RemoteCache) -> None:
    """Save the cache entries after a successful job, as its runner reaches them."""
    if run.windows is not None:
        from chalicelib.runner.windows import cache as windows_cache

        windows_cache.save(run.folder, entries, run.variables, cache, run.say)
    else:
        save_cache(run.folder, entries, cache, run.say, base=run.work, shell=job_shell(run))
