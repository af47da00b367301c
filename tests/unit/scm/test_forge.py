"""Each forge's commit status in its own words and at its own API, and the hosted providers' servers: no IO."""

from __future__ import annotations

import json
import socket

import pytest

from chalicelib.core.messages import Announce, ReportStatus, body_of, notification_message
from chalicelib.domain.forges.repositories import clone_url, valid_repository
from chalicelib.errors import Invalid
from chalicelib.scm import forges
from chalicelib.scm.forge import CommitStatus, StatusFailed


def status(state: str, description: str = "Conveyor build failed") -> CommitStatus:
    return CommitStatus(state, "a" * 40, "continuous-integration/conveyor/pr", description, None, "feature", 12)


@pytest.mark.parametrize(
    ("provider", "failed", "cancelled"),
    [
        ("gitHub", "failure", "error"),
        ("gitea", "failure", "error"),
        ("gitLab", "failed", "canceled"),
        ("bitBucket", "FAILED", "STOPPED"),
        ("stash", "FAILED", "CANCELLED"),
    ],
)
def test_a_failed_and_a_cancelled_build_are_said_in_each_forges_words(
    provider: str, failed: str, cancelled: str
) -> None:
    _, failed_body = forges.of(provider).status_request("https://forge.example/api", "OCTO/app", status("failed"))
    _, cancelled_body = forges.of(provider).status_request("https://forge.example/api", "OCTO/app", status("cancelled"))

    assert (failed_body["state"], cancelled_body["state"]) == (failed, cancelled)


def test_a_description_longer_than_github_takes_is_cut_to_140_characters() -> None:
    _, body = forges.of("gitHub").status_request("https://api.github.com", "octo/app", status("failed", "x" * 300))

    assert body["description"] == "x" * 140
    assert "target_url" not in body  # no base URL: no link rather than a broken one


def test_a_gitlab_project_in_a_subgroup_is_named_by_its_encoded_path() -> None:
    url, body = forges.of("gitLab").status_request("https://gitlab.com/api/v4", "group/sub/app", status("running"))

    assert url == f"https://gitlab.com/api/v4/projects/group%2Fsub%2Fapp/statuses/{'a' * 40}"
    assert (body["state"], body["name"], body["ref"]) == ("running", "continuous-integration/conveyor/pr", "feature")


def test_the_public_forges_apis_and_a_servers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    assert forges.of("gitHub").api_url() == "https://api.github.com"
    assert forges.of("bitBucket").api_url() == "https://api.bitbucket.org/2.0"
    assert forges.of("gitLab").api_url() == "https://gitlab.com/api/v4"
    assert forges.of("gitea").api_url() is None
    monkeypatch.setenv("CONVEYOR_GITHUB_URL", "https://github.example.com/")
    monkeypatch.setenv("CONVEYOR_STASH_URL", "https://stash.example.com")
    assert forges.of("gitHub").api_url() == "https://github.example.com/api/v3"
    assert forges.of("stash").api_url() == "https://stash.example.com/rest/api/latest"
    monkeypatch.setenv("CONVEYOR_GITHUB_API_URL", "https://ghe-api.example.com/")
    assert forges.of("gitHub").api_url() == "https://ghe-api.example.com"


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        (None, "Bearer t0ken"),
        ("x-access-token", "Bearer t0ken"),
        ("ada", "Basic YWRhOnQwa2Vu"),  # an app password with its user
    ],
)
def test_a_token_goes_as_a_bearer_token_and_a_password_with_its_user(username: str | None, expected: str) -> None:
    assert forges.of("bitBucket").authorization(username, "t0ken") == {"Authorization": expected}
    assert forges.of("gitLab").authorization(username, "t0ken") == {"Authorization": "Bearer t0ken"}


@pytest.mark.parametrize("provider", ["stash", "gitea"])
def test_a_provider_without_a_server_is_refused_and_never_read_from_the_services_disk(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(f"CONVEYOR_{provider.upper()}_URL", raising=False)

    assert clone_url(provider, "tmp/app") == ""  # not "/tmp/app.git", a path on the service's own disk
    with pytest.raises(Invalid, match=f"CONVEYOR_{provider.upper()}_URL"):
        valid_repository(provider, "tmp/app")
    monkeypatch.setenv(f"CONVEYOR_{provider.upper()}_URL", "https://code.example.com")
    assert valid_repository(provider, "tmp/app") == ("tmp/app", "git")
    assert clone_url(provider, "tmp/app") == "https://code.example.com/tmp/app.git"


def test_notifications_queue_bodies_read_as_announcements_as_before_and_as_status_posts() -> None:
    before = {"projectId": 3, "revision": 4, "buildId": 5}  # a body queued by the version before statuses
    again = ReportStatus(3, 5, attempt=2, state="success")

    assert notification_message(before) == Announce(3, 4, build_id=5)
    assert notification_message(json.loads(json.dumps(body_of(again)))) == again
    assert notification_message(body_of(ReportStatus(3, 5))) == ReportStatus(3, 5)


def test_a_token_no_header_can_carry_fails_the_post_without_a_try_again(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as listener:  # loopback, never answered: the post must fail before it is sent
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        monkeypatch.setenv("CONVEYOR_GITHUB_API_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
        monkeypatch.setenv("CONVEYOR_STAGE", "local")
        with pytest.raises(StatusFailed) as failed:
            forges.of("gitHub").post_status("octo/app", status("failed"), None, "t\u00f6ken-\u20ac-0123456789")

    assert failed.value.retry is False
    assert "cannot be sent" in str(failed.value) and "\u20ac" not in str(failed.value)
