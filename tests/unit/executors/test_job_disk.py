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
