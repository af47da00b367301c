"""The presigned upload URL a job's runner gets for an artifact, in the hands of an attacker (a build's script
holds its job's token): it stores that one file, of the size it was signed for, and only while its job runs.

The URLs are the ones the job protocol hands out, sent over loopback HTTP to the embedded emulator (which checks
them as S3 does); no pump runs here: a test claims its job and mints its token the way dispatch does.
"""

from __future__ import annotations

import http.client
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from chalicelib.config import settings
from chalicelib.deploy.base import DeployFailed, open_artifact
from chalicelib.domain.deployments.delivery_inputs import job_artifacts
from chalicelib.domain.job_identity.job_tokens import keys_of, mint_token
from chalicelib.store import blobs, job_moves, logs, uploads
from chalicelib.store import jobs as job_store
from chalicelib.store.artifacts import artifact_key
from chalicelib.store.models import JobModel
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, Caller, assert_refused

YML = appveyor_yml("build_script:", "  - echo building")


@dataclass
class RunningJob:
    """A build's one job, claimed as dispatch claims it, and its runner calling the job protocol with its token."""

    project: BuildProject
    version: str
    job_id: str
    runner: Caller

    @property
    def prefix(self) -> str:
        job = job_store.get_job(self.job_id)
        assert job is not None
        return blobs.prefix_of(job)

    def upload_url(self, file_name: str, size: int) -> dict[str, Any]:
        reply = self.runner.post(f"/{self.job_id}/artifacts", {"fileName": file_name, "size": size})
        assert reply.status == 200, reply.body
        upload: dict[str, Any] = reply.json
        return upload

    def finish(self, *file_names: str, log: bytes = b"") -> None:
        chunks = 0
        if log:
            assert self.runner.put(f"/{self.job_id}/log/0", raw=log).status == 204
            chunks = 1
        artifacts = [{"fileName": name} for name in file_names]
        finished = self.runner.post(
            f"/{self.job_id}/finish",
            {"result": "success", "message": None, "logChunks": chunks, "artifacts": artifacts},
        )
        assert finished.status == 204, finished.body


def running_job(account: Account, git_server: GitServer) -> RunningJob:
    project = BuildProject(account, git_server, {"appveyor.yml": YML})
    queued = project.build(project.start()["version"])
    job_id = queued["jobs"][0]["jobId"]
    job = job_store.get_job(job_id)
    assert job is not None
    token = mint_token(keys_of(job))
    assert job_moves.claim_job(job_id, int(time.time()) + 120, token.token_hash)
    runner = Caller(account.client, token.token, prefix="/api/runner/jobs")
    return RunningJob(project, queued["version"], job_id, runner)


def put(upload: dict[str, Any], body: bytes, **extra_headers: str) -> requests.Response:
    """The PUT a runner sends, with the headers the URL was signed with (and ``extra_headers``)."""
    headers = {**upload["headers"], "Content-Length": str(len(body)), **extra_headers}
    return requests.put(upload["url"], data=body, headers=headers, timeout=30)


def stored(key: str) -> bytes | None:
    found = logs.size_of(key)
    if found is None:
        return None
    return logs.read_range(key, 0, found)


def download(caller: Caller, path: str) -> str:
    """What a download route serves, followed through its redirect; or its refusal's status and message."""
    reply = caller.get(path)
    if reply.status != 302:
        return f"{reply.status} {reply.json['message']}"
    return requests.get(reply.headers["Location"], timeout=10).text


# Finding 5: the emulator's presigned URLs


def test_an_artifact_upload_url_cannot_copy_another_accounts_log_into_the_artifact(
    account: Account, other_account: Account, git_server: GitServer
) -> None:
    victim = running_job(other_account, git_server)
    victim.finish(log=b"the victim's secret\n")
    victims_log = logs.job_log_key(victim.prefix)
    assert stored(victims_log) == b"the victim's secret\n"
    attacker = running_job(account, git_server)
    upload = attacker.upload_url("stolen.txt", 0)

    copied = put(upload, b"", **{"x-amz-copy-source": f"{settings().bucket}/{victims_log}"})

    assert copied.status_code == 403, copied.text
    assert "<Code>AccessDenied</Code>" in copied.text
    assert "x-amz-copy-source" in copied.text
    assert stored(artifact_key(attacker.prefix, "stolen.txt")) is None


def test_an_artifact_upload_url_cannot_take_other_unsigned_amz_headers(account: Account, git_server: GitServer) -> None:
    attacker = running_job(account, git_server)
    upload = attacker.upload_url("out.txt", 5)

    for name, value in (("x-amz-acl", "public-read"), ("x-amz-meta-planted", "yes"), ("x-amz-tagging", "a=b")):
        refused = put(upload, b"hello", **{name: value})
        assert refused.status_code == 403, (name, refused.text)
        assert "<Code>AccessDenied</Code>" in refused.text

    assert stored(artifact_key(attacker.prefix, "out.txt")) is None
    assert put(upload, b"hello").status_code == 200  # as signed, it stores the file
    assert stored(artifact_key(attacker.prefix, "out.txt")) == b"hello"


def test_an_artifact_upload_url_refuses_a_chunked_body_larger_than_its_signed_size(
    account: Account, git_server: GitServer
) -> None:
    attacker = running_job(account, git_server)
    upload = attacker.upload_url("small.bin", 5)
    url = urlsplit(upload["url"])
    oversized = b"x" * 100_000

    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        connection.putrequest("PUT", f"{url.path}?{url.query}", skip_accept_encoding=True)
        for name, value in {**upload["headers"], "Content-Length": "5", "Transfer-Encoding": "chunked"}.items():
            connection.putheader(name, value)
        connection.endheaders()
        connection.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(oversized), oversized))
        reply = connection.getresponse()
        answer = reply.read().decode()
    finally:
        connection.close()

    assert reply.status == 403, answer
    assert "<Code>AccessDenied</Code>" in answer
    assert stored(artifact_key(attacker.prefix, "small.bin")) is None


def test_a_presigned_upload_takes_exactly_its_size_and_metadata_and_its_download_serves_it() -> None:
    key = f"uploads-test/{uuid.uuid4().hex}.bin"
    upload = uploads.presigned_upload(key, 5, "application/octet-stream", {"checksum": "c0ffee"})

    longer = put(upload, b"hello!")
    taken = put(upload, b"hello")

    assert upload["headers"] == {"Content-Type": "application/octet-stream", "x-amz-meta-checksum": "c0ffee"}
    assert longer.status_code == 403 and taken.status_code == 200, (longer.text, taken.text)
    assert requests.get(uploads.presigned_download(key), timeout=10).content == b"hello"


# Finding 8: an upload URL after its job ended


def test_an_upload_url_kept_past_its_jobs_end_cannot_swap_the_artifact_it_serves(
    account: Account, git_server: GitServer
) -> None:
    job = running_job(account, git_server)
    assert put(job.upload_url("app.txt", 9), b"the build").status_code == 200
    kept = job.upload_url("app.txt", 9)  # asked for while the job ran, used after it ended
    assert int(parse_qs(urlsplit(kept["url"]).query)["X-Amz-Expires"][0]) <= 300
    job.finish("app.txt")
    assert job.project.build(job.version)["status"] == "success"
    download_path = f"/buildjobs/{job.job_id}/artifacts/app.txt"
    permalink = f"{job.project.path}/artifacts/app.txt"
    assert download(account.api, download_path) == "the build"
    assert download(account.api, permalink) == "the build"

    put(kept, b"a swapped")

    assert "a swapped" not in download(account.api, download_path)
    assert "a swapped" not in download(account.api, permalink)
    assert "changed after" in assert_refused(account.api.get(download_path), 409)
    assert "changed after" in assert_refused(account.api.get(permalink), 409)


def test_an_upload_url_kept_past_its_jobs_end_cannot_swap_the_artifact_a_deployment_sends(
    account: Account, git_server: GitServer
) -> None:
    job = running_job(account, git_server)
    assert put(job.upload_url("app.txt", 9), b"the build").status_code == 200
    kept = job.upload_url("app.txt", 9)
    job.finish("app.txt")
    finished = job_store.get_job(job.job_id)
    assert finished is not None
    [artifact] = job_artifacts([finished])  # what a deployment of the build is handed
    with open_artifact(artifact) as stream:
        assert stream.read() == b"the build"

    put(kept, b"a swapped")

    refused = pytest.raises(DeployFailed, match="app.txt changed after its build's job ended: it is not deployed")
    with refused, open_artifact(artifact):
        pass
    assert artifact.description()["url"] is None  # what a webhook or an agent would fetch


def test_an_artifact_stored_before_checksums_were_recorded_still_downloads(
    account: Account, git_server: GitServer
) -> None:
    job = running_job(account, git_server)
    assert put(job.upload_url("app.txt", 9), b"the build").status_code == 200
    job.finish("app.txt")
    model = JobModel.get(job.job_id, consistent_read=True)
    as_before = [{name: value for name, value in item.items() if name != "etag"} for item in model.artifacts]
    model.update(actions=[JobModel.artifacts.set(as_before)])

    assert download(account.api, f"/buildjobs/{job.job_id}/artifacts/app.txt") == "the build"
    assert download(account.api, f"{job.project.path}/artifacts/app.txt") == "the build"
    assert [artifact["fileName"] for artifact in account.api.get(f"/buildjobs/{job.job_id}/artifacts").json] == [
        "app.txt"
    ]
