"""``conveyor images push`` (chalicelib/executors/image_push.py): the local image into the stage's ECR repository,
tagged once per Ubuntu name, through podman, with ECR's token on standard input. podman is a stand-in here that
records what it is asked (nothing is sent anywhere); ECR is moto's."""

from __future__ import annotations

import json
import os
import stat
import tarfile
from pathlib import Path

import pytest
from moto import mock_aws

from chalicelib.cli import main
from chalicelib.executors.containers import ID_SHIFT
from chalicelib.executors.image_push import unshift

REPOSITORY = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/conveyor-prod-images"
NAMES = ["ubuntu", "ubuntu1604", "ubuntu1804", "ubuntu2004", "ubuntu2204", "ubuntu2404"]
PODMAN = """#!/usr/bin/env python3
import json, os, sys
stdin = sys.stdin.read() if "--password-stdin" in sys.argv else None
layer = None
if sys.argv[1] == "import":
    import tarfile
    with tarfile.open(sys.argv[-2]) as tar:
        layer = {member.name: [member.uid, member.gid] for member in tar.getmembers()}
with open(os.environ["PODMAN_CALLS"], "a") as calls:
    calls.write(json.dumps({"argv": sys.argv[1:], "stdin": stdin, "layer": layer}) + "\\n")
"""


def test_the_layers_owners_are_the_images_own_not_the_local_executors_shifted_ones() -> None:
    shifted = tarfile.TarInfo("home/appveyor/.bashrc")
    shifted.uid, shifted.gid, shifted.uname = ID_SHIFT + 1000, ID_SHIFT + 1000, "someone-here"
    root = tarfile.TarInfo("usr/bin/sudo")
    root.uid = root.gid = ID_SHIFT

    assert (unshift(ID_SHIFT)(shifted).uid, shifted.gid, shifted.uname) == (1000, 1000, "")
    assert (unshift(ID_SHIFT)(root).uid, root.gid) == (0, 0)


@mock_aws
def test_push_imports_the_image_tags_it_per_ubuntu_name_and_logs_in_with_the_token_on_standard_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "images" / "ubuntu"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "conveyor-image").write_text("Ubuntu (test)\n")
    (root / "bin").mkdir()
    (root / "bin" / "tool").write_text("#!/bin/sh\n")
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "podman").write_text(PODMAN)
    (bin_folder / "podman").chmod(stat.S_IRWXU)
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PODMAN_CALLS", str(calls))
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)  # moto's ECR here, not a suite's local emulator

    assert main(["images", "push", REPOSITORY, "--root", str(root)]) == 0

    made = [json.loads(line) for line in calls.read_text().splitlines()]
    verbs = [call["argv"][0] for call in made]
    assert verbs == ["import", *["tag"] * (len(NAMES) - 1), "login", *["push"] * len(NAMES)]
    assert made[0]["argv"][-1] == f"{REPOSITORY}:ubuntu"
    assert {"etc/conveyor-image", "bin/tool"} <= set(made[0]["layer"])
    assert [call["argv"][-1] for call in made if call["argv"][0] == "push"] == [f"{REPOSITORY}:{n}" for n in NAMES]
    login = made[len(NAMES)]
    assert login["argv"] == ["login", "--username", "AWS", "--password-stdin", REPOSITORY.split("/")[0]]
    assert login["stdin"]  # ECR's password, on standard input only
    assert all(login["stdin"] not in " ".join(call["argv"]) for call in made)
    assert f"pushed {REPOSITORY}:ubuntu" in capsys.readouterr().out
    assert not list(root.parent.glob("tmp*"))  # the layer's scratch is gone


@pytest.mark.parametrize("repository", ["conveyor-images", "docker.io/library/ubuntu", "ghcr.io/team/images"])
def test_push_refuses_a_repository_that_is_not_ecrs_before_running_anything(
    repository: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["images", "push", repository, "--root", str(tmp_path)])

    assert "is not an ECR repository URI" in str(ended.value)


def test_push_without_a_built_image_says_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["images", "push", REPOSITORY, "--root", str(tmp_path / "nothing")])

    assert "make image" in str(ended.value)
