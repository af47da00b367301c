"""Bitbucket Server (AppVeyor's ``stash``), on the operator's server (CONVEYOR_STASH_URL)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from chalicelib.scm.forge import CommitStatus, Forge, bitbucket_status

# Conveyor's state -> Bitbucket Server's word for it
STATES = {
    "pending": "INPROGRESS",
    "running": "INPROGRESS",
    "success": "SUCCESSFUL",
    "failed": "FAILED",
    "cancelled": "CANCELLED",
}


class BitbucketServer(Forge):
    """Bitbucket Server's pull refs (refs/pull-requests/N/from and /merge) and build statuses."""

    def pull_refs(self, number: int) -> tuple[str, str | None]:
        """refs/pull-requests/N/from, and its merge."""
        return f"refs/pull-requests/{number}/from", f"refs/pull-requests/{number}/merge"

    def status_request(self, base: str, repository: str, status: CommitStatus) -> tuple[str, dict[str, Any]]:
        """A post to a commit's builds, on ``PROJECT/repo``."""
        project, _, slug = repository.partition("/")
        sha = quote(status.sha, safe="")
        url = f"{base}/projects/{quote(project, safe='')}/repos/{quote(slug, safe='')}/commits/{sha}/builds"
        ref = f"refs/{'tags' if status.is_tag else 'heads'}/{status.ref}"
        body = bitbucket_status(status, STATES[status.state])
        return url, {**body, "ref": ref, "buildNumber": str(status.build_number)}


BITBUCKET_SERVER = BitbucketServer("stash", "Bitbucket Server", api_path="/rest/api/latest")
