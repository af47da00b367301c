"""The first ``make run`` / ``make test`` says what it installs, step by step, and a registry's passing failure is
tried again before it fails the run. Played with stand-ins for python and npm (no registry is reached): each
fails as often as the test says, then succeeds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]

# A stand-in for python (``-m venv`` makes a venv whose python is this script) and for npm: each call of a
# command in FAILING fails while its count of calls is at most FAILURES, then succeeds.
_STAND_IN = """#!/bin/sh
log="$STAND_IN_LOG"
if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
echo "$(basename "$0") $*" >> "$log"
calls=$(grep -c "" "$log")
case " $* " in *" install "*)
  if [ "$calls" -le "$FAILURES" ]; then echo "stand-in: registry timed out" >&2; exit 1; fi;;
esac
for argument; do [ "$previous" = "--prefix" ] && mkdir -p "$argument"; previous="$argument"; done
exit 0
"""


def make(tmp_path: Path, target: str, failures: int) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("python", "npm"):
        (bin_dir / name).write_text(_STAND_IN)
        (bin_dir / name).chmod(0o755)
    environment = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STAND_IN_LOG": str(tmp_path / "calls.log"),
        "FAILURES": str(failures),
    }
    variables = [
        f"PYTHON={bin_dir / 'python'}",
        f"VENV={tmp_path / 'venv'}",
        f"AZURITE={tmp_path / 'azurite'}",
        "RETRY_PAUSE=0",
    ]
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(PROJECT_DIR), *variables, target],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_a_first_install_says_each_step_and_gets_past_a_registry_failing_twice(tmp_path: Path) -> None:
    done = make(tmp_path, str(tmp_path / "venv" / ".installed"), failures=2)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"creating the virtual environment {tmp_path / 'venv'}...",
        f"installing pip 26.2.1 into {tmp_path / 'venv'}...",
        f"installing Python packages into {tmp_path / 'venv'} (first run, ~3 min)...",
        f"installing Conveyor itself into {tmp_path / 'venv'} (editable)...",
        f"{tmp_path / 'venv'} is ready.",
    ]
    assert done.stderr.count("that failed (attempt") == 2
    assert (tmp_path / "venv" / ".installed").exists()


def test_an_npm_install_failing_twice_is_tried_again_and_installs(tmp_path: Path) -> None:
    done = make(tmp_path, str(tmp_path / "azurite" / ".installed-3.37.0"), failures=2)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "installing Azurite 3.37.0" in done.stdout
    assert "that failed (attempt 2 of 3): trying again in 0 s..." in done.stderr
    assert (tmp_path / "azurite" / ".installed-3.37.0").exists()


def test_a_registry_that_keeps_failing_fails_the_run_after_three_tries(tmp_path: Path) -> None:
    done = make(tmp_path, str(tmp_path / "azurite" / ".installed-3.37.0"), failures=99)

    assert done.returncode != 0
    assert (tmp_path / "calls.log").read_text().count("install") == 3
    assert not (tmp_path / "azurite" / ".installed-3.37.0").exists()
