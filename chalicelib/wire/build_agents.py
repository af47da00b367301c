"""Build agents as the API shows them, and what registers one."""

from __future__ import annotations

from typing import Any

from chalicelib.core.build_agents import BuildAgent
from chalicelib.core.os_types import WINDOWS_IMAGE
from chalicelib.domain.execution.build_agents import NewAgent, is_connected, taken_from_service
from chalicelib.domain.shared.validation import MAX_NAME_LENGTH, invalid
from chalicelib.protocol.ticket import Ticket
from chalicelib.shapes.time import timestamp
from chalicelib.wire.fields import Fields


def agent_json(agent: BuildAgent) -> dict[str, Any]:
    """An agent: the images it serves, when it was last heard from, and whether it is connected now."""
    return {
        "agentId": agent.agent_id,
        "name": agent.name,
        "images": agent.images,
        "created": timestamp(agent.created),
        "lastContact": timestamp(agent.last_contact) if agent.last_contact else None,
        "connected": is_connected(agent),
        "lastJobId": agent.job_id,
        "pullRequests": agent.pull_requests,
        "takesOver": taken_from_service(agent),
    }


def new_agent_json(new: NewAgent) -> dict[str, Any]:
    """A newly registered agent, with its key: shown this once, never again; and a warning if it takes jobs the
    service would run itself, saying which, or serves Windows images, whose jobs run with no sandbox."""
    shape = {**agent_json(new.agent), "key": new.key}
    warnings = []
    taken = taken_from_service(new.agent)
    if taken:
        warnings.append(
            f"Every job of this account with the image {', '.join(taken)} now runs on this agent instead of the "
            "service's own runners (AWS CodeBuild), its secure variables included"
            f"{', pull requests too' if new.agent.pull_requests else ''}. "
            "Delete the agent to give them back."
        )
    windows = [image for image in new.agent.images if WINDOWS_IMAGE.match(image)]
    if windows:
        warnings.append(
            f"On Windows ({', '.join(windows)}) there is no sandbox: jobs run as the agent's user and reach what it "
            "reaches, its key in memory included"
            + (
                ", and this agent takes pull request builds. Run it on a throwaway machine."
                if new.agent.pull_requests
                else '; it takes no pull request builds unless registered with "pullRequests": true.'
            )
            + " So anyone who can run a build on it can read its key and claim the jobs of every image it serves, in"
            " any project of this account, with their secure variables: register it only for an account whose pushers"
            " are trusted with all of its secrets, one agent per throwaway machine."
        )
    if warnings:
        shape["warning"] = " ".join(warnings)
    return shape


def parse_registration(body: Any) -> tuple[str, list[str], bool]:
    """``{"name": "win-01", "images": ["Visual Studio 2022"], "pullRequests": false}``."""
    fields = Fields(body)
    images = fields.array("images")
    if not all(isinstance(image, str) for image in images):
        raise invalid("images", "images must be an array of image names.")
    return fields.text("name", MAX_NAME_LENGTH), images, fields.boolean("pullRequests")


def ticket_json(ticket: Ticket) -> dict[str, Any]:
    """What a build agent's runner is handed: the ticket, as every executor hands it."""
    return {"apiUrl": ticket.api_url, "jobId": ticket.job_id, "token": ticket.token}
