"""The runner's side of the job protocol: HTTP calls to the service, authenticated by the job's token only.

A runner holds nothing of the service but a ticket: the API's URL, its job's id and the job token minted when
the job was dispatched. Every call below is scoped to that one job; once the job ends (or its lease is lost)
the token stops working and every call answers 401, which the runner takes as "stop".
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

import urllib3

from chalicelib.protocol.job_spec import JobSpec, read_spec
from chalicelib.protocol.ticket import Ticket

log = logging.getLogger(__name__)
_TIMEOUT = urllib3.Timeout(connect=10.0, read=60.0)
# past the last retry the service's last answer is returned: the error then says what it was (HTTP 503 and its
# message), not that the service "could not be reached"
_RETRIES = urllib3.Retry(
    total=3, backoff_factor=0.5, allowed_methods=None, status_forcelist=(502, 503, 504), raise_on_status=False
)
# S3 asks writers now and then to slow down (503 SlowDown) or try again (500): an upload is sent again, its file
# from its start (urllib3 seeks back to it); not after a timeout or a connection broken mid-upload (up to 5 GiB each)
_UPLOAD_RETRIES = urllib3.Retry(
    total=3,
    read=0,
    other=0,
    backoff_factor=0.5,
    allowed_methods=None,
    status_forcelist=(500, 502, 503, 504),
    raise_on_status=False,
)
MAX_JSON_BYTES = 1024 * 1024  # the service refuses bigger JSON bodies (api/http.py's MAX_BODY_BYTES)
MAX_LOG_TAIL_BYTES = 512 * 1024  # a log's last chunk up to this rides on the finish: 683 KiB as base64, in 1 MiB


class ProtocolError(Exception):
    """The service refused a call, or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TokenRevoked(ProtocolError):
    """The job token no longer works: the job has ended, or its lease was lost."""


@dataclass(frozen=True)
class Upload:
    """Where and how to send one file: a presigned URL and the headers it was signed with."""

    url: str
    headers: dict[str, str]


CANCELLED_MESSAGE = "The build was cancelled."  # a cancel from a service that does not say who asked for it


def cancel_of(status: str, why: str | None) -> str | None:
    """Why a heartbeat's answer (``JobClient.heartbeat``) stops the job: its cancel's message; None while it runs."""
    return (why or CANCELLED_MESSAGE) if status == "cancelling" else None


class JobClient:
    """The job protocol's operations, for one job."""

    def __init__(self, ticket: Ticket, pool: urllib3.PoolManager | None = None) -> None:
        self._ticket = ticket
        self._base = f"{ticket.api_url}/api/runner/jobs/{ticket.job_id}"
        self._http = pool or urllib3.PoolManager(retries=_RETRIES, timeout=_TIMEOUT)

    def spec(self) -> JobSpec:
        """Everything the job runs: source, scripts, variables, secrets to mask, limits."""
        return read_spec(dict(self._call("GET", "")))

    def clone_credentials(self) -> dict[str, Any]:
        """What to fetch the repository with (``username`` and ``password``, or ``sshPrivateKey`` and
        ``sshHostKey``): the service hands them once per job."""
        return dict(self._call("POST", "/clone-credentials"))

    def heartbeat(self) -> tuple[str, str | None]:
        """Renew the job's lease; the job's status ("running", or "cancelling" when asked to stop) and, when
        cancelling, why (who cancelled it; None from a service that does not say)."""
        answer = self._call("POST", "/heartbeat")
        return str(answer["status"]), (str(answer["message"]) if answer.get("message") else None)

    def put_log_chunk(self, index: int, data: bytes | memoryview) -> None:
        """Store (or replace) chunk ``index`` of the job's log; the runner has masked it already."""
        self._call("PUT", f"/log/{index}", body=bytes(data), content_type="application/octet-stream")

    def artifact_upload(self, file_name: str, size: int) -> Upload:
        """Where to upload one artifact of ``size`` bytes."""
        return _upload(self._call("POST", "/artifacts", {"fileName": file_name, "size": size}))

    def cache_entries(self, entry_ids: list[str]) -> dict[str, Any]:
        """For each cache entry id, its metadata and download URL (or None); and whether this job may save."""
        return dict(self._call("POST", "/cache/entries", {"ids": entry_ids}))

    def cache_upload(self, entry_id: str, size: int, metadata: Mapping[str, str]) -> Upload:
        """Where to upload one cache entry's archive."""
        return _upload(self._call("POST", "/cache/uploads", {"id": entry_id, "size": size, "metadata": metadata}))

    def cache_prune(self, keep: list[str]) -> int:
        """Delete the job's cache entries other than ``keep``; how many were deleted."""
        return int(self._call("POST", "/cache/prune", {"keep": keep})["deleted"])

    def add_messages(self, messages: list[dict[str, Any]]) -> None:
        """Build messages and compilation messages (each has a ``kind``: "message" or "compilation")."""
        self._call("POST", "/messages", {"messages": messages})

    def add_tests(self, tests: list[dict[str, Any]], update: bool = False) -> None:
        """Add tests, or update tests added before (matched by name)."""
        self._call("PUT" if update else "POST", "/tests", {"tests": tests})

    def upload_test_results(self, results_format: str, data: bytes, content_type: str) -> dict[str, Any]:
        """A test results file the job's scripts sent, forwarded as it came to the service's AppVeyor route."""
        path = f"/api/testresults/{quote(results_format, safe='')}/{quote(self._ticket.job_id, safe='')}"
        answer: dict[str, Any] = self._call("POST", path, body=data, content_type=content_type, root=True)
        return answer

    def quarantined_failures(self) -> list[str]:
        """The names of the job's failed tests when all are in its project's quarantine (else none): the job's
        test_script failure then fails nothing."""
        answer = self._call("POST", "/quarantine", {})
        return [str(name) for name in answer.get("quarantined") or []]

    def update_build(self, fields: Mapping[str, Any]) -> None:
        """The build's version (``UpdateBuild -Version``)."""
        self._call("PUT", "/build", dict(fields))

    def finish(
        self,
        result: str,
        message: str | None,
        log_chunks: int,
        artifacts: list[dict[str, Any]],
        log_tail: bytes | None = None,
        log_tail_sent: bool = True,
    ) -> None:
        """End the job; its token stops working.

        ``log_tail`` is chunk ``log_chunks - 1`` of the log, masked and kept back from the log stream
        (``log_tail_sent``: whether an earlier version of it was sent). It rides on the finish, which saves a call
        (and for a log never sent, all but one S3 put); if the body has no room for it, or that finish is refused
        (a service from before ``logTail`` ignores it and misses the chunk), it is stored as any chunk is and the
        job finished without it.
        """
        body = {"result": result, "message": message, "logChunks": log_chunks, "artifacts": artifacts}
        if log_tail is not None:
            tail = {"logTail": base64.b64encode(log_tail).decode("ascii"), "logTailSent": log_tail_sent}
            with_tail = json.dumps({**body, **tail}).encode()
            if len(with_tail) <= MAX_JSON_BYTES:
                try:
                    self._call("POST", "/finish", body=with_tail)
                    return
                except TokenRevoked:
                    raise
                except ProtocolError as error:
                    log.warning("The finish carrying the log's last chunk failed; storing the chunk first: %s", error)
            self.put_log_chunk(log_chunks - 1, log_tail)
        self._call("POST", "/finish", body)

    def send_file(self, upload: Upload, path: Path) -> None:
        """PUT a local file to an upload URL, streamed; sent again whole when the store answers 5xx."""
        size = path.stat().st_size
        with path.open("rb") as body:
            self._send(upload, body, size)

    def _send(self, upload: Upload, body: BinaryIO, size: int) -> None:
        headers = {**upload.headers, "Content-Length": str(size)}
        try:
            reply = self._http.request(
                "PUT",
                upload.url,
                body=body,
                headers=headers,
                retries=_UPLOAD_RETRIES,
                redirect=False,
                timeout=urllib3.Timeout(30, 600),
            )
        except urllib3.exceptions.HTTPError as error:
            raise ProtocolError(f"The upload could not be sent: {type(error).__name__}") from error
        if reply.status >= 300:
            raise ProtocolError(f"The upload was refused: HTTP {reply.status}", reply.status)

    def download(self, url: str, path: Path) -> bool:
        """GET a presigned URL into a local file, streamed; False when there is nothing there."""
        try:
            reply = self._http.request("GET", url, preload_content=False, retries=False)
        except urllib3.exceptions.HTTPError as error:
            raise ProtocolError(f"The download failed: {type(error).__name__}") from error
        try:
            if reply.status == 404:
                return False
            if reply.status >= 300:
                raise ProtocolError(f"The download was refused: HTTP {reply.status}", reply.status)
            with path.open("wb") as file:
                for block in reply.stream(1024 * 1024):
                    file.write(block)
        finally:
            reply.release_conn()
        return True

    def id_token(self, request_token: str, audience: str) -> str:
        """An ID token for ``audience`` (empty: the issuer's default), asked for as any tool of the job may: GitHub
        Actions' contract, with the job's request token, of this service's own route for this job. Never of a URL
        the job's variables name (its appveyor.yml may name any), and never following a redirect: the runner sits
        outside the job's network, so what it fetches must be the service and nothing else."""
        query = f"&audience={quote(audience, safe='')}" if audience else ""
        headers = {"Authorization": f"Bearer {request_token}", "Accept": "application/json"}
        url = f"{self._base}/id-token?api-version=1{query}"
        try:
            reply = self._http.request("GET", url, headers=headers, redirect=False)
        except urllib3.exceptions.HTTPError as error:
            raise ProtocolError(f"The service could not be reached: {type(error).__name__}") from error
        if reply.status >= 300:
            raise ProtocolError(f"ID token: HTTP {reply.status} {_message(reply.data)}", reply.status)
        try:
            return str(json.loads(reply.data)["value"])
        except (ValueError, KeyError, TypeError) as error:
            raise ProtocolError("ID token: the service's answer holds no value.") from error

    def _call(
        self,
        method: str,
        path: str,
        fields: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str = "application/json",
        root: bool = False,
    ) -> Any:
        if fields is not None:
            body = json.dumps(fields).encode()
        headers = {"Authorization": f"Bearer {self._ticket.token}", "Content-Type": content_type}
        try:
            url = f"{self._ticket.api_url}{path}" if root else f"{self._base}{path}"
            reply = self._http.request(method, url, body=body, headers=headers)
        except urllib3.exceptions.HTTPError as error:
            raise ProtocolError(f"The service could not be reached: {type(error).__name__}") from error
        if reply.status in (401, 404):
            raise TokenRevoked("The job's token no longer works: the job has ended.", reply.status)
        if reply.status >= 300:
            raise ProtocolError(f"{method} {path or '/'}: HTTP {reply.status} {_message(reply.data)}", reply.status)
        return json.loads(reply.data) if reply.data else {}


def _upload(answer: Mapping[str, Any]) -> Upload:
    return Upload(url=str(answer["url"]), headers={str(k): str(v) for k, v in dict(answer["headers"]).items()})


def _message(data: bytes) -> str:
    try:
        return str(json.loads(data).get("message", ""))[:300]
    except (ValueError, AttributeError):
        return ""
