"""A container job's disk: one fixed-size file system per job, holding everything the job can write.

The job's folder (its source, the ``appveyor`` command, the Build Worker API's socket, the runner's scratch) and the
writable layer of its container's root file system (``/tmp``, ``/usr``, ``$HOME``: an overlay of the image, its
upper layer here) all live on an ext4 file system made in a sparse file of ``CONVEYOR_JOB_DISK_MB`` and mounted
through a loop device. A job that writes more gets "No space left on device", and the machine's free space never
drops by more than that size (the file takes only what the job wrote). It needs nothing but root, util-linux and
e2fsprogs, which every Debian has: no XFS project quotas, no storage driver that sizes containers.

The container's other writable places (``/dev``, ``/dev/shm``: tmpfs) count against its memory limit.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import stat
import subprocess
from pathlib import Path

from chalicelib.runner import container as job_container

JOBS_ROOT = Path("/var/tmp/conveyor-jobs")  # the sandbox empties /var/tmp: each runner sees its own job's only
ROOTFS = ".rootfs"  # in the job's folder: the overlay's upper and work folders (root's only) and its merged view
_MKFS = ("mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-E", "lazy_itable_init=1,nodiscard")


class DiskRefused(Exception):
    """The job's disk could not be made; the message says why."""


def job_folder(job_id: str, disk_mb: int, owner: int) -> Path:
    """A fresh folder for the job, on a disk of its own, owned by ``owner`` (the build's user): its source, the
    ``appveyor`` command, the socket, the runner's scratch. Its name starts with this service's process id: the
    folders (and disks) a killed service left are removed by the next."""
    checked_root(JOBS_ROOT)
    _remove_left_folders()
    work = JOBS_ROOT / f"{os.getpid()}-{job_id}-{secrets.token_hex(4)}"
    make(work, disk_mb)
    subfolders = (job_container.PROJECTS_FOLDER, job_container.BIN_FOLDER, job_container.SOCKET_SUBFOLDER)
    for sub in (*subfolders, job_container.SCRATCH_FOLDER):
        (work / sub).mkdir()
        os.chown(work / sub, owner, owner)
    os.chown(work, owner, owner)
    return work


def checked_root(root: Path) -> None:
    """Make ``root`` (mode 0711), or check the one there is this service's own; raises DiskRefused if not. It lies
    in a folder every user may write (/var/tmp): another user could have made it first, or a link in its place,
    to see or swap what jobs keep there."""
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o711)
        os.chmod(root, 0o711)  # whatever the umask
    found = os.lstat(root)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid() or found.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise DiskRefused(
            f"{root} is not a folder of this service's own user that only it may write (a link, another user's, or "
            "writable by others): remove it, and the next job makes it again"
        )


@functools.cache
def _remove_left_folders() -> None:
    """Remove the job folders and disks of services that are gone (killed before they could), once per process."""
    for folder in JOBS_ROOT.iterdir():
        owner = folder.name.split("-", 1)[0]
        if not owner.isdigit():
            continue
        try:
            os.kill(int(owner), 0)
        except ProcessLookupError:
            remove(folder.with_name(folder.name.removesuffix(".disk")))  # unmounted, its image deleted
        except PermissionError:
            continue


def make(folder: Path, size_mb: int) -> Path:
    """Mount a new file system of ``size_mb`` at ``folder`` (made empty), its image file beside it; the image's
    path. Raises DiskRefused, leaving nothing behind."""
    image = folder.with_name(folder.name + ".disk")
    try:
        with image.open("wb") as sparse:
            sparse.truncate(size_mb * 1024 * 1024)
        _run(*_MKFS, str(image))
        folder.mkdir(mode=0o711)
        _run("mount", "-o", "loop,nosuid,nodev", str(image), str(folder))
    except (OSError, DiskRefused) as error:
        remove(folder)
        raise DiskRefused(f"the job's disk of {size_mb} MB could not be made: {error}") from error
    return image


def root_file_system(folder: Path, image_root: Path) -> Path:
    """The container's root: the image with a writable layer on the job's disk (overlayfs); where it is mounted."""
    layers = folder / ROOTFS
    layers.mkdir(mode=0o711)  # the container's root (an unprivileged id here) passes through to its merged view
    for sub in ("upper", "work", "merged"):
        (layers / sub).mkdir(mode=0o700)
    image = image_root.stat()  # the merged root is the upper folder: owned and open as the image's root
    os.chown(layers / "upper", image.st_uid, image.st_gid)
    os.chmod(layers / "upper", image.st_mode & 0o7777)
    options = f"lowerdir={image_root},upperdir={layers / 'upper'},workdir={layers / 'work'}"
    try:
        # nodev: a device node in the image or the upper layer opens nothing. Not nosuid: the image's sudo, how a
        # build becomes root of its container (its user namespace, never this machine's root), is setuid.
        _run("mount", "-t", "overlay", "overlay", "-o", f"nodev,{options}", str(layers / "merged"))
    except DiskRefused as error:
        raise DiskRefused(f"the container's file system could not be made: {error}") from error
    return layers / "merged"


def remove(folder: Path) -> None:
    """Unmount the job's file systems (the overlay, then the disk), and delete the disk's image and the folder."""
    merged = folder / ROOTFS / "merged"
    for mounted in (merged, folder):
        with contextlib.suppress(DiskRefused):
            if os.path.ismount(mounted):
                _run("umount", "--lazy", str(mounted))
    if not os.path.ismount(folder):
        shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        folder.with_name(folder.name + ".disk").unlink()


def _run(*command: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, timeout=60, check=False, env=_environment())
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiskRefused(str(error)) from error
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        raise DiskRefused(f"{command[0]}: {said[-300:]}")


def _environment() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin", "LC_ALL": "C"}
