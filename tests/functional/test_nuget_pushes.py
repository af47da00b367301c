"""The NuGet provider against a stand-in feed on loopback (tests/release_peers.py): a build's packages are pushed
as nuget push pushes them, with the API key in X-NuGet-ApiKey, symbol packages to the symbol endpoint; a version
the feed has already fails the deployment naming it; the key shows in no response or log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib import deploy
from chalicelib.deploy import nuget
from chalicelib.deploy.base import DeployArtifact, DeployFailed, DeployStopped
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import Log, add_environment, delivery, deployed, deployment_log, stored_artifact
from tests.gitserver import GitServer
from tests.outbound_stubs import stubbed_resolver  # noqa: F401 (a fixture)
from tests.release_peers import StandInNuGetFeed
from tests.support import Account

API_KEY = "oy2nuget0api0key0for0tests0123456789"
PACKAGES_YML = appveyor_yml(
    "build_script:",
    "  - mkdir -p out && cd out && echo pkg-$APPVEYOR_BUILD_VERSION > Acme.Lib.$APPVEYOR_BUILD_VERSION.nupkg"
    " && echo sym-$APPVEYOR_BUILD_VERSION > Acme.Lib.$APPVEYOR_BUILD_VERSION.snupkg && echo notes > notes.txt",
    "artifacts:",
    "  - path: out/*.nupkg",
    "  - path: out/*.snupkg",
    "  - path: out/notes.txt",
)


@pytest.fixture
def feed() -> Iterator[StandInNuGetFeed]:
    with StandInNuGetFeed(API_KEY) as server:
        yield server


@pytest.fixture
def packaged(account: Account, git_server: GitServer, pump: SqsPump) -> tuple[BuildProject, dict[str, Any]]:
    """A project with a successful build whose artifacts are a package, its symbol package and a text file."""
    project = BuildProject(account, git_server, {"appveyor.yml": PACKAGES_YML})
    build = project.run()
    assert build["status"] == "success", build
    return project, build


def nuget_environment(project: BuildProject, **settings: str) -> dict[str, Any]:
    return add_environment(project.account, "NuGet", {"api_key": API_KEY, **settings}, secure={"api_key"})


def test_the_package_and_its_symbols_are_pushed_where_the_service_index_says(
    packaged: tuple[BuildProject, dict[str, Any]], feed: StandInNuGetFeed
) -> None:
    project, build = packaged
    version = build["version"]
    environment = nuget_environment(project, server=f"{feed.url}/v3/index.json", artifact=r"/\.s?nupkg$/")

    deployment = deployed(project, environment, version)

    log = deployment_log(project, deployment)
    assert deployment["status"] == "success", log
    assert [(push.path, push.api_key, push.content) for push in feed.pushes] == [
        ("/api/v2/package", API_KEY, f"pkg-{version}\n".encode()),
        ("/api/v2/symbolpackage", API_KEY, f"sym-{version}\n".encode()),
    ]
    (put, _) = [request for request in feed.requests if request.method == "PUT"]
    assert put.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert f"The service index names {feed.url}/api/v2/package for packages" in log
    assert f"Pushed out/Acme.Lib.{version}.nupkg to {feed.url}/api/v2/package" in log
    shown = project.account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/settings").body
    assert API_KEY not in log and API_KEY not in json.dumps(deployment) and API_KEY.encode() not in shown


def test_a_version_the_feed_has_already_fails_the_deployment_naming_the_package(
    packaged: tuple[BuildProject, dict[str, Any]], feed: StandInNuGetFeed
) -> None:
    project, build = packaged
    environment = nuget_environment(project, server=f"{feed.url}/api/v2/package")
    assert deployed(project, environment, build["version"])["status"] == "success"

    again = deployed(project, environment, build["version"])

    assert again["status"] == "failed"
    log = deployment_log(project, again)
    assert f"already has the package Acme.Lib.{build['version']}.nupkg (409" in log
    assert len(feed.pushes) == 1  # only the .nupkg by default: AppVeyor pushes a .snupkg only when named


# The provider on its own


@pytest.fixture(scope="module")
def packages(fresh_resources: None, tmp_path_factory: pytest.TempPathFactory) -> list[DeployArtifact]:
    folder = tmp_path_factory.mktemp("packages")
    return [
        stored_artifact(folder, "out/Acme.Lib.1.0.7.nupkg", b"the package"),
        stored_artifact(folder, "out/Acme.Lib.1.0.7.symbols.nupkg", b"the symbols"),
        stored_artifact(folder, "bin/pushed.bin", b"typed a package", kind="NuGetPackage"),
        stored_artifact(folder, "README.md", b"# Acme.Lib\n"),
    ]


def pushed(feed: StandInNuGetFeed) -> list[tuple[str, bytes]]:
    return [(push.path, push.content) for push in feed.pushes]


def test_symbol_packages_go_to_the_symbol_server_unless_skipped(
    feed: StandInNuGetFeed, packages: list[DeployArtifact]
) -> None:
    settings = {"server": f"{feed.url}/api/v2/package", "api_key": API_KEY}
    with StandInNuGetFeed(API_KEY) as symbols:
        deploy.deliver("NuGet", delivery(settings | {"symbol_server": f"{symbols.url}/api/v2/symbolpackage"}, packages))

    with StandInNuGetFeed(API_KEY) as other:
        skipped = delivery({**settings, "server": f"{other.url}/api/v2/package", "skip_symbols": "true"}, packages)
        deploy.deliver("NuGet", skipped)

    assert pushed(feed) == [("/api/v2/package", b"the package"), ("/api/v2/package", b"typed a package")]
    assert pushed(symbols) == [("/api/v2/symbolpackage", b"the symbols")]
    assert [path for path, _ in pushed(other)] == ["/api/v2/package", "/api/v2/package"]
    assert isinstance(skipped.log, Log)
    assert "Skipped the symbol package out/Acme.Lib.1.0.7.symbols.nupkg (skip_symbols)" in skipped.log


def test_a_feed_with_no_known_symbol_server_gets_the_packages_and_the_log_says_why_not_the_symbols(
    feed: StandInNuGetFeed, packages: list[DeployArtifact]
) -> None:
    sent = delivery({"server": f"{feed.url}/api/v2/package", "api_key": API_KEY}, packages)

    deploy.deliver("NuGet", sent)

    assert [path for path, _ in pushed(feed)] == ["/api/v2/package", "/api/v2/package"]
    assert isinstance(sent.log, Log)
    assert any("Did not push the symbol package" in line and "symbol_server" in line for line in sent.log)


def test_a_refused_key_fails_without_quoting_it(feed: StandInNuGetFeed, packages: list[DeployArtifact]) -> None:
    wrong = "oy2not0the0key0000000000000000000000"

    with pytest.raises(DeployFailed, match="refused the api_key for Acme.Lib.1.0.7.nupkg: 403") as failure:
        deploy.deliver("NuGet", delivery({"server": f"{feed.url}/api/v2/package", "api_key": wrong}, packages))

    assert wrong not in str(failure.value)
    assert feed.pushes == []


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"artifact": "README"}, r"pushes packages \(.nupkg, .snupkg\), not README.md"),
        ({"server": "ftp://feed.example/"}, "server is an http"),
        ({"server": "{feed}/v3/missing/index.json"}, "is not a NuGet service index"),
    ],
)
def test_settings_it_cannot_use_fail_saying_why(
    feed: StandInNuGetFeed, packages: list[DeployArtifact], settings: dict[str, str], reason: str
) -> None:
    settings = {name: value.replace("{feed}", feed.url) for name, value in settings.items()}

    with pytest.raises(DeployFailed, match=reason):
        deploy.deliver("NuGet", delivery({"api_key": API_KEY, **settings}, packages))

    assert feed.pushes == []


def test_a_service_index_naming_another_sites_push_url_gets_no_key(packages: list[DeployArtifact]) -> None:
    # its index, at 127.0.0.1, names localhost
    with StandInNuGetFeed(API_KEY, publish_host="localhost") as feed, pytest.raises(DeployFailed) as failure:
        deploy.deliver("NuGet", delivery({"server": f"{feed.url}/v3/index.json", "api_key": API_KEY}, packages))

    port = feed.url.rsplit(":", 1)[1]
    assert str(failure.value) == (
        f"The service index {feed.url}/v3/index.json names http://localhost:{port}/api/v2/package for packages, "
        "which is not on its host: no package, nor the api_key, is sent there (set server to the feed's push URL if "
        "it is yours)."
    )
    assert [(request.method, request.path) for request in feed.requests] == [("GET", "/v3/index.json")]


@pytest.mark.parametrize(
    ("index", "named", "taken"),
    [
        ("https://api.nuget.org/v3/index.json", "https://www.nuget.org/api/v2/package", True),  # nuget.org's
        ("https://api.nuget.org/v3/index.json", "https://nuget.org.example.com/api/v2/package", False),
        ("https://api.nuget.org/v3/index.json", "https://www.nuget.org.evil.co.uk/api/v2/package", False),
        ("https://acme.github.io/feed/index.json", "https://acme.github.io/push", True),
        ("https://acme.github.io/feed/index.json", "https://evil.github.io/push", False),
        ("https://nuget.acme.co.uk/v3/index.json", "https://evil.co.uk/v2", False),
        ("https://nuget.acme.co.uk/v3/index.json", "https://push.acme.co.uk/v2", False),  # another host: set server
        ("http://127.0.0.1:5000/v3/index.json", "http://127.0.0.1:5001/api/v2/package", True),  # the same host
        ("http://127.0.0.1:5000/v3/index.json", "http://127.0.0.2:5000/api/v2/package", False),
        ("http://localhost:5000/v3/index.json", "http://feed.localhost:5000/api/v2/package", False),
    ],
)
def test_an_index_names_a_push_url_on_its_own_host_only(index: str, named: str, taken: bool) -> None:
    assert nuget.on_index_site(index, named) is taken


@pytest.mark.usefixtures("stubbed_resolver")
@pytest.mark.parametrize(
    "settings",
    [
        {"server": "http://public.stub.test/api/v2/package"},
        {"server": "http://public.stub.test/v3/index.json"},
        {"server": "{feed}/api/v2/package", "symbol_server": "http://public.stub.test/api/v2/symbolpackage"},
    ],
)
def test_the_key_goes_over_plain_http_only_to_an_address_the_outbound_guard_allows_for_this_stage(
    feed: StandInNuGetFeed, packages: list[DeployArtifact], settings: dict[str, str]
) -> None:
    settings = {name: value.replace("{feed}", feed.url) for name, value in settings.items()}

    with pytest.raises(DeployFailed, match="the api_key goes only over https") as failure:
        deploy.deliver("NuGet", delivery({"api_key": API_KEY, **settings}, packages))

    assert "http://public.stub.test/" in str(failure.value) and API_KEY not in str(failure.value)
    assert feed.requests == []  # refused before any package went, and nothing connected to the public host


def test_a_build_without_packages_fails_saying_so(feed: StandInNuGetFeed, packages: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match="no NuGet package to push"):
        deploy.deliver("NuGet", delivery({"server": f"{feed.url}/api/v2/package"}, packages[-1:]))


def test_a_stop_ends_a_push_mid_package(feed: StandInNuGetFeed, tmp_path: Path) -> None:
    big = stored_artifact(tmp_path, "Big.1.0.0.nupkg", bytes(range(256)) * 8192)  # 2 MiB: many blocks
    checks = iter(range(10_000))

    with pytest.raises(DeployStopped):
        deploy.deliver("NuGet", delivery({"server": f"{feed.url}/api/v2/package"}, [big], lambda: next(checks) >= 5))

    assert feed.pushes == []
