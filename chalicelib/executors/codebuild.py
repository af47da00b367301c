"""The CodeBuild executor: one CodeBuild build per job, in the job's container image, on the stage's project.

The build gets the job's ticket as its one environment variable and a buildspec (``BUILDSPEC``) that fetches
the runner from the service with that ticket and runs it: the same runner program and job protocol as every
executor. The project's role (infra/template.py) grants nothing but its own logs, so a build holds no credential
of value. A CodeBuild build that ends or stalls before its runner reports is noticed when the job's lease runs
out (``starting``): the job then fails with what CodeBuild says.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import aws
from chalicelib.protocol.ticket import Ticket

log = logging.getLogger(__name__)
TICKET_VARIABLE = "CONVEYOR_TICKET"
COMPUTE_TYPE = "BUILD_GENERAL1_SMALL"  # 2 vCPU, 4 GiB: CodeBuild's cheapest Linux container
MIN_TIMEOUT_MINUTES, MAX_TIMEOUT_MINUTES = 5, 2160  # what StartBuild accepts
QUEUED_TIMEOUT_MINUTES = 60  # a build CodeBuild has not started by then is dropped, and its job fails
FINISH_MINUTES = 2  # beyond the job's own limit: the runner reports a job that reached it (log, artifacts)
# CodeBuild's phases before the buildspec's commands run: a job whose build is still in one is starting, not lost
_STARTING_PHASES = frozenset({"SUBMITTED", "QUEUED", "PROVISIONING", "DOWNLOAD_SOURCE", "INSTALL", "PRE_BUILD"})

# What the build runs: fetch the runner with the ticket (the job protocol's /runner, a zip of the runner's code),
# install its libraries unless the image has them, then run it with the ticket on standard input and not in its
# environment. The image needs Python 3.11 or later; one without says so in the job's CodeBuild log.
RUN_COMMANDS = r"""set -eu
if ! command -v python3 >/dev/null 2>&1; then
  echo "Conveyor: this image has no python3; its runner needs Python 3.11 or later." >&2
  exit 3
fi
folder="$(mktemp -d)"
python3 - "$folder/runner.zip" <<'FETCH'
import json, os, sys, urllib.request
if sys.version_info < (3, 11):
    sys.exit("Conveyor: this image's python3 is %d.%d; the runner needs Python 3.11 or later." % sys.version_info[:2])
ticket = json.loads(os.environ["CONVEYOR_TICKET"])
request = urllib.request.Request(
    ticket["apiUrl"] + "/api/runner/jobs/" + ticket["jobId"] + "/runner",
    headers={"Authorization": "Bearer " + ticket["token"], "Accept": "application/zip"},
)
with urllib.request.urlopen(request, timeout=120) as answer, open(sys.argv[1], "wb") as file:
    file.write(answer.read())
FETCH
if ! python3 "$folder/runner.zip" --check; then
  python3 "$folder/runner.zip" --requirements > "$folder/requirements.txt"
  python3 -m pip install --quiet --disable-pip-version-check --target "$folder/site" -r "$folder/requirements.txt"
fi
printf '%s' "$CONVEYOR_TICKET" | env -u CONVEYOR_TICKET python3 "$folder/runner.zip"
"""
BUILDSPEC = "version: 0.2\nphases:\n  build:\n    commands:\n      - |\n" + "".join(
    f"        {line}\n" if line else "\n" for line in RUN_COMMANDS.splitlines()
)


class StartRefused(Exception):
    """CodeBuild would not start the build; the message says what it answered."""


@dataclass(frozen=True)
class BuildState:
    """What CodeBuild says of a build: its status (IN_PROGRESS, SUCCEEDED, FAILED, FAULT, TIMED_OUT, STOPPED) and
    its current phase."""

    status: str
    phase: str

    @property
    def starting(self) -> bool:
        """Still on its way to running the runner: queued, provisioning, pulling the image."""
        return self.status == "IN_PROGRESS" and self.phase in _STARTING_PHASES


def start(ticket: Ticket, project: str, image: str, timeout_seconds: int, attempt: int) -> str:
    """Start the job's build on ``project`` in ``image``; its CodeBuild build id."""
    minutes = math.ceil(timeout_seconds / 60) + FINISH_MINUTES
    try:
        answer = aws.client("codebuild").start_build(
            projectName=project,
            sourceTypeOverride="NO_SOURCE",
            buildspecOverride=BUILDSPEC,
            imageOverride=image,
            environmentTypeOverride="LINUX_CONTAINER",
            computeTypeOverride=COMPUTE_TYPE,
            privilegedModeOverride=False,
            timeoutInMinutesOverride=max(MIN_TIMEOUT_MINUTES, min(MAX_TIMEOUT_MINUTES, minutes)),
            queuedTimeoutInMinutesOverride=QUEUED_TIMEOUT_MINUTES,
            environmentVariablesOverride=[{"name": TICKET_VARIABLE, "value": ticket.to_json(), "type": "PLAINTEXT"}],
            idempotencyToken=f"{ticket.job_id}-{attempt}",
        )
    except (ClientError, BotoCoreError) as error:
        # the whole answer names the account, the project and its role: the service's log has it, the job its code
        log.error("job %s: StartBuild failed: %s", ticket.job_id, error)
        code = error.response.get("Error", {}).get("Code") if isinstance(error, ClientError) else type(error).__name__
        raise StartRefused(
            f"AWS CodeBuild did not start the job's build ({code}); the service's log says more."
        ) from error
    return str(answer["build"]["id"])


class Unavailable(Exception):
    """CodeBuild could not be asked (throttled, unreachable); the message says what it answered."""


def stop(build_id: str) -> None:
    """Stop the build (a build that has ended already stays as it ended)."""
    try:
        aws.client("codebuild").stop_build(id=build_id)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "InvalidInputException":  # it had ended
            raise Unavailable(f"AWS CodeBuild did not stop build {build_id}: {error}") from error
    except BotoCoreError as error:
        raise Unavailable(f"AWS CodeBuild did not stop build {build_id}: {error}") from error


def state(build_id: str) -> BuildState | None:
    """The build's status and phase; None when CodeBuild does not know it."""
    try:
        builds = aws.client("codebuild").batch_get_builds(ids=[build_id]).get("builds") or []
    except (ClientError, BotoCoreError) as error:
        raise Unavailable(f"AWS CodeBuild did not say how build {build_id} is: {error}") from error
    if not builds:
        return None
    return BuildState(str(builds[0].get("buildStatus", "")), str(builds[0].get("currentPhase", "")))


def lost_reason(build_id: str) -> str | None:
    """Why the build of a job whose runner went silent is lost (stopped, if it still ran); None while CodeBuild is
    still starting it (queueing, provisioning, pulling the image: the runner has not run yet)."""
    found = state(build_id)
    if found is None:
        return f"AWS CodeBuild no longer knows the job's build {build_id}."
    if found.starting:
        return None
    if found.status == "IN_PROGRESS":
        stop(build_id)
        return f"The job's runner on CodeBuild (build {build_id}) stopped responding; the build was stopped."
    return (
        f"The job's CodeBuild build {build_id} ended {found.status} in its {found.phase} phase before its runner "
        "reported; its CodeBuild log says why (an image that cannot be pulled, or has no Python 3.11+)."
    )


def outlived(started: float, timeout_seconds: int, now: float) -> bool:
    """Whether a build started at ``started`` (epoch seconds) would have been ended by CodeBuild itself by ``now``:
    its queued timeout, then the job's limit, have passed."""
    return now > started + QUEUED_TIMEOUT_MINUTES * 60 + timeout_seconds + FINISH_MINUTES * 60
