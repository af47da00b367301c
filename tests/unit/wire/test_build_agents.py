"""A build agent as the API shows it, and its registration's body: no IO."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.core.build_agents import BuildAgent
from chalicelib.domain.execution.build_agents import NewAgent
from chalicelib.errors import Invalid
from chalicelib.protocol.ticket import Ticket
from chalicelib.wire.build_agents import agent_json, new_agent_json, parse_registration, ticket_json

CREATED = datetime(2026, 11, 1, tzinfo=UTC)


def agent(last_contact: datetime | None = None) -> BuildAgent:
    return BuildAgent(1, 7, "win-01", ["Ubuntu"], "0" * 64, CREATED, last_contact=last_contact)


def test_an_agent_heard_from_just_now_is_connected_and_one_never_heard_from_is_not() -> None:
    heard = agent_json(agent(last_contact=datetime.now(UTC) - timedelta(seconds=5)))
    silent = agent_json(agent())

    assert (heard["connected"], silent["connected"]) == (True, False)
    assert silent["lastContact"] is None and silent["created"] == "2026-11-01T00:00:00.0000000+00:00"
    assert "key" not in heard and "keyHash" not in heard  # the key is shown once, at registration


def test_a_new_agent_is_shown_with_its_key() -> None:
    shown = new_agent_json(NewAgent(agent(), "k3y"))

    assert (shown["key"], shown["name"], shown["images"]) == ("k3y", "win-01", ["Ubuntu"])


def test_a_registration_reads_name_images_and_pull_requests_and_refuses_images_that_are_not_names() -> None:
    body = {"name": "win-01", "images": ["Visual Studio 2022"], "pullRequests": True}

    assert parse_registration(body) == ("win-01", ["Visual Studio 2022"], True)
    with pytest.raises(Invalid, match="images must be an array of image names"):
        parse_registration({"name": "win-01", "images": [3]})


def test_a_runner_is_handed_its_ticket_and_nothing_else() -> None:
    ticket = Ticket("https://ci.example/api/runner", "job-1", "t0ken", warnings=("[agent]",))

    assert ticket_json(ticket) == {"apiUrl": "https://ci.example/api/runner", "jobId": "job-1", "token": "t0ken"}
