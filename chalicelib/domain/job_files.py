"""What a job left: its log and its artifacts, for callers who may view its build."""

from __future__ import annotations

from chalicelib.core.logs import ByteRange, LogReply
from chalicelib.domain.auth import Caller
from chalicelib.domain.builds import find_job
from chalicelib.errors import NotFound
from chalicelib.store import artifacts as artifact_store
from chalicelib.store import blobs, log_reads


def job_log(caller: Caller, job_id: str, wanted: ByteRange | None) -> LogReply:
    """The job's log as the API serves it (``wanted``: the bytes a Range asks for)."""
    job, _ = find_job(caller, job_id)
    return log_reads.read_log(blobs.prefix_of(job), wanted)


def artifact_url(caller: Caller, job_id: str, file_name: str) -> str:
    """A short-lived URL of one of the job's artifacts."""
    job, _ = find_job(caller, job_id)
    url = None
    if any(artifact.file_name == file_name for artifact in job.artifacts):
        url = artifact_store.artifact_url(blobs.prefix_of(job), file_name)
    if url is None:
        raise NotFound(f"Artifact '{file_name}' not found.")
    return url
