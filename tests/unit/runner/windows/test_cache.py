"""The build cache on a Windows build agent, by path: entries anywhere on the machine (%LOCALAPPDATA%\\pip\\cache),
%NAME% taken from the job's variables, restored only while their dependencies are unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

from chalicelib.runner.windows.cache import expand, parse_entries, restore, save


class MemoryStore:
    """The job's cache folder, in memory."""

    def __init__(self) -> None:
        self.archives: dict[str, tuple[bytes, dict[str, str]]] = {}

    def metadata(self, entry_ids: list[str]) -> dict[str, dict[str, str] | None]:
        return {entry_id: self.archives[entry_id][1] if entry_id in self.archives else None for entry_id in entry_ids}

    def download(self, entry_id: str, path: Path) -> bool:
        if entry_id not in self.archives:
            return False
        path.write_bytes(self.archives[entry_id][0])
        return True

    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> None:
        self.archives[entry_id] = (path.read_bytes(), metadata)

    def prune(self, keep: list[str]) -> int:
        gone = [entry_id for entry_id in self.archives if entry_id not in keep]
        for entry_id in gone:
            del self.archives[entry_id]
        return len(gone)


def test_names_between_percent_signs_take_the_jobs_variables_in_any_case() -> None:
    variables = {"LocalAppData": "C:\\Users\\ci\\AppData\\Local"}

    assert expand("%LOCALAPPDATA%\\pip\\cache", variables) == "C:\\Users\\ci\\AppData\\Local\\pip\\cache"
    assert expand("%UNKNOWN%\\x", variables) == "%UNKNOWN%\\x"


def test_an_entry_outside_the_build_folder_is_saved_and_restored_while_its_dependencies_hold(tmp_path: Path) -> None:
    build, machine = tmp_path / "build", tmp_path / "machine"
    (machine / "pip" / "cache" / "wheels").mkdir(parents=True)
    (machine / "pip" / "cache" / "wheels" / "six.whl").write_bytes(b"wheel")
    build.mkdir()
    (build / "requirements.txt").write_text("six\n")
    variables = {"LOCALAPPDATA": str(machine)}
    entries = ["%LOCALAPPDATA%/pip/cache -> requirements.txt"]
    store, said = MemoryStore(), []

    save(build, entries, variables, store, said.append)
    save(build, entries, variables, store, said.append)
    shutil.rmtree(machine / "pip")
    restore(build, entries, variables, store, said.append)
    (build / "requirements.txt").write_text("six\nattrs\n")
    restore(build, entries, variables, store, said.append)

    assert (machine / "pip" / "cache" / "wheels" / "six.whl").read_bytes() == b"wheel"
    assert said == [
        f"Updating build cache entry '{entries[0].partition(' ->')[0]}'",
        "Build cache entry '%LOCALAPPDATA%/pip/cache' is up to date",
        "Restoring build cache entry '%LOCALAPPDATA%/pip/cache'",
        "Cache entry '%LOCALAPPDATA%/pip/cache' is out of date: not restored",
    ]


def test_an_entry_no_longer_configured_is_removed_and_a_dependency_outside_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "node_modules").mkdir()
    store, said = MemoryStore(), []
    save(tmp_path, ["node_modules"], {}, store, said.append)

    save(tmp_path, ["packages -> ../outside.lock"], {}, store, said.append)

    assert said[1:] == [
        "Dependency '../outside.lock' of cache entry 'packages' is outside the build folder: ignored",
        "Build cache entry 'packages' not found: not saved",
        "Removed 1 build cache entry no longer configured",
    ]
    assert parse_entries(tmp_path, ["a -> b, c"], {}, print)[0].dependencies == ("b", "c")
