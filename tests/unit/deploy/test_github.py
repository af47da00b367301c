"""Where the GitHub provider makes its releases: github.com's API, or a GitHub Enterprise server's. No IO."""

from __future__ import annotations

import pytest

from chalicelib.deploy.github import PUBLIC_API, api_url


def test_releases_go_to_githubs_api_unless_the_service_names_another_github(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVEYOR_GITHUB_API_URL", "CONVEYOR_GITHUB_URL"):
        monkeypatch.delenv(name, raising=False)
    assert api_url() == PUBLIC_API == "https://api.github.com"

    monkeypatch.setenv("CONVEYOR_GITHUB_URL", "https://github.example.com/")
    assert api_url() == "https://github.example.com/api/v3"  # GitHub Enterprise's API on its own host

    monkeypatch.setenv("CONVEYOR_GITHUB_API_URL", "https://ghe-api.example.com/")
    assert api_url() == "https://ghe-api.example.com"
