"""The build cache through the job protocol: a runner reads its job's cache entries by id and saves them through
presigned uploads; a pull request's build, or one started with variables by a caller who may not update the project,
restores but never saves (its author could poison the next builds)."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from chalicelib.core.jobs import Job
from chalicelib.domain.configuration.matrix import MAX_JOBS
from chalicelib.domain.configuration.unhonoured import MAX_CACHE_ENTRIES
from chalicelib.domain.job_identity.job_tokens import build_and_project
from chalicelib.domain.projects.request_variables import why_untrusted, withholds_secrets
from chalicelib.errors import Conflict, Forbidden, Invalid
from chalicelib.store import blobs
from chalicelib.store import jobs as job_store
from chalicelib.store.cache import cache_entry_metadata, delete_cache_keys, list_cache_sizes
from chalicelib.store.uploads import presigned_download, presigned_upload

MAX_CACHE_ENTRY_BYTES = 3 * 1024**3  # AppVeyor's limit for a single entry
# what one job's cache save uploads in all (its entries are uploaded one after another, each a fresh object)
MAX_CACHE_BYTES_PER_JOB = 5 * 1024**3
# what a project's cache keeps in all, every job name's folder together (a renamed job's old folder too): past it, each
# upload and each save's prune drops the project's oldest entries
MAX_PROJECT_CACHE_BYTES = 10 * 1024**3
# and its number of entries: every job of a full matrix, each with all its cache: entries (an empty entry costs nothing
# of the bytes, and a runner picks its entries' ids)
MAX_PROJECT_CACHE_ENTRIES = MAX_JOBS * MAX_CACHE_ENTRIES
_CACHE_ENTRY_ID = re.compile(r"[0-9a-f]{16}")
_CACHE_METADATA = ("dependencies", "checksum")


def cache_entries(job: Job, entry_ids: list[str]) -> dict[str, Any]:
    """Each cache entry's metadata and a download URL (None when it is not stored); whether the job may save."""
    build, _ = build_and_project(job)
    entries: dict[str, Any] = {}
    for entry_id in _entry_ids(entry_ids):
        key = _cache_key(job, entry_id)
        metadata = cache_entry_metadata(key)
        entries[entry_id] = None if metadata is None else {"metadata": metadata, "downloadUrl": presigned_download(key)}
    return {"entries": entries, "save": not withholds_secrets(build)}


def cache_upload(job: Job, entry_id: str, size: int, metadata: dict[str, Any]) -> dict[str, Any]:
    """A presigned upload of one cache entry; never for an untrusted build (its author could poison the cache)."""
    _may_save_cache(job)
    (entry_id,) = _entry_ids([entry_id])
    if not 0 <= size <= MAX_CACHE_ENTRY_BYTES:
        raise Invalid(f"A cache entry is at most {MAX_CACHE_ENTRY_BYTES:,} bytes.")
    # S3 keeps metadata of printable ASCII only: anything else would fail when the upload is signed (a 500)
    if set(metadata) - set(_CACHE_METADATA) or not all(
        isinstance(value, str) and len(value) <= 128 and value.isascii() and value.isprintable()
        for value in metadata.values()
    ):
        raise Invalid("A cache entry's metadata is its dependencies and checksum digests (printable ASCII).")
    if not job_store.take_cache_quota(job.job_id, size, MAX_CACHE_BYTES_PER_JOB):
        raise Conflict(f"A job saves at most {MAX_CACHE_BYTES_PER_JOB:,} bytes of build cache in all.")
    key = _cache_key(job, entry_id)
    # room is made before the upload: the project's totals hold whether or not the runner prunes after its save
    _bound_project_cache(job, _project_cache(job), (key, size))
    return presigned_upload(key, size, "application/gzip", metadata)


def cache_prune(job: Job, keep: list[str]) -> int:
    """Delete the job's cache entries other than ``keep``; how many went."""
    _may_save_cache(job)
    kept = {_cache_key(job, entry_id) for entry_id in _entry_ids(keep)}
    own, stored = _cache_folder(job), _project_cache(job)  # one listing: the job's folder is in the project's
    stale = {key for key, _, _ in stored if key.startswith(own) and key not in kept}
    delete_cache_keys(sorted(stale))
    _bound_project_cache(job, [entry for entry in stored if entry[0] not in stale])
    return len(stale)


def _project_cache(job: Job) -> list[tuple[str, int, datetime]]:
    """Every entry of the job's project's cache, with its size and when it was stored."""
    return list_cache_sizes(blobs.project_cache_prefix(job.account_id, job.project_id))


def _bound_project_cache(
    job: Job, stored: list[tuple[str, int, datetime]], incoming: tuple[str, int] | None = None
) -> None:
    """Drop the project's oldest cache entries (``stored``) past MAX_PROJECT_CACHE_BYTES or
    MAX_PROJECT_CACHE_ENTRIES, newest kept first (this job's own); ``incoming``, an entry about to be uploaded (its
    key and size), counted first."""
    own = _cache_folder(job)
    total, count = (incoming[1], 1) if incoming else (0, 0)
    over: list[str] = []
    stored = [entry for entry in stored if incoming is None or entry[0] != incoming[0]]  # the upload replaces it
    for key, size, _ in sorted(stored, key=lambda entry: (entry[0].startswith(own), entry[2]), reverse=True):
        total, count = total + size, count + 1
        if total > MAX_PROJECT_CACHE_BYTES or count > MAX_PROJECT_CACHE_ENTRIES:
            over.append(key)
    delete_cache_keys(over)


def _may_save_cache(job: Job) -> None:
    build, _ = build_and_project(job)
    reason = why_untrusted(build)  # what it made would be restored by the next build that gets secrets
    if reason is not None:
        raise Forbidden(f"The build cache is not saved by this build: {reason}.")


def _entry_ids(entry_ids: list[str]) -> list[str]:
    if len(entry_ids) > 100 or not all(isinstance(e, str) and _CACHE_ENTRY_ID.fullmatch(e) for e in entry_ids):
        raise Invalid("Cache entries are named by up to 100 ids of 16 hexadecimal digits.")
    return entry_ids


def _cache_folder(job: Job) -> str:
    """Each matrix job keeps its own cache, found again by its name in the next build."""
    return f"{blobs.project_cache_prefix(job.account_id, job.project_id)}{_name_digest(job.name)}/"


def _name_digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def _cache_key(job: Job, entry_id: str) -> str:
    return f"{_cache_folder(job)}{entry_id}.tgz"
