"""docs/map.md, the newcomer's map of where each kind of change goes, names only paths that exist: a module that
moves or goes takes its line in the map with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "map.md"
# a path: has a slash, or is a file name with an extension the repository uses, or the Makefile
_PATH = re.compile(r"^(?:[\w.-]+/[\w./-]*|[\w-]+\.(?:py|md|sh|toml|json|js)|Makefile)$")


def named_paths(text: str) -> list[str]:
    """The paths the map names in code spans, and the files its links point to (relative to docs/)."""
    spans = [span for span in re.findall(r"`([^`]+)`", text) if _PATH.match(span)]
    links = [f"docs/{target}" for target in re.findall(r"\]\(([\w.-]+\.md)(?:#[\w-]*)?\)", text)]
    return spans + links


def test_every_path_the_map_names_exists() -> None:
    paths = named_paths(MAP.read_text())

    missing = [path for path in paths if not (ROOT / path).exists()]

    assert len(paths) > 40  # the map names the files of each change, not a handful
    assert missing == [], f"docs/map.md names paths that do not exist: {missing}"


def test_the_map_names_every_context_of_the_domain() -> None:
    contexts = sorted(
        folder.name
        for folder in (ROOT / "chalicelib" / "domain").iterdir()
        if folder.is_dir() and (folder / "__init__.py").exists()
    )
    text = MAP.read_text()

    assert [context for context in contexts if f"chalicelib/domain/{context}/" not in text] == []


def test_a_path_that_does_not_exist_is_found() -> None:
    assert named_paths("`chalicelib/domain/nowhere.py` and [x](nothing.md)") == [
        "chalicelib/domain/nowhere.py",
        "docs/nothing.md",
    ]
