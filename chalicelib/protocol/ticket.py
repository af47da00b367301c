"""A runner's ticket: what an executor hands a runner to run one job, and all it is handed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ticket:
    """What a runner is handed to run one job, and all it is handed."""

    api_url: str
    job_id: str
    token: str
    warnings: tuple[str, ...] = ()  # what the executor wants every line of the log to start with
    # the job's container, where the container executor runs its scripts (runner/container.py): the job's folder
    # on this side and the descriptors of the container's shell; None: the scripts run beside the runner
    container: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, text: str | bytes) -> Ticket:
        data = json.loads(text)
        return cls(
            api_url=str(data["apiUrl"]).rstrip("/"),
            job_id=str(data["jobId"]),
            token=str(data["token"]),
            warnings=tuple(str(line) for line in data.get("warnings") or ()),
            container=dict(data["container"]) if data.get("container") else None,
        )

    def to_json(self) -> str:
        fields: dict[str, Any] = {
            "apiUrl": self.api_url,
            "jobId": self.job_id,
            "token": self.token,
            "warnings": list(self.warnings),
        }
        if self.container is not None:
            fields["container"] = self.container
        return json.dumps(fields)
