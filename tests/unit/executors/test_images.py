"""Which executor runs a job, from its image (chalicelib/executors/images.py): the table docs/executors.md shows."""

from __future__ import annotations

import pytest

from chalicelib.core.jobs import Executor
from chalicelib.executors.images import NoExecutor, Route, is_curated, route, runs_in_cloud

RUNNER, CODEBUILD, AGENT = Executor.RUNNER, Executor.CODEBUILD, Executor.AGENT


def test_a_job_without_an_image_or_with_appveyors_default_runs_on_the_services_runner() -> None:
    assert route(None, [], codebuild=True) == Route(RUNNER)
    assert route("", [], codebuild=False) == Route(RUNNER)
    assert route("ubuntu", [], codebuild=True) == Route(RUNNER)


def test_appveyors_ubuntu_images_run_on_codebuilds_matching_curated_image() -> None:
    assert route("Ubuntu2204", [], codebuild=True) == Route(CODEBUILD, "aws/codebuild/standard:7.0")


@pytest.mark.parametrize(
    "image",
    ["python:3.12", "node", "public.ecr.aws/docker/library/node:22", "localhost:5000/team/tool@sha256:" + "a" * 64],
)
def test_a_container_image_runs_on_codebuild_as_named(image: str) -> None:
    assert route(image, [], codebuild=True) == Route(CODEBUILD, image)


def test_the_default_image_is_the_services_runner_whatever_agents_serve() -> None:
    assert route("Ubuntu", ["ubuntu", "gpu-box"], codebuild=True) == Route(RUNNER)


def test_an_accounts_build_agent_wins_over_the_cloud_for_the_images_it_serves() -> None:
    assert route("visual studio 2022", ["Visual Studio 2022"], codebuild=True) == Route(AGENT, "Visual Studio 2022")
    assert route("Ubuntu2204", ["ubuntu2204"], codebuild=True) == Route(AGENT, "ubuntu2204")


@pytest.mark.parametrize(
    "image", ["Visual Studio 2022", "Previous Visual Studio 2019", "macos-sonoma", "Ubuntu1804", "Ubuntu2004"]
)
def test_an_image_no_executor_serves_is_refused_naming_it_and_what_is_on_offer(image: str) -> None:
    with pytest.raises(NoExecutor) as refusal:
        route(image, ["Windows Server 2025"], codebuild=True)
    message = str(refusal.value)
    assert f"'{image}'" in message
    assert "Ubuntu2204" in message and "container images" in message and "Windows Server 2025" in message
    assert "CONVEYOR_CODEBUILD_PROJECT" not in message


@pytest.mark.parametrize("local", [True, False])
def test_a_refusal_offers_the_versioned_ubuntu_images_where_the_local_runner_runs_them(local: bool) -> None:
    with pytest.raises(NoExecutor) as refusal:
        route("macos-sonoma", [], codebuild=False, local=local)

    assert ("Ubuntu1604, Ubuntu1804, Ubuntu2004, Ubuntu2204, Ubuntu2404 (containers" in str(refusal.value)) is local


def test_a_container_image_without_codebuild_is_refused_saying_codebuild_is_not_set_up() -> None:
    with pytest.raises(NoExecutor) as refusal:
        route("python:3.12", [], codebuild=False)
    assert "'python:3.12'" in str(refusal.value)
    assert "CodeBuild" in str(refusal.value) and "CONVEYOR_CODEBUILD_PROJECT" in str(refusal.value)
    assert "container images such as" not in str(refusal.value)  # not on offer here


@pytest.mark.parametrize("image", ["Ubuntu1604", "ubuntu1804", "Ubuntu2004", "Ubuntu2204", "Ubuntu2404"])
def test_under_make_run_appveyors_versioned_ubuntu_images_run_on_the_local_runner_in_their_container(
    image: str,
) -> None:
    canonical = image[0].upper() + image[1:]
    assert route(image, [], codebuild=False, local=True) == Route(RUNNER, canonical)
    assert route(None, [], codebuild=False, local=True) == Route(RUNNER)  # no image: the local image too
    assert route(image, [image], codebuild=False, local=True) == Route(AGENT, image)  # an agent still wins


def test_the_local_image_stands_for_no_other_image() -> None:
    with pytest.raises(NoExecutor):
        route("python:3.12", [], codebuild=False, local=True)
    with pytest.raises(NoExecutor):
        route("Visual Studio 2022", [], codebuild=False, local=True)


REPOSITORY = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/conveyor-prod-images"


@pytest.mark.parametrize("image", ["Ubuntu1604", "ubuntu1804", "Ubuntu2004", "UBUNTU2204", "Ubuntu2404"])
def test_in_aws_with_an_image_repository_every_ubuntu_name_runs_on_codebuild_in_conveyors_own_image(
    image: str,
) -> None:
    expected = f"{REPOSITORY}:{image.lower()}"
    assert route(image, [], codebuild=True, repository=REPOSITORY) == Route(CODEBUILD, expected)
    assert route(image, [image], codebuild=True, repository=REPOSITORY) == Route(AGENT, image)  # an agent wins


@pytest.mark.parametrize("image", [None, "", "Ubuntu", "ubuntu"])
def test_in_aws_with_an_image_repository_no_image_runs_on_codebuild_in_the_image_make_run_runs_it_in(
    image: str | None,
) -> None:
    assert route(image, [], codebuild=True, repository=REPOSITORY) == Route(CODEBUILD, f"{REPOSITORY}:ubuntu")
    assert route(image, ["Ubuntu"], codebuild=True, repository=REPOSITORY).executor == CODEBUILD  # no agent takes it
    assert route(image, [], codebuild=False, repository=REPOSITORY) == Route(RUNNER)  # no CodeBuild: the function
    assert route(image, [], codebuild=True, local=True, repository=REPOSITORY) == Route(RUNNER)  # make run


def test_conveyors_own_images_are_trusted_as_curated_ones_and_a_users_image_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONVEYOR_IMAGE_REPOSITORY", REPOSITORY)
    assert is_curated(f"{REPOSITORY}:ubuntu2204")
    assert is_curated("aws/codebuild/standard:7.0")
    assert not is_curated(f"{REPOSITORY}:latest")  # not a tag `conveyor images push` pushes
    assert not is_curated("python:3.12")
    assert runs_in_cloud("Ubuntu1804")  # an agent registered for it takes those jobs from CodeBuild
    monkeypatch.delenv("CONVEYOR_IMAGE_REPOSITORY")
    assert not is_curated(f"{REPOSITORY}:ubuntu2204")
    assert not runs_in_cloud("Ubuntu1804")
