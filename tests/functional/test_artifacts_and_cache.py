"""Artifacts and the build cache as a user sees them: which files of a build folder get stored and under which
names, how they download, what a later build of the same job gets back, and that nothing outside the build
folder is ever uploaded or overwritten."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import requests

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.runner import outside_cache
from chalicelib.runner.artifacts import Artifact, collect_artifacts
from chalicelib.runner.beneath import Pinned
from chalicelib.runner.cache import CacheEntry, restore_cache, save_cache
from chalicelib.runner.cache_contents import dependencies_checksum
from chalicelib.runner.outside_cache import EXCHANGE, JobShell
from chalicelib.store.artifacts import artifact_url
from chalicelib.store.cache import cache_entry_metadata, delete_cache_keys, list_cache_keys
from tests.storage import get_cache_entry, put_artifact, put_cache_entry
from tests.support import unique


class CacheFolder(str):
    """A job's cache folder in S3, as the runner's CacheStore: what the job protocol does for a runner, done here."""

    def key(self, entry_id: str) -> str:
        return f"{self}{entry_id}.tgz"

    def metadata(self, entry_ids: list[str]) -> dict[str, dict[str, str] | None]:
        return {entry_id: cache_entry_metadata(self.key(entry_id)) for entry_id in entry_ids}

    def download(self, entry_id: str, path: Path) -> bool:
        return get_cache_entry(self.key(entry_id), path)

    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> None:
        put_cache_entry(self.key(entry_id), path, metadata)

    def prune(self, keep: list[str]) -> int:
        stale = [key for key in list_cache_keys(self) if key not in {self.key(entry_id) for entry_id in keep}]
        delete_cache_keys(stale)
        return len(stale)


class Log(list[str]):
    """The job's log lines, as the runner writes them."""

    def __call__(self, line: str) -> None:
        self.append(line)

    def mentions(self, *words: str) -> bool:
        return any(all(word in line for word in words) for line in self)


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return folder


def tree(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` by relative name, with its text."""
    return {
        path.relative_to(folder).as_posix(): path.read_text()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """A build folder, with a neighbouring secret the runner must never touch."""
    (tmp_path / "secret.txt").write_text("server secret")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "key.pem").write_text("server key")
    folder = tmp_path / "build"
    folder.mkdir()
    return folder


@pytest.fixture
def job_prefix() -> str:
    return f"builds/1/2/3/{unique('job')}/"


@pytest.fixture
def cache_prefix() -> CacheFolder:
    return CacheFolder(f"cache/1/2/{unique('job')}/")


def collect(
    build: Path,
    job_prefix: str,
    *entries: dict[str, Any],
    variables: dict[str, str] | None = None,
    log: Log | None = None,
) -> list[Artifact]:
    def upload(file_name: str, path: Path) -> int:
        return put_artifact(job_prefix, file_name, path)

    return collect_artifacts(build, list(entries), variables or {}, upload, log if log is not None else Log())


def stored_keys(prefix: str) -> list[str]:
    s3 = aws.client("s3")
    return [entry["Key"] for entry in s3.list_objects_v2(Bucket=settings().bucket, Prefix=prefix).get("Contents", [])]


def download(job_prefix: str, file_name: str) -> bytes:
    url = artifact_url(job_prefix, file_name)
    assert url is not None
    fetched = requests.get(url, timeout=30)
    assert fetched.status_code == 200
    return fetched.content


# --- artifacts ------------------------------------------------------------------------------------------------


def test_wildcards_match_files_at_any_depth_with_either_separator(build: Path, job_prefix: str) -> None:
    write(build, {"out/a.zip": "a", "out/deep/er/b.zip": "b", "out/c.txt": "c", "top.zip": "t", "out/d.txt": "d"})

    artifacts = collect(build, job_prefix, {"path": "out\\**\\*.zip"}, {"path": "out/?.txt"})

    assert [artifact.file_name for artifact in artifacts] == [
        "out/a.zip",
        "out/deep/er/b.zip",
        "out/c.txt",
        "out/d.txt",
    ]
    assert download(job_prefix, "out/deep/er/b.zip") == b"b"


def test_trailing_double_star_means_every_file_below(build: Path, job_prefix: str) -> None:
    write(build, {"logs/a.log": "a", "logs/old/b.log": "b"})

    artifacts = collect(build, job_prefix, {"path": "logs\\**"})

    assert [artifact.file_name for artifact in artifacts] == ["logs/a.log", "logs/old/b.log"]


def test_path_variables_come_from_the_build_and_unknown_ones_are_empty(build: Path, job_prefix: str) -> None:
    write(build, {"bin/Release/app.1.0.nupkg": "package", "readme.md": "hello"})

    artifacts = collect(
        build,
        job_prefix,
        {"path": "bin\\$(configuration)\\*.nupkg"},
        {"path": "$(nothing)readme.md"},
        variables={"CONFIGURATION": "Release"},
    )

    assert [artifact.file_name for artifact in artifacts] == ["bin/Release/app.1.0.nupkg", "readme.md"]


def test_name_defaults_to_base_name_and_type_to_auto_in_appveyor_spelling(build: Path, job_prefix: str) -> None:
    write(build, {"setup.zip": "z", "app.nupkg": "n", "notes.txt": "12345"})
    log = Log()

    artifacts = collect(
        build,
        job_prefix,
        {"path": "setup.zip"},
        {"path": "app.nupkg", "name": "package", "type": "nugetpackage"},
        {"path": "notes.txt", "type": "Spreadsheet"},
        log=log,
    )

    assert [(artifact.name, artifact.type, artifact.size) for artifact in artifacts] == [
        ("setup", "Auto", 1),
        ("package", "NuGetPackage", 1),
        ("notes", "Auto", 5),
    ]
    assert log.mentions("Spreadsheet", "Auto")
    assert log.mentions("Uploading artifact notes.txt (5 bytes)")
    assert all(artifact.created.utcoffset() is not None for artifact in artifacts)


def test_upload_log_line_shows_the_size_with_thousands_separators(build: Path, job_prefix: str) -> None:
    (build / "big.bin").write_bytes(b"x" * 1234)
    log = Log()

    collect(build, job_prefix, {"path": "big.bin"}, log=log)

    assert "Uploading artifact big.bin (1,234 bytes)" in log


def test_folder_uploads_as_one_zip_of_its_files(build: Path, job_prefix: str) -> None:
    write(build, {"out/logs/a.txt": "first", "out/logs/sub/b.txt": "second"})
    os.symlink(build.parent / "secret.txt", build / "out" / "logs" / "leak.txt")

    artifacts = collect(build, job_prefix, {"path": "out\\logs\\"})

    assert [(artifact.file_name, artifact.name) for artifact in artifacts] == [("out/logs.zip", "logs")]
    with zipfile.ZipFile(io.BytesIO(download(job_prefix, "out/logs.zip"))) as zipped:
        assert sorted(zipped.namelist()) == ["a.txt", "sub/b.txt"]
        assert zipped.read("sub/b.txt") == b"second"


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "..\\secret.txt",
        "sub/../../secret.txt",
        "/etc/passwd",
        "C:\\Windows\\win.ini",
        "leak.txt",
        "linked/key.pem",
        "linked/*",
        "linked",
    ],
)
def test_paths_leading_outside_the_build_folder_upload_nothing(build: Path, job_prefix: str, path: str) -> None:
    os.symlink(build.parent / "secret.txt", build / "leak.txt")
    os.symlink(build.parent / "outside", build / "linked")
    log = Log()

    artifacts = collect(build, job_prefix, {"path": path}, log=log)

    assert artifacts == []
    assert stored_keys(job_prefix) == []
    assert log.mentions("outside the build folder")


def test_pattern_matching_nothing_is_reported(build: Path, job_prefix: str) -> None:
    write(build, {"out/app.exe": "x"})
    log = Log()

    assert collect(build, job_prefix, {"path": "out\\*.msi"}, {"path": "missing.zip"}, log=log) == []
    assert "No artifacts found matching 'out\\*.msi'." in log
    assert "No artifacts found matching 'missing.zip'." in log


def test_a_file_named_twice_is_stored_once_under_the_first_entry(build: Path, job_prefix: str) -> None:
    write(build, {"app.zip": "a", "tool.zip": "t"})
    log = Log()

    artifacts = collect(
        build, job_prefix, {"path": "app.zip", "name": "first"}, {"path": "*.zip", "name": "all"}, log=log
    )

    assert [(artifact.file_name, artifact.name) for artifact in artifacts] == [
        ("app.zip", "first"),
        ("tool.zip", "all"),
    ]
    assert log.mentions("app.zip", "already")


def test_artifact_downloads_from_a_short_lived_url_as_an_attachment(build: Path, job_prefix: str) -> None:
    payload = os.urandom(64 * 1024)
    (build / "out").mkdir()
    (build / "out" / "image.iso").write_bytes(payload)
    collect(build, job_prefix, {"path": "out/image.iso"})

    url = artifact_url(job_prefix, "out/image.iso")

    assert url is not None
    fetched = requests.get(url, timeout=30)
    assert fetched.status_code == 200
    assert fetched.content == payload
    assert fetched.headers["Content-Type"] == "application/octet-stream"
    assert 'filename="image.iso"' in fetched.headers["Content-Disposition"]


def test_absent_artifact_is_none(job_prefix: str) -> None:
    assert artifact_url(job_prefix, "out/nothing.zip") is None


@pytest.mark.parametrize("file_name", ["../other-job/artifacts/a.zip", "/a.zip", "out//a.zip", "", "out/./a.zip"])
def test_file_names_that_could_leave_the_job_are_refused(job_prefix: str, file_name: str) -> None:
    with pytest.raises(ValueError):
        artifact_url(job_prefix, file_name)


# --- build cache ----------------------------------------------------------------------------------------------

NODE_PROJECT = {
    "package.json": '{"version": 1}',
    "node_modules/left-pad/index.js": "pad",
    "node_modules/.bin/x": "x",
    "tools/linter.bin": "lint",
}
ENTRIES = ["node_modules -> package.json", "tools\\linter.bin"]


def checkout(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    """A fresh build folder holding what the repository holds (no cached folders)."""
    folder = tmp_path / name
    folder.mkdir()
    return write(folder, files)


def test_saved_cache_comes_back_in_a_fresh_checkout(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    first = write(tmp_path / "first", NODE_PROJECT)
    save_cache(first, ENTRIES, cache_prefix, Log())
    second = checkout(tmp_path, "second", {"package.json": NODE_PROJECT["package.json"]})
    log = Log()

    restore_cache(second, ENTRIES, cache_prefix, log)

    assert tree(second) == NODE_PROJECT
    assert log == ["Restoring build cache entry 'node_modules'", "Restoring build cache entry 'tools\\linter.bin'"]


def test_absolute_entry_inside_the_build_folder_is_cached(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    first = write(tmp_path / "first", NODE_PROJECT)
    save_cache(first, [str(first / "node_modules")], cache_prefix, Log())
    second = checkout(tmp_path, "second", {})

    restore_cache(second, ["node_modules"], cache_prefix, Log())  # the same entry, written relative

    assert tree(second / "node_modules") == tree(first / "node_modules")


def test_unchanged_cache_is_not_uploaded_again(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    folder = write(tmp_path / "build", NODE_PROJECT)
    save_cache(folder, ENTRIES, cache_prefix, Log())
    before = {key: object_version(key) for key in list_cache_keys(cache_prefix)}
    for path in folder.rglob("*"):  # a reinstall writes the same files anew
        os.utime(path, (1_000_000_000, 1_000_000_000))
    log = Log()

    save_cache(folder, ENTRIES, cache_prefix, log)

    assert {key: object_version(key) for key in list_cache_keys(cache_prefix)} == before
    assert log == [
        "Build cache entry 'node_modules' is up to date",
        "Build cache entry 'tools\\linter.bin' is up to date",
    ]


def test_changed_contents_are_uploaded_again(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    folder = write(tmp_path / "build", NODE_PROJECT)
    save_cache(folder, ENTRIES, cache_prefix, Log())
    write(folder, {"node_modules/left-pad/index.js": "pad v2"})
    log = Log()

    save_cache(folder, ENTRIES, cache_prefix, log)
    fresh = checkout(tmp_path, "fresh", {"package.json": NODE_PROJECT["package.json"]})
    restore_cache(fresh, ENTRIES, cache_prefix, Log())

    assert "Updating build cache entry 'node_modules'" in log
    assert (fresh / "node_modules/left-pad/index.js").read_text() == "pad v2"


def object_version(key: str) -> tuple[Any, str]:
    head = aws.client("s3").head_object(Bucket=settings().bucket, Key=key)
    return head["LastModified"], head["ETag"]


def test_changed_dependency_file_keeps_the_cache_from_being_restored(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    save_cache(write(tmp_path / "first", NODE_PROJECT), ENTRIES, cache_prefix, Log())
    second = checkout(tmp_path, "second", {"package.json": '{"version": 2}'})
    log = Log()

    restore_cache(second, ENTRIES, cache_prefix, log)

    assert "Cache entry 'node_modules' is out of date: not restored" in log
    assert not (second / "node_modules").exists()
    assert (second / "tools/linter.bin").exists()  # an entry without dependencies stays valid


def test_wildcard_and_missing_dependencies(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    files = {"src/a/packages.config": "a1", "src/b/packages.config": "b1", "packages/lib.dll": "dll"}
    entries = ["packages -> **\\packages.config, missing.lock"]
    save_cache(write(tmp_path / "first", files), entries, cache_prefix, Log())
    same = write(tmp_path / "same", {"src/a/packages.config": "a1", "src/b/packages.config": "b1"})
    changed = write(tmp_path / "changed", {"src/a/packages.config": "a1", "src/b/packages.config": "b2"})

    restore_cache(same, entries, cache_prefix, Log())
    restore_cache(changed, entries, cache_prefix, Log())

    assert (same / "packages/lib.dll").read_text() == "dll"
    assert not (changed / "packages").exists()


def test_entry_not_yet_saved_is_reported_missing(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    log = Log()

    restore_cache(checkout(tmp_path, "build", {}), ENTRIES, cache_prefix, log)

    assert log == ["Cache entry 'node_modules' not found", "Cache entry 'tools\\linter.bin' not found"]


def test_entry_removed_from_the_configuration_is_deleted_on_save(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    folder = write(tmp_path / "build", NODE_PROJECT)
    save_cache(folder, ENTRIES, cache_prefix, Log())

    save_cache(folder, ENTRIES[:1], cache_prefix, Log())
    log = Log()
    restore_cache(checkout(tmp_path, "fresh", {}), ENTRIES[1:], cache_prefix, log)

    assert len(list_cache_keys(cache_prefix)) == 1
    assert log == ["Cache entry 'tools\\linter.bin' not found"]


def test_each_job_has_its_own_cache(tmp_path: Path) -> None:
    project = f"cache/1/{unique('project')}/"
    job1, job10 = CacheFolder(f"{project}job1/"), CacheFolder(f"{project}job10/")  # one name starts with the other
    save_cache(write(tmp_path / "one", {"deps/lib": "one"}), ["deps"], job1, Log())
    save_cache(write(tmp_path / "ten", {"deps/lib": "ten"}), ["deps"], job10, Log())

    save_cache(tmp_path / "one", [], job1, Log())  # job1 drops its cache: job10's stays
    restored = checkout(tmp_path, "restored", {})
    restore_cache(restored, ["deps"], job10, Log())

    assert list_cache_keys(job1) == []
    assert (restored / "deps/lib").read_text() == "ten"


@pytest.mark.parametrize("entry", ["../outside", "..\\secret.txt", "/etc", "linked", "linked/key.pem"])
def test_entries_outside_the_build_folder_are_not_cached(build: Path, cache_prefix: CacheFolder, entry: str) -> None:
    os.symlink(build.parent / "outside", build / "linked")
    log = Log()

    save_cache(build, [entry], cache_prefix, log)

    assert list_cache_keys(cache_prefix) == []
    assert log.mentions("outside the build folder")


def test_links_inside_a_cached_folder_are_kept_as_links(build: Path, tmp_path: Path, cache_prefix: CacheFolder) -> None:
    write(build, {"deps/lib": "lib"})
    os.symlink(build.parent / "secret.txt", build / "deps" / "leak")
    save_cache(build, ["deps"], cache_prefix, Log())
    fresh = checkout(tmp_path, "fresh", {})
    log = Log()

    restore_cache(fresh, ["deps"], cache_prefix, log)

    assert tree(fresh) == {"deps/lib": "lib"}  # the secret was never archived, and its link is refused
    assert log.mentions("deps/leak")


def malicious_archive(path: Path) -> None:
    """What a poisoned cache could hold: members reaching out of the entry and out of the build folder."""

    def add(tar: tarfile.TarFile, name: str, data: bytes = b"", link: str | None = None) -> None:
        member = tarfile.TarInfo(name)
        if link is not None:
            member.type, member.linkname = tarfile.SYMTYPE, link
        member.size = 0 if link is not None else len(data)
        tar.addfile(member, io.BytesIO(data) if link is None else None)

    with tarfile.open(path, "w:gz") as tar:
        add(tar, "deps/ok.txt", b"fine")
        add(tar, "deps/../../escaped.txt", b"evil")
        add(tar, "../escaped.txt", b"evil")
        add(tar, "/tmp/absolute-escape.txt", b"evil")
        add(tar, ".git/hooks/post-checkout", b"evil")  # inside the build folder but not the entry
        add(tar, "deps/up", link="../../outside")
        add(tar, "deps/up/key.pem", b"evil")
        add(tar, "deps/abs", link="/etc")


def test_poisoned_archive_extracts_only_inside_its_entry(
    build: Path, tmp_path: Path, cache_prefix: CacheFolder
) -> None:
    archive = tmp_path / "poison.tgz"
    malicious_archive(archive)
    metadata = {"dependencies": dependencies_checksum(Pinned(-1), ()), "checksum": "forged"}
    put_cache_entry(cache_prefix.key(CacheEntry("deps", "deps", ()).entry_id), archive, metadata)
    log = Log()

    restore_cache(build, ["deps"], cache_prefix, log)

    # "deps/up/key.pem" follows a link that was refused, so it lands in a plain folder inside the entry
    assert tree(build) == {"deps/ok.txt": "fine", "deps/up/key.pem": "evil"}
    assert (build.parent / "outside" / "key.pem").read_text() == "server key"
    assert not (tmp_path / "escaped.txt").exists() and not Path("/tmp/absolute-escape.txt").exists()
    assert not (build / "deps" / "up").is_symlink() and not (build / "deps" / "abs").is_symlink()
    assert not (build / ".git").exists()
    assert log.mentions("Skipping", "../escaped.txt")


def test_cached_folder_replaced_by_a_link_out_is_not_written_through(
    build: Path, tmp_path: Path, cache_prefix: CacheFolder
) -> None:
    save_cache(write(tmp_path / "first", {"deps/key.pem": "overwritten"}), ["deps"], cache_prefix, Log())
    os.symlink(build.parent / "outside", build / "deps")  # the repository itself holds "deps" -> outside
    log = Log()

    restore_cache(build, ["deps"], cache_prefix, log)

    assert (build.parent / "outside" / "key.pem").read_text() == "server key"
    assert log.mentions("Skipping", "deps/key.pem")


def test_damaged_archive_costs_only_the_cache(build: Path, tmp_path: Path, cache_prefix: CacheFolder) -> None:
    garbage = tmp_path / "garbage.tgz"
    garbage.write_bytes(b"\x1f\x8b not really gzip")
    metadata = {"dependencies": dependencies_checksum(Pinned(-1), ()), "checksum": "forged"}
    put_cache_entry(cache_prefix.key(CacheEntry("deps", "deps", ()).entry_id), garbage, metadata)
    log = Log()

    restore_cache(build, ["deps"], cache_prefix, log)

    assert log.mentions("Cache entry 'deps' could not be restored")
    assert tree(build) == {}


def job_shell(work: Path, home: Path) -> JobShell:
    """A job's shell as the runner drives it for entries outside the build folder: here a plain bash."""
    folder = work / EXCHANGE

    def run(command: str) -> bool:
        subprocess.run(["bash", "-c", command], check=False)
        return True

    return JobShell(home=str(home), base=work, folder=folder, inside=str(folder), run=run)


def test_an_entry_of_the_home_folder_comes_back_in_another_jobs_home(tmp_path: Path, cache_prefix: CacheFolder) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write(first / "home" / ".cargo", {"registry/crate": "crate-1"})
    (first / "build").mkdir()
    log = Log()
    save_cache(first / "build", ["~/.cargo"], cache_prefix, log, shell=job_shell(first, first / "home"))
    assert log.mentions("Updating", "~/.cargo"), log

    (second / "build").mkdir(parents=True)
    restore_cache(second / "build", ["$HOME/.cargo"], cache_prefix, log, shell=job_shell(second, second / "home"))

    assert tree(second / "home") == {".cargo/registry/crate": "crate-1"}, log
    assert not (first / EXCHANGE).exists() and not (second / EXCHANGE).exists()


def test_an_entry_outside_the_build_folder_over_the_size_limit_is_not_saved(
    tmp_path: Path, cache_prefix: CacheFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outside_cache, "MAX_ENTRY_BYTES", 64)
    write(tmp_path / "tools", {"big": os.urandom(4096).hex()})
    (tmp_path / "build").mkdir()
    log = Log()

    save_cache(tmp_path / "build", [str(tmp_path / "tools")], cache_prefix, log, shell=job_shell(tmp_path, tmp_path))

    assert log.mentions("over the 64 limit: not saved"), log
    assert cache_prefix.metadata([CacheEntry("x", str(tmp_path / "tools"), (), outside=True).entry_id]) == {
        CacheEntry("x", str(tmp_path / "tools"), (), outside=True).entry_id: None
    }
