"""A build agent: a machine of the team's own that runs the account's build jobs of the images it serves."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True, repr=False)
class BuildAgent(FieldsRepr):
    account_id: int
    agent_id: int
    name: str
    images: list[str]  # AppVeyor image names (or any name) whose jobs it takes, as registered
    key_hash: str  # SHA-256 of its key: the key itself is shown once, when the agent is registered
    created: datetime
    last_contact: datetime | None = None
    job_id: str | None = None  # the job it took last
    pull_requests: bool = False  # whether it takes pull request builds (code of anyone who can open one)
