"""appveyor.yml's ``build:`` (MSBuild mode) on a Windows build agent, as AppVeyor runs it: MSBuild in the build
folder, with the project ``build: project:`` names (none: MSBuild finds the one solution or project there), the
job's ``CONFIGURATION`` and ``PLATFORM`` as properties, ``/verbosity:`` and ``/m`` for ``parallel: true``.

MSBuild is found as a build machine has it: ``msbuild`` on the job's ``PATH`` (a Developer prompt's
``vcvarsall.bat`` puts it there), else the newest Visual Studio's, as Visual Studio's ``vswhere.exe`` finds it,
else ``dotnet msbuild`` (a machine with the .NET SDK only). Its command line runs as a cmd line of the job's
session (runner/windows/cmd_session.py), so what earlier lines ``set`` or ``call`` holds for it, and its exit code
fails the build as a script line's does. AppVeyor's own MSBuild logger (its compilation messages) is not there.
"""

from __future__ import annotations

import ntpath
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from chalicelib.protocol.job_spec import JobConfiguration
from chalicelib.runner.windows import console

VSWHERE = r"Microsoft Visual Studio\Installer\vswhere.exe"  # below %ProgramFiles(x86)%, where Visual Studio puts it
VSWHERE_ARGUMENTS = (
    "-latest",
    "-products",
    "*",
    "-requires",
    "Microsoft.Component.MSBuild",
    "-find",
    r"MSBuild\**\Bin\MSBuild.exe",
)
NOT_FOUND = (
    "MSBuild was not found on this build agent (no msbuild on the job's PATH, no Visual Studio with MSBuild that "
    "vswhere.exe finds, no dotnet on the job's PATH), and appveyor.yml builds with MSBuild (its default, build:): "
    "install Visual Studio or its Build Tools (or the .NET SDK) on the agent's machine, or build with build_script: "
    "(or build: off) in appveyor.yml."
)
_DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD"
_PLAIN = re.compile(r"[A-Za-z0-9_.:\\/+-]+")  # nothing cmd.exe or MSBuild reads as more than itself


@dataclass(frozen=True)
class MSBuild:
    """How the job's MSBuild is started: its program (and ``msbuild`` after ``dotnet``), and where it was found."""

    program: tuple[str, ...]
    found: str


class UnquotableValue(ValueError):
    """A value cmd.exe cannot pass on as one argument (a double quote, a line break)."""


def find(
    environment: Mapping[str, str],
    machine: Mapping[str, str],
    is_file: Callable[[str], bool] = os.path.isfile,
    ask_vswhere: Callable[[str], str | None] | None = None,
) -> MSBuild | None:
    """The job's MSBuild: on ``environment``'s PATH (the job's session's), else Visual Studio's (``vswhere.exe`` of
    the ``machine``'s own environment: a job's variables do not choose the program the runner itself starts),
    else ``dotnet msbuild``; None when there is none."""
    path = on_path("msbuild", environment, is_file)
    if path is not None:
        return MSBuild((path,), "on the job's PATH")
    program_files = console.variable(machine, "ProgramFiles(x86)") or console.variable(machine, "ProgramFiles")
    if program_files:
        vswhere = ntpath.join(program_files, VSWHERE)
        if is_file(vswhere):
            path = (ask_vswhere or vswhere_msbuild)(vswhere)
            if path is not None:
                return MSBuild((path,), "Visual Studio's, by vswhere.exe")
    dotnet = on_path("dotnet", environment, is_file)
    if dotnet is not None:
        return MSBuild((dotnet, "msbuild"), "dotnet msbuild: the .NET SDK's")
    return None


def on_path(name: str, environment: Mapping[str, str], is_file: Callable[[str], bool] = os.path.isfile) -> str | None:
    """The file cmd.exe runs for the command ``name``: the first folder of ``environment``'s PATH holding it with an
    extension of its PATHEXT, in that order."""
    extensions = [
        ext for ext in (console.variable(environment, "PATHEXT") or _DEFAULT_PATHEXT).split(";") if ext.strip()
    ]
    for folder in (console.variable(environment, "PATH") or "").split(";"):
        folder = folder.strip().strip('"')
        if not folder:
            continue
        for extension in extensions:
            candidate = ntpath.join(folder, name + extension.strip().lower())
            if is_file(candidate):
                return candidate
    return None


def vswhere_msbuild(vswhere: str) -> str | None:
    """The newest Visual Studio's MSBuild.exe, as ``vswhere`` finds it; None when it finds none (or fails)."""
    try:
        done = subprocess.run(
            [vswhere, *VSWHERE_ARGUMENTS], stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = [line.strip() for line in console.decode(done.stdout).splitlines() if line.strip()]
    return next((line for line in found if line.lower().endswith("msbuild.exe") and os.path.isfile(line)), None)


def command_line(msbuild: MSBuild, configuration: JobConfiguration, variables: Mapping[str, str]) -> str:
    """The cmd line that runs MSBuild for the job: the project, ``/p:Configuration=`` and ``/p:Platform=`` of the
    job's variables when it has them, ``/verbosity:`` (minimal by default), ``/m`` when parallel; UnquotableValue,
    naming the setting but never its value (it may be a secure variable's), for a value cmd.exe cannot pass on."""
    arguments = [_argument("MSBuild's path", part) for part in msbuild.program]
    if configuration["msBuildProjectFileName"]:
        arguments.append(_argument("build: project:", project_path(configuration["msBuildProjectFileName"])))
    for name, msbuild_property in (("CONFIGURATION", "Configuration"), ("PLATFORM", "Platform")):
        value = console.variable(variables, name)
        if value:
            arguments.append(f"/p:{msbuild_property}={_argument(name, value)}")
    arguments.append(f"/verbosity:{_argument('build: verbosity:', configuration['msBuildVerbosity'] or 'minimal')}")
    if configuration["msBuildInParallel"]:
        arguments.append("/m")
    return " ".join(arguments)


def project_path(project: str) -> str:
    """``build: project:`` written as the path it names: MSBuild reads an argument starting with ``/`` or ``-`` as a
    switch (``/logger:`` loads a DLL) and one starting with ``@`` as a file of switches, so a leading ``/`` is
    Windows' ``\\`` (every ``/`` with it, as Windows reads them) and a leading ``-`` or ``@`` is below ``.\\``."""
    if project.startswith("/"):
        project = project.replace("/", "\\")
    return f".\\{project}" if project.startswith(("-", "@")) else project


def quoted(value: str) -> str:
    """``value`` as one argument of a cmd line in a batch file: in double quotes unless it is plain, ``%`` doubled
    (a batch file expands ``%NAME%``), and a backslash run before the closing quote doubled (the C runtime and
    MSBuild read ``\\"`` as a quote inside the argument, which then runs on into the next); UnquotableValue for a
    double quote or a line break, which no quoting holds."""
    if any(character in value for character in '"\r\n\0'):
        raise UnquotableValue("holds a double quote or a line break")
    text = value.replace("%", "%%")
    if _PLAIN.fullmatch(value):
        return text
    backslashes = "\\" * (len(text) - len(text.rstrip("\\")))
    return f'"{text}{backslashes}"'


def _argument(name: str, value: str) -> str:
    """``value`` quoted; UnquotableValue naming ``name``, the setting it is of, and not the value."""
    try:
        return quoted(value)
    except UnquotableValue as error:
        raise UnquotableValue(f"{name} {error}") from None
