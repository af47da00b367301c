"""What a Windows build agent loads exists on Windows and is installed there: no POSIX-only module (fcntl, pty,
termios, resource, grp, pwd), and of the service's libraries only what images/windows/requirements.txt installs
(urllib3). Checked in a fresh interpreter where those modules cannot be imported; under Wine the same code runs for
real (tests/functional/test_windows_agent_under_wine.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chalicelib.runner.windows

ROOT = Path(__file__).resolve().parents[4]
POSIX_ONLY = ("fcntl", "pty", "termios", "resource", "grp", "pwd")
NOT_INSTALLED_ON_WINDOWS = ("boto3", "botocore", "pynamodb", "chalice", "dulwich", "yaml", "requests", "re2")
AGENT = ["chalicelib.cli", "chalicelib.agent", "chalicelib.runner.job", "chalicelib.runner.worker_api"]


def test_the_agent_and_runner_load_nothing_windows_lacks_or_the_agent_does_not_install() -> None:
    windows_modules = sorted(
        f"chalicelib.runner.windows.{path.stem}"
        for path in Path(chalicelib.runner.windows.__file__).parent.glob("*.py")
        if path.stem != "__init__"
    )
    script = "\n".join(
        [
            "import sys",
            f"for name in {[*POSIX_ONLY, *NOT_INSTALLED_ON_WINDOWS]!r}:",
            "    sys.modules[name] = None  # importing it raises ImportError",
            *(f"import {module}" for module in [*AGENT, *windows_modules]),
            "print('loaded')",
        ]
    )

    done = subprocess.run([sys.executable, "-I", "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)

    assert (done.returncode, done.stdout.strip()) == (0, "loaded"), done.stderr
    assert len(windows_modules) >= 10
