"""An artifact's type as AppVeyor spells it, however the build wrote it; an unknown one is Auto, with a warning."""

from __future__ import annotations

from chalicelib.protocol.artifact_types import ARTIFACT_TYPES, canonical_type


def test_a_type_in_any_case_is_spelled_as_appveyor_spells_it() -> None:
    warnings: list[str] = []

    assert canonical_type(" nugetPACKAGE ", "out/app.nupkg", warnings.append) == "NuGetPackage"
    assert warnings == []


def test_no_type_is_auto_without_a_warning() -> None:
    warnings: list[str] = []

    assert [canonical_type(value, "out/app.zip", warnings.append) for value in (None, "", "  ")] == ["Auto"] * 3
    assert warnings == []


def test_an_unknown_type_is_auto_and_the_log_says_so() -> None:
    warnings: list[str] = []

    assert canonical_type("Tarball", "out/app.tgz", warnings.append) == "Auto"
    assert warnings == ["Unknown artifact type 'Tarball' for 'out/app.tgz'; using Auto."]


def test_every_type_is_its_own_spelling() -> None:
    assert [canonical_type(kind.lower(), "x", print) for kind in ARTIFACT_TYPES] == list(ARTIFACT_TYPES)
