"""A job's ``artifacts:`` entries on Windows, read by path: on a Windows build agent the build runs as the agent's user,
with no sandbox, so there is no boundary a descriptor-pinned read (runner/beneath.py) would keep. Paths take ``\\``
or ``/``, wildcards match as Windows names do (ignoring case), and nothing outside the build folder is uploaded."""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from chalicelib.runner import artifacts as shared


def collect(
    build_folder: Path,
    entries: list[dict[str, Any]],
    variables: Mapping[str, str],
    upload: shared.Upload,
    log: Callable[[str], None],
) -> list[shared.Artifact]:
    """Find, store and describe the job's artifacts."""
    root = build_folder.resolve()
    found: list[shared.Artifact] = []
    stored: set[str] = set()
    for entry in entries:
        path_text = str(entry.get("path") or "")
        artifact_type = shared.canonical_type(entry.get("type"), path_text, log)
        pattern = shared.relative_pattern(shared.expand_variables(path_text, variables))
        if pattern is None:
            log(f"Artifact path '{path_text}' is outside the build folder: skipped.")
            continue
        wildcard = any(character in pattern for character in "*?")
        if wildcard:
            glob = pattern + "/*" if pattern.endswith("**") else pattern
            matches = sorted(path for path in root.glob(glob) if path.is_file())
        else:
            matches = [root / pattern] if (root / pattern).exists() else []
        if not matches:
            log(f"No artifacts found matching '{path_text}'.")
        for match in matches:
            if not match.resolve().is_relative_to(root):
                log(f"Artifact {match.relative_to(root).as_posix()} points outside the build folder: skipped.")
                continue
            relative = match.relative_to(root).as_posix()
            file_name = f"{relative}.zip" if match.is_dir() else relative
            if file_name in stored:
                log(f"Skipping artifact {file_name}: an artifact of that name was already uploaded.")
                continue
            stored.add(file_name)
            name = str(entry.get("name") or PurePosixPath(file_name).stem)
            if (artifact := _store(match, file_name, name, artifact_type, upload, log)) is not None:
                found.append(artifact)
    return found


def _store(
    path: Path, file_name: str, name: str, artifact_type: str, upload: shared.Upload, log: Callable[[str], None]
) -> shared.Artifact | None:
    if path.is_file():
        return shared.upload_file(path, file_name, name, artifact_type, upload, log)
    with tempfile.TemporaryDirectory(prefix="conveyor-artifact-") as scratch:
        archive = Path(scratch, PurePosixPath(file_name).name)
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
            for current, folders, files in os.walk(path):
                folders.sort()
                for file in sorted(files):
                    zipped.write(Path(current, file), Path(current, file).relative_to(path).as_posix())
        return shared.upload_file(archive, file_name, name, artifact_type, upload, log)
