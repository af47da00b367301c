"""A container job's disk (executors/job_disk.py): a file system of a fixed size that a job cannot write past, and
that leaves nothing behind once removed. Needs root (a loop mount); skipped elsewhere."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from chalicelib.executors import job_disk
from chalicelib.executors.containers import resource_limits

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a loop mount needs root")


def test_a_job_disk_holds_no_more_than_its_size_and_goes_whole(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    image = job_disk.make(folder, 16)
    try:
        written = subprocess.run(
            ["dd", "if=/dev/zero", f"of={folder / 'filler'}", "bs=1M", "count=64"], capture_output=True, check=False
        )
        size = (folder / "filler").stat().st_size
    finally:
        job_disk.remove(folder)

    assert written.returncode != 0 and b"No space left on device" in written.stderr
    assert size <= 16 * 1024 * 1024
    assert not folder.exists() and not image.exists()


def test_a_disk_that_cannot_be_made_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "missing-parent" / "job"

    with pytest.raises(job_disk.DiskRefused, match="16 MB"):
        job_disk.make(folder, 16)
    assert not folder.parent.exists() or list(folder.parent.iterdir()) == []


def test_podman_is_given_the_memory_limit_for_swap_too() -> None:
    assert resource_limits(512, 1.5) == ("--memory", "512m", "--memory-swap", "512m", "--cpus", "1.5")


def test_a_device_node_in_a_containers_file_system_opens_nothing(tmp_path: Path) -> None:
    """An image (or what a job left in its writable layer) holding a device node gives the container no device."""
    image_root = tmp_path / "image"
    image_root.mkdir()
    os.mknod(image_root / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    folder = tmp_path / "job"
    job_disk.make(folder, 16)
    try:
        merged = job_disk.root_file_system(folder, image_root)
        with pytest.raises(PermissionError):
            (merged / "null").open("wb").close()
    finally:
        job_disk.remove(folder)


def test_the_jobs_folder_is_made_for_this_service_alone(tmp_path: Path) -> None:
    root = tmp_path / "conveyor-jobs"

    job_disk.checked_root(root)
    job_disk.checked_root(root)  # found again, as it was made

    assert stat.S_IMODE(os.lstat(root).st_mode) == 0o711


def _made_by_another_user(root: Path) -> None:
    root.mkdir()
    os.chown(root, 65534, 65534)


def _writable_by_others(root: Path) -> None:
    root.mkdir()
    root.chmod(0o777)


def _a_link(root: Path) -> None:
    (root.parent / "elsewhere").mkdir(mode=0o711)
    root.symlink_to(root.parent / "elsewhere")


@pytest.mark.parametrize("plant", [_made_by_another_user, _writable_by_others, _a_link])
def test_a_jobs_folder_someone_else_planted_is_refused(tmp_path: Path, plant) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "conveyor-jobs"
    plant(root)

    with pytest.raises(job_disk.DiskRefused, match="remove it"):
        job_disk.checked_root(root)
