"""Which executor runs a job, from its image: the table docs/executors.md shows, decided when the build is queued.

A build job runs on one of three executors, all running the same runner program with the job's ticket:

- ``runner``: the service's own runner (the runner function in AWS, a sandboxed process under ``make run``). It
  serves a job that names no image, or AppVeyor's ``Ubuntu``: Linux, 14 minutes at most, unless the stage has
  Conveyor's image in AWS (then CodeBuild runs them in it). Under ``make run`` it also serves ``Ubuntu1604`` ...
  ``Ubuntu2404``, in a container of the local image (executors/containers.py).
- ``codebuild``: AWS CodeBuild, where the stage configures a project (``CONVEYOR_CODEBUILD_PROJECT``). It serves
  AppVeyor's Ubuntu names in Conveyor's own images where the stage has them (``CONVEYOR_IMAGE_REPOSITORY``, an ECR
  repository ``conveyor images push`` fills: the image ``make run`` runs them in, so a name means the same in both
  places), else those CodeBuild's curated images match; and any container image (``python:3.12``,
  ``public.ecr.aws/docker/library/node:22``): the image needs Python 3.11+ for the runner.
- ``agent``: the account's build agents (``conveyor agent --builds`` on the team's own machines), for every
  image an agent is registered for. An account's agent wins over the cloud: a team that registers an agent for
  ``Ubuntu2204`` runs those jobs on its own machine.

An image no executor serves never runs elsewhere (a Windows image on Linux would "pass" scripts it never ran):
the job fails at once, naming the image and what is on offer.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from chalicelib.config import settings
from chalicelib.core.jobs import Executor
from chalicelib.core.os_types import MACOS_IMAGE, WINDOWS_IMAGE

# AppVeyor's image names (case does not matter, as on AppVeyor), and the CodeBuild image each maps to (None: no
# curated CodeBuild image has it). Windows and macOS images are served by build agents only.
MAX_IMAGE_LENGTH = 255  # a registry, a path, a tag and a digest fit well within it
DEFAULT_IMAGE = "Ubuntu"  # what the runner is, and what APPVEYOR_BUILD_WORKER_IMAGE says when the yml names none
UBUNTU_IMAGES: dict[str, str | None] = {
    "Ubuntu": None,  # the runner's own (the default short image)
    "Ubuntu1604": None,
    "Ubuntu1804": None,
    "Ubuntu2004": None,  # CodeBuild's standard:5.0 is Ubuntu 20.04, but its python3 is older than the runner's 3.11
    "Ubuntu2204": "aws/codebuild/standard:7.0",  # Ubuntu 22.04
    "Ubuntu2404": None,
}
# a container image reference: [registry[:port]/]path[:tag][@digest], lower-case path (Docker's grammar, simplified)
_CONTAINER = re.compile(
    r"^(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)


@dataclass(frozen=True)
class Route:
    """Where a job runs: the executor, and the image as that executor names it (None: the runner's own)."""

    executor: str  # an executor kind's name (executors/kinds/)
    image: str | None = None


class NoExecutor(Exception):
    """No executor here serves the image; the message names it and what is on offer."""


def route(
    image: str | None,
    agent_images: Collection[str],
    codebuild: bool,
    local: bool = False,
    repository: str | None = None,
) -> Route:
    """The executor for a job of ``image``, given the images the account's build agents serve, whether this
    stage has a CodeBuild project, whether its runner is the local one (``local``: it serves every Ubuntu
    image in a container, as ``Route(RUNNER, name)``), and where Conveyor's own images are (``repository``)."""
    name = (image or "").strip()
    key = name.casefold()
    if not name or key == DEFAULT_IMAGE.casefold():
        # in AWS, Conveyor's image where the stage has it (the tools make run's jobs have), else the runner function
        if codebuild and repository and not local:
            return Route(Executor.CODEBUILD, own_image(DEFAULT_IMAGE, repository))
        return Route(Executor.RUNNER)
    served = {served.casefold(): served for served in agent_images}
    if key in served:
        return Route(Executor.AGENT, served[key])
    cloud = _cloud_image(name, repository)
    if cloud is not None and codebuild:
        return Route(Executor.CODEBUILD, cloud)
    local_name = next((known for known in UBUNTU_IMAGES if known.casefold() == key), None)
    if local and local_name is not None:
        return Route(Executor.RUNNER, local_name)
    raise NoExecutor(_refusal(name, agent_images, codebuild, cloud is not None, local, repository))


def own_image(name: str, repository: str) -> str:
    """Where Conveyor's image of AppVeyor's Ubuntu name ``name`` is in ``repository`` (``conveyor images push``
    pushes each under the name's lower case: ``<repository>:ubuntu2204``)."""
    return f"{repository}:{name.lower()}"


def _cloud_image(name: str, repository: str | None) -> str | None:
    """The image CodeBuild would run for ``name``: Conveyor's own for AppVeyor's Ubuntu names where the stage has
    a repository of them, else a curated one; a container image reference as it is; None for anything else
    (Windows, macOS, unknown names)."""
    for known, cloud in UBUNTU_IMAGES.items():
        if known.casefold() == name.casefold():
            return own_image(known, repository) if repository else cloud
    if WINDOWS_IMAGE.match(name) or MACOS_IMAGE.match(name) or not _CONTAINER.match(name):
        return None
    return name


def runs_in_cloud(image: str) -> bool:
    """Whether the service runs jobs of ``image`` itself, on AWS CodeBuild where it is set up, when no build agent
    of the account serves it (``Ubuntu2204``, container images)."""
    repository = settings().image_repository
    return image.strip().casefold() != DEFAULT_IMAGE.casefold() and _cloud_image(image.strip(), repository) is not None


def is_own_image(image: str) -> bool:
    """Whether CodeBuild's ``image`` is Conveyor's own, from the stage's image repository (``make image``'s)."""
    repository = settings().image_repository
    return bool(repository) and image in {own_image(name, str(repository)) for name in UBUNTU_IMAGES}


def is_curated(image: str | None) -> bool:
    """Whether CodeBuild's ``image`` is one this table maps AppVeyor's names to, CodeBuild's or Conveyor's own (not
    an image of a user's choosing)."""
    repository = settings().image_repository
    ours = {own_image(name, repository) for name in UBUNTU_IMAGES} if repository else set()
    return image is not None and (image in UBUNTU_IMAGES.values() or image in ours)


def _refusal(
    image: str, agent_images: Collection[str], codebuild: bool, for_codebuild: bool, local: bool, repository: str | None
) -> str:
    offered = [f"{DEFAULT_IMAGE} (or no image: the service's runner)"]
    if local:
        versions = ", ".join(name for name in UBUNTU_IMAGES if name != DEFAULT_IMAGE)
        offered.append(f"{versions} (containers of Conveyor's local image)")
    if codebuild:
        names = ", ".join(
            name for name, cloud in UBUNTU_IMAGES.items() if (cloud or repository) and name != DEFAULT_IMAGE
        )
        offered.append(f"{names} and container images such as python:3.12 (AWS CodeBuild)")
    if agent_images:
        offered.append(f"{', '.join(sorted(agent_images, key=str.casefold))} (this account's build agents)")
    why = ""
    if for_codebuild and not codebuild:
        why = " AWS CodeBuild, which would run it, is not set up for this service (CONVEYOR_CODEBUILD_PROJECT)."
    return (
        f"No executor here provides the image '{image}', so its job was not run anywhere else.{why} Available: "
        f"{'; '.join(offered)}. A build agent registered for '{image}' (POST /api/build-agents, then "
        "`conveyor agent --builds` on that machine) would run it."
    )
