"""Cache entries outside the build folder: the home folder as appveyor.yml files spell it, and which paths count."""

from __future__ import annotations

import pytest

from chalicelib.runner.outside_cache import expand_home, outside_path

HOME = "/home/appveyor"


@pytest.mark.parametrize(
    ("entry", "expanded"),
    [
        ("$HOME/.cargo", "/home/appveyor/.cargo"),
        ("${HOME}/.cache/pip", "/home/appveyor/.cache/pip"),
        ("~/.m2", "/home/appveyor/.m2"),
        ("~", "/home/appveyor"),
        ("C:\\Users\\appveyor\\.m2", "/home/appveyor/.m2"),
        ("c:/users/AppVeyor/.ivy2", "/home/appveyor/.ivy2"),
        ("%USERPROFILE%\\.nuget\\packages", "/home/appveyor/.nuget/packages"),
        ("node_modules", "node_modules"),
        ("~other/.m2", "~other/.m2"),
        ("$HOMEBREW/x", "$HOMEBREW/x"),
    ],
)
def test_the_home_folder_is_expanded_as_appveyor_users_spell_it(entry: str, expanded: str) -> None:
    assert expand_home(entry, HOME) == expanded


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ("$HOME/.cargo/", "/home/appveyor/.cargo"),
        ("/opt/tools", "/opt/tools"),
        ("~/a/../b", "/home/appveyor/b"),
        ("/", None),
        ("~/..//..", None),
        ("$HOME/*.tmp", None),
        ("D:\\tools", None),
        ("relative/path", None),
    ],
)
def test_an_outside_entry_is_an_absolute_path_other_than_the_root_and_without_wildcards(
    entry: str, path: str | None
) -> None:
    assert outside_path(entry, HOME) == path
