"""The PowerShell a Windows build agent runs: AppVeyor's commands (MODULE) and the wrapper of each ps: block, parsed by
a PowerShell grammar (tree-sitter-powershell): no PowerShell exists on this machine, and Wine's powershell.exe is a
stub that runs nothing, so what PowerShell would do with them is checked by reading them (and under Wine, only that
a block the stub did not run fails: tests/functional/test_windows_agent_under_wine.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chalicelib.runner.shell import Outcome
from chalicelib.runner.windows.cmd_session import WindowsSession
from chalicelib.runner.windows.powershell import MODULE, WRAPPER, command_line, run_block

tree_sitter = pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (requirements-dev.txt)")
grammar = pytest.importorskip("tree_sitter_powershell", reason="tree-sitter-powershell is not installed")
COMMANDS = (
    "Add-AppveyorMessage",
    "Add-AppveyorCompilationMessage",
    "Set-AppveyorBuildVariable",
    "Add-AppveyorTest",
    "Update-AppveyorTest",
    "Push-AppveyorArtifact",
    "Update-AppveyorBuild",
    "Exit-AppveyorBuild",
    "Start-FileDownload",
    "Install-Product",
)


def parse(source: str) -> tree_sitter.Node:
    parser = tree_sitter.Parser(tree_sitter.Language(grammar.language()))
    return parser.parse(source.encode()).root_node


def errors(node: tree_sitter.Node) -> list[str]:
    """Where the grammar found no PowerShell: each error's line and text."""
    if node.type == "ERROR" or node.is_missing:
        return [f"line {node.start_point[0] + 1}: {node.text!r}"]
    return [found for child in node.children for found in errors(child)]


def functions(node: tree_sitter.Node) -> list[str]:
    found = []
    if node.type == "function_statement":
        name = next(child for child in node.children if child.type == "function_name")
        found.append(name.text.decode())
    return found + [name for child in node.children for name in functions(child)]


def test_the_module_is_powershell_and_defines_every_command_appveyor_documents() -> None:
    tree = parse(MODULE)

    assert errors(tree) == []
    assert set(COMMANDS) <= set(functions(tree))


def test_the_grammar_finds_broken_powershell_so_the_checks_above_can_fail() -> None:
    assert errors(parse("function Add-AppveyorMessage { Invoke-ConveyorAppveyor AddMessage $args "))


def test_every_command_but_install_product_calls_the_appveyor_command_with_its_verb() -> None:
    verbs = dict(re.findall(r"function ([\w-]+) \{ Invoke-ConveyorAppveyor (\w+) \$args \}", MODULE))

    assert verbs == {
        "Add-AppveyorMessage": "AddMessage",
        "Add-AppveyorCompilationMessage": "AddCompilationMessage",
        "Add-AppveyorTest": "AddTest",
        "Update-AppveyorTest": "UpdateTest",
        "Push-AppveyorArtifact": "PushArtifact",
        "Update-AppveyorBuild": "UpdateBuild",
        "Exit-AppveyorBuild": "exit",
        "Start-FileDownload": "DownloadFile",
    }
    assert "Invoke-ConveyorAppveyor SetVariable" in MODULE


def test_the_wrapper_is_powershell_runs_the_block_in_a_try_and_always_writes_its_result() -> None:
    tree = parse(WRAPPER)

    assert errors(tree) == []
    try_at, catch_at = WRAPPER.index("try {"), WRAPPER.index("} catch {")
    assert try_at < WRAPPER.index(". (Join-Path $Folder 'block.ps1')") < catch_at  # an exception fails the block
    assert WRAPPER.index("'status'") > catch_at  # written whatever the block did
    assert "$LASTEXITCODE" not in WRAPPER  # a native program's exit code fails nothing (AppVeyor's rule)


def test_powershell_starts_without_profile_or_prompt_running_the_wrapper() -> None:
    argv = command_line("powershell.exe", Path("w.ps1"), Path("f"))

    assert argv == [
        "powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", "w.ps1",
        "f",
    ]  # fmt: skip


def test_a_block_where_the_machine_has_no_powershell_fails_saying_so(tmp_path: Path) -> None:
    session = WindowsSession(tmp_path, print, tmp_path / "commands")

    outcome = run_block(session, "Write-Host hi", "pwsh", {"PATH": str(tmp_path)}, lambda: None, tmp_path / "ps")

    assert outcome == Outcome(None, "'pwsh:' scripts need PowerShell 7 (pwsh.exe), which this machine does not have.")
