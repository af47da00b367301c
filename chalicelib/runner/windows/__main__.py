"""``python -m chalicelib.runner.windows SECONDS``: run the job of the ticket read from standard input as a Windows
build agent runs it (host.run_runner: in a workspace and a Job Object of its own, for at most SECONDS), and exit
with the runner's exit code; how ``conveyor exec`` runs a Windows job under Wine (local/exec/wine.py)."""

import sys
import tempfile
from pathlib import Path

from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.windows.host import run_runner


def main() -> int:
    """Run the ticket's job; its exit code."""
    ticket = Ticket.from_json(sys.stdin.read())
    return run_runner(ticket, float(sys.argv[1]), Path(tempfile.gettempdir()) / "conveyor-jobs", None)


if __name__ == "__main__":  # a module the import checks load too (tests/unit/runner/windows/test_imports.py)
    sys.exit(main())
