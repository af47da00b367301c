"""Where the service connects on a user's behalf: one rule for webhooks, notifications, deployments and clones.

A URL a user saved (a webhook, an FTP server, a clone URL) is someone else's choice, and the service reaches it
from inside its own network, with its own role: the cloud metadata address (169.254.169.254, which hands out the
function's credentials), the ECS/CodeBuild credential endpoint, the VPC's private hosts and loopback services are
all one request away. So every such connection resolves the host, refuses the address unless it is public, and
connects to the very address it checked (a name that resolves to another address a moment later, DNS rebinding,
gains nothing). Redirects are followed by hand, each hop checked again.

The stage ``local`` (``make run``) also reaches loopback and private addresses: a developer's own git server and
FTP server live there. ``CONVEYOR_OUTBOUND_ALLOW`` (comma-separated CIDRs) lets an operator allow exactly those
networks, in any stage. Link-local addresses (the metadata endpoints) are refused everywhere unless allowed so.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Iterator
from functools import lru_cache
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests_hardened import Config, HTTPSession
from requests_hardened.ip_filter import EXTRA_BLOCKED_NET_RANGES
from requests_hardened.ip_filter_adapter import IPFilterAdapter

from chalicelib.config import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_REDIRECTS = 5
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
    blocked = any(address in network for network in EXTRA_BLOCKED_NET_RANGES if network.version == address.version)
    return address.is_global and not blocked


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


class _PinnedAdapter(IPFilterAdapter):
    """requests-hardened's adapter (Host header and TLS name kept, the connection pinned to the checked address)
    with Conveyor's rule for which addresses may be reached."""

    def build_connection_pool_key_attributes(self, request: requests.PreparedRequest, verify: Any, cert: Any = None):  # type: ignore[no-untyped-def]
        host_params, pool_kwargs = HTTPAdapter.build_connection_pool_key_attributes(self, request, verify, cert)
        request.headers = CaseInsensitiveDict(request.headers or {})
        original = host_params["host"]
        port = host_params["port"]
        host_header = f"[{original}]" if ":" in original else original
        request.headers["Host"] = f"{host_header}:{port}" if port is not None else host_header
        if self._is_https_proto:
            pool_kwargs["assert_hostname"] = original
            pool_kwargs["server_hostname"] = original
        default_port = 443 if self._is_https_proto else 80
        host_params["host"] = resolve(original, port or default_port)
        return host_params, pool_kwargs


def session() -> requests.Session:
    """A requests session that connects only where ``may_connect`` allows, and follows no redirect by itself."""
    guarded = HTTPSession(
        Config(False, False, never_redirect=True, default_timeout=(10, 30), user_agent_override="Conveyor")
    )
    guarded.mount("http://", _PinnedAdapter(is_https_proto=False))
    guarded.mount("https://", _PinnedAdapter(is_https_proto=True))
    guarded.trust_env = False  # no proxy from the environment: it would connect for us, unchecked
    return guarded


def request(method: str, url: str, *, data: bytes | None, headers: dict[str, str], timeout: float) -> requests.Response:
    """Send one request, following up to MAX_REDIRECTS redirects by hand (each hop checked again; Authorization is
    not sent to another host). Refused for a refused or unresolvable host; requests' errors otherwise."""
    with session() as guarded:
        for _hop in _hops():
            if urlsplit(url).scheme not in ("http", "https"):
                raise Refused("A redirect to a URL that is not http(s) is refused.")
            response = guarded.request(method, url, data=data, headers=headers, timeout=timeout, allow_redirects=False)
            location = response.headers.get("Location") if response.is_redirect else None
            if location is None:
                return response
            target = urljoin(url, location)
            if urlsplit(target).hostname != urlsplit(url).hostname:
                headers = {name: value for name, value in headers.items() if name.lower() != "authorization"}
            if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                method, data = "GET", None
            url = target
        raise Refused(f"More than {MAX_REDIRECTS} redirects.")


def send(method: str, url: str, *, data: bytes | None, headers: dict[str, str], timeout: float) -> int:
    """``request``, then its answer's status; Failed unless it is 2xx, saying why for the user."""
    try:
        response = request(method, url, data=data, headers=headers, timeout=timeout)
    except Refused as error:
        raise Failed(f"{shown(url)} was not called: {error}") from None
    except requests.Timeout:
        raise Failed(f"{shown(url)} did not answer within {timeout:g} s.") from None
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError):
        raise Failed(f"{shown(url)} cannot be called: its URL or a header is invalid.") from None
    except requests.RequestException:  # no details: they would describe the network the service runs in
        raise Failed(f"{shown(url)} is unreachable.") from None
    with response:
        if not 200 <= response.status_code < 300:
            raise Failed(f"{shown(url)} answered {response.status_code} {response.reason}.")
        return response.status_code


def shown(url: str) -> str:
    """The URL as logs may show it: no query (it may carry a token) and no credentials."""
    try:
        target = urlsplit(url)
        port = f":{target.port}" if target.port else ""
    except ValueError:
        return "(an invalid URL)"
    return f"{target.scheme}://{target.hostname or ''}{port}{target.path}"


def _hops() -> Iterator[int]:
    yield from range(MAX_REDIRECTS + 1)
