"""A job's counts and artifacts read from the store in either form: its own, or the API's JSON older items hold.
No IO."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.core.jobs import JobArtifact, JobCounts
from chalicelib.store.job_forms import artifact_item, artifacts_from_items, counts_from_item, counts_item

CREATED = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)


def test_counts_read_the_same_in_the_stores_form_and_the_apis() -> None:
    counts = JobCounts(messages=1, tests=2, failed_tests=1)

    assert counts_from_item(counts_item(counts)) == counts
    assert counts_from_item({"messagesCount": 1, "testsCount": 2, "failedTestsCount": 1}) == counts
    assert counts_from_item(None) == JobCounts()  # a job that has not ended


def test_artifacts_read_the_same_in_the_stores_form_and_the_apis_without_an_etag_from_before() -> None:
    artifact = JobArtifact("out/app.zip", "app", "Zip", 42, CREATED, etag='"abc"')
    shown = {"fileName": "out/app.zip", "name": "app", "type": "Zip", "size": 42, "created": CREATED.isoformat()}

    assert artifacts_from_items([artifact_item(artifact)]) == [artifact]
    assert artifacts_from_items([shown]) == [JobArtifact("out/app.zip", "app", "Zip", 42, CREATED)]
    assert artifacts_from_items(None) == []
