"""How ``conveyor`` finds the running local stack: its endpoint and credentials in a file only its user reads."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from chalicelib.local.stackfile import STACK_FILE, remove_stack_file, use_running_stack, write_stack_file


def test_a_running_stacks_endpoint_and_credentials_are_used_and_only_its_user_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "stack-key")
    path = write_stack_file(tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://elsewhere")

    assert use_running_stack(tmp_path) is True  # the file names this process, which is running
    assert (os.environ["AWS_ENDPOINT_URL"], os.environ["AWS_ACCESS_KEY_ID"]) == ("http://127.0.0.1:4566", "stack-key")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_no_file_a_removed_one_or_a_stopped_stacks_is_not_used(tmp_path: Path) -> None:
    assert use_running_stack(None) is False
    write_stack_file(tmp_path)
    remove_stack_file(tmp_path)
    assert use_running_stack(tmp_path) is False
    (tmp_path / STACK_FILE).write_text('{"pid": "999999999"}')  # no such process: a stack killed outright
    assert use_running_stack(tmp_path) is False
