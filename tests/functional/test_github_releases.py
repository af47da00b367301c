"""The GitHub provider against a stand-in of GitHub's releases API on loopback (tests/release_peers.py): a build's
artifacts become the assets of the release of its tag; an existing release fails the deployment unless force_update
says to update it; the token goes to GitHub's hosts only and shows in no response or log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib import deploy
from chalicelib.deploy.base import DeployArtifact, DeployFailed, DeployStopped
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject
from tests.deployments import ARTIFACTS_YML, add_environment, delivery, deployed, deployment_log, stored_artifact
from tests.gitserver import GitServer
from tests.release_peers import StandInGitHub
from tests.support import Account, unique

TOKEN = "ghp_release0token0for0tests0123456789"
REPOSITORY = "octo/app"


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInGitHub]:
    with StandInGitHub(TOKEN) as server:
        monkeypatch.setenv("CONVEYOR_GITHUB_API_URL", server.url)
        yield server


def assets(github: StandInGitHub, tag: str, repository: str = REPOSITORY) -> dict[str, bytes]:
    return {name: content for name, (_, _, content) in github.release(repository, tag).assets.items()}


def github_environment(project: BuildProject, **settings: str) -> dict[str, Any]:
    return add_environment(project.account, "GitHub", {"auth_token": TOKEN, **settings}, secure={"auth_token"})


def test_a_deployment_creates_the_release_of_the_tag_with_the_artifacts_as_assets(
    built: tuple[BuildProject, dict[str, Any]], github: StandInGitHub
) -> None:
    project, build = built
    version = build["version"]
    settings = {"repository": REPOSITORY, "tag": "v$(APPVEYOR_BUILD_VERSION)", "description": "Ships to $(STAGE)"}
    environment = add_environment(
        project.account, "GitHub", {"auth_token": TOKEN, **settings}, secure={"auth_token"}, STAGE="beta"
    )

    deployment = deployed(project, environment, version)

    log = deployment_log(project, deployment)
    assert deployment["status"] == "success", log
    release = github.release(REPOSITORY, f"v{version}")
    assert (release.name, release.body, release.draft, release.prerelease) == (
        f"v{version}",
        "Ships to beta",
        False,
        False,
    )
    assert release.target_commitish == build["commitId"]
    assert assets(github, f"v{version}") == {"app.txt": f"app-{version}\n".encode(), "index.html": b"<h1>hi</h1>\n"}
    assert release.assets["index.html"][1] == "text/html"
    assert {request.headers["authorization"] for request in github.requests} == {f"Bearer {TOKEN}"}
    assert f"Created the release v{version} (v{version}) in {REPOSITORY}" in log
    assert "Uploaded out/app.txt as app.txt" in log and "Uploaded site/index.html as index.html" in log
    shown = project.account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/settings").body
    assert TOKEN not in log and TOKEN not in json.dumps(deployment) and TOKEN not in json.dumps(environment)
    assert TOKEN.encode() not in shown


def test_an_existing_release_fails_the_deployment_naming_it_and_is_left_alone(
    built: tuple[BuildProject, dict[str, Any]], github: StandInGitHub
) -> None:
    project, build = built
    github.add_release(REPOSITORY, "v1", {"app.txt": b"released before"})
    environment = github_environment(project, repository=REPOSITORY, tag="v1")

    deployment = deployed(project, environment, build["version"])

    assert deployment["status"] == "failed"
    log = deployment_log(project, deployment)
    assert f"The release v1 already exists in {REPOSITORY}: set force_update" in log
    assert assets(github, "v1") == {"app.txt": b"released before"}
    assert [request.method for request in github.requests] == ["GET"]


def test_force_update_updates_the_release_and_replaces_assets_of_the_same_name(
    built: tuple[BuildProject, dict[str, Any]], github: StandInGitHub
) -> None:
    project, build = built
    github.add_release(REPOSITORY, "v1", {"app.txt": b"released before", "notes.md": b"kept"})
    settings = {"repository": REPOSITORY, "tag": "v1", "release": "Version 1", "prerelease": "true"}
    environment = github_environment(project, force_update="true", **settings)

    deployment = deployed(project, environment, build["version"])

    log = deployment_log(project, deployment)
    assert deployment["status"] == "success", log
    release = github.release(REPOSITORY, "v1")
    assert (release.name, release.prerelease) == ("Version 1", True)
    assert assets(github, "v1") == {
        "notes.md": b"kept",
        "app.txt": f"app-{build['version']}\n".encode(),
        "index.html": b"<h1>hi</h1>\n",
    }
    assert [request.method for request in github.requests].count("DELETE") == 1
    assert "Uploaded out/app.txt as app.txt (replacing the asset of that name)" in log


def test_a_github_projects_tag_build_releases_to_its_own_repository_by_default(
    account: Account, git_server: GitServer, pump: SqsPump, github: StandInGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVEYOR_GITHUB_URL", git_server.url)  # where the project's repository is cloned from
    repository = f"octo/{unique('lib')}"
    project = BuildProject(
        account,
        git_server,
        {"appveyor.yml": ARTIFACTS_YML},
        hosted={"repositoryProvider": "gitHub", "repositoryName": repository},
    )
    project.repository.set_ref("refs/tags/v2.0", project.first_commit)
    build = project.run(tag="v2.0")
    assert build["status"] == "success", build

    deployment = deployed(project, github_environment(project, artifact="app"), build["version"])

    assert deployment["status"] == "success", deployment_log(project, deployment)
    assert assets(github, "v2.0", repository) == {"app.txt": f"app-{build['version']}\n".encode()}
    assert github.release(repository, "v2.0").target_commitish == project.first_commit


def test_changing_the_repository_needs_the_token_again(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, _ = built
    environment = github_environment(project, repository=REPOSITORY)
    moved = json.loads(json.dumps(environment).replace(REPOSITORY, "someone/else"))

    kept_token = project.account.api.put("/environments", moved)
    token = next(entry for entry in moved["settings"]["providerSettings"] if entry["name"] == "auth_token")
    token["value"] = {"isEncrypted": True, "value": TOKEN}
    sent_again = project.account.api.put("/environments", moved)

    assert kept_token.status == 400 and "send its secure values again" in kept_token.json["message"]
    assert sent_again.status == 200, sent_again.body


# The provider on its own: artifacts stored as a build's, handed over as a deployment job hands them


@pytest.fixture(scope="module")
def artifacts(fresh_resources: None, tmp_path_factory: pytest.TempPathFactory) -> list[DeployArtifact]:
    folder = tmp_path_factory.mktemp("artifacts")
    return [
        stored_artifact(folder, "dist/app.zip", b"PK zipped app" * 100, name="App", kind="Zip"),
        stored_artifact(folder, "dist/app.tar.gz", b"tarred app" * 100, name="Tarball"),
        stored_artifact(folder, "README.md", b"# App\n", name="Readme"),
    ]


def test_a_draft_release_is_found_though_github_finds_drafts_by_tag_only_in_the_list(
    github: StandInGitHub, artifacts: list[DeployArtifact]
) -> None:
    github.add_release(REPOSITORY, "v1.0.7", draft=True)
    settings = {"auth_token": TOKEN, "repository": REPOSITORY, "draft": "true"}

    with pytest.raises(DeployFailed, match="The release v1.0.7 already exists"):
        deploy.deliver("GitHub", delivery(settings, artifacts, APPVEYOR_BUILD_VERSION="v1.0.7"))

    deploy.deliver("GitHub", delivery(settings | {"force_update": "true"}, artifacts, APPVEYOR_BUILD_VERSION="v1.0.7"))
    assert len(github.releases[REPOSITORY]) == 1 and github.release(REPOSITORY, "v1.0.7").draft


def test_a_pattern_chooses_the_assets(github: StandInGitHub, artifacts: list[DeployArtifact]) -> None:
    settings = {"auth_token": TOKEN, "repository": REPOSITORY, "tag": "v1", "artifact": r"/\.(zip|gz)$/"}

    deploy.deliver("GitHub", delivery(settings, artifacts))

    assert set(assets(github, "v1")) == {"app.zip", "app.tar.gz"}
    assert github.release(REPOSITORY, "v1").assets["app.zip"][1] == "application/zip"


def test_an_upload_url_on_another_host_gets_no_token(
    artifacts: list[DeployArtifact], monkeypatch: pytest.MonkeyPatch
) -> None:
    with StandInGitHub(TOKEN, upload_host="localhost") as github:
        monkeypatch.setenv("CONVEYOR_GITHUB_API_URL", github.url)
        settings = {"auth_token": TOKEN, "repository": REPOSITORY, "tag": "v1"}

        with pytest.raises(DeployFailed, match="neither its API's host nor its uploads host") as failure:
            deploy.deliver("GitHub", delivery(settings, artifacts))

    assert "/uploads/" not in " ".join(request.path for request in github.requests)
    assert TOKEN not in str(failure.value)


def test_a_refused_token_fails_saying_so_without_quoting_it(
    github: StandInGitHub, artifacts: list[DeployArtifact]
) -> None:
    wrong = "ghp_not0the0token0000000000000000000"

    with pytest.raises(
        DeployFailed, match="GitHub answered 401: Bad credentials. The auth_token was refused"
    ) as failure:
        deploy.deliver("GitHub", delivery({"auth_token": wrong, "repository": REPOSITORY}, artifacts))

    assert wrong not in str(failure.value)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"repository": REPOSITORY}, "needs the auth_token setting"),
        ({"auth_token": TOKEN}, r"needs the repository setting \(owner/repo\): the project is not on GitHub"),
        ({"auth_token": TOKEN, "repository": "octo/../admin"}, "owner/repo, not 'octo/../admin'"),
        ({"auth_token": TOKEN, "repository": REPOSITORY, "tag": "$(TAG)"}, "names a variable this deployment does not"),
        (
            {"auth_token": TOKEN, "repository": REPOSITORY, "artifact": "Docs"},
            "No artifact of the build is named 'Docs'",
        ),
    ],
)
def test_settings_it_cannot_use_fail_before_anything_is_sent(
    github: StandInGitHub, artifacts: list[DeployArtifact], settings: dict[str, str], reason: str
) -> None:
    with pytest.raises(DeployFailed, match=reason):
        deploy.deliver("GitHub", delivery(settings, artifacts))

    assert github.requests == []


def test_two_artifacts_of_one_file_name_would_be_one_asset(
    github: StandInGitHub, artifacts: list[DeployArtifact], tmp_path: Path
) -> None:
    twin = stored_artifact(tmp_path, "other/app.zip", b"another app", name="Other")

    with pytest.raises(DeployFailed, match="Several artifacts would be the release asset app.zip"):
        deploy.deliver("GitHub", delivery({"auth_token": TOKEN, "repository": REPOSITORY}, [*artifacts, twin]))


def test_a_stop_ends_the_upload_between_assets(github: StandInGitHub, artifacts: list[DeployArtifact]) -> None:
    def stop_once_an_asset_is_up() -> bool:
        return any(release.assets for release in github.releases.get(REPOSITORY, []))

    settings = {"auth_token": TOKEN, "repository": REPOSITORY, "tag": "v1"}
    with pytest.raises(DeployStopped):
        deploy.deliver("GitHub", delivery(settings, artifacts, stop_once_an_asset_is_up))

    assert list(assets(github, "v1")) == ["app.zip"]
