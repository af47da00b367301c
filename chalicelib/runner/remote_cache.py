"""The build cache as a runner reaches it: through the job protocol, by entry id, with presigned URLs."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner.protocol import JobClient, ProtocolError


class RemoteCache:
    """The job's cache folder (runner/cache.py's CacheStore) behind the job protocol."""

    def __init__(self, client: JobClient) -> None:
        self._client = client
        self._download_urls: dict[str, str] = {}

    def metadata(self, entry_ids: list[str]) -> dict[str, dict[str, str] | None]:
        found: dict[str, dict[str, str] | None] = {}
        for entry_id, entry in dict(self._client.cache_entries(entry_ids)["entries"]).items():
            if entry is None:
                found[entry_id] = None
                continue
            self._download_urls[entry_id] = str(entry["downloadUrl"])
            found[entry_id] = {str(name): str(value) for name, value in dict(entry["metadata"]).items()}
        return found

    def download(self, entry_id: str, path: Path) -> bool:
        url = self._download_urls.get(entry_id)
        if url is None and self.metadata([entry_id]).get(entry_id) is None:
            return False
        return self._client.download(self._download_urls[entry_id], path)

    def upload(self, entry_id: str, path: Path, metadata: dict[str, str]) -> str | None:
        try:
            upload = self._client.cache_upload(entry_id, path.stat().st_size, metadata)
        except ProtocolError as error:
            if error.status != 409:  # past the job's cache quota: the entry is not saved, and the job goes on
                raise
            return str(error).partition("HTTP 409 ")[2] or str(error)
        self._client.send_file(upload, path)
        return None

    def prune(self, keep: list[str]) -> int:
        return self._client.cache_prune(keep)
