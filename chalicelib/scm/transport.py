"""How dulwich reaches a remote: urllib3 pool managers that try once, and, where the service fetches for a user,
connect only to addresses chalicelib.outbound allows, pinned to the address checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import urllib3
from dulwich.client import default_urllib3_manager

from chalicelib import outbound

_RETRIES = urllib3.Retry(total=5, connect=0, read=0)  # redirects are followed; failures are final


@dataclass(frozen=True)
class SshAccess:
    """How to fetch over SSH: the private key, and the host key expected ("type base64"; None: take the first seen,
    which ``seen`` is told of)."""

    private_key: str
    host_key: str | None
    seen: Callable[[str], None] | None = None


class HostKeyRefused(Exception):
    """An SSH server's host key is not the one expected; str() says so."""


class _OneTryPoolManager(urllib3.PoolManager):
    """Connection and read errors are not retried: urllib3 would try four times, each waiting up to `timeout`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, retries=_RETRIES, **kwargs)


class _OneTryProxyManager(urllib3.ProxyManager):
    """_OneTryPoolManager for hosts behind https_proxy."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, retries=_RETRIES, **kwargs)


class _CheckedPoolManager(_OneTryPoolManager):
    """Connects only to addresses the service may reach for a user (chalicelib.outbound), pinned to the address
    checked; each redirect is a new urlopen, checked again. The Host header and TLS name stay the URL's host."""

    def connection_from_host(
        self, host: str | None, port: int | None = None, scheme: str | None = "http", pool_kwargs: Any = None
    ) -> Any:
        https = scheme == "https"
        address = outbound.resolve(host or "", port or (443 if https else 80))
        kwargs = {**(pool_kwargs or {}), **({"assert_hostname": host, "server_hostname": host} if https else {})}
        return super().connection_from_host(address, port, scheme, kwargs)

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:  # type: ignore[override]
        headers = dict(kw.get("headers") or self.headers)
        headers["Host"] = urllib3.util.parse_url(url).netloc or ""
        return super().urlopen(method, url, redirect, **{**kw, "headers": headers})


def http_manager(base_url: str, timeout: float, checked: bool) -> urllib3.PoolManager:
    """The pool manager of one fetch over http(s): ``timeout`` bounds each connect and each read (dulwich has no
    such setting for git:// connections); ``checked`` for fetches the service makes for a user."""
    return cast(
        urllib3.PoolManager,
        default_urllib3_manager(
            None,
            pool_manager_cls=_CheckedPoolManager if checked else _OneTryPoolManager,
            proxy_manager_cls=_OneTryProxyManager,
            base_url=base_url,
            timeout=timeout,
        ),
    )


def pinned_git_url(url: str) -> str:
    """A git:// URL with its host replaced by the address checked for it (dulwich would resolve the name again);
    outbound.Refused for a host the service may not reach."""
    parts = urlsplit(url)
    address = outbound.resolve(parts.hostname or "", parts.port or 9418)
    host = f"[{address}]" if ":" in address else address
    return urlunsplit(parts._replace(netloc=f"{host}:{parts.port}" if parts.port else host))
