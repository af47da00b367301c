"""How a Windows build agent finds MSBuild (the job's PATH, Visual Studio's vswhere.exe, dotnet) and writes the
command line appveyor.yml's build: asks for, as cmd.exe reads it in a batch file. Windows paths on a Linux machine:
the files that exist are a set (Wine runs the real thing: tests/functional/test_windows_msbuild_under_wine.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chalicelib.protocol.job_spec import JobConfiguration, read_spec
from chalicelib.runner.windows.msbuild import (
    VSWHERE_ARGUMENTS,
    MSBuild,
    UnquotableValue,
    command_line,
    find,
    on_path,
    quoted,
    vswhere_msbuild,
)

VS_MSBUILD = r"C:\Program Files\Microsoft Visual Studio\2022\Community\MSBuild\Current\Bin\MSBuild.exe"
VSWHERE = r"C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe"
MACHINE = {"ProgramFiles(x86)": r"C:\Program Files (x86)", "ProgramFiles": r"C:\Program Files"}


def files(*paths: str) -> Any:
    """``is_file`` of a machine holding ``paths`` (Windows compares names ignoring case)."""
    held = {path.lower() for path in paths}
    return lambda path: path.lower() in held


def vswhere_answers(path: str | None) -> Any:
    """A vswhere.exe that finds ``path``, noting what it was started as."""

    def ask(vswhere: str) -> str | None:
        asked.append(vswhere)
        return path

    asked: list[str] = []
    ask.asked = asked  # type: ignore[attr-defined]
    return ask


def configuration(**settings: Any) -> JobConfiguration:
    """A job's settings as a runner reads them, build: in MSBuild mode with ``settings``."""
    return read_spec({"source": {}, "configuration": {"buildMode": "msbuild", **settings}})["configuration"]


def test_msbuild_on_the_jobs_path_comes_first_with_pathext_in_its_order() -> None:
    environment = {"Path": r"C:\Tools;C:\BuildTools\MSBuild\Bin", "PATHEXT": ".COM;.EXE;.BAT;.CMD"}
    machine_files = files(r"C:\BuildTools\MSBuild\Bin\msbuild.exe", r"C:\BuildTools\MSBuild\Bin\msbuild.cmd", VSWHERE)
    vswhere = vswhere_answers(VS_MSBUILD)

    found = find(environment, MACHINE, machine_files, vswhere)

    assert found == MSBuild((r"C:\BuildTools\MSBuild\Bin\msbuild.exe",), "on the job's PATH")
    assert vswhere.asked == []  # not asked when PATH has it


def test_a_cmd_shim_first_on_path_is_found_before_a_later_exe() -> None:
    environment = {"PATH": r'"C:\fake msbuild";;C:\BuildTools'}

    found = find(environment, {}, files(r"C:\fake msbuild\msbuild.cmd", r"C:\BuildTools\msbuild.exe"))

    assert found is not None and found.program == (r"C:\fake msbuild\msbuild.cmd",)


def test_without_msbuild_on_path_visual_studios_is_asked_of_vswhere_from_the_machines_program_files() -> None:
    vswhere = vswhere_answers(VS_MSBUILD)
    job_environment = {"PATH": r"C:\Windows\system32", "ProgramFiles(x86)": r"C:\projects\app\evil"}

    found = find(job_environment, MACHINE, files(VSWHERE), vswhere)

    assert found == MSBuild((VS_MSBUILD,), "Visual Studio's, by vswhere.exe")
    assert vswhere.asked == [VSWHERE]  # the machine's Program Files, not a folder the job's variables name


def test_an_sdk_only_machine_builds_with_dotnet_msbuild() -> None:
    environment = {"PATH": r"C:\Windows;C:\Program Files\dotnet"}
    no_msbuild = vswhere_answers(None)  # Visual Studio without the MSBuild component

    found = find(environment, MACHINE, files(VSWHERE, r"C:\Program Files\dotnet\dotnet.exe"), no_msbuild)

    assert found == MSBuild((r"C:\Program Files\dotnet\dotnet.exe", "msbuild"), "dotnet msbuild: the .NET SDK's")
    assert no_msbuild.asked == [VSWHERE]


def test_no_msbuild_anywhere_is_none() -> None:
    vswhere = vswhere_answers(VS_MSBUILD)

    assert find({"PATH": r"C:\Windows"}, MACHINE, files(), vswhere) is None
    assert vswhere.asked == []  # no vswhere.exe on the machine: not started


def test_on_path_reads_pathext_and_path_whatever_their_case() -> None:
    environment = {"path": r"C:\a;C:\b", "PathExt": ".EXE;.PS1"}

    assert on_path("tool", environment, files(r"C:\b\tool.ps1", r"C:\a\tool.cmd")) == r"C:\b\tool.ps1"


def test_the_command_line_has_the_project_configuration_platform_verbosity_and_m() -> None:
    msbuild = MSBuild((r"C:\fake msbuild\msbuild.cmd",), "on the job's PATH")
    settings = configuration(msBuildProjectFileName="App.sln", msBuildVerbosity="quiet", msBuildInParallel=True)
    variables = {"CONFIGURATION": "Release", "Platform": "Any CPU"}

    line = command_line(msbuild, settings, variables)

    assert line == (
        r'"C:\fake msbuild\msbuild.cmd" App.sln /p:Configuration=Release /p:Platform="Any CPU" /verbosity:quiet /m'
    )


def test_without_settings_msbuild_finds_the_project_itself_at_minimal_verbosity() -> None:
    msbuild = MSBuild((r"C:\Program Files\dotnet\dotnet.exe", "msbuild"), "dotnet msbuild")

    line = command_line(msbuild, configuration(), {"PATH": r"C:\Windows"})

    assert line == r'"C:\Program Files\dotnet\dotnet.exe" msbuild /verbosity:minimal'


def test_a_service_from_before_sends_no_msbuild_settings_and_they_read_as_appveyors_defaults() -> None:
    settings = read_spec({"source": {}, "configuration": {"buildMode": "msbuild"}})["configuration"]

    assert (settings["msBuildProjectFileName"], settings["msBuildInParallel"]) == (None, False)
    assert command_line(MSBuild(("msbuild.exe",), "here"), settings, {}) == "msbuild.exe /verbosity:minimal"


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("Release", "Release"),
        ("Any CPU", '"Any CPU"'),
        (r"src\My App\App.csproj", r'"src\My App\App.csproj"'),
        ("Release|x64", '"Release|x64"'),
        ("a&b", '"a&b"'),
        ("100%PATH%", '"100%%PATH%%"'),  # a batch file would expand %PATH%
        ("^caret", '"^caret"'),
    ],
)
def test_values_are_quoted_as_cmd_reads_them_in_a_batch_file(value: str, written: str) -> None:
    assert quoted(value) == written


@pytest.mark.parametrize("value", ['say "hi"', "two\nlines", "cr\r"])
def test_a_value_no_quoting_can_pass_as_one_argument_is_refused(value: str) -> None:
    with pytest.raises(UnquotableValue):
        quoted(value)


def test_vswhere_is_asked_for_msbuild_and_its_first_existing_answer_is_taken(tmp_path: Path) -> None:
    msbuild = tmp_path / "2022" / "MSBuild" / "Current" / "Bin" / "MSBuild.exe"
    msbuild.parent.mkdir(parents=True)
    msbuild.write_text("")
    asked = tmp_path / "asked.txt"
    vswhere = tmp_path / "vswhere"
    gone = tmp_path / "2019" / "MSBuild.exe"  # an instance removed since: not taken
    vswhere.write_text(f'#!/bin/sh\necho "$@" > {asked}\necho {gone}\necho {msbuild}\n')
    vswhere.chmod(0o755)

    assert vswhere_msbuild(str(vswhere)) == str(msbuild)
    assert asked.read_text().split() == list(VSWHERE_ARGUMENTS)


def test_a_vswhere_that_cannot_start_finds_nothing(tmp_path: Path) -> None:
    assert vswhere_msbuild(str(tmp_path / "vswhere.exe")) is None


def program_arguments(line: str) -> list[str]:
    """The arguments a program gets of a command line after cmd.exe ran it, as Windows' C runtime (and MSBuild's
    own reading) splits them: a backslash run before a double quote halves, an odd one leaves a literal quote."""
    arguments: list[str] = []
    current, quoting, index, started = "", False, 0, False
    while index < len(line):
        slashes = len(line[index:]) - len(line[index:].lstrip("\\"))
        if slashes and line[index + slashes : index + slashes + 1] == '"':
            current += "\\" * (slashes // 2) + ('"' if slashes % 2 else "")
            index += slashes + (1 if slashes % 2 else 0)
            started = True
            continue
        character = line[index]
        if character == '"':
            quoting, started = not quoting, True
        elif character in " \t" and not quoting:
            if started:
                arguments.append(current)
            current, started = "", False
        else:
            current, started = current + character, True
        index += 1
    return [*arguments, current] if started else arguments


def test_a_value_ending_in_a_backslash_stays_one_argument_and_the_next_stays_out_of_it() -> None:
    """A quoted value ending in a backslash ended in an escaped quote: MSBuild read the rest of the line into the
    project, and a PLATFORM value quoted after it split out as arguments of their own (a /logger: loading a DLL)."""
    settings = configuration(msBuildProjectFileName="My Folder\\")
    variables = {"CONFIGURATION": "Debug\\", "PLATFORM": "x /logger:C:\\evil.dll y"}

    line = command_line(MSBuild(("msbuild.exe",), "here"), settings, variables)

    assert program_arguments(line) == [
        "msbuild.exe",
        "My Folder\\",
        "/p:Configuration=Debug\\",
        "/p:Platform=x /logger:C:\\evil.dll y",
        "/verbosity:minimal",
    ]


@pytest.mark.parametrize(
    ("project", "argument"),
    [
        ("/logger:C:\\evil.dll", "\\logger:C:\\evil.dll"),
        ("-p:Configuration=Other", ".\\-p:Configuration=Other"),
        ("@C:\\switches.rsp", ".\\@C:\\switches.rsp"),
        ("//server/share/App.sln", "\\\\server\\share\\App.sln"),
    ],
)
def test_a_project_msbuild_would_read_as_a_switch_or_a_response_file_is_passed_as_the_path_it_names(
    project: str, argument: str
) -> None:
    """build: project: is a path: MSBuild took one starting with / or - as a switch and one with @ as a file of
    switches; the same path written so that it is a path reaches MSBuild instead."""
    line = command_line(MSBuild(("msbuild.exe",), "here"), configuration(msBuildProjectFileName=project), {})

    assert program_arguments(line)[1] == argument
