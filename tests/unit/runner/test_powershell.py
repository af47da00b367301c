"""A ``ps:`` script where the job has no PowerShell fails saying so, in the job's Bash session. Runs bash in a
temporary folder whose PATH holds no pwsh."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner import powershell
from chalicelib.runner.session import Session


def test_a_powershell_script_without_pwsh_fails_saying_what_to_use_instead(tmp_path: Path) -> None:
    lines: list[str] = []
    session = Session(tmp_path, lines.append)
    nothing_installed = {"PATH": str(tmp_path / "bin")}  # no pwsh there
    try:
        outcome = session.run(
            powershell.command("Write-Output 'hi'", "ps", "this runner"),
            nothing_installed,
            lambda: None,
            setup=powershell.SETUP,
        )
        after = session.run("echo $((1 + 1))", nothing_installed, lambda: None)
    finally:
        session.close()

    assert outcome.exit_code not in (0, None) and not outcome.ended_shell
    assert "'ps:' scripts need PowerShell (pwsh), which this runner does not have; use 'sh:'." in "\n".join(lines)
    assert after.exit_code == 0 and "2" in lines  # the Bash session goes on
