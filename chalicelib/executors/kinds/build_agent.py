"""Build agents: ``conveyor agent --builds`` on the team's own machines, Linux or Windows (runner/windows/), take
the jobs of the images they are registered for (domain/execution/build_agents.py). The service starts nothing: a
job waits in its image's partition until an agent takes it, and runs on a machine its owner set up.
"""

from __future__ import annotations

from chalicelib.core.jobs import Executor, Job
from chalicelib.executors.kind import ExecutorKind, Started
from chalicelib.protocol.ticket import Ticket


class BuildAgent(ExecutorKind):
    """The account's build agents: they pull their jobs, on machines that provide what their builds need."""

    name = Executor.AGENT
    pulled = True
    provides_setup = True

    def refusal(self, image: str | None = None) -> str | None:
        """Nothing here runs them: an agent that takes a job can run it."""
        return None

    def start(self, job: Job, ticket: Ticket) -> Started:
        """Never: an agent takes its job, and its ticket, itself."""
        raise TypeError("A build agent's job is taken by the agent, not started by the service.")

    def runner_warnings(self, job: Job) -> list[str]:
        """The team's machine it runs on (an agent may take an image the service runs too)."""
        return [f"Running on build agent {job.agent}."] if job.agent else []


BUILD_AGENT = BuildAgent()
