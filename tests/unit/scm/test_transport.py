"""How a git fetch reaches its remote: pinned to the address the outbound guard checked, refused before connecting
where the service may not go. No DNS and no connection (tests/outbound_stubs.py)."""

from __future__ import annotations

import pytest

from chalicelib import outbound
from chalicelib.scm.transport import pinned_git_url
from tests.outbound_stubs import stubbed_resolver  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("stubbed_resolver")


def test_a_git_url_is_pinned_to_the_address_checked_for_its_host_keeping_its_port_and_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONVEYOR_STAGE", "prod")

    assert pinned_git_url("git://public.stub.test/acme/app.git") == "git://140.82.112.3/acme/app.git"
    assert pinned_git_url("git://public.stub.test:9419/app.git") == "git://140.82.112.3:9419/app.git"


@pytest.mark.parametrize("host", ["metadata.stub.test", "intranet.stub.test"])
def test_a_git_host_the_service_may_not_reach_is_refused(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVEYOR_STAGE", "prod")
    monkeypatch.setenv("CONVEYOR_OUTBOUND_ALLOW", "")

    with pytest.raises(outbound.Refused):
        pinned_git_url(f"git://{host}/acme/app.git")
