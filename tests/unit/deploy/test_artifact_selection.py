"""Which artifacts a provider's ``artifact`` setting chooses: names, file names and /regex/ patterns, separated by
commas or spaces; whatever names nothing fails the deployment rather than deliver less than asked."""

from __future__ import annotations

import pytest

from chalicelib.deploy.base import DeployArtifact, DeployFailed, selected
from chalicelib.deploy.nuget import chosen_packages

ARTIFACTS = [
    DeployArtifact("out/app.zip", "App", "Zip", 10, "builds/1/"),
    DeployArtifact("site/index.html", "Site", "Auto", 20, "builds/1/"),
    DeployArtifact("pkg/Acme.Lib.1.0.nupkg", "Acme Lib", "Auto", 30, "builds/1/"),
    DeployArtifact("pkg/Acme.Lib.1.0.snupkg", "Acme.Lib.1.0", "Auto", 40, "builds/1/"),
]


def files(setting: str) -> list[str]:
    return [artifact.file_name for artifact in selected(ARTIFACTS, setting)]


@pytest.mark.parametrize(
    ("setting", "chosen"),
    [
        ("", ["out/app.zip", "site/index.html", "pkg/Acme.Lib.1.0.nupkg", "pkg/Acme.Lib.1.0.snupkg"]),
        ("Site, App", ["out/app.zip", "site/index.html"]),  # in the build's order
        ("App site/index.html", ["out/app.zip", "site/index.html"]),
        ("Acme Lib", ["pkg/Acme.Lib.1.0.nupkg"]),  # a name with a space, not two names
        (r"/\.s?nupkg$/", ["pkg/Acme.Lib.1.0.nupkg", "pkg/Acme.Lib.1.0.snupkg"]),
        (r"/^out\//, Site", ["out/app.zip", "site/index.html"]),  # a file name searched
        ("/^Acme/", ["pkg/Acme.Lib.1.0.nupkg", "pkg/Acme.Lib.1.0.snupkg"]),  # a name searched
        (r"/p{1,2}\.zip/, Site", ["out/app.zip", "site/index.html"]),  # a comma inside the pattern
        ("/nupkg/ /html/", ["site/index.html", "pkg/Acme.Lib.1.0.nupkg", "pkg/Acme.Lib.1.0.snupkg"]),
    ],
)
def test_names_file_names_and_patterns_choose(setting: str, chosen: list[str]) -> None:
    assert files(setting) == chosen


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ("App Docs", "No artifact of the build is named 'Docs'"),
        ("/\\.exe$/", r"No artifact of the build matches '/\\\\.exe\$/'"),
        ("/(?<=a)pp/", "not supported: patterns run on RE2"),
    ],
)
def test_what_chooses_nothing_fails(setting: str, reason: str) -> None:
    with pytest.raises(DeployFailed, match=reason):
        selected(ARTIFACTS, setting)


def test_nuget_pushes_every_nupkg_by_default_and_a_snupkg_only_when_named() -> None:
    assert [package.file_name for package in chosen_packages(ARTIFACTS, "")] == ["pkg/Acme.Lib.1.0.nupkg"]
    assert len(chosen_packages(ARTIFACTS, "/Acme/")) == 2
    with pytest.raises(DeployFailed, match="not out/app.zip"):
        chosen_packages(ARTIFACTS, "/Acme/ App")
