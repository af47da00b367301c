"""Reading a build folder a build may swap for links while the runner reads it (runner/beneath.py, issue 35): real
folders and links in a temporary folder, and a thread playing the build's background process."""

from __future__ import annotations

import io
import os
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.runner.artifacts import collect_artifacts
from chalicelib.runner.beneath import NotAFolder, Outside, descriptor_path, opened, pin
from chalicelib.runner.cache import restore_cache, save_cache

SECRET = "the machine's secret"


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """A folder of the machine's, outside every build folder."""
    folder = tmp_path / "machine"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """The job's folder the runner made (work) holding the build folder."""
    folder = tmp_path / "work" / "projects" / "slug"
    folder.mkdir(parents=True)
    return folder


def _read(fd: int) -> str:
    return descriptor_path(fd).read_text()


def test_a_pinned_build_folder_keeps_naming_the_folder_after_it_is_swapped_for_a_link(
    build: Path, machine: Path
) -> None:
    (build / "secret.txt").write_text("the build's own")
    work = build.parents[1]
    with pin(work, build) as root:
        build.rename(build.with_name("moved"))
        build.symlink_to(machine)
        with opened(root.open_file("secret.txt")) as fd:
            assert _read(fd) == "the build's own"


def test_a_build_folder_that_is_a_link_is_not_pinned(build: Path, machine: Path) -> None:
    work = build.parents[1]
    build.rmdir()
    build.symlink_to(machine)
    with pytest.raises(NotAFolder), pin(work, build):
        pass


def test_a_folder_on_the_way_to_the_build_folder_that_is_a_link_is_not_pinned(build: Path, machine: Path) -> None:
    work = build.parents[1]
    (machine / "slug").mkdir()
    (work / "projects").rename(work / "elsewhere")
    (work / "projects").symlink_to(machine)
    with pytest.raises(NotAFolder), pin(work, work / "projects" / "slug"):
        pass


def test_a_link_leading_out_of_the_build_folder_is_refused_once_opened(build: Path, machine: Path) -> None:
    (build / "out.txt").symlink_to(machine / "secret.txt")
    (build / "mine.txt").write_text("mine")
    (build / "in.txt").symlink_to("mine.txt")
    with pin(build.parents[1], build) as root:
        with pytest.raises(Outside):
            root.open_file("out.txt")
        with opened(root.open_file("in.txt")) as fd:  # a link inside the build folder is followed
            assert _read(fd) == "mine"


@pytest.fixture
def swapper(build: Path, machine: Path) -> Iterator[None]:
    """A background process of the build: pushed.txt is a file saying "x", then a link to the machine's secret,
    then the file again, over and over until the test ends."""
    (build / "pushed.txt").write_text("x")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.symlink(machine / "secret.txt", build / "swap.link")
            os.replace(build / "swap.link", build / "pushed.txt")
            (build / "swap.file").write_text("x")
            os.replace(build / "swap.file", build / "pushed.txt")

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


@pytest.mark.usefixtures("swapper")
def test_a_file_swapped_for_a_link_in_a_loop_is_never_read_from_the_machine(build: Path) -> None:
    read, refused = [], 0
    with pin(build.parents[1], build) as root:
        for _ in range(3000):
            try:
                fd = root.open_file("pushed.txt")
            except Outside:
                refused += 1
                continue
            except FileNotFoundError:  # between a rename and the next
                continue
            with opened(fd):
                read.append(_read(fd))
    assert set(read) == {"x"}, (len(read), refused)


@pytest.mark.usefixtures("swapper")
def test_artifacts_of_a_file_swapped_for_a_link_in_a_loop_hold_no_file_of_the_machine(build: Path) -> None:
    uploaded: list[bytes] = []

    def upload(file_name: str, path: Path) -> int:
        uploaded.append(path.read_bytes())
        return len(uploaded[-1])

    for _ in range(200):
        collect_artifacts(build, [{"path": "pushed.txt"}, {"path": "."}, {"path": "*.txt"}], {}, upload, print)
    contents = {content for content in uploaded if not content.startswith(b"PK")}
    zipped = {
        zipfile.ZipFile(io.BytesIO(content)).read(name)
        for content in uploaded
        if content.startswith(b"PK")
        for name in zipfile.ZipFile(io.BytesIO(content)).namelist()
    }
    assert contents | zipped <= {b"x"}, contents | zipped


class MemoryCache:
    """A job's cache folder in memory (the CacheStore protocol)."""

    def __init__(self) -> None:
        self.archives: dict[str, bytes] = {}
        self.metadatas: dict[str, dict[str, str]] = {}

    def metadata(self, entry_ids: list[str]) -> dict[str, dict[str, str] | None]:
        return {entry_id: self.metadatas.get(entry_id) for entry_id in entry_ids}

    def download(self, entry_id: str, path: Path) -> bool:
        path.write_bytes(self.archives[entry_id])
        return True

    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> None:
        self.archives[entry_id], self.metadatas[entry_id] = path.read_bytes(), metadata

    def prune(self, keep: list[str]) -> int:
        return 0

    def contents(self) -> set[bytes]:
        found = set()
        for archive in self.archives.values():
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                found |= {tar.extractfile(m).read() for m in tar if m.isreg()}  # type: ignore[union-attr]
        return found


@pytest.mark.usefixtures("swapper")
def test_the_cache_of_a_file_swapped_for_a_link_in_a_loop_holds_no_file_of_the_machine(build: Path) -> None:
    store = MemoryCache()
    for _ in range(200):
        store.metadatas.clear()  # saved again every time
        save_cache(build, ["pushed.txt", ".", "other -> pushed.txt"], store, print)
    assert store.contents() <= {b"x"}, store.contents()


def test_the_cache_of_a_build_folder_swapped_for_a_link_is_not_saved(build: Path, machine: Path) -> None:
    store, lines = MemoryCache(), []
    build.rmdir()
    build.symlink_to(machine)
    save_cache(build, ["secret.txt"], store, lines.append)
    assert store.archives == {}
    assert any("no longer a folder" in line for line in lines), lines


def test_the_cache_is_restored_into_the_pinned_folder_never_through_a_link(build: Path, machine: Path) -> None:
    store = MemoryCache()
    (build / "deps").mkdir()
    (build / "deps" / "lib.txt").write_text("cached")
    save_cache(build, ["deps"], store, print)
    fresh = build.with_name("fresh")
    fresh.mkdir()
    (fresh / "deps").symlink_to(machine)  # planted by a background process of init
    lines: list[str] = []
    restore_cache(fresh, ["deps"], store, lines.append)
    assert sorted(path.name for path in machine.iterdir()) == ["secret.txt"], lines


def test_the_cache_is_not_restored_into_a_build_folder_swapped_for_a_link(build: Path, machine: Path) -> None:
    store = MemoryCache()
    (build / "lib.txt").write_text("cached")
    save_cache(build, ["lib.txt"], store, print)
    build.rename(build.with_name("moved"))
    build.symlink_to(machine)
    lines: list[str] = []
    restore_cache(build, ["lib.txt"], store, lines.append)
    assert sorted(path.name for path in machine.iterdir()) == ["secret.txt"], lines
    assert any("no longer a folder" in line for line in lines), lines


def test_the_cache_restored_while_a_folder_is_swapped_for_a_link_right_after_its_check_writes_nothing_outside(
    build: Path, machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryCache()
    (build / "deps").mkdir()
    (build / "deps" / "lib.txt").write_text("cached")
    save_cache(build, ["deps"], store, print)
    checked = tarfile.data_filter

    def check_then_swap(member: tarfile.TarInfo, dest_path: str) -> tarfile.TarInfo:
        # the worst moment a background process of init could pick: deps becomes a link once lib.txt is checked
        result = checked(member, dest_path)
        if member.name == "deps/lib.txt":
            (build / "deps" / "lib.txt").unlink()
            (build / "deps").rmdir()
            (build / "deps").symlink_to(machine)
        return result

    monkeypatch.setattr(tarfile, "data_filter", check_then_swap)
    monkeypatch.setitem(tarfile._NAMED_FILTERS, "data", check_then_swap)  # type: ignore[attr-defined]
    lines: list[str] = []
    restore_cache(build, ["deps"], store, lines.append)
    assert sorted(path.name for path in machine.iterdir()) == ["secret.txt"], lines


def test_artifacts_matched_through_a_link_leading_out_name_no_file_of_the_machine_in_the_log(
    build: Path, machine: Path
) -> None:
    (build / "out").symlink_to(machine)
    (build / "escape.txt").symlink_to(machine / "secret.txt")
    lines: list[str] = []
    found = collect_artifacts(build, [{"path": "out/*"}, {"path": "*.txt"}], {}, lambda name, path: 0, lines.append)
    assert found == []
    assert not any("secret" in line for line in lines), lines
    assert "Artifact escape.txt points outside the build folder: skipped." in lines, lines
