"""Where a job's scripts run and what they see: its build folder's name, and the variables of their environment
beside the runner or in the job's container."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from chalicelib.protocol.job_spec import JobSpec
from chalicelib.runner import container as job_container
from chalicelib.runner.windows.workspace import remove_tree
from chalicelib.runner.worker_api_id_token import ID_TOKEN_ROUTE

_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ")  # of the runner's own environment, to the scripts
_SLUG = re.compile(r"[A-Za-z0-9._-]+")


def project_slug(spec: JobSpec) -> str:
    """The project's slug, as the service sent it apart from the job's variables (appveyor.yml's environment: may set
    APPVEYOR_PROJECT_SLUG, and the build folder, which a Windows agent removes, is named after it); "project" from a
    service from before, or for a slug that is no single name."""
    slug = str(spec.get("projectSlug") or "")
    return slug if _SLUG.fullmatch(slug) and slug not in (".", "..") else "project"


def remove_build_folder(folder: Path, say: Callable[[str], None]) -> None:
    """Remove a Windows job's build folder outside its workspace (``C:\\projects\\<slug>``); a file another process
    of the machine holds open is left, and said so."""
    try:
        remove_tree(folder)
    except OSError as error:
        say(f"The build folder {folder} could not be removed (what is left stays in it): {error}")


def script_environment(spec: JobSpec, folder: Path, home: Path, api_url: str, bin_folder: Path) -> dict[str, str]:
    """What the scripts see: a few of the runner's own variables, then the job's; never the runner's others."""
    variables = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    variables.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    variables["PATH"] = f"{bin_folder}{os.pathsep}{variables['PATH']}"
    variables.update({"HOME": str(home), "TMPDIR": str(home)})
    variables.update({str(name): str(value) for name, value in spec["variables"].items()})
    variables["APPVEYOR_BUILD_FOLDER"] = str(folder)
    variables["APPVEYOR_API_URL"] = api_url
    return variables


def container_environment(spec: JobSpec, folder: str, api_url: str) -> dict[str, str]:
    """What the scripts see in the job's container: its image's paths, then the job's variables; nothing of the
    runner's own environment."""
    variables = {"PATH": job_container.PATH, "HOME": job_container.HOME, "USER": "appveyor", "LANG": "C.UTF-8"}
    variables.update({str(name): str(value) for name, value in spec["variables"].items()})
    variables["APPVEYOR_BUILD_FOLDER"] = folder
    variables["APPVEYOR_API_URL"] = api_url
    # the service's own URL may be out of the container network's reach (make run's is on this machine's loopback):
    # the ID token is asked for through the Build Worker API, which forwards it with the same request token; only
    # when the service minted the variables (idToken), not when appveyor.yml names them
    if spec.get("idToken"):
        for name in ("ACTIONS_ID_TOKEN_REQUEST_URL", "CONVEYOR_OIDC_REQUEST_URL"):
            variables[name] = f"{api_url}{ID_TOKEN_ROUTE}?api-version=1"
    return variables
