"""The ``appveyor`` command on Windows, which cmd.exe finds on PATH (it runs no extensionless script).

Where the runner's Python has pip, the command is ``appveyor.exe``, as AppVeyor's own is: pip's script launcher
(distlib's ``t64.exe``, the one pip makes every console script on Windows with) followed by the Python to start
and a zip of runner/appveyor_cli.py as its ``__main__``. Elsewhere it is ``appveyor.cmd``, which a batch file must
``call`` to return to it: on a line of appveyor.yml it does (each line is ``call``ed, runner/windows/cmd_session.py),
in a batch file of the build's own write ``call appveyor ...``. Either runs ``-I``: the build's PYTHON* variables
change nothing.
"""

from __future__ import annotations

import importlib.util
import io
import os
import zipfile
from pathlib import Path


def launcher_template() -> bytes | None:
    """pip's script launcher for this machine's processor, if this Python has pip (read, not imported)."""
    spec = importlib.util.find_spec("pip")
    if spec is None or not spec.submodule_search_locations:
        return None
    # the processor from the environment Windows sets: platform.machine() asks WMI, which Wine lacks (it hangs)
    name = "t64-arm.exe" if os.environ.get("PROCESSOR_ARCHITECTURE", "").upper() == "ARM64" else "t64.exe"
    path = Path(list(spec.submodule_search_locations)[0]) / "_vendor" / "distlib" / name
    return path.read_bytes() if path.is_file() else None


def executable(template: bytes, python: str, source: str) -> bytes:
    """``appveyor.exe``: the launcher, the line naming the Python it starts, and the command as a zip's
    ``__main__.py`` (the layout distlib's launcher reads)."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("__main__.py", source)
    return template + f'#!"{python}" -I\r\n'.encode() + archive.getvalue()


def launcher_text(python: str) -> str:
    """``appveyor.cmd``: runs ``appveyor.py`` beside it, passing its arguments on and returning its exit code."""
    return f'@"{python}" -I "%~dp0appveyor.py" %*\r\n'


def write_launcher(bin_folder: Path, python: str, source: str) -> Path:
    """Write the command into ``bin_folder``, which the scripts' PATH starts with; the file cmd.exe runs."""
    template = launcher_template()
    if template is not None:
        command = bin_folder / "appveyor.exe"
        command.write_bytes(executable(template, python, source))
        return command
    (bin_folder / "appveyor.py").write_text(source, encoding="utf-8")
    command = bin_folder / "appveyor.cmd"
    command.write_text(launcher_text(python), encoding="utf-8")
    return command
