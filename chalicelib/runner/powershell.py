"""PowerShell in a job: one ``pwsh`` session from the job's first ``ps:`` or ``pwsh:`` script to its end, beside its
one Bash session, exchanging environment variables and the current folder with it both ways, as AppVeyor's Linux
images do (``- export MY_VAR=test`` then ``- ps: $env:MY_VAR``).

The Bash session starts PowerShell and asks it to run each script: so a script runs alike in a job's container and
on a runner without one, and PowerShell reaches nothing Bash could not. At the first PowerShell script the Bash
session is given ``__conveyor_pwsh`` (BASH_FUNCTION) and the bridge (BRIDGE, a PowerShell script). The function starts
``pwsh`` running the bridge on a pipe of its own, in a private folder (``mktemp -d``) that holds the exchange: before
each script, Bash writes its exported variables (``env -0``), its folder and the script there and asks for a run;
PowerShell takes them, runs the script dot-sourced in its session (its variables and functions stay for the next
script), writes its environment and folder back, and answers with the script's status on a named pipe, which Bash
waits on. Bash then takes PowerShell's variables (set, changed or removed) and folder.

A script fails when it throws, as on AppVeyor ("Command executed with exception"); an exit code a native program
leaves in ``$LASTEXITCODE`` does not fail it (AppVeyor's rule: check it, or ``throw``). ``exit N`` ends the
PowerShell session: the script ends with code N (0 succeeds), and the next PowerShell script starts a new session,
which has the environment but not the PowerShell variables of the last. AppVeyor's PowerShell commands
(``Add-AppveyorMessage``, ``Push-AppveyorArtifact``, ``Set-AppveyorBuildVariable``, ``Exit-AppveyorBuild``...) are
functions of the session calling the ``appveyor`` command. Where the job has no ``pwsh``, the script fails saying so.
"""

from __future__ import annotations

import shlex

FUNCTION = "__conveyor_pwsh"

BRIDGE = r"""
param([string] $__conveyor_folder)
# Conveyor's PowerShell session of one job: Bash asks it to run each 'ps:' script (chalicelib/runner/powershell.py).
$ErrorActionPreference = 'Continue'
$__conveyor_asks = [System.IO.StreamReader]::new("$__conveyor_folder/asks")
$__conveyor_answers = [System.IO.StreamWriter]::new([System.IO.File]::OpenWrite("$__conveyor_folder/answers"))
$__conveyor_answers.AutoFlush = $true
$__conveyor_given = [System.Collections.Generic.HashSet[string]]::new([StringComparer]::Ordinal)

function __conveyor_appveyor([string] $Verb, [object[]] $Arguments) {
    & appveyor $Verb @Arguments
    if ($LASTEXITCODE -ne 0) { throw "appveyor $Verb failed with code $LASTEXITCODE" }
}
function Add-AppveyorMessage { __conveyor_appveyor AddMessage $args }
function Add-AppveyorCompilationMessage { __conveyor_appveyor AddCompilationMessage $args }
function Add-AppveyorTest { __conveyor_appveyor AddTest $args }
function Update-AppveyorTest { __conveyor_appveyor UpdateTest $args }
function Push-AppveyorArtifact { __conveyor_appveyor PushArtifact $args }
function Update-AppveyorBuild { __conveyor_appveyor UpdateBuild $args }
function Exit-AppveyorBuild { __conveyor_appveyor exit $args }
function Set-AppveyorBuildVariable {
    $named = @{ }
    $positional = [System.Collections.Generic.List[string]]::new()
    for ($at = 0; $at -lt $args.Count; $at++) {
        if ("$($args[$at])" -match '^-(Name|Value):?$') { $named[$Matches[1]] = "$($args[++$at])" }
        else { $positional.Add("$($args[$at])") }
    }
    $name = if ($named.ContainsKey('Name')) { $named['Name'] } else { $positional[0] }
    $value = if ($named.ContainsKey('Value')) { $named['Value'] } else { $positional[$positional.Count - 1] }
    __conveyor_appveyor SetVariable @('-Name', $name, '-Value', $value)
    [Environment]::SetEnvironmentVariable($name, $value)
}

while ($null -ne $__conveyor_asks.ReadLine()) {
    $__conveyor_names = [System.Collections.Generic.HashSet[string]]::new([StringComparer]::Ordinal)
    foreach ($__conveyor_pair in [System.IO.File]::ReadAllText("$__conveyor_folder/env.in").Split([char]0)) {
        $__conveyor_at = $__conveyor_pair.IndexOf('=')
        if ($__conveyor_at -lt 1) { continue }
        $__conveyor_name = $__conveyor_pair.Substring(0, $__conveyor_at)
        [void] $__conveyor_names.Add($__conveyor_name)
        [Environment]::SetEnvironmentVariable($__conveyor_name, $__conveyor_pair.Substring($__conveyor_at + 1))
    }
    foreach ($__conveyor_name in $__conveyor_given) {  # removed in Bash since PowerShell gave it
        if (-not $__conveyor_names.Contains($__conveyor_name)) {
            [Environment]::SetEnvironmentVariable($__conveyor_name, $null)
        }
    }
    Set-Location -LiteralPath ([System.IO.File]::ReadAllText("$__conveyor_folder/cwd.in"))
    $__conveyor_code = 0
    try {
        . ([ScriptBlock]::Create([System.IO.File]::ReadAllText("$__conveyor_folder/script.ps1"))) | Out-Host
    } catch {
        Write-Host "Command executed with exception: $($_.Exception.Message)"
        $__conveyor_code = 1
    }
    $__conveyor_given.Clear()
    $__conveyor_pairs = foreach ($__conveyor_entry in [Environment]::GetEnvironmentVariables().GetEnumerator()) {
        [void] $__conveyor_given.Add($__conveyor_entry.Key)
        "$($__conveyor_entry.Key)=$($__conveyor_entry.Value)"
    }
    [System.IO.File]::WriteAllText("$__conveyor_folder/env.out", ($__conveyor_pairs -join [char]0) + [char]0)
    [System.IO.File]::WriteAllText("$__conveyor_folder/cwd.out", (Get-Location).ProviderPath)
    $__conveyor_answers.WriteLine("$__conveyor_code")
}
""".lstrip()

# $1: the script; $2: what to say where there is no pwsh
BASH_FUNCTION = r"""
__conveyor_pwsh() {
    { local -; set +e +u +x +C; } 2>/dev/null  # the caller's options are theirs again on return
    local folder=${__conveyor_pwsh_folder-} status pair name
    if [[ -z $folder ]]; then
        if ! command -v pwsh >/dev/null 2>&1; then
            builtin printf '%s\n' "$2"
            return 127
        fi
        folder=$(mktemp -d) && mkfifo -m 600 "$folder/asks" "$folder/answers" || return 1
        builtin printf '%s' "$__conveyor_pwsh_bridge" >"$folder/bridge.ps1"
        exec {__conveyor_pwsh_asks}<>"$folder/asks" {__conveyor_pwsh_answers}<>"$folder/answers"
        (
            pwsh -NoLogo -NoProfile -NonInteractive -File "$folder/bridge.ps1" "$folder" </dev/null 2>&1
            builtin printf 'exit %s\n' "$?" >&"$__conveyor_pwsh_answers"
        ) &
        disown
        __conveyor_pwsh_folder=$folder
    fi
    builtin printf '%s' "$1" >"$folder/script.ps1"
    env -0 >"$folder/env.in"
    builtin printf '%s' "$PWD" >"$folder/cwd.in"
    builtin printf 'run\n' >&"$__conveyor_pwsh_asks"
    IFS= read -r status <&"$__conveyor_pwsh_answers"
    if [[ $status == exit* ]]; then
        status=${status#exit }
        builtin printf 'PowerShell exited with code %s; the next PowerShell script starts a new session.\n' "$status"
        exec {__conveyor_pwsh_asks}>&- {__conveyor_pwsh_answers}<&-
        rm -rf -- "$folder"
        unset __conveyor_pwsh_folder
        return "$status"
    fi
    local -A given=()
    while IFS= read -r -d '' pair; do
        name=${pair%%=*}
        [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ && $name != @(PWD|OLDPWD|SHLVL|_) ]] || continue
        given[$name]=1
        export "$pair" 2>/dev/null || :  # not a read-only one of Bash's
    done <"$folder/env.out"
    for name in $(compgen -e); do
        [[ ${given[$name]-} || $name == @(PWD|OLDPWD|SHLVL|_) ]] || unset "$name" 2>/dev/null || :
    done
    builtin cd -- "$(<"$folder/cwd.out")" || return 1
    return "$status"
}
""".lstrip()


# What the Bash session is given before its first PowerShell script: the bridge (not exported) and the function that
# runs a script in PowerShell.
SETUP = f"__conveyor_pwsh_bridge={shlex.quote(BRIDGE)}\n{BASH_FUNCTION}"


FOUND = "{ command -v pwsh; } >/dev/null 2>&1"  # the shell finds PowerShell (untraced under set -x)


def missing(language: str, in_image: bool) -> str:
    """Why a ``ps:`` or ``pwsh:`` script cannot run where the job has no pwsh: the job's message."""
    where = "This image has no PowerShell" if in_image else "This runner has no PowerShell"
    return (
        f"{where}: '{language}:' scripts need pwsh. Use 'sh:' lines, install PowerShell in an earlier script, or set "
        "APPVEYOR_YML_DISABLE_PS_LINUX: true to skip them on Linux."
    )


def command(script: str, language: str, where: str) -> str:
    """The Bash command that runs ``script`` in the job's PowerShell session (``where``: what lacks pwsh)."""
    missing = f"'{language}:' scripts need PowerShell (pwsh), which {where} does not have; use 'sh:'."
    return f"{FUNCTION} {shlex.quote(script)} {shlex.quote(missing)}"
