"""A phase's scripts, as AppVeyor runs them: each command in the job's Bash session (or its PowerShell), the first
that fails failing the job, and AppVeyor's ending rules (``exit 0``, ``exit N``, ``appveyor exit``)."""

from __future__ import annotations

from typing import Any

from chalicelib.runner import powershell, shell
from chalicelib.runner.run import Run


class JobFailed(Exception):
    """A phase failed; the message says where and why (``phase``: the phase whose script failed, if one did)."""

    def __init__(self, message: str, phase: str | None = None) -> None:
        super().__init__(message)
        self.phase = phase


class JobEnded(Exception):
    """A command ended the job's shell (``exit N``): the job ends at once, nothing more runs."""

    def __init__(self, succeeded: bool, message: str | None) -> None:
        super().__init__(message)
        self.succeeded, self.message = succeeded, message


class ExitRequested(Exception):
    """``appveyor exit``: the job skips to on_success and on_finish."""


_LAST_PHASES = ("on_success", "on_failure", "on_finish")  # ``appveyor exit`` there ends only the phase


def run_phase(run: Run, phase: str, scripts: list[dict[str, Any]], may_fail: bool = False) -> None:
    """Run a phase's scripts in order; the first that fails fails the job (unless ``may_fail``)."""
    if not scripts or (may_fail and run.stop_reason is not None):
        return
    run.say(f"Running {phase} scripts")
    for script in scripts:
        for line in str(script.get("script") or "").splitlines() or [""]:
            run.say(f"$ {line}")
        outcome = _script(run, script)
        if run.exit_requested and not outcome.ended_shell and run.stop_reason is None:
            run.exit_requested = False
            if phase in _LAST_PHASES:
                return
            raise ExitRequested()
        if run.should_stop() is not None:  # a limit the command went past, even if it succeeded
            raise JobFailed(f"The job was stopped in {phase}: {run.stop_reason}.")
        if outcome.succeeded:
            continue
        if outcome.ended_shell:
            raise _shell_ended(run, phase, outcome.exit_code, may_fail)
        message = f"Command exited with code {outcome.exit_code}" if outcome.exit_code is not None else outcome.stopped
        if may_fail:
            run.say(f"{message} (in {phase}; the job's result stands)")
            continue
        run.messages.append(str(message))
        failure = f"{str(message).rstrip('.')} in {phase}: {as_written(script)}"
        run.say(failure)
        raise JobFailed(failure, phase)


def as_written(script: dict[str, Any], most: int = 200) -> str:
    """The command as the user wrote it, for a failure's message: its first line (``...`` for the rest), its
    ``ps:`` or ``pwsh:`` prefix kept."""
    lines = [line for line in str(script.get("script") or "").splitlines() if line.strip()] or [""]
    text = lines[0].strip() + (" ..." if len(lines) > 1 else "")
    language = str(script.get("language") or "cmd")
    if language in ("ps", "pwsh"):
        text = f"{language}: {text}"
    return text if len(text) <= most else text[: most - 3] + "..."


def _script(run: Run, script: dict[str, Any]) -> shell.Outcome:
    """Run one script in the job's Bash session: Bash lines there, PowerShell in the session's pwsh, which Bash
    starts (runner/powershell.py), in the job's container when it has one."""
    if run.windows is not None:  # a build agent on Windows
        from chalicelib.runner.windows.scripts import run_script

        return run_script(run.windows, script, run.variables, run.should_stop, run.work)
    language, text = str(script.get("language") or "cmd"), str(script.get("script") or "")
    if shell.in_session(script):
        return run.session.run(text, run.variables, run.should_stop)
    if language == "cmd":  # an explicit cmd: line
        run.say("Skipped on Linux: a 'cmd:' script runs on Windows images only (plain lines and 'sh:' run here).")
        return shell.Outcome(0)
    if language not in ("ps", "pwsh"):
        return shell.Outcome(None, f"Scripts in '{language}' cannot run on this runner.")
    if str(run.variables.get("APPVEYOR_YML_DISABLE_PS_LINUX", "")).lower() == "true":
        run.say(f"Skipped on Linux: APPVEYOR_YML_DISABLE_PS_LINUX is true and this is a '{language}:' script.")
        return shell.Outcome(0)
    if not run.has_powershell:  # asked in the job's shell: the image's PATH, or what an earlier script installed
        found = run.session.run(powershell.FOUND, run.variables, run.should_stop)
        run.has_powershell = found.exit_code == 0
    if not run.has_powershell:
        return shell.Outcome(None, powershell.missing(language, run.container is not None))
    command = powershell.command(text, language, "this job")
    return run.session.run(command, run.variables, run.should_stop, setup=powershell.SETUP)


def _shell_ended(run: Run, phase: str, code: int | None, may_fail: bool) -> JobEnded:
    """AppVeyor's rule for a shell that ends: ``exit 0`` ends the job green at once, ``exit N`` red at once; in
    on_failure and on_finish, whose failures never change the result, it ends the job as it stands."""
    how = f"exited with code {code}" if code is not None and code >= 0 else f"was killed by signal {-(code or 0)}"
    if may_fail:
        run.say(f"The job's shell {how} in {phase}: the job ends here; its result stands.")
        return JobEnded(False, None)  # the job ends as it stands
    if code == 0:
        run.say(
            f"The job's shell exited with code 0 in {phase}: the job ends here as a success (exit 0 skips "
            "on_success and on_finish)."
        )
        return JobEnded(True, None)
    message = f"The job's shell {how} in {phase}: the job ends here as a failure (exit skips on_failure and on_finish)."
    run.say(message)
    return JobEnded(False, message)
