"""An environment's add and update bodies: no IO."""

from __future__ import annotations

import pytest

from chalicelib.domain.deployments.environments import EnvironmentInput
from chalicelib.errors import Invalid
from chalicelib.wire.environments import parse_environment_add, parse_environment_update

SETTINGS = {"providerSettings": [{"name": "bucket", "value": {"value": "b"}}], "environmentVariables": []}


def test_an_add_reads_name_provider_and_settings() -> None:
    added = parse_environment_add({"name": "production", "provider": "S3", "settings": SETTINGS})

    assert added == EnvironmentInput("production", "S3", SETTINGS["providerSettings"], [])


def test_an_update_takes_the_provider_inside_settings_over_the_one_beside_them() -> None:
    body = {"deploymentEnvironmentId": 5, "name": "p", "provider": "FTP", "settings": {**SETTINGS, "provider": "S3"}}

    environment_id, update = parse_environment_update(body)

    assert (environment_id, update.provider) == (5, "S3")
    assert parse_environment_update({**body, "settings": SETTINGS})[1].provider == "FTP"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (None, "settings is required"),
        ([], "settings must be an object"),
        ({"providerSettings": []}, "settings.environmentVariables is required"),
    ],
)
def test_settings_missing_or_incomplete_are_refused_naming_the_field(settings: object, message: str) -> None:
    with pytest.raises(Invalid, match=message):
        parse_environment_add({"name": "production", "provider": "S3", "settings": settings})
