"""A job's osType from its image, as AppVeyor answers it."""

from __future__ import annotations

import pytest

from chalicelib.core.os_types import is_windows, os_type


@pytest.mark.parametrize(
    "image", ["Visual Studio 2019", "visual studio 2022", "Previous Visual Studio 2017", "Visual Studio 2013", "WSL"]
)
def test_a_windows_image_is_windows(image: str) -> None:
    assert os_type(image) == "Windows"
    assert is_windows(f" {image} ")  # as appveyor.yml may space it


@pytest.mark.parametrize("image", [None, "", "Ubuntu", "Ubuntu2204", "python:3.12", "Visual Studio Code"])
def test_no_image_an_ubuntu_one_or_a_container_image_is_ubuntu(image: str | None) -> None:
    assert os_type(image) == "Ubuntu"
    assert not is_windows(image)


@pytest.mark.parametrize("image", ["macOS", "macos-sonoma"])
def test_a_macos_image_is_macos(image: str) -> None:
    assert os_type(image) == "macOS"
