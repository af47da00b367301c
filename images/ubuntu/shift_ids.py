"""Shift every file's owner and group of a root filesystem by N: its root becomes N outside the container's user
namespace, its users N + their uid. chown clears setuid bits, so each file's mode is set again afterwards."""

import os
import stat
import sys


def shift(root: str, by: int) -> None:
    for folder, subfolders, files in os.walk(root):
        for name in [*subfolders, *files, None]:
            path = folder if name is None else os.path.join(folder, name)
            info = os.lstat(path)
            if name is not None and stat.S_ISDIR(info.st_mode):
                continue  # a folder is shifted when it is walked
            if info.st_uid >= by:
                continue
            os.lchown(path, info.st_uid + by, info.st_gid + by)
            if not stat.S_ISLNK(info.st_mode):
                os.chmod(path, stat.S_IMODE(info.st_mode))


if __name__ == "__main__":
    shift(sys.argv[1], int(sys.argv[2]))
