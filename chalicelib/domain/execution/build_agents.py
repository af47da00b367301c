"""Build agents: the team's own machines running the account's build jobs of the images they serve.

An account admin registers an agent with the images it serves (``POST /api/build-agents``) and gets its key once;
``conveyor agent --builds`` on that machine asks for work with the key. A job routed to agents (executors/images.py)
waits in its image's partition until an agent of the account takes it: the claim is the same conditional write as
every executor's, and mints the same job token, so the agent's runner speaks the same job protocol. The key lets an
agent take jobs and nothing more: it reads no project, build or secret through the API.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chalicelib.config import settings
from chalicelib.core.build_agents import BuildAgent
from chalicelib.core.jobs import Job
from chalicelib.core.status import Status
from chalicelib.domain.execution import job_slots, progress
from chalicelib.domain.job_identity.job_tokens import keys_of, mint_token
from chalicelib.domain.shared.validation import invalid, valid_name
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Conflict, NotFound, Unauthorized
from chalicelib.executors import kinds
from chalicelib.executors.images import DEFAULT_IMAGE, runs_in_cloud
from chalicelib.protocol.ticket import Ticket
from chalicelib.store import build_agents as store
from chalicelib.store import counters, job_moves
from chalicelib.store import jobs as job_store

KEY_PREFIX = "cvya_"
MAX_IMAGES = 20
MAX_IMAGE_LENGTH = 100
CONNECTED_SECONDS = 60  # an agent heard from this recently is connected (it asks for work every few seconds)
CONTACT_WRITE_SECONDS = 15  # an agent's contact is written at most this often: well within CONNECTED_SECONDS
# Waiting jobs one request for work looks at in each partition: the jobs of projects running all their max_jobs
# allows are held back as it passes them, so the next request starts past those it could not reach.
MAX_JOBS_LOOKED_AT = 500
AGENT_NOT_FOUND = "Build agent not found."


@dataclass(frozen=True)
class NewAgent:
    agent: BuildAgent
    key: str  # shown once, in the response that registers the agent


def register(caller: Caller, name: str, images: list[str], pull_requests: bool = False) -> NewAgent:
    """A new build agent of the caller's account, serving ``images`` (and pull request builds, with
    ``pull_requests``), with a fresh key."""
    name = valid_name(name, "name")
    if not images:
        raise invalid("images", "images must name at least one image the agent serves.")
    if len(images) > MAX_IMAGES:
        raise invalid("images", f"An agent serves at most {MAX_IMAGES} images.")
    names = [valid_name(image, "images", MAX_IMAGE_LENGTH) for image in images]
    if any(image.casefold() == DEFAULT_IMAGE.casefold() for image in names):
        raise invalid("images", f"{DEFAULT_IMAGE} is the service's own runner's image: name the agent's image apart.")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    agent = BuildAgent(
        account_id=caller.account_id,
        agent_id=counters.next_value(counters.BUILD_AGENTS),
        name=name,
        images=list(dict.fromkeys(names)),
        key_hash=_hash(key),
        created=datetime.now(UTC),
        pull_requests=pull_requests,
    )
    store.add_agent(agent)
    return NewAgent(agent, key)


def taken_from_service(agent: BuildAgent) -> list[str]:
    """The agent's images the service would run itself (on AWS CodeBuild) but for it: the agent takes their jobs
    from the service's runners, with their secure variables."""
    return [image for image in agent.images if runs_in_cloud(image)]


def list_agents(caller: Caller) -> list[BuildAgent]:
    """The caller's account's build agents."""
    return store.list_agents(caller.account_id)


def delete(caller: Caller, agent_id: int) -> None:
    """Remove an agent: its key stops working (a job it runs goes on with its own job token, until it ends)."""
    if not store.delete_agent(caller.account_id, agent_id):
        raise NotFound(AGENT_NOT_FOUND)


def is_connected(agent: BuildAgent, now: datetime | None = None) -> bool:
    """Whether the agent asked for work (or said it is busy) within the last CONNECTED_SECONDS."""
    if agent.last_contact is None:
        return False
    return (now or datetime.now(UTC)) - agent.last_contact <= timedelta(seconds=CONNECTED_SECONDS)


def account_agents(account_id: int) -> list[BuildAgent]:
    """The account's build agents, for routing its jobs."""
    return store.list_agents(account_id)


def takers(agents: list[BuildAgent], pull_request: bool) -> list[BuildAgent]:
    """The agents that take a build's jobs: for a pull request's, only those registered to take pull requests."""
    return [agent for agent in agents if agent.pull_requests or not pull_request]


def images_served(agents: list[BuildAgent]) -> list[str]:
    """Every image one of ``agents`` serves."""
    return list(dict.fromkeys(image for agent in agents for image in agent.images))


def agent_of(authorization: str | None) -> BuildAgent:
    """The build agent whose key the request carries (``Authorization: Bearer <key>``)."""
    scheme, _, key = (authorization or "").partition(" ")
    key = key.strip()
    agent = (
        store.get_agent_by_key_hash(_hash(key)) if scheme.lower() == "bearer" and key.startswith(KEY_PREFIX) else None
    )
    if agent is None:  # as every key the service does not know (a deleted agent's among them)
        raise Unauthorized()
    return agent


def next_job(agent: BuildAgent, sandboxed: bool = False, windows: bool = False) -> Ticket | None:
    """Claim a waiting job of an image the agent serves (the oldest of the first of its images that has one; a pull
    request's only if it takes them and runs jobs in a sandbox, where they cannot read its key, or is a Windows agent,
    where no sandbox exists and registering it with "pullRequests": true is the team's choice; one its project's
    max_jobs lets start): its ticket, or None when none waits."""
    api_url = settings().runner_api_url
    if api_url is None:
        raise Conflict("Builds cannot run: the service does not know its URL for runners (CONVEYOR_RUNNER_API_URL).")
    kinds = (False, True) if agent.pull_requests and (sandboxed or windows) else (False,)
    partitions = [job_store.agent_partition(agent.account_id, image, kind) for image in agent.images for kind in kinds]
    full: dict[int, int] = {}  # max_jobs: per project, the largest limit its jobs found no slot free under
    for partition in partitions:
        for listed in itertools.islice(job_store.queued_in(partition, _now() + 1), MAX_JOBS_LOOKED_AT):
            limit = job_slots.limit_of(listed)
            if limit is not None and limit <= full.get(listed.project_id, 0):
                job_slots.wait(listed, limit)  # its project runs all it may: out of the way of other projects'
                continue
            job = job_store.get_job(listed.job_id)
            if job is None or not _waits_for(job, agent):  # the index lags the table a moment
                continue
            if not job_slots.admit(job):  # held back, as the rest of its project's under its limit will be
                full[job.project_id] = max(job_slots.limit_of(job) or 0, full.get(job.project_id, 0))
                continue
            token = mint_token(keys_of(job))  # its spec and finish read build and project with the job
            if not job_moves.claim_job(job.job_id, _now() + settings().lease_seconds, token.token_hash):
                continue  # another agent won it, or it was cancelled
            job_store.note_build_agent(job.job_id, agent.name)
            store.note_contact(agent, job.job_id)
            progress.refresh_build(job.project_id, job.build_id)
            return Ticket(api_url, job.job_id, token.token)
    _heard_from(agent)
    return None


def busy(agent: BuildAgent) -> None:
    """The agent is running a job (its runner keeps the job's lease): it is connected."""
    _heard_from(agent)


def _heard_from(agent: BuildAgent) -> None:
    """Note the contact, unless one was noted moments ago: an idle agent asks every few seconds, and a write each
    time would cost more than the lists showing it need."""
    if agent.last_contact is None or datetime.now(UTC) - agent.last_contact > timedelta(seconds=CONTACT_WRITE_SECONDS):
        store.note_contact(agent)


def waiting_message(image: str, agents: list[BuildAgent]) -> str:
    """What a job routed to build agents (``agents``: the account's) says while it waits."""
    agents = [agent for agent in agents if image.casefold() in map(str.casefold, agent.images)]
    connected = [agent.name for agent in agents if is_connected(agent)]
    if connected:
        return f"Waiting for a build agent that serves the image '{image}' ({', '.join(connected)} connected)."
    return (
        f"Waiting for a build agent that serves the image '{image}': none is connected. It starts when one of "
        f"{', '.join(agent.name for agent in agents) or 'its agents'} runs `conveyor agent --builds`."
    )


def _waits_for(job: Job, agent: BuildAgent) -> bool:
    """Whether the job, as read now, is still queued for an agent of this one's account and images."""
    images = {image.casefold() for image in agent.images}
    return (
        job.status == Status.QUEUED
        and job.account_id == agent.account_id
        and kinds.of(job.executor).pulled
        and (job.run_on or "").casefold() in images
    )


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _now() -> int:
    return int(time.time())
