"""Collecting a job's artifacts: the files its ``artifacts:`` entries name in the build folder, stored in S3.

Paths are relative to the build folder; ``\\`` and ``/`` both separate, ``$(VAR)`` takes a build variable, and
``*``, ``?`` and ``**`` (any depth) match files as pathlib's glob does (case-sensitively, on this Linux runner);
a wildcard matches files only, while a path naming a folder uploads the folder as one zip.
Nothing outside the build folder is ever uploaded: ``..``, absolute paths and symlinks leading out are refused.
Where a file goes is the caller's ``upload``: the job protocol's presigned URL for a runner.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from chalicelib.protocol.artifact_types import canonical_type
from chalicelib.runner.beneath import Outside, Pinned, descriptor_path, opened, pin

Upload = Callable[[str, Path], int]  # (file name, local file) -> its size once stored

_VARIABLE = re.compile(r"\$\(([^)]*)\)")
_WILDCARDS = re.compile(r"[*?]")  # AppVeyor's wildcards; a path without them is taken literally, "[" and all
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Artifact:
    """One stored artifact, as the API describes it.

    ``name`` is the entry's ``name``; without one AppVeyor makes up a GUID, Conveyor takes the file's base name
    without extension instead, which stays the same from build to build (deployments select artifacts by name).
    """

    file_name: str  # relative to the build folder, "/"-separated: what the API shows and download URLs use
    name: str
    type: str  # one of ARTIFACT_TYPES (protocol/artifact_types.py)
    size: int
    created: datetime  # UTC, when stored


def collect_artifacts(
    build_folder: Path,
    entries: list[dict[str, Any]],
    variables: Mapping[str, str],
    upload: Upload,
    log: Callable[[str], None],
    *,
    base: Path | None = None,
) -> list[Artifact]:
    """Find, store and describe the job's artifacts, reading the build folder pinned below ``base`` (a folder the
    runner made; by default the build folder's parent): raises NotAFolder when a build replaced it by a link. (On
    a Windows build agent, runner/windows/artifacts.py collects them by path.)"""
    with pin(base or build_folder.parent, build_folder) as root:
        artifacts: list[Artifact] = []
        stored: set[str] = set()
        for entry in entries:
            path_text = str(entry.get("path") or "")
            artifact_type = canonical_type(entry.get("type"), path_text, log)
            expanded = expand_variables(path_text, variables)
            for relative, files_only in _find(root, expanded, path_text, log):
                artifact = _collect(root, relative, files_only, entry, artifact_type, stored, upload, log)
                if artifact is not None:
                    artifacts.append(artifact)
        return artifacts


def _collect(
    root: Pinned,
    relative: str,
    files_only: bool,
    entry: dict[str, Any],
    artifact_type: str,
    stored: set[str],
    upload: Upload,
    log: Callable[[str], None],
) -> Artifact | None:
    """Open one match beneath the build folder and store what was opened (a folder as a zip)."""
    try:
        fd = root.open(relative)
    except Outside:
        log(f"Artifact {relative} points outside the build folder: skipped.")
        return None
    except OSError as error:  # gone since it was found, or unreadable
        log(f"Artifact {relative} could not be read ({error.strerror}): skipped.")
        return None
    with opened(fd):
        mode = os.fstat(fd).st_mode
        is_folder = stat.S_ISDIR(mode)
        if not stat.S_ISREG(mode) and (files_only or not is_folder):
            return None  # a wildcard matches files only; a pipe or a socket is no artifact
        file_name = f"{relative}.zip" if is_folder else relative
        if file_name in stored:
            log(f"Skipping artifact {file_name}: an artifact of that name was already uploaded.")
            return None
        stored.add(file_name)
        name = str(entry.get("name") or PurePosixPath(file_name).stem)
        if not is_folder:
            return upload_file(descriptor_path(fd), file_name, name, artifact_type, upload, log)
        with tempfile.TemporaryDirectory(prefix="conveyor-artifact-") as scratch:
            archive = Path(scratch, PurePosixPath(file_name).name)
            _zip_folder(root, fd, archive, PurePosixPath(relative).name, log)
            return upload_file(archive, file_name, name, artifact_type, upload, log)


def expand_variables(text: str, variables: Mapping[str, str]) -> str:
    """``$(NAME)`` replaced by the variable's value (names ignore case, as on Windows); unknown names by nothing."""
    by_lower_name = {name.lower(): value for name, value in variables.items()}

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return variables[name] if name in variables else by_lower_name.get(name.lower(), "")

    return _VARIABLE.sub(value, text)


def relative_pattern(path_text: str) -> str | None:
    """The path as "/"-separated parts below the build folder; None when it could name anything outside."""
    text = path_text.replace("\\", "/")
    if text.startswith("/") or _WINDOWS_DRIVE.match(text):
        return None
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts or not parts:  # no parts: the build folder itself, which is no artifact either
        return None
    return "/".join(parts)


def _listed_inside(root: Pinned, matches: list[str]) -> list[str]:
    """The wildcard's matches listed in folders beneath the build folder: not those listed through a link leading
    out, whose names are the machine's, not the build's to read in its log."""
    inside: dict[str, bool] = {}
    for folder in {posixpath.dirname(match) or "." for match in matches}:
        try:
            os.close(root.open(folder))
            inside[folder] = True
        except OSError:
            inside[folder] = False
    return [match for match in matches if inside[posixpath.dirname(match) or "."]]


def _find(root: Pinned, expanded: str, path_text: str, log: Callable[[str], None]) -> list[tuple[str, bool]]:
    """(path relative to the build folder, whether only a file will do) of everything the entry names there, logging
    what is not; nothing is read yet (``_collect`` opens each and checks what it opened)."""
    pattern = relative_pattern(expanded)
    if pattern is None:
        log(f"Artifact path '{path_text}' is outside the build folder: skipped.")
        return []
    if _WILDCARDS.search(pattern):
        found = [(match, True) for match in _matches(root, pattern, path_text, log)]
    else:
        exists = (root.path / pattern).exists() or (root.path / pattern).is_symlink()
        found = [(pattern, False)] if exists else []
    if not found:
        log(f"No artifacts found matching '{path_text}'.")
    return found


def _matches(root: Pinned, pattern: str, path_text: str, log: Callable[[str], None]) -> list[str]:
    """The files a wildcard pattern matches, listed in folders beneath the build folder."""
    if pattern.endswith("**"):  # "out\**" means every file below out: pathlib's "**" alone yields folders
        pattern += "/*"
    try:
        matches = sorted(path.relative_to(root.path).as_posix() for path in root.path.glob(pattern) if path.is_file())
    except ValueError:  # e.g. "a**b": "**" must be a whole path component
        log(f"Artifact path '{path_text}' is not a valid pattern: skipped.")
        return []
    inside = _listed_inside(root, matches)
    if len(inside) < len(matches):
        log(f"Artifact path '{path_text}' leads outside the build folder through a link: its matches there skipped.")
    return inside


class ArtifactRefused(Exception):
    """An artifact past the job's limits (MAX_ARTIFACTS_BYTES in all); the message says so."""


def upload_file(
    local_path: Path, file_name: str, name: str, artifact_type: str, upload: Upload, log: Callable[[str], None]
) -> Artifact | None:
    """Store one file as an artifact and describe it (None: refused past the job's limits, the log says why)."""
    log(f"Uploading artifact {file_name} ({local_path.stat().st_size:,} bytes)")
    try:
        size = upload(file_name, local_path)
    except ArtifactRefused as error:
        log(str(error))
        return None
    return Artifact(file_name=file_name, name=name, type=artifact_type, size=size, created=datetime.now(UTC))


def _zip_folder(root: Pinned, folder_fd: int, archive: Path, folder_name: str, log: Callable[[str], None]) -> None:
    """Zip an opened folder's files (names relative to it) into ``archive``, each opened beneath the build folder
    and read from its descriptor; links to folders are listed, never entered (fwalk checks each folder it opens)."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for current, folder_names, file_names, current_fd in os.fwalk(".", dir_fd=folder_fd):
            folder_names.sort()
            for file_name in sorted(file_names):
                member = posixpath.normpath(posixpath.join(current, file_name))
                try:
                    fd = root.open_file(file_name, dir_fd=current_fd)
                except Outside:
                    log(f"Skipping {member} in {folder_name}.zip: it points outside the build folder.")
                    continue
                except OSError:  # a dangling link, a pipe, a socket, or gone meanwhile
                    continue
                with opened(fd):
                    zipped.write(descriptor_path(fd), member)
