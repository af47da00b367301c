"""The job's shell as the build cache reaches it for entries outside the build folder: the job's own shell, with the
job's variables, and an exchange folder beside the build folder that the runner made."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.job_cache import job_shell
from chalicelib.runner.outside_cache import EXCHANGE
from tests.unit.runner.runs import Log, new_run


def test_the_cache_runs_commands_in_the_jobs_shell_with_an_exchange_folder_beside_the_build_folder(
    tmp_path: Path,
) -> None:
    (tmp_path / "build").mkdir()
    run = new_run(tmp_path / "build", Log())
    run.variables["HOME"] = str(tmp_path / "home")
    try:
        shell = job_shell(run)
        ran = shell.run(f"echo $HOME > {tmp_path}/seen")
    finally:
        run.session.close()

    assert (shell.folder, shell.inside, shell.base) == (tmp_path / EXCHANGE, str(tmp_path / EXCHANGE), tmp_path)
    assert shell.home == str(tmp_path / "home")
    assert ran is True and (tmp_path / "seen").read_text().strip() == str(tmp_path / "home")
