"""Where the service connects on a user's behalf: one rule for webhooks, notifications, deployments and clones.

A URL a user saved (a webhook, an FTP server, a clone URL) is someone else's choice, and the service reaches it
from inside its own network, with its own role: the cloud metadata address (169.254.169.254, which hands out the
function's credentials), the ECS/CodeBuild credential endpoint, the VPC's private hosts and loopback services are
all one request away. So every such connection resolves the host, refuses the address unless it is public, and
connects to the very address it checked (a name that resolves to another address a moment later, DNS rebinding,
gains nothing). Redirects are followed by hand, each hop checked again (chalicelib/outbound/http.py: requests,
loaded only where a request is sent).

The stage ``local`` (``make run``) also reaches loopback and private addresses: a developer's own git server and
FTP server live there. ``CONVEYOR_OUTBOUND_ALLOW`` (comma-separated CIDRs) lets an operator allow exactly those
networks, in any stage. Link-local addresses (the metadata endpoints) are refused everywhere unless allowed so.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from functools import lru_cache
from urllib.parse import urlsplit

from chalicelib.config import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_METADATA = ipaddress.ip_network("fd00:ec2::254/128")  # EC2's IPv6 metadata address, inside the private fc00::/7
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NUMERIC_HOST = re.compile(r"^[0-9a-fA-Fx.]+$")  # 2852039166, 0xa9.0xfe.0xa9.0xfe, 169.254.43518: inet_aton forms
_LOCAL_NAMES = ("localhost", ".localhost", ".internal")


class Refused(Exception):
    """The service will not connect there; str() says so in words that name no internal address."""


class Failed(Exception):
    """A request made for a user did not succeed; str() says why in the user's words (no secret, no detail of the
    network the service runs in)."""


@lru_cache(maxsize=8)
def _allowed_networks(setting: str) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in setting.split(",") if part.strip())


def allowed_networks() -> tuple[Network, ...]:
    """The operator's allow-list (CONVEYOR_OUTBOUND_ALLOW): exactly these networks are reachable, in any stage."""
    return _allowed_networks(os.environ.get("CONVEYOR_OUTBOUND_ALLOW", ""))


def may_connect(address: Address) -> bool:
    """Whether the service may connect to ``address`` for a user: public ones; loopback and private in ``local``;
    and the operator's allow-list. An IPv4 address mapped or translated into IPv6 counts as itself."""
    address = _embedded_ipv4(address)
    if any(address in network for network in allowed_networks() if network.version == address.version):
        return True
    if address.is_link_local or address.is_unspecified or address.is_multicast or address in _METADATA:
        return False
    if settings().stage == "local" and (address.is_loopback or address.is_private):
        return True
    from requests_hardened.ip_filter import EXTRA_BLOCKED_NET_RANGES  # it loads requests: not at start-up

    blocked = any(address in network for network in EXTRA_BLOCKED_NET_RANGES if network.version == address.version)
    return address.is_global and not blocked


def by_leave(address: Address) -> bool:
    """Whether the service reaches ``address`` only by leave of the operator's allow-list or of the local stage
    (loopback and private addresses): a network of the operator's own, where plain http crosses no one else's."""
    address = _embedded_ipv4(address)
    if any(address in network for network in allowed_networks() if network.version == address.version):
        return True
    return settings().stage == "local" and (address.is_loopback or address.is_private) and may_connect(address)


def _embedded_ipv4(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def literal_address(host: str) -> Address | None:
    """The address a host names without a lookup (``169.254.169.254``, ``[::1]``, ``2852039166``), else None."""
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _NUMERIC_HOST.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))  # what the resolver would make of it
        except OSError:
            return None
    return None


def refusal(host: str) -> str | None:
    """Why a host is refused before any lookup (a literal address, a local name), or None: for save-time checks."""
    name = host.strip("[]").lower().rstrip(".")
    address = literal_address(name)
    if address is not None and not may_connect(address):
        return (
            f"{host} is not an address Conveyor connects to "
            "(private, loopback, link-local and metadata addresses are refused)."
        )
    if address is None and (name == "localhost" or name.endswith(_LOCAL_NAMES)) and settings().stage != "local":
        return f"{host} is not a host Conveyor connects to (local names are refused)."
    return None


def url_refusal(url: str) -> str | None:
    """``refusal`` for the host of a URL, or of ``host[:port]``; None when there is none to check."""
    try:
        host = urlsplit(url if "://" in url else f"//{url}").hostname
    except ValueError:
        return None
    return refusal(host) if host else None


def resolve(host: str, port: int) -> str:
    """The address to connect to for ``host``: resolved, every address it has checked, the first one returned.
    Refused when any address may not be reached (or the name does not resolve), before any connection."""
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError):
        raise Refused(f"{host} is unreachable: the name does not resolve.") from None
    addresses = [ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found]
    if not addresses or not all(may_connect(address) for address in addresses):
        raise Refused(f"{host} is refused: it is not a public address.")
    return str(addresses[0])


def shown(url: str, path: bool = True) -> str:
    """The URL as logs may show it: no query (it may carry a token) and no credentials; without its ``path`` for
    one whose path is its secret (a Slack or Teams webhook's)."""
    try:
        target = urlsplit(url)
        port = f":{target.port}" if target.port else ""
    except ValueError:
        return "(an invalid URL)"
    return f"{target.scheme}://{target.hostname or ''}{port}{target.path if path else ''}"
