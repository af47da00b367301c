"""How the operator command finds a running local stack: a file in its state folder, readable only by its user.

The stack's emulator answers only requests signed with the stack's own random credentials (signatures.py), so
``conveyor create-account`` run beside ``make run`` would be refused. While the stack runs, ``stack.json`` holds
its AWS endpoint and those credentials (mode 0600, in a folder only its owner may enter); the command, for the
``local`` stage and with no AWS_ENDPOINT_URL of its own, uses them. The stack removes the file when it stops.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

STACK_FILE = "stack.json"
_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")


def write_stack_file(folder: Path) -> Path:
    """Note this process's endpoint and credentials (from its environment) in ``folder``."""
    path = folder / STACK_FILE
    content = {name: os.environ[name] for name in _VARIABLES if os.environ.get(name)}
    content["pid"] = str(os.getpid())
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as target:
        json.dump(content, target)
    return path


def remove_stack_file(folder: Path) -> None:
    (folder / STACK_FILE).unlink(missing_ok=True)


def use_running_stack(folder: Path | None) -> bool:
    """Point this process's AWS clients at the stack running from ``folder``, if one is; whether it did."""
    if folder is None:
        return False
    try:
        content = json.loads((folder / STACK_FILE).read_text())
        os.kill(int(content["pid"]), 0)  # still running (a stack killed outright leaves its file behind)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    for name in _VARIABLES:
        if content.get(name):
            os.environ[name] = content[name]
    return True
