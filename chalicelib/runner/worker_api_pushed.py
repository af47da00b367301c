"""The file ``appveyor PushArtifact`` names, found for upload: in a container's job, only beneath its build folder."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from chalicelib.runner import container as job_container
from chalicelib.runner.beneath import Outside, Pinned, descriptor_path, opened, pin
from chalicelib.runner.worker_api_fields import BadRequest

if TYPE_CHECKING:
    from chalicelib.runner.run import Run


@contextlib.contextmanager
def pushed_file(run: Run, path_text: str) -> Iterator[Path]:
    """The file PushArtifact names, as a path to upload from: in a container's job, the descriptor of a file
    opened beneath the job's projects folder (runner/beneath.py), never its name again."""
    container = run.container
    if container is None:  # the scripts run beside the runner: they see what it sees
        path = Path(path_text) if Path(path_text).is_absolute() else run.folder / path_text
        if not path.is_file():
            raise BadRequest(f"{path_text} is not a file.")
        yield path
        return
    inside = PurePosixPath(container.inside(run.folder), path_text)
    projects = PurePosixPath(job_container.PROJECTS)
    if not inside.is_relative_to(projects) or ".." in inside.parts:
        raise BadRequest(f"{path_text} is not in the build folder: only its files can be pushed as artifacts.")
    relative = inside.relative_to(projects).as_posix()
    with (
        pin(container.work, container.work / job_container.PROJECTS_FOLDER) as root,
        opened(_open_pushed(root, relative, path_text)) as fd,
    ):
        yield descriptor_path(fd)


def _open_pushed(root: Pinned, relative: str, path_text: str) -> int:
    """A descriptor of the pushed file, checked to be a file beneath the projects folder once opened."""
    try:
        return root.open_file(relative)
    except Outside as error:
        raise BadRequest(
            f"{path_text} leads out of the build folder: only its files can be pushed as artifacts."
        ) from error
    except OSError as error:  # missing, a folder, a pipe
        raise BadRequest(f"{path_text} is not a file.") from error
