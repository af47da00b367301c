"""The operator's settings of a job's limits (CONVEYOR_JOB_MEMORY_MB, CONVEYOR_JOB_CPUS, CONVEYOR_JOB_DISK_MB):
documented defaults, and a value that is not one refused at once rather than ignored."""

from __future__ import annotations

import os

import pytest

from chalicelib.config import DEFAULT_JOB_DISK_MB, DEFAULT_JOB_MEMORY_MB, settings


def test_a_job_gets_the_documented_limits_unless_the_operator_sets_others(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVEYOR_JOB_MEMORY_MB", "CONVEYOR_JOB_CPUS", "CONVEYOR_JOB_DISK_MB"):
        monkeypatch.delenv(name, raising=False)
    defaults = settings()
    monkeypatch.setenv("CONVEYOR_JOB_MEMORY_MB", "512")
    monkeypatch.setenv("CONVEYOR_JOB_CPUS", "0.5")
    monkeypatch.setenv("CONVEYOR_JOB_DISK_MB", "1024")
    chosen = settings()

    assert (
        (defaults.job_memory_mb, defaults.job_disk_mb) == (DEFAULT_JOB_MEMORY_MB, DEFAULT_JOB_DISK_MB) == (4096, 10240)
    )
    assert defaults.job_cpus == min(2.0, float(os.cpu_count() or 1))  # never more than the machine has
    assert (chosen.job_memory_mb, chosen.job_cpus, chosen.job_disk_mb) == (512, 0.5, 1024)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CONVEYOR_JOB_MEMORY_MB", "4G"),
        ("CONVEYOR_JOB_DISK_MB", "0"),
        ("CONVEYOR_JOB_CPUS", "-1"),
        ("CONVEYOR_JOB_CPUS", "two"),
    ],
)
def test_a_limit_that_is_not_one_is_refused_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)

    with pytest.raises(ValueError, match=name):
        settings()
