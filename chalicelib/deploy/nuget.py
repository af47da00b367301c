"""The NuGet provider: each selected package pushed to a feed as ``nuget push`` does it (a multipart PUT with the
X-NuGet-ApiKey header), packages first, then symbol packages to the symbol server.

``server`` is a v2 push URL (nuget.org's by default) or a v3 service index (``.../index.json``), whose
PackagePublish resource is where packages go and whose SymbolPackagePublish resource takes symbol packages.

The index decides where the API key goes, so it is believed only about its own host: a URL it names must be on the
index's host (as MyGet's, GitHub's, Azure Artifacts' and a self-hosted feed's are), or be nuget.org's own pair
(api.nuget.org's index names www.nuget.org). The key goes over https; over plain http only to an address of the
operator's own network (outbound.by_leave: the local stage's loopback, the allow-list).
"""

from __future__ import annotations

import ipaddress
import posixpath
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalicelib import outbound
from chalicelib.deploy import transfers
from chalicelib.deploy.base import Delivery, DeployArtifact, DeployFailed, open_artifact, selected
from chalicelib.outbound import shown

NUGET_ORG_PUSH = "https://www.nuget.org/api/v2/package"
NUGET_ORG_SYMBOLS = "https://www.nuget.org/api/v2/symbolpackage"  # SymbolSource.org, AppVeyor's default, is gone
PACKAGE_TYPE = "NuGetPackage"
SYMBOL_SUFFIXES = (".symbols.nupkg", ".snupkg")
_PUBLISH = "PackagePublish/2.0.0"
_SYMBOL_PUBLISH = "SymbolPackagePublish/4.9.0"
_ACCEPTED = (200, 201, 202)
_UNSUPPORTED = ("username",)


@dataclass(frozen=True)
class Feed:
    """Where packages and symbol packages are pushed (None: no symbol server is known)."""

    push_url: str
    symbol_url: str | None


def deliver(delivery: Delivery) -> None:
    """Push the selected packages, then their symbol packages unless skip_symbols."""
    packages = chosen_packages(delivery.artifacts, delivery.setting("artifact"))
    delivery.warn_unsupported(_UNSUPPORTED)
    api_key = delivery.setting("api_key")
    delivery.stop_if_asked()
    server = delivery.setting("server") or NUGET_ORG_PUSH
    feed = _feed(server, delivery.setting("symbol_server"), bool(api_key), delivery)
    symbols = [package for package in packages if is_symbol_package(package)]
    sending_symbols = symbols and not delivery.flag("skip_symbols") and feed.symbol_url is not None
    for name, url in (("push URL", feed.push_url), ("symbol URL", feed.symbol_url if sending_symbols else None)):
        if api_key and url is not None and url != server:  # every URL the key goes to, before it goes to any
            _refuse_plain_http(url, name)
    for package in [package for package in packages if package not in symbols]:
        _push(feed.push_url, package, api_key, delivery)
    for package in symbols:
        if delivery.flag("skip_symbols"):
            delivery.log(f"Skipped the symbol package {package.file_name} (skip_symbols)")
        elif feed.symbol_url is None:
            delivery.log(f"Did not push the symbol package {package.file_name}: set symbol_server to say where to.")
        else:
            _push(feed.symbol_url, package, api_key, delivery)


def chosen_packages(artifacts: list[DeployArtifact], setting: str) -> list[DeployArtifact]:
    """The artifact setting's packages; without one, every NuGet package of the build (by type or .nupkg name: as
    on AppVeyor, a .snupkg goes only when named)."""
    if not setting:
        packages = [artifact for artifact in artifacts if _is_package(artifact, ".nupkg")]
        if not packages:
            raise DeployFailed(
                "The build has no NuGet package to push: no artifact of type NuGetPackage or named *.nupkg."
            )
        return packages
    chosen = selected(artifacts, setting)
    others = [artifact.file_name for artifact in chosen if not _is_package(artifact, ".nupkg", ".snupkg")]
    if others:
        raise DeployFailed(f"The NuGet provider pushes packages (.nupkg, .snupkg), not {', '.join(others)}.")
    return chosen


def is_symbol_package(artifact: DeployArtifact) -> bool:
    """Whether the artifact is a symbol package (legacy .symbols.nupkg, or .snupkg)."""
    return artifact.file_name.lower().endswith(SYMBOL_SUFFIXES)


def _is_package(artifact: DeployArtifact, *suffixes: str) -> bool:
    return artifact.type == PACKAGE_TYPE or artifact.file_name.lower().endswith(suffixes)


def _feed(server: str, symbol_server: str, keyed: bool, delivery: Delivery) -> Feed:
    for name, url in (("server", server), ("symbol_server", symbol_server)):
        target = urlsplit(url)
        if url and (target.scheme not in ("http", "https") or not target.hostname):
            raise DeployFailed(f"The NuGet provider's {name} is an http(s) URL, not {shown(url)}.")
    if keyed:  # the key goes there; or it is an index, which over plain http could be changed on its way
        _refuse_plain_http(server, "server")
    if urlsplit(server).path.endswith("/index.json"):
        resources = _service_index(server)
        if _PUBLISH not in resources:
            raise DeployFailed(
                f"The service index {shown(server)} names no {_PUBLISH} resource: set server to the feed's push URL."
            )
        named = {"packages": resources[_PUBLISH]}
        if not symbol_server and _SYMBOL_PUBLISH in resources:  # a symbol_server set is the user's own choice
            named["symbol packages"] = resources[_SYMBOL_PUBLISH]
        for what, url in named.items():
            if not on_index_site(server, url):
                raise DeployFailed(
                    f"The service index {shown(server)} names {shown(url)} for {what}, which is not on its host: no "
                    "package, nor the api_key, is sent there (set server to the feed's push URL if it is yours)."
                )
        delivery.log(
            f"The service index names {' and '.join(f'{shown(url)} for {what}' for what, url in named.items())}"
        )
        return Feed(resources[_PUBLISH], symbol_server or resources.get(_SYMBOL_PUBLISH))
    on_nuget_org = urlsplit(server).hostname == urlsplit(NUGET_ORG_PUSH).hostname
    return Feed(server, symbol_server or (NUGET_ORG_SYMBOLS if on_nuget_org else None))


_NUGET_ORG_HOSTS = ("api.nuget.org", "www.nuget.org")  # nuget.org's index, and where it says packages go


def on_index_site(index_url: str, url: str) -> bool:
    """Whether ``url`` is on the host of the service index at ``index_url`` (or both are nuget.org's own)."""
    index_host, host = ((urlsplit(each).hostname or "").rstrip(".").lower() for each in (index_url, url))
    return bool(host) and (host == index_host or {index_host, host} <= set(_NUGET_ORG_HOSTS))


def _refuse_plain_http(url: str, name: str) -> None:
    """Fail, before the api_key is sent, when ``url`` is plain http to an address outside the operator's own
    network: the key would cross the internet readable by anyone on the way."""
    target = urlsplit(url)
    if target.scheme == "https":
        return
    host = target.hostname or ""
    try:
        address = outbound.literal_address(host)
        if address is None:
            address = ipaddress.ip_address(outbound.resolve(host, target.port or 80))
    except outbound.Refused as error:
        raise DeployFailed(f"The NuGet feed was not called at {shown(url)}: {error}") from None
    if not outbound.by_leave(address):
        raise DeployFailed(
            f"The NuGet feed's {name} {shown(url)} is plain http, and the api_key goes only over https: use an "
            "https URL (plain http reaches only the operator's own network: the local stage, CONVEYOR_OUTBOUND_ALLOW)."
        )


def _service_index(url: str) -> dict[str, str]:
    """A v3 feed's resources by type (the first of each)."""
    headers = {"Accept": "application/json", "User-Agent": "Conveyor"}
    with transfers.call("GET", url, "The NuGet feed", headers=headers) as response:
        index = transfers.json_of(response) if response.status_code == 200 else None
        status = response.status_code
    if not isinstance(index, dict) or not isinstance(index.get("resources"), list):
        raise DeployFailed(f"{shown(url)} is not a NuGet service index (it answered {status}).")
    found: dict[str, str] = {}
    for resource in index["resources"]:
        if isinstance(resource, dict) and isinstance(resource.get("@id"), str):
            kinds = resource.get("@type")
            for kind in kinds if isinstance(kinds, list) else [kinds]:
                found.setdefault(str(kind), resource["@id"])
    return found


def _push(url: str, package: DeployArtifact, api_key: str, delivery: Delivery) -> None:
    """PUT one package as nuget push does: a multipart form with the package as its one file."""
    delivery.stop_if_asked()
    boundary = secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="package"; filename="package.nupkg"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    headers = {
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "User-Agent": "Conveyor",
        "X-NuGet-Protocol-Version": "4.1.0",
    }
    if api_key:
        headers["X-NuGet-ApiKey"] = api_key
    with open_artifact(package) as stream:
        body = transfers.StreamedBody(
            [head, stream, tail], len(head) + package.size + len(tail), delivery.stop_if_asked
        )
        response = transfers.upload("PUT", url, "The NuGet feed", headers=headers, body=body)
    with response:
        status, reason = response.status_code, (response.reason or "").strip()[:200]
    name = posixpath.basename(package.file_name)
    if status in _ACCEPTED:
        delivery.log(f"Pushed {package.file_name} to {shown(url)} ({package.size} bytes)")
        return
    if status == 409:
        message = f"The feed {shown(url)} already has the package {name} (409 {reason}): a version is pushed once."
    elif status in (401, 403):
        message = f"The feed {shown(url)} refused the api_key for {name}: {status} {reason}."
    else:
        message = f"Pushing {name} to {shown(url)} failed: the feed answered {status} {reason}."
    raise DeployFailed(message.replace(api_key, "***") if api_key else message)
