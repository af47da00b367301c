"""Reaching a repository's remote end: what cannot be read is one SourceError naming the repository without its
credentials, refused before any connection is made. No DNS and no connection (tests/outbound_stubs.py)."""

from __future__ import annotations

import pytest

from chalicelib.scm.git_remote import SourceError, connect, public_url
from tests.outbound_stubs import stubbed_resolver  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("stubbed_resolver")


def test_a_repository_url_is_shown_without_the_credentials_it_carries() -> None:
    assert public_url("https://alice:s3cret@forge.stub.test/acme/app.git") == "https://forge.stub.test/acme/app.git"
    assert public_url("https://TOKEN@forge.stub.test/app.git") == "https://forge.stub.test/app.git"
    assert public_url("git://forge.stub.test/app.git") == "git://forge.stub.test/app.git"


def test_an_unsupported_scheme_is_refused_naming_the_repository_without_its_password() -> None:
    with pytest.raises(SourceError) as refused, connect("ftp://alice:s3cret@forge.stub.test/app.git", 5):
        pass

    assert "ftp://forge.stub.test/app.git" in str(refused.value)
    assert "s3cret" not in str(refused.value)
    assert "only http(s)://, git://, ssh:// and local repositories are supported" in str(refused.value)


def test_ssh_without_the_projects_deploy_key_is_refused() -> None:
    refused = pytest.raises(SourceError, match="ssh:// needs the project's deploy key")
    with refused, connect("ssh://git@forge.stub.test/acme/app.git", 5):
        pass


def test_a_git_host_the_service_may_not_reach_is_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_STAGE", "prod")
    monkeypatch.setenv("CONVEYOR_OUTBOUND_ALLOW", "")

    refused = pytest.raises(SourceError, match="Cannot read the repository git://metadata.stub.test/app.git")
    with refused, connect("git://metadata.stub.test/app.git", 5, checked=True):
        pass
