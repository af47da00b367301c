"""A build start request's body (JSON or form-encoded) and the artifact permalink's query: no IO."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.core.jobs import JobArtifact
from chalicelib.domain.builds.builds import StartRequest
from chalicelib.domain.builds.job_files import ArtifactQuery
from chalicelib.errors import Invalid
from chalicelib.wire.builds import artifact_json, form_body, parse_artifact_query, parse_start_request, wants_redirect


def test_a_start_request_reads_its_fields_and_its_variables_as_text() -> None:
    body = {"accountName": "acme", "projectSlug": "app", "branch": "main", "environmentVariables": {"N": 3, "B": True}}

    assert parse_start_request(body) == StartRequest(
        "acme", "app", branch="main", environment_variables={"N": "3", "B": "true"}
    )


def test_variables_that_are_not_names_to_values_are_refused() -> None:
    with pytest.raises(Invalid, match="environmentVariables must be an object"):
        parse_start_request({"accountName": "acme", "projectSlug": "app", "environmentVariables": {"N": [1]}})


def test_a_form_encoded_start_request_reads_as_the_json_body_it_stands_for() -> None:
    body = form_body("accountName=acme&projectSlug=app&environmentVariables%5BN%5D=1&branch=")

    assert body == {"accountName": "acme", "projectSlug": "app", "branch": "", "environmentVariables": {"N": "1"}}
    assert parse_start_request(body).branch is None


def test_the_permalink_query_reads_its_flags_and_refuses_other_words() -> None:
    assert parse_artifact_query({"branch": "main", "all": "true", "pr": "false"}) == ArtifactQuery(
        branch="main", all_builds=True, pull_requests=False
    )
    assert (wants_redirect({}), wants_redirect({"redirect": "false"})) == (True, False)
    with pytest.raises(Invalid, match="pr is true or false"):
        parse_artifact_query({"pr": "yes"})


def test_an_artifact_is_shown_with_storages_size_and_a_wire_timestamp() -> None:
    artifact = JobArtifact("bin/app.zip", "app", "Zip", 42, datetime(2026, 1, 2, tzinfo=UTC))

    assert artifact_json(artifact) == {
        "fileName": "bin/app.zip",
        "name": "app",
        "type": "Zip",
        "size": 42,
        "created": "2026-01-02T00:00:00.0000000+00:00",
    }
