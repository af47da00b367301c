"""Where each job of a build runs, decided when the build is queued (executors/images.py has the table).

A job is placed on an executor and keeps it; one routed to build agents waits in its image's partition, saying
what it waits for; one no executor serves fails at once, naming its image and what is on offer, and never runs
anywhere else (a Windows job run on Linux could report success for scripts that never ran).
"""

from __future__ import annotations

from dataclasses import replace

from chalicelib.config import settings
from chalicelib.core.build_agents import BuildAgent
from chalicelib.core.jobs import Job, JobCounts, MoveFields
from chalicelib.core.status import Event
from chalicelib.domain.execution import build_agents, progress
from chalicelib.errors import Invalid
from chalicelib.executors import kinds
from chalicelib.executors.images import DEFAULT_IMAGE, MAX_IMAGE_LENGTH, NoExecutor, route
from chalicelib.store import blobs, logs, reports


def check_images(images: list[str | None]) -> None:
    """Refuse, before anything is stored, an image name no executor could take: too long to be one (it would be
    quoted in the job's messages and partition)."""
    for image in images:
        if image is not None and len(image) > MAX_IMAGE_LENGTH:
            raise Invalid(f"An image name is at most {MAX_IMAGE_LENGTH} characters; one has {len(image)}.")


def place(jobs: list[Job], pull_request: bool) -> tuple[list[Job], dict[str, str]]:
    """The jobs with their executor (and, for build agents, what they wait for); and why each job no executor
    serves cannot run, by job id. A pull request build (``pull_request``: or one started with variables by a caller
    who may not update the project) goes only to agents that take pull requests."""
    images = [job.spec.get("image") for job in jobs]
    named = any(image and str(image).strip().casefold() != DEFAULT_IMAGE.casefold() for image in images)
    agents = build_agents.account_agents(jobs[0].account_id) if named and jobs else []  # one query
    takers = build_agents.takers(agents, pull_request)
    agent_images = build_agents.images_served(takers)
    codebuild = settings().codebuild_project is not None
    local = settings().executor == "local" and settings().containers != "off"
    placed, refused = [], {}
    for job, image in zip(jobs, images, strict=True):
        try:
            where = route(image, agent_images, codebuild, local, settings().image_repository)
        except NoExecutor as refusal:
            refused[job.job_id] = str(refusal) + _no_pull_requests(str(image), agents, pull_request)
            placed.append(job)
            continue
        message = job.message
        if kinds.of(where.executor).pulled and where.image is not None:
            message = build_agents.waiting_message(where.image, takers)
        placed.append(replace(job, executor=where.executor, run_on=where.image, message=message))
    return placed, refused


def outside_image(job: Job) -> str | None:
    """Where a placed job runs when that is not Conveyor's Ubuntu image, which alone applies stack: and services:
    (images/ubuntu/); None when it is."""
    return kinds.of(job.executor).outside_image(job)


def provides_setup(job: Job) -> bool:
    """Whether a placed job's machine provides what appveyor.yml's refused settings ask itself (a build agent's)."""
    return kinds.of(job.executor).provides_setup


def _no_pull_requests(image: str, agents: list[BuildAgent], pull_request: bool) -> str:
    """What a pull request build's refusal adds when agents of its image take no pull requests."""
    if pull_request and image.casefold() in map(str.casefold, build_agents.images_served(agents)):
        return (
            f" The build agents for '{image}' take no pull request builds, nor builds started with variables by "
            'someone who may not change the project\'s settings (register one with "pullRequests": true where the '
            "code of anyone who can open one may run)."
        )
    return ""


def refuse(job: Job, reason: str) -> None:
    """The job cannot run here: it fails at once, and its log (its first line, written before it fails so that
    no reader finds it failed with an empty log), its ``message`` and its messages say why."""
    logs.write_log(blobs.prefix_of(job), f"{reason}\n".encode())
    reports.add_reports(job.job_id, [(reports.MESSAGE, {"message": reason, "category": "error"})])
    progress.move(job, Event.FAIL, MoveFields(message=reason, counts=JobCounts(messages=1)))
    progress.refresh(job)
