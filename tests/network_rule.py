"""The network rule, enforced in every test process: tests talk to loopback only.

Any lookup of a name but localhost, and any connection to an address outside loopback, is refused before a packet
leaves, and the test that made it fails (tests of the outbound guard stub names of their own: outbound_stubs.py).
Builds' runners and the local stack run in processes of their own; what they reach is the code's to refuse.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
broken: list[str] = []  # what a test tried, for the autouse check in conftest.py


def _is_loopback_name(host: Any) -> bool:
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _is_literal(host: Any) -> bool:
    try:
        ipaddress.ip_address(str(host.decode() if isinstance(host, bytes) else host).split("%")[0])
    except ValueError:
        return False
    return True


def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_loopback_name(host) and not _is_literal(host):
        broken.append(f"looked up {host}")
        raise socket.gaierror(socket.EAI_NONAME, f"{host}: tests look up no name but localhost (the network rule)")
    return _real_getaddrinfo(host, port, *args, **kwargs)


def _refused(sock: socket.socket, address: Any) -> bool:
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or _is_loopback_name(address[0]):
        return False
    broken.append(f"connected to {address[0]}")
    return True


def connect(self: socket.socket, address: Any) -> Any:
    if _refused(self, address):
        raise ConnectionRefusedError(f"{address[0]}: tests connect to loopback only (the network rule)")
    return _real_connect(self, address)


def connect_ex(self: socket.socket, address: Any) -> Any:
    if _refused(self, address):
        raise ConnectionRefusedError(f"{address[0]}: tests connect to loopback only (the network rule)")
    return _real_connect_ex(self, address)


def enforce() -> None:
    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
