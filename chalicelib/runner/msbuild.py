"""The build phase in MSBuild mode (appveyor.yml's default, ``build:``): on a Windows build agent MSBuild builds,
as on AppVeyor (runner/windows/msbuild.py finds it and writes its command line); a Linux runner has none, and says
it skips the phase."""

from __future__ import annotations

import os

from chalicelib.runner.run import Run
from chalicelib.runner.scripts import JobFailed, run_phase
from chalicelib.runner.windows.msbuild import NOT_FOUND, UnquotableValue, command_line, find

SKIPPED_ON_LINUX = "MSBuild is not available on this Linux runner: the build phase is skipped (use build_script)."


def run_msbuild(run: Run) -> None:
    """MSBuild's command line, run in the build folder as a cmd line of the job's Windows session (which then goes
    on in the folder it was in); JobFailed when there is no MSBuild, or when it fails. On Linux: skipped, saying so."""
    session = run.windows
    if session is None:
        run.say(SKIPPED_ON_LINUX)
        return
    msbuild = find(session.apply(run.variables), os.environ)
    if msbuild is None:
        run.say(NOT_FOUND)
        raise JobFailed(NOT_FOUND, "build")
    try:
        line = command_line(msbuild, run.configuration, run.variables)
    except UnquotableValue as error:
        message = f"MSBuild's command line cannot be written: {error}."
        run.say(message)
        raise JobFailed(message, "build") from error
    # the line doubles % for the batch file it runs in, and the log echoes it so: a secret is masked in that form too
    run.log.add_secrets(*(secret.replace("%", "%%") for secret in run.spec.get("secrets", []) if "%" in secret))
    run.say(f"Building with MSBuild ({msbuild.found}) in {run.folder}")
    where, session.cwd = session.cwd, str(run.folder)
    try:
        run_phase(run, "build", [{"language": "cmd", "script": line}])
    finally:
        session.cwd = where
