"""The ``appveyor`` command on Windows: ``appveyor.py`` (runner/appveyor_cli.py as it is) and ``appveyor.cmd``, which
cmd.exe finds on PATH (it runs no extensionless script). A ``.cmd`` a batch file starts without ``call`` does not
return to it: on a line of appveyor.yml it does (each line is ``call``ed, runner/windows/cmd_session.py); in a batch
file of the build's own, ``call appveyor ...``."""

from __future__ import annotations

from pathlib import Path


def launcher_text(python: str) -> str:
    """The ``.cmd`` that runs ``appveyor.py`` beside it with the runner's Python (-I: the build's PYTHON* variables
    change nothing), passing its arguments on and returning its exit code."""
    return f'@"{python}" -I "%~dp0appveyor.py" %*\r\n'


def write_launcher(bin_folder: Path, python: str, source: str) -> None:
    """Write the command into ``bin_folder``, which the scripts' PATH starts with."""
    (bin_folder / "appveyor.py").write_text(source, encoding="utf-8")
    (bin_folder / "appveyor.cmd").write_text(launcher_text(python), encoding="ascii", errors="replace")
