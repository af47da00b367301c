"""Requests made for a user over HTTP(S): requests-hardened's adapter, pinned to the address chalicelib.outbound
checked, redirects followed by hand and checked again. Imported where a request is sent, not at start-up."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests_hardened import Config, HTTPSession
from requests_hardened.ip_filter_adapter import IPFilterAdapter

from chalicelib.outbound import Failed, Refused, resolve, shown

MAX_REDIRECTS = 5


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
            if _origin(target) != _origin(url):  # another host, port or scheme (https to http): not its secret
                headers = {name: value for name, value in headers.items() if name.lower() != "authorization"}
            if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                method, data = "GET", None
            url = target
        raise Refused(f"More than {MAX_REDIRECTS} redirects.")


def send(method: str, url: str, *, data: bytes | None, headers: dict[str, str], timeout: float) -> int:
    """``request``, then its answer's status; Failed unless it is 2xx, saying why for the user."""
    return exchange(method, url, data=data, headers=headers, timeout=timeout)[0]


def exchange(
    method: str,
    url: str,
    *,
    data: bytes | None,
    headers: dict[str, str],
    timeout: float,
    named: str | None = None,
    max_answer_bytes: int = 0,
) -> tuple[int, bytes]:
    """``request``, then its answer's status and up to ``max_answer_bytes`` of its body; Failed unless it is 2xx,
    saying why for the user and naming the URL as ``named`` (default: ``shown``; a chat webhook's path is secret)."""
    name = named or shown(url)
    try:
        response = request(method, url, data=data, headers=headers, timeout=timeout)
    except Refused as error:
        raise Failed(f"{name} was not called: {error}") from None
    except requests.Timeout:
        raise Failed(f"{name} did not answer within {timeout:g} s.") from None
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError):
        raise Failed(f"{name} cannot be called: its URL or a header is invalid.") from None
    except requests.RequestException:  # no details: they would describe the network the service runs in
        raise Failed(f"{name} is unreachable.") from None
    with response:
        if not 200 <= response.status_code < 300:
            raise Failed(f"{name} answered {response.status_code} {response.reason}.")
        return response.status_code, response.content[:max_answer_bytes] if max_answer_bytes else b""


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def _hops() -> Iterator[int]:
    yield from range(MAX_REDIRECTS + 1)
