"""Frozen dataclasses that share FieldsRepr show as ``@dataclass`` would show them (core/reprs.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from chalicelib.core.jobs import Job, JobCounts
from chalicelib.core.reprs import FieldsRepr


@dataclass(frozen=True)
class Compiled:
    name: str
    when: datetime
    counts: JobCounts = JobCounts()
    hidden: str = field(default="secret", repr=False)
    items: list[int] = field(default_factory=list)


@dataclass(frozen=True, repr=False)
class Shared(FieldsRepr):
    name: str
    when: datetime
    counts: JobCounts = JobCounts()
    hidden: str = field(default="secret", repr=False)
    items: list[int] = field(default_factory=list)


def test_a_shared_repr_is_the_text_dataclass_would_compile() -> None:
    when = datetime(2026, 11, 28, tzinfo=UTC)

    compiled = repr(Compiled("it's", when, items=[1, 2]))
    shared = repr(Shared("it's", when, items=[1, 2]))

    assert shared == compiled.replace("Compiled(", "Shared(", 1)
    assert "secret" not in shared  # a field kept out of repr stays out


def test_an_entity_shows_every_field_in_order() -> None:
    job = Job("job-1", 2, 3, 4, 1, "Environment: A=1", {}, False, "queued", datetime(2026, 1, 1, tzinfo=UTC))

    assert repr(job).startswith("Job(job_id='job-1', build_id=2, project_id=3, account_id=4, number=1, name=")
    assert repr(job).endswith("project_slug=None, token_hash=None)")
