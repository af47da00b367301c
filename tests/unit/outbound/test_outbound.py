"""Which addresses the service connects to for a user (chalicelib/outbound): the rule itself, without IO."""

from __future__ import annotations

import ipaddress

import pytest

from chalicelib import outbound
from chalicelib.outbound import http
from tests.outbound_stubs import stubbed_resolver  # noqa: F401 (a fixture)

ALWAYS_REFUSED = [
    "169.254.169.254",  # EC2 metadata: the instance's or function's credentials
    "169.254.170.2",  # the ECS and CodeBuild credential endpoint
    "fd00:ec2::254",  # EC2 metadata over IPv6
    "::ffff:169.254.169.254",  # the same, IPv4-mapped
    "64:ff9b::a9fe:a9fe",  # the same, through NAT64
    "fe80::1",
    "0.0.0.0",
    "::",
    "224.0.0.1",
]
LOCAL_ONLY = ["127.0.0.1", "::1", "10.0.0.7", "172.16.0.1", "192.168.1.1", "fc00::1"]


@pytest.fixture
def stage(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def use(name: str, allow: str = "") -> None:
        monkeypatch.setenv("CONVEYOR_STAGE", name)
        monkeypatch.setenv("CONVEYOR_OUTBOUND_ALLOW", allow)

    return use


@pytest.mark.parametrize("address", ALWAYS_REFUSED)
@pytest.mark.parametrize("name", ["prod", "local"])
def test_metadata_link_local_and_unspecified_addresses_are_refused_in_every_stage(stage, name, address) -> None:  # type: ignore[no-untyped-def]
    stage(name)

    assert not outbound.may_connect(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", [*LOCAL_ONLY, "100.64.0.1"])
def test_loopback_private_and_shared_addresses_are_refused_outside_the_local_stage(stage, address) -> None:  # type: ignore[no-untyped-def]
    stage("prod")

    assert not outbound.may_connect(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", LOCAL_ONLY)
def test_the_local_stage_reaches_loopback_and_private_addresses(stage, address) -> None:  # type: ignore[no-untyped-def]
    stage("local")

    assert outbound.may_connect(ipaddress.ip_address(address))


def test_public_addresses_are_reached(stage) -> None:  # type: ignore[no-untyped-def]
    stage("prod")

    assert outbound.may_connect(ipaddress.ip_address("203.0.113.10")) is False  # documentation range: not global
    assert outbound.may_connect(ipaddress.ip_address("140.82.112.3"))  # a public address (no traffic: a rule)


def test_the_allow_list_admits_exactly_its_networks(stage) -> None:  # type: ignore[no-untyped-def]
    stage("prod", allow="10.1.0.0/16, 192.168.7.8")

    assert outbound.may_connect(ipaddress.ip_address("10.1.2.3"))
    assert outbound.may_connect(ipaddress.ip_address("192.168.7.8"))
    assert not outbound.may_connect(ipaddress.ip_address("10.2.0.1"))
    assert not outbound.may_connect(ipaddress.ip_address("192.168.7.9"))
    assert not outbound.may_connect(ipaddress.ip_address("169.254.169.254"))


@pytest.mark.parametrize(
    ("name", "allow", "address", "by_leave"),
    [
        ("local", "", "127.0.0.1", True),  # the local stage's own services: where tests' stand-ins listen
        ("local", "", "10.0.0.7", True),
        ("local", "", "140.82.112.3", False),  # the internet
        ("local", "", "::ffff:140.82.112.3", False),  # the same, IPv4-mapped
        ("local", "", "169.254.169.254", False),  # never reached at all
        ("prod", "", "127.0.0.1", False),
        ("prod", "10.1.0.0/16", "10.1.2.3", True),  # the operator's allow-list
        ("prod", "10.1.0.0/16", "10.2.0.1", False),
    ],
)
def test_plain_http_may_carry_a_secret_only_within_the_operators_own_network(  # type: ignore[no-untyped-def]
    stage, name, allow, address, by_leave
) -> None:
    stage(name, allow)

    assert outbound.by_leave(ipaddress.ip_address(address)) is by_leave


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://2852039166/",  # the same address, as one number
        "http://0xa9.0xfe.0xa9.0xfe/",
        "http://169.254.43518/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fd00:ec2::254]/",
        "169.254.169.254:21",  # an FTP server setting
    ],
)
def test_a_literal_refused_address_is_refused_when_saved_in_any_spelling(stage, url) -> None:  # type: ignore[no-untyped-def]
    stage("local")

    assert outbound.url_refusal(url) is not None


def test_local_names_are_refused_when_saved_outside_the_local_stage(stage) -> None:  # type: ignore[no-untyped-def]
    stage("prod")

    assert outbound.url_refusal("http://localhost:8000/") is not None
    assert outbound.url_refusal("http://metadata.google.internal/") is not None
    assert outbound.url_refusal("https://hooks.example.com/build") is None  # a name: checked where it connects


@pytest.mark.usefixtures("stubbed_resolver")
@pytest.mark.parametrize("host", ["metadata.stub.test", "mixed.stub.test"])
def test_a_name_that_resolves_to_a_refused_address_is_refused_before_any_connection(stage, host) -> None:  # type: ignore[no-untyped-def]
    stage("local")

    with pytest.raises(outbound.Refused, match="refused"):
        outbound.resolve(host, 80)
    with pytest.raises(outbound.Refused, match="refused"):
        http.request("POST", f"http://{host}/hook", data=b"{}", headers={}, timeout=5)


@pytest.mark.usefixtures("stubbed_resolver")
def test_a_private_name_is_refused_outside_the_local_stage(stage) -> None:  # type: ignore[no-untyped-def]
    stage("prod")

    with pytest.raises(outbound.Refused) as refused:
        outbound.resolve("intranet.stub.test", 443)

    assert "10.0.0.7" not in str(refused.value)  # the message does not map the network
