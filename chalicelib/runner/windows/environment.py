"""What a job's scripts see on a Windows build agent: the machine's environment (the agent's, without its own
``CONVEYOR_*`` settings and key), the job's variables, and AppVeyor's Windows values: ``CI=True``, ``APPVEYOR=True``,
``CI_WINDOWS=true``, ``CI_LINUX=false``, ``APPVEYOR_BUILD_FOLDER`` a Windows path. ``TEMP`` and ``TMP`` are the job's
own, removed with it. The ``appveyor`` command's folder comes first on ``PATH``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from chalicelib.runner.windows import console

WINDOWS_VALUES = {"CI": "True", "APPVEYOR": "True", "CI_WINDOWS": "true", "CI_LINUX": "false"}


def script_environment(
    machine: Mapping[str, str], variables: Mapping[str, str], folder: Path, temp: Path, api_url: str, bin_folder: Path
) -> dict[str, str]:
    """The scripts' environment; names compared as Windows does, ignoring case."""
    kept = {name: value for name, value in machine.items() if not name.upper().startswith("CONVEYOR_")}
    path = console.variable(kept, "PATH", "")
    environment = console.merged(kept, [("PATH", f"{bin_folder};{path}" if path else str(bin_folder))])
    environment = console.merged(environment, [("TEMP", str(temp)), ("TMP", str(temp))])
    environment = console.merged(environment, ((str(name), str(value)) for name, value in variables.items()))
    return console.merged(
        environment,
        [*WINDOWS_VALUES.items(), ("APPVEYOR_BUILD_FOLDER", str(folder)), ("APPVEYOR_API_URL", api_url)],
    )
