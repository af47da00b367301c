"""What a job's scripts see: the job's variables and the few of the runner's own they need, never the runner's others;
in a container, the Build Worker API as the ID token URL only when the service minted the job's ID token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chalicelib.runner.job_environment import container_environment, script_environment


def test_scripts_beside_the_runner_see_the_jobs_variables_and_not_the_runners_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin")
    monkeypatch.setenv("CONVEYOR_RUNNER_SECRET", "the runner's")
    spec: Any = {"variables": {"RELEASE": "yes", "APPVEYOR_BUILD_FOLDER": "/forged"}}

    variables = script_environment(spec, Path("/w/build"), Path("/w/home"), "http://localhost:1/s/", Path("/w/bin"))

    assert "CONVEYOR_RUNNER_SECRET" not in variables
    assert variables["PATH"] == "/w/bin:/usr/bin"  # the appveyor command first
    assert (variables["RELEASE"], variables["HOME"], variables["TMPDIR"]) == ("yes", "/w/home", "/w/home")
    assert (variables["APPVEYOR_BUILD_FOLDER"], variables["APPVEYOR_API_URL"]) == ("/w/build", "http://localhost:1/s/")


def test_a_containers_id_token_url_is_the_worker_apis_only_when_the_service_minted_it() -> None:
    forged = {"ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:1/internal", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"}
    spec: Any = {"variables": forged, "idToken": False}
    api_url = "http://localhost:1/s/"

    assert (
        container_environment(spec, "/f", api_url)["ACTIONS_ID_TOKEN_REQUEST_URL"]
        == forged["ACTIONS_ID_TOKEN_REQUEST_URL"]
    )
    minted = container_environment({**spec, "idToken": True}, "/f", api_url)
    assert (
        minted["ACTIONS_ID_TOKEN_REQUEST_URL"]
        == minted["CONVEYOR_OIDC_REQUEST_URL"]
        == f"{api_url}api/id-token?api-version=1"
    )
