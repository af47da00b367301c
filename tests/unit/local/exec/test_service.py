"""conveyor exec's side of the job protocol (chalicelib/local/exec/service.py), called as a runner calls it: only
with the job's own token, uploads once to their URL, the snapshot fetched as the runner fetches a repository."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from dulwich import porcelain

from chalicelib.local.exec.console import Console
from chalicelib.local.exec.folders import StateFolders
from chalicelib.local.exec.jobs import ExecJob
from chalicelib.local.exec.service import LocalService
from chalicelib.local.exec.snapshot import Snapshot, take
from chalicelib.scm import git

HTTP = urllib3.PoolManager(retries=False)
JUNIT = (
    b'<testsuite><testcase classname="t" name="ok"/>'
    b'<testcase classname="t" name="bad"><failure/></testcase></testsuite>'
)


@pytest.fixture
def snapshot(tmp_path: Path) -> Snapshot:
    folder = tmp_path / "checkout"
    porcelain.init(str(folder))
    (folder / "a.txt").write_text("committed\n")
    porcelain.add(str(folder), [str(folder / "a.txt")])
    porcelain.commit(str(folder), message=b"First", author=b"A <a@e>", committer=b"A <a@e>")
    (folder / "b.txt").write_text("not committed\n")
    return take(folder, untracked=True)


@pytest.fixture
def served(snapshot: Snapshot, tmp_path: Path) -> Iterator[tuple[LocalService, ExecJob]]:
    job = ExecJob(spec={"jobId": "exec1", "jobName": ""}, console=Console(io.StringIO()), prefix="")  # type: ignore[typeddict-item]
    with LocalService(snapshot.repository, StateFolders(tmp_path / "checkout")) as service:
        service.add(job)
        yield service, job


def call(service: LocalService, method: str, path: str, token: str, body: bytes = b"") -> urllib3.BaseHTTPResponse:
    return HTTP.request(method, service.url + path, body=body, headers={"Authorization": f"Bearer {token}"})


def test_the_job_protocol_answers_only_the_jobs_own_token(served: tuple[LocalService, ExecJob]) -> None:
    service, job = served

    assert call(service, "GET", "/api/runner/jobs/exec1", job.token).json()["jobId"] == "exec1"
    assert call(service, "GET", "/api/runner/jobs/exec1", job.token + "x").status == 401
    assert call(service, "GET", "/api/runner/jobs/exec2", job.token).status == 401
    assert call(service, "POST", "/api/runner/jobs/exec1/heartbeat", job.token).json() == {"status": "running"}
    job.cancelling = True
    assert call(service, "POST", "/api/runner/jobs/exec1/heartbeat", job.token).json() == {"status": "cancelling"}
    finish = json.dumps({"result": "cancelled", "logChunks": 0}).encode()
    assert call(service, "POST", "/api/runner/jobs/exec1/finish", job.token, finish).status == 200
    assert call(service, "GET", "/api/runner/jobs/exec1", job.token).status == 401  # ended: the token is spent


def test_an_artifact_is_uploaded_once_to_its_url_into_the_checkout(
    served: tuple[LocalService, ExecJob], tmp_path: Path
) -> None:
    service, job = served
    asked = json.dumps({"fileName": "out/app.zip", "size": 3}).encode()
    upload = call(service, "POST", "/api/runner/jobs/exec1/artifacts", job.token, asked).json()

    assert HTTP.request("PUT", upload["url"], body=b"zip").status == 200
    assert HTTP.request("PUT", upload["url"], body=b"bad").status == 403
    assert service.url in upload["url"]
    placed = tmp_path / "checkout" / ".conveyor" / "exec" / "artifacts" / "1" / "out" / "app.zip"
    assert placed.read_bytes() == b"zip"
    refused = json.dumps({"fileName": "../../escape", "size": 3}).encode()
    assert call(service, "POST", "/api/runner/jobs/exec1/artifacts", job.token, refused).status == 400


def test_a_test_results_file_adds_its_tests_and_the_cache_is_off_unless_asked(
    served: tuple[LocalService, ExecJob],
) -> None:
    service, job = served

    answer = call(service, "POST", "/api/testresults/junit/exec1", job.token, JUNIT)
    cache = call(service, "POST", "/api/runner/jobs/exec1/cache/entries", job.token, b'{"ids": []}')

    assert answer.json() == {"testsCount": 2, "passedTestsCount": 1, "failedTestsCount": 1}
    assert job.counts() == (1, 1)
    assert call(service, "POST", "/api/testresults/junit/exec1", "wrong", JUNIT).status == 401
    assert cache.status == 403 and "--cache" in cache.json()["message"]


def test_the_runner_fetches_the_working_tree_from_the_source_url(
    served: tuple[LocalService, ExecJob], snapshot: Snapshot, tmp_path: Path
) -> None:
    service, _ = served
    folder = tmp_path / "fetched"
    folder.mkdir()

    git.checkout(service.source_url, snapshot.ref, snapshot.commit_id, folder)

    assert (folder / "b.txt").read_text() == "not committed\n" and (folder / "a.txt").read_text() == "committed\n"
    assert HTTP.request("GET", f"{service.url}/git/not-the-secret/info/refs?service=git-upload-pack").status == 404


@pytest.fixture
def cached(snapshot: Snapshot, tmp_path: Path) -> Iterator[tuple[LocalService, ExecJob, StateFolders]]:
    job = ExecJob(spec={"jobId": "exec1", "jobName": ""}, console=Console(io.StringIO()), prefix="")  # type: ignore[typeddict-item]
    state = StateFolders(tmp_path / "checkout")
    with LocalService(snapshot.repository, state, cache=True) as service:
        service.add(job)
        yield service, job, state


def save(service: LocalService, job: ExecJob, entry: str, archive: bytes) -> None:
    asked = json.dumps({"id": entry, "metadata": {"key": "deps"}}).encode()
    upload = call(service, "POST", "/api/runner/jobs/exec1/cache/uploads", job.token, asked).json()
    assert HTTP.request("PUT", upload["url"], body=archive).status == 200


def entries(service: LocalService, job: ExecJob, *ids: str) -> dict[str, dict[str, object] | None]:
    asked = json.dumps({"ids": list(ids)}).encode()
    found: dict[str, dict[str, object] | None] = call(
        service, "POST", "/api/runner/jobs/exec1/cache/entries", job.token, asked
    ).json()["entries"]
    return found


def test_a_cache_entry_saved_is_restored_by_its_download_url(
    cached: tuple[LocalService, ExecJob, StateFolders],
) -> None:
    service, job, _ = cached

    save(service, job, "0" * 16, b"archive")
    entry = entries(service, job, "0" * 16)["0" * 16]

    assert entry is not None and entry["metadata"] == {"key": "deps"}
    assert HTTP.request("GET", str(entry["downloadUrl"])).data == b"archive"


def test_a_cache_entry_never_writes_or_serves_a_host_file_through_a_link_left_there(
    cached: tuple[LocalService, ExecJob, StateFolders], tmp_path: Path
) -> None:
    service, job, state = cached
    host_metadata, host_archive = tmp_path / "host.json", tmp_path / "host-archive.tgz"
    host_metadata.write_text('{"host": "file"}')
    host_archive.write_bytes(b"the host's own archive")
    planted_archive, planted_metadata = state.cache_paths(job, "1" * 16)
    planted_archive.symlink_to(host_archive)  # links left after exec looked: each must still not be followed
    planted_metadata.write_text('{"key": "deps"}')
    saved_archive, saved_metadata = state.cache_paths(job, "2" * 16)
    saved_metadata.symlink_to(host_metadata)

    save(service, job, "2" * 16, b"archive")
    served = entries(service, job, "1" * 16, "2" * 16)
    download = served["2" * 16]
    assert download is not None
    saved_archive.unlink()
    saved_archive.symlink_to(host_archive)  # swapped for a link between the answer and the download

    assert served["1" * 16] is None
    assert host_metadata.read_text() == '{"host": "file"}'
    assert not saved_metadata.is_symlink() and json.loads(saved_metadata.read_text()) == {"key": "deps"}
    assert HTTP.request("GET", str(download["downloadUrl"])).status == 404
