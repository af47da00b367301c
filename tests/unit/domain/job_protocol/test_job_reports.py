"""A job's messages and tests as its runner reports them: a report the service would not keep is a 400 before any
quota is taken or anything stored, and what is kept is stored as sent, its kind apart. The store is recorded, not
reached (no IO)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.core.jobs import Job, ReportQuota
from chalicelib.domain.job_protocol import job_reports
from chalicelib.errors import Invalid

NOW = datetime(2024, 5, 1, tzinfo=UTC)


@pytest.fixture
def stored(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What reaches the store: each quota taken, then each batch of reports stored."""
    reached: list[Any] = []

    def take_report_quota(job_id: str, taken: ReportQuota, limit: ReportQuota, outside: bool = False) -> None:
        reached.append(("quota", job_id, taken))

    def add_reports(job_id: str, reports: list[tuple[str, dict[str, Any]]], first: Any = None) -> None:
        reached.append(("reports", job_id, list(reports)))

    monkeypatch.setattr(job_reports.job_store, "take_report_quota", take_report_quota)
    monkeypatch.setattr(job_reports.reports, "add_reports", add_reports)
    return reached


def _job() -> Job:
    return Job("job-1", 3, 2, 1, 1, "Environment: N=1", {}, False, "running", NOW)


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([], id="none"),
        pytest.param([{"kind": "message", "category": "error", "message": "m"}] * 1001, id="more-than-a-call-holds"),
        pytest.param([{"kind": "log", "category": "error", "message": "m"}], id="unknown-kind"),
        pytest.param([{"kind": "message", "category": "debug", "message": "m"}], id="unknown-category"),
        pytest.param([{"kind": "message", "category": "error"}], id="no-text"),
        pytest.param([{"kind": "message", "category": "error", "message": "m", "details": {}}], id="object-field"),
        pytest.param([{"kind": "message", "category": "error", "message": "\ud800"}], id="lone-surrogate"),
        pytest.param([{"kind": "message", "category": "error", "message": "m" * 70_000}], id="too-big"),
    ],
)
def test_a_message_the_service_would_not_keep_is_a_400_that_stores_nothing(
    stored: list[Any], messages: list[dict[str, Any]]
) -> None:
    with pytest.raises(Invalid):
        job_reports.add_messages(_job(), messages)

    assert stored == []


def test_a_test_without_its_name_is_a_400_that_stores_nothing(stored: list[Any]) -> None:
    with pytest.raises(Invalid, match="testName"):
        job_reports.add_tests(_job(), [{"testName": "a"}, {"outcome": "Passed"}], update=False)

    assert stored == []


def test_a_message_is_stored_under_its_kind_after_the_quota_for_it_is_taken(stored: list[Any]) -> None:
    job_reports.add_messages(_job(), [{"kind": "compilation", "category": "warning", "message": "unused x"}])

    body = {"category": "warning", "message": "unused x"}
    assert [entry[0] for entry in stored] == ["quota", "reports"]
    assert stored[0][2].count == 1 and stored[0][2].size > 0
    assert stored[1] == ("reports", "job-1", [("compilation", body)])
