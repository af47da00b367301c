"""``conveyor images push REPOSITORY``: Conveyor's image into an ECR repository, where AWS CodeBuild runs AppVeyor's
Ubuntu names in it (the stage's ``CONVEYOR_IMAGE_REPOSITORY``), so that ``image: Ubuntu2204`` means the same image
on AWS as under ``make run`` (docs/executors.md, "On AWS").

The image is the root filesystem ``make image`` built (.images/ubuntu, from images/ubuntu/), as one layer: its
files' owners shifted back from the local executor's user namespace to the image's own (root is 0 again). podman
imports it and pushes it under each name's tag, logged in to the registry with a token ECR gives the operator's AWS
credentials (boto3's ``GetAuthorizationToken``): no Docker daemon, and no password on a command line.
"""

from __future__ import annotations

import base64
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import boto3

from chalicelib.executors.containers import ID_SHIFT, IMAGE_STAMP
from chalicelib.executors.images import UBUNTU_IMAGES, own_image

IMAGE_CHANGES = ("USER root", 'CMD ["/bin/bash"]', "WORKDIR /home/appveyor")


class PushFailed(Exception):
    """A step of the push failed; the message says which."""


def unshift(shift: int) -> Callable[[tarfile.TarInfo], tarfile.TarInfo]:
    """A tar filter giving each file the owner it has in the image: the local tree's, less ``shift``."""

    def owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.uid - shift if info.uid >= shift else info.uid
        info.gid = info.gid - shift if info.gid >= shift else info.gid
        info.uname = info.gname = ""  # numbers only: the names are this machine's, not the image's
        return info

    return owner


def write_layer(root: Path, archive: Path, shift: int = ID_SHIFT) -> None:
    """The root filesystem at ``root`` as one tar layer, owners as the image has them."""
    with tarfile.open(archive, "w") as tar:
        for entry in sorted(os.listdir(root)):
            tar.add(root / entry, arcname=entry, filter=unshift(shift))


def tags(repository: str) -> list[str]:
    """The image's names in ``repository``: one per AppVeyor Ubuntu name (one image stands for each, as locally)."""
    return [own_image(name, repository) for name in UBUNTU_IMAGES]


def push(repository: str, root: Path, say: Callable[[str], None] = print) -> list[str]:
    """Push the image at ``root`` to ``repository`` (``<account>.dkr.ecr.<region>.amazonaws.com/<name>``) under
    every tag; the tags pushed."""
    registry = repository.split("/", 1)[0]
    if "/" not in repository or ".dkr.ecr." not in registry:
        raise PushFailed(
            f"'{repository}' is not an ECR repository URI (<account>.dkr.ecr.<region>.amazonaws.com/NAME)."
        )
    if not (root / IMAGE_STAMP).is_file():
        raise PushFailed(f"{root} holds no image: build it first (make image, as root).")
    names = tags(repository)
    with tempfile.TemporaryDirectory(dir=root.parent) as scratch:
        archive = Path(scratch) / "layer.tar"
        say(f"writing {root} as one layer")
        write_layer(root, archive)
        changes = [argument for change in IMAGE_CHANGES for argument in ("--change", change)]
        _run(["podman", "import", *changes, str(archive), names[0]], "import the image")
    for name in names[1:]:
        _run(["podman", "tag", names[0], name], "tag the image")
    _run(["podman", "login", "--username", "AWS", "--password-stdin", registry], "log in", _password(registry))
    for name in names:
        say(f"pushing {name}")
        _run(["podman", "push", name], f"push {name}")
    return names


def _password(registry: str) -> str:
    """ECR's registry password for the operator's AWS credentials, from the registry's own region."""
    region = registry.split(".dkr.ecr.", 1)[1].split(".", 1)[0]
    answer = boto3.client("ecr", region_name=region).get_authorization_token()
    token = answer["authorizationData"][0]["authorizationToken"]
    return base64.b64decode(token).decode().split(":", 1)[1]


def _run(argv: list[str], what: str, stdin: str | None = None) -> None:
    try:
        done = subprocess.run(argv, input=stdin, text=True, check=False)
    except OSError as error:
        raise PushFailed(f"could not {what}: {argv[0]}: {error.strerror}") from error
    if done.returncode != 0:
        raise PushFailed(f"could not {what}: {argv[0]} {argv[1]} exited with code {done.returncode}")
