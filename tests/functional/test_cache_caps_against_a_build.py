"""The build cache's caps, attacked by a build holding its job token: it calls the job protocol's cache routes itself,
the way its runner would not (no prune after its uploads, entries of ids no cache: entry names, odd metadata)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from chalicelib.core.jobs import Job
from chalicelib.domain.job_protocol import runner_cache
from chalicelib.store import blobs
from chalicelib.store import jobs as job_store
from chalicelib.store.cache import cache_entry_metadata, list_cache_sizes
from chalicelib.store.models import JobModel
from tests.builds import BuildProject
from tests.functional.test_job_tokens import ENTRY_ID, MATRIX_YML, ClaimedJob, claim, runner, start_build
from tests.gitserver import GitServer
from tests.support import Account


@pytest.fixture
def jobs(account: Account, git_server: GitServer) -> tuple[BuildProject, Job, Job, ClaimedJob]:
    """Two running jobs of one build, of two names (two cache folders): another job, and the attacker's (claimed)."""
    project, queued = start_build(account, git_server, {"appveyor.yml": MATRIX_YML})
    other_claim, attacker_claim = (claim(job["jobId"]) for job in queued["jobs"])
    other, attacker = job_store.get_job(other_claim.job_id), job_store.get_job(attacker_claim.job_id)
    assert other is not None and attacker is not None
    return project, other, attacker, attacker_claim


def _save(job: Job, entry_id: str, data: bytes) -> None:
    """One cache entry uploaded as a runner uploads it: a presigned upload asked for, then the PUT."""
    upload = runner_cache.cache_upload(job, entry_id, len(data), {})
    assert requests.put(upload["url"], data=data, headers=upload["headers"], timeout=10).status_code == 200


def _project_cache(job: Job) -> list[tuple[str, int]]:
    prefix = blobs.project_cache_prefix(job.account_id, job.project_id)
    return [(key, size) for key, size, _ in list_cache_sizes(prefix)]


def test_a_job_that_never_prunes_still_keeps_the_projects_cache_within_its_total(
    jobs: tuple[BuildProject, Job, Job, ClaimedJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's total held only when a runner called prune after its save: a build that uploads and never
    prunes (its runner's choice, not the service's) grew the project's cache by 5 GiB a job, every build."""
    _, other, attacker, _ = jobs
    monkeypatch.setattr(runner_cache, "MAX_PROJECT_CACHE_BYTES", 10)
    _save(other, ENTRY_ID, b"cached!")

    for entry_id in ("1" * 16, "2" * 16, "3" * 16):
        _save(attacker, entry_id, b"planted")  # and no prune

    stored = _project_cache(attacker)
    assert sum(size for _, size in stored) <= 10, stored
    assert cache_entry_metadata(runner_cache._cache_key(attacker, "3" * 16)) is not None  # the newest is kept


def test_empty_entries_of_ids_no_cache_entry_names_do_not_pile_up_in_the_projects_cache(
    jobs: tuple[BuildProject, Job, Job, ClaimedJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty entries cost nothing of the bytes caps, and a runner picks their ids: past the project's number of
    entries (every job of a full matrix, each with all its cache: entries), its oldest entries go."""
    _, other, attacker, _ = jobs
    monkeypatch.setattr(runner_cache, "MAX_PROJECT_CACHE_ENTRIES", 3, raising=False)
    _save(other, ENTRY_ID, b"")

    for index in range(6):
        _save(attacker, f"{index:016x}", b"")  # and no prune

    stored = _project_cache(attacker)
    assert len(stored) == 3, stored
    assert cache_entry_metadata(runner_cache._cache_key(other, ENTRY_ID)) is None  # the oldest went first
    assert cache_entry_metadata(runner_cache._cache_key(attacker, f"{5:016x}")) is not None


@pytest.mark.parametrize("value", ["é", "\ud800", "a\nb"])
def test_cache_metadata_other_than_printable_ascii_is_a_400_not_a_500_and_takes_none_of_the_quota(
    jobs: tuple[BuildProject, Job, Job, ClaimedJob], account: Account, value: str
) -> None:
    _, _, attacker, claimed = jobs
    body: dict[str, Any] = {"id": ENTRY_ID, "size": 7, "metadata": {"checksum": value}}

    reply = runner(account, claimed.token.token).post(f"/{attacker.job_id}/cache/uploads", body)

    assert reply.status == 400, reply.body
    assert "metadata" in reply.json["message"]
    assert JobModel.get(attacker.job_id, consistent_read=True).cache_bytes is None
