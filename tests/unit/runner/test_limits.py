"""A container job's runner notices its limits being hit: a process its memory cgroup killed, a full disk."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.container import Limits
from chalicelib.runner.limits import LimitWatch, disk_full


def watch(tmp_path: Path, oom_control: str | None) -> LimitWatch:
    """A watch of a container whose id podman wrote, and whose cgroup says ``oom_control`` (None: no cgroup yet)."""
    (tmp_path / "container-id").write_text("abc123\n")
    cgroup = tmp_path / "cgroups" / "libpod-abc123"
    if oom_control is not None:
        cgroup.mkdir(parents=True)
        (cgroup / "memory.oom_control").write_text(oom_control)
    limits = Limits(memory_mb=512, disk_mb=1024, id_file=str(tmp_path / "container-id"))
    return LimitWatch(limits, tmp_path, cgroups=(str(tmp_path / "cgroups" / "libpod-{id}" / "memory.oom_control"),))


def test_a_process_the_memory_cgroup_killed_stops_the_job_naming_its_limit(tmp_path: Path) -> None:
    said = watch(tmp_path, "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n").exceeded()

    assert said is not None and said.startswith("The job used more than 512 MB of memory")


def test_a_job_within_its_limits_goes_on(tmp_path: Path) -> None:
    assert watch(tmp_path, "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n").exceeded() is None


def test_a_container_whose_cgroup_is_not_there_yet_goes_on(tmp_path: Path) -> None:
    assert watch(tmp_path, None).exceeded() is None


def test_a_disk_with_room_is_not_full(tmp_path: Path) -> None:
    assert disk_full(tmp_path, 1024) is False
    assert disk_full(tmp_path / "gone", 1024) is False  # a job whose folder is gone has ended: nothing to stop
