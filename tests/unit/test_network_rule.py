"""The suite's own guard of the network rule refuses a lookup or a connection outside loopback before any packet."""

from __future__ import annotations

import socket

import pytest

from tests import network_rule


def test_a_name_other_than_localhost_is_not_looked_up_and_the_test_is_marked() -> None:
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.com", 443)

    assert network_rule.broken == ["looked up example.com"]
    network_rule.broken.clear()  # this test broke the rule on purpose


def test_an_address_outside_loopback_is_not_connected_to_and_loopback_is() -> None:
    with socket.socket() as outside, pytest.raises(ConnectionRefusedError, match="loopback only"):
        outside.connect(("192.0.2.1", 9))  # TEST-NET-1: refused before a packet is sent
    marked = list(network_rule.broken)
    network_rule.broken.clear()

    with socket.socket() as server, socket.socket() as inside:
        server.bind(("127.0.0.1", 0))
        server.listen()
        inside.connect(server.getsockname())

    assert marked == ["connected to 192.0.2.1"] and network_rule.broken == []
