"""For tests of the outbound guard: names that "resolve" to addresses no test may ever send to, and a tripwire that
fails a test the moment anything connects outside loopback (the guard must refuse before connecting)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

# what each stubbed name resolves to: the cloud metadata address, a private host, a name with one public and one
# link-local address (refused as a whole: any address refused refuses the name), and a public host (reached: a check
# that must refuse it does so by its own rule, before connecting)
STUBBED = {
    "metadata.stub.test": ["169.254.169.254"],
    "intranet.stub.test": ["10.0.0.7"],
    "mixed.stub.test": ["140.82.112.3", "169.254.169.254"],
    "public.stub.test": ["140.82.112.3"],
}


@pytest.fixture
def stubbed_resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Resolve the STUBBED names without DNS; and fail on any connection to a non-loopback address."""
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in STUBBED:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in STUBBED[host]]
        return real_getaddrinfo(host, port, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not ipaddress.ip_address(address[0]).is_loopback:
            raise AssertionError(f"a test connected to {address[0]}: the guard should have refused first")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    yield
