"""Where conveyor exec keeps what jobs hand over (chalicelib/local/exec/folders.py): its own ignored folder of the
checkout, never reached through a link a checkout holds."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chalicelib.errors import Invalid
from chalicelib.local.exec.console import Console
from chalicelib.local.exec.folders import (
    StateFolders,
    UnsafeFolder,
    job_folder_name,
    open_regular,
    receive,
    write_new,
)
from chalicelib.local.exec.jobs import ExecJob


def job(name: str = "Environment: A=1") -> ExecJob:
    return ExecJob(spec={"jobId": "exec2", "jobName": name}, console=Console(io.StringIO()), prefix="")  # type: ignore[typeddict-item]


def test_an_artifact_lands_in_its_jobs_folder_which_ignores_itself(tmp_path: Path) -> None:
    state = StateFolders(tmp_path)
    target = state.artifact_path(job(), "dist/app.zip")
    receive(io.BytesIO(b"zipped"), 6, target)

    assert target == tmp_path / ".conveyor" / "exec" / "artifacts" / "2-environment-a-1" / "dist" / "app.zip"
    assert target.read_bytes() == b"zipped"
    assert (tmp_path / ".conveyor" / "exec" / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../x", "", "a/./b", "a//b"])
def test_an_artifact_name_leading_elsewhere_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(Invalid):
        StateFolders(tmp_path).artifact_path(job(), name)


def test_a_conveyor_folder_that_is_a_link_is_refused_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".conveyor").symlink_to(elsewhere)

    with pytest.raises(UnsafeFolder, match="a link"):
        StateFolders(checkout)
    assert list(elsewhere.iterdir()) == []


def test_a_jobs_folder_is_emptied_when_it_starts(tmp_path: Path) -> None:
    state = StateFolders(tmp_path)
    receive(io.BytesIO(b"old"), 3, state.artifact_path(job(), "old.txt"))

    folder = state.job_folder(job())

    assert not folder.exists()
    assert job_folder_name("exec3", "") == "3"


def checkout_committing(folder: Path, links: dict[str, Path], files: dict[str, str] | None = None) -> Path:
    """A git checkout that commits ``links`` (each a link to a host path) and ``files``, as a pull request might."""
    from dulwich import porcelain

    porcelain.init(str(folder))
    paths = []
    for name, target in links.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(target)
        paths.append(str(folder / name))
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
        paths.append(str(folder / name))
    porcelain.add(str(folder), paths)
    porcelain.commit(str(folder), message=b"A pull request", author=b"M <m@e>", committer=b"M <m@e>")
    return folder


def test_a_committed_link_in_execs_folder_is_refused_and_the_host_file_it_names_untouched(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text("root:$6$hash:19000::::::\n")
    checkout = checkout_committing(tmp_path / "checkout", {".conveyor/exec/.gitignore": shadow})

    with pytest.raises(UnsafeFolder, match="git tracks .conveyor/exec/.gitignore"):
        StateFolders(checkout)
    assert shadow.read_text() == "root:$6$hash:19000::::::\n"


def test_a_file_git_tracks_in_execs_folder_is_refused(tmp_path: Path) -> None:
    entry = ".conveyor/exec/cache/0123456789abcdef/" + "0" * 16 + ".json"
    checkout = checkout_committing(tmp_path / "checkout", {}, {entry: '{"planted": "by a pull request"}'})

    with pytest.raises(UnsafeFolder, match="git tracks"):
        StateFolders(checkout)


def test_a_link_anywhere_in_execs_folder_is_refused_even_one_git_does_not_track(tmp_path: Path) -> None:
    archive = tmp_path / "host-archive.tgz"
    archive.write_bytes(b"the host's own archive")
    checkout = tmp_path / "checkout"
    cache = checkout / ".conveyor" / "exec" / "cache" / "0123456789abcdef"
    cache.mkdir(parents=True)
    (cache / ("0" * 16 + ".tgz")).symlink_to(archive)

    with pytest.raises(UnsafeFolder, match="is a link"):
        StateFolders(checkout)
    assert archive.read_bytes() == b"the host's own archive"


def test_a_link_put_in_place_of_a_file_exec_writes_is_replaced_not_written_through(tmp_path: Path) -> None:
    host_file = tmp_path / "host.txt"
    host_file.write_text("the host's\n")
    (tmp_path / "checkout").mkdir()
    state = StateFolders(tmp_path / "checkout")
    target = state.artifact_path(job(), "app.zip")
    target.symlink_to(host_file)  # after exec looked: a link there must still not be followed

    receive(io.BytesIO(b"zipped"), 6, target)
    write_new(state.root / "note.json", b"{}")
    (state.root / "other.json").symlink_to(host_file)
    write_new(state.root / "other.json", b"{}")

    assert host_file.read_text() == "the host's\n"
    assert not target.is_symlink() and target.read_bytes() == b"zipped"
    assert not (state.root / "other.json").is_symlink() and (state.root / "other.json").read_bytes() == b"{}"


def test_a_file_read_there_is_opened_only_when_it_is_a_file_itself_not_a_link(tmp_path: Path) -> None:
    host_file = tmp_path / "host.txt"
    host_file.write_text("the host's\n")
    (tmp_path / "link").symlink_to(host_file)

    assert open_regular(tmp_path / "link") is None
    assert open_regular(tmp_path) is None
    assert open_regular(tmp_path / "missing") is None
    opened = open_regular(host_file)
    assert opened is not None
    with opened:
        assert opened.read() == b"the host's\n"
