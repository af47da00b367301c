"""A Windows build agent's artifacts, read by path: backslashes, wildcards, folders zipped, nothing outside."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from chalicelib.runner.windows.artifacts import collect


def test_artifacts_take_windows_paths_and_wildcards_and_stay_in_the_build_folder(tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "bin" / "Release").mkdir(parents=True)
    (build / "bin" / "Release" / "app.zip").write_bytes(b"zip")
    (build / "bin" / "Release" / "notes.txt").write_bytes(b"notes")
    (build / "docs" / "api").mkdir(parents=True)
    (build / "docs" / "api" / "index.html").write_bytes(b"<html>")
    (tmp_path / "secret.txt").write_text("not the build's")
    uploaded: dict[str, bytes] = {}
    said: list[str] = []

    def upload(file_name: str, path: Path) -> int:
        uploaded[file_name] = path.read_bytes()
        return len(uploaded[file_name])

    entries = [
        {"path": "bin\\$(configuration)\\*.zip", "name": "app"},
        {"path": "docs\\api"},
        {"path": "..\\secret.txt"},
        {"path": "missing\\*.dll"},
    ]
    found = collect(build, entries, {"CONFIGURATION": "Release"}, upload, said.append)

    assert [(a.file_name, a.name, a.size) for a in found] == [
        ("bin/Release/app.zip", "app", 3),
        ("docs/api.zip", "api", len(uploaded["docs/api.zip"])),
    ]
    assert zipfile.ZipFile(io.BytesIO(uploaded["docs/api.zip"])).namelist() == ["index.html"]
    assert "Artifact path '..\\secret.txt' is outside the build folder: skipped." in said
    assert "No artifacts found matching 'missing\\*.dll'." in said
