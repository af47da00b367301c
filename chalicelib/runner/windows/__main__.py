"""``python -m chalicelib.runner.windows SECONDS``: run the job of the ticket read from standard input as a Windows
build agent runs it (host.run_runner: in a workspace and a Job Object of its own, for at most SECONDS), and exit
with the runner's exit code; how ``conveyor exec`` runs a Windows job under Wine (local/exec/wine.py)."""

import sys
import tempfile
from pathlib import Path

from chalicelib.runner.protocol import Ticket
from chalicelib.runner.windows.host import run_runner

ticket = Ticket.from_json(sys.stdin.read())
sys.exit(run_runner(ticket, float(sys.argv[1]), Path(tempfile.gettempdir()) / "conveyor-jobs", None))
