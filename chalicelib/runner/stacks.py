"""appveyor.yml's ``stack:`` and ``services:``, applied in the job's Bash session before ``init``, as AppVeyor's
Ubuntu images apply them: each language's version put first on PATH for the rest of the job (the image's
``__conveyor_stack``, images/ubuntu/session.sh), and each service started inside the job's own container
(``sudo /opt/conveyor/services.sh``, images/ubuntu/services.sh), with AppVeyor's names and credentials.

The entries are read as the service reads them when the build is queued (protocol/stack_entries.py). A service that
does not start fails the job, its own last log lines in the log.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from chalicelib.protocol.stack_entries import read
from chalicelib.runner.run import Run
from chalicelib.runner.scripts import JobFailed

SERVICES_SCRIPT = "/opt/conveyor/services.sh"
PROFILE = Path("/etc/conveyor/session.sh")  # the image's: where it is, the runner runs in Conveyor's image


def apply(run: Run) -> None:
    """Start the job's services, then put its languages' versions on PATH, in its Bash session."""
    config = run.configuration
    stack = read(config["stacks"], config["services"])
    if not (stack.services or stack.languages):
        return
    if run.container is None and not PROFILE.is_file():  # a build agent's machine: the service warned, as said
        run.say("stack: and services: are this machine's own business: it is not Conveyor's image.")
        return
    if stack.services:
        run.say(f"Starting services: {', '.join(stack.services)}")
        if stack.versioned:
            run.say(f"This image has one release of each service: {', '.join(stack.versioned)} get it.")
        _run(run, f"sudo -n {SERVICES_SCRIPT} {' '.join(map(shlex.quote, stack.services))}", "services")
    for language, version in stack.languages:
        run.say(f"stack: {language} {version}")
        _run(run, f"__conveyor_stack {shlex.quote(language)} {shlex.quote(version)}", f"stack: {language} {version}")


def _run(run: Run, command: str, what: str) -> None:
    outcome = run.session.run(command, run.variables, run.should_stop)
    if outcome.succeeded:
        return
    if run.stop_reason is not None:
        raise JobFailed(f"The job was stopped while setting up {what}: {run.stop_reason}.")
    message = f"{what} could not be set up (exit code {outcome.exit_code}): the job's log says why."
    if outcome.exit_code is None:
        message = f"{what} could not be set up: {outcome.stopped}"
    run.messages.append(message)
    run.say(message)
    raise JobFailed(message)
