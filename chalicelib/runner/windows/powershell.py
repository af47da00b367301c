"""``ps:`` and ``pwsh:`` blocks on Windows: ``ps:`` in Windows PowerShell (``powershell.exe``), ``pwsh:`` in PowerShell
7 (``pwsh.exe``), one process per block, with the environment and current folder of the job's cmd lines
(runner/windows/cmd_session.py), both ways: the block starts with them and what it leaves is the next line's.

The block is written to a file the wrapper (WRAPPER) dot-sources after loading AppVeyor's commands (MODULE:
``Add-AppveyorMessage``, ``Push-AppveyorArtifact``, ``Set-AppveyorBuildVariable``, ``Install-Product node 18``...,
each calling the ``appveyor`` command). A block fails when an exception escapes it (AppVeyor's rule: the exit code
a native program leaves in ``$LASTEXITCODE`` fails nothing, nor does the block's own ``exit``, which ends only the
block). The wrapper then writes the environment, the folder and the block's status to files; a PowerShell that
exits without writing them did not run the block (Wine's ``powershell.exe`` is such a stub: it exits 0 having run
nothing), and the block fails saying so. PowerShell variables do not carry from block to block, unlike AppVeyor's
own host; the environment and folder do.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from chalicelib.runner.shell import Outcome
from chalicelib.runner.windows import console
from chalicelib.runner.windows.cmd_session import WindowsSession, run_in_job

MODULE = r"""
# AppVeyor's PowerShell commands, for a Conveyor job on Windows (chalicelib/runner/windows/powershell.py): each calls
# the appveyor command the job's PATH starts with.
function Invoke-ConveyorAppveyor {
    param([string] $Verb, [object[]] $Arguments)
    $words = @($Arguments | ForEach-Object { "$_" })
    & appveyor $Verb @words
    if ($LASTEXITCODE -ne 0) {
        throw "appveyor $Verb failed with code $LASTEXITCODE"
    }
}
function Add-AppveyorMessage { Invoke-ConveyorAppveyor AddMessage $args }
function Add-AppveyorCompilationMessage { Invoke-ConveyorAppveyor AddCompilationMessage $args }
function Add-AppveyorTest { Invoke-ConveyorAppveyor AddTest $args }
function Update-AppveyorTest { Invoke-ConveyorAppveyor UpdateTest $args }
function Push-AppveyorArtifact { Invoke-ConveyorAppveyor PushArtifact $args }
function Update-AppveyorBuild { Invoke-ConveyorAppveyor UpdateBuild $args }
function Exit-AppveyorBuild { Invoke-ConveyorAppveyor exit $args }
function Start-FileDownload { Invoke-ConveyorAppveyor DownloadFile $args }
function Set-AppveyorBuildVariable {
    $named = @{}
    $positional = New-Object System.Collections.Generic.List[string]
    for ($at = 0; $at -lt $args.Count; $at++) {
        if ("$($args[$at])" -match '^-(Name|Value):?$') {
            $at++
            $named[$Matches[1]] = "$($args[$at])"
        } else {
            $positional.Add("$($args[$at])")
        }
    }
    $name = if ($named.ContainsKey('Name')) { $named['Name'] } else { $positional[0] }
    $value = if ($named.ContainsKey('Value')) { $named['Value'] } else { $positional[$positional.Count - 1] }
    Invoke-ConveyorAppveyor SetVariable @('-Name', $name, '-Value', $value)
    [Environment]::SetEnvironmentVariable($name, $value)
}
function Install-Product {
    param([string] $Product, [string] $Version, [string] $Platform = 'x64')
    if ($Product -notin @('node', 'nodejs')) {
        throw "Install-Product $Product is not available on this machine: Conveyor's Install-Product switches Node"
    }
    $roots = @("C:\avvm\node\$Version\$Platform", "$env:ProgramFiles\nodejs\$Version", "$env:ProgramFiles\nodejs")
    foreach ($root in $roots) {
        if (Test-Path (Join-Path $root 'node.exe')) {
            $found = (& (Join-Path $root 'node.exe') --version) -replace '^v', ''
            if ($found -eq $Version -or $found.StartsWith("$Version.")) {
                $env:Path = "$root;$env:Path"
                Write-Host "Node $found ($Platform) from $root"
                return
            }
        }
    }
    throw "Node $Version ($Platform) is not installed on this machine (looked in $($roots -join ', '))"
}
Export-ModuleMember -Function '*-Appveyor*', 'Start-FileDownload', 'Install-Product'
""".lstrip()

WRAPPER = r"""
param([string] $Folder)
# One ps: or pwsh: block of a Conveyor job (chalicelib/runner/windows/powershell.py).
Import-Module (Join-Path $Folder 'AppVeyor.psm1') -DisableNameChecking
$ConveyorStatus = 0
try {
    . (Join-Path $Folder 'block.ps1') | Out-Host
} catch {
    Write-Host "Command executed with exception: $($_.Exception.Message)"
    $ConveyorStatus = 1
}
$ConveyorText = New-Object System.Text.UTF8Encoding $false
$ConveyorPairs = foreach ($ConveyorEntry in [Environment]::GetEnvironmentVariables().GetEnumerator()) {
    "$($ConveyorEntry.Key)=$($ConveyorEntry.Value)"
}
[System.IO.File]::WriteAllText((Join-Path $Folder 'env.out'), ($ConveyorPairs -join "`r`n"), $ConveyorText)
[System.IO.File]::WriteAllText((Join-Path $Folder 'cwd.out'), (Get-Location).ProviderPath, $ConveyorText)
[System.IO.File]::WriteAllText((Join-Path $Folder 'status'), "$ConveyorStatus", $ConveyorText)
exit $ConveyorStatus
""".lstrip()

_PROGRAMS = {"ps": ("powershell.exe", "Windows PowerShell"), "pwsh": ("pwsh.exe", "PowerShell 7")}


def command_line(program: str, wrapper: Path, folder: Path) -> list[str]:
    """How PowerShell is started for one block."""
    options = ["-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass"]
    return [program, *options, "-File", str(wrapper), str(folder)]


def run_block(
    session: WindowsSession,
    text: str,
    language: str,
    variables: Mapping[str, str],
    should_stop: Callable[[], str | None],
    folder: Path,
) -> Outcome:
    """Run one block in a new PowerShell with the session's environment and folder, and take back what it left."""
    program_name, what = _PROGRAMS[language]
    environment = session.apply(variables)
    path = console.variable(environment, "PATH")
    program = shutil.which(program_name, path=path)
    if program is None:
        return Outcome(None, f"'{language}:' scripts need {what} ({program_name}), which this machine does not have.")
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: folder / name for name in ("env.out", "cwd.out", "status")}
    for stale in files.values():
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    # with a byte order mark, Windows PowerShell 5.1 reads UTF-8 (without one, the ANSI code page)
    (folder / "AppVeyor.psm1").write_text(MODULE, encoding="utf-8-sig")
    (folder / "wrapper.ps1").write_text(WRAPPER, encoding="utf-8-sig")
    (folder / "block.ps1").write_text(text, encoding="utf-8-sig")
    argv = command_line(program, folder / "wrapper.ps1", folder)
    outcome = run_in_job(session.job, argv, session.cwd, environment, session.say, should_stop)
    if outcome.exit_code is None:
        return outcome
    try:
        status = int(files["status"].read_text(encoding="utf-8").strip())
    except (FileNotFoundError, ValueError):
        return Outcome(
            None,
            f"{program} exited with code {outcome.exit_code} without running the block to its end (it wrote no "
            "result): the block fails.",
        )
    session.take(files["env.out"], files["cwd.out"])
    return Outcome(status)
