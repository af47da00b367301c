"""Faults during a job: its runner killed outright, a service or a store that answers 503 now and then. Each
job's runner is a process of its own, as an executor starts it; no pump runs here, so the runners below are the
only ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chalicelib.protocol.ticket import Ticket
from chalicelib.runner.protocol import JobClient, Upload
from chalicelib.workers.jobs import sweep_leases
from tests.builds import BuildProject, appveyor_yml
from tests.faults import SLOW_DOWN, UNAVAILABLE, FlakyGateway
from tests.gitserver import GitServer
from tests.runners import RunnerProcess, dispatch
from tests.support import Account


@pytest.fixture(autouse=True)
def short_lease(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Runners renew leases twice a second and a lease runs out after 2 s (the service reads these per call)."""
    monkeypatch.setenv("CONVEYOR_JOB_LEASE_SECONDS", "2")
    monkeypatch.setenv("CONVEYOR_HEARTBEAT_SECONDS", "0.5")
    yield


AN_ARTIFACT = appveyor_yml("build_script:", "  - echo built > out.txt", "artifacts:", "  - path: out.txt")


class OvertakingGateway(FlakyGateway):
    """A FlakyGateway that holds its 503 to the job's first artifact registration until a heartbeat of the runner has
    come in meanwhile: the heartbeat's request goes out between the registration's first attempt and its retry."""

    def __init__(self, endpoint: str, every: int = 2) -> None:
        super().__init__(endpoint, every)
        self._heartbeat = threading.Event()
        self.overtaken = False

    def _fault(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes, str] | None:
        fault = super()._fault(method, path, headers)
        if path.endswith("/heartbeat"):
            self._heartbeat.set()
        elif fault is not None and path.endswith("/artifacts") and not self.overtaken:
            self._heartbeat.clear()
            self.overtaken = self._heartbeat.wait(timeout=10)
        return fault


class ArtifactRefusingGateway(FlakyGateway):
    """A proxy to the API that answers 503 to every artifact registration, and to nothing else."""

    def _fault(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes, str] | None:
        if not path.endswith("/artifacts"):
            return None
        with self._lock:
            self.faults["api"] += 1
        return UNAVAILABLE


def only_job(project: BuildProject, version: str) -> str:
    jobs = project.build(version)["jobs"]
    assert len(jobs) == 1, jobs
    job_id: str = jobs[0]["jobId"]
    return job_id


def test_a_runner_killed_mid_job_keeps_its_log_so_far_and_the_job_fails_once_its_lease_expires(
    account: Account, git_server: GitServer, api_url: str
) -> None:
    script = ["build_script:", "  - echo before the kill in $APPVEYOR_BUILD_VERSION", "  - sleep 60", "  - echo after"]
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*script)})
    version = project.start()["version"]
    job_id = only_job(project, version)
    runner = RunnerProcess(dispatch(job_id, api_url, lease_seconds=2))
    try:
        project.wait_for_log(job_id, f"before the kill in {version}", seconds=30)
    finally:
        runner.kill()
    assert project.build(version)["status"] == "running"  # nobody has noticed yet

    deadline = time.monotonic() + 15
    while project.build(version)["status"] == "running" and time.monotonic() < deadline:
        sweep_leases()  # the scheduled sweeper, which EventBridge invokes every minute
        time.sleep(0.5)

    build = project.build(version)
    assert build["status"] == "failed"
    assert build["jobs"][0]["status"] == "failed"
    log = project.log(job_id)
    assert f"before the kill in {version}" in log
    assert "\nafter" not in log


def test_a_service_answering_503_now_and_then_is_retried_and_the_job_outcome_is_recorded(
    account: Account, git_server: GitServer, api_url: str
) -> None:
    files = {
        "appveyor.yml": appveyor_yml(
            "build_script:",
            "  - echo built by a runner that the service kept failing > out.txt",
            "  - for n in 1 2 3 4 5; do echo line $n of the log; sleep 0.3; done",
            "artifacts:",
            "  - path: out.txt",
        )
    }
    project = BuildProject(account, git_server, files)
    version = project.start()["version"]
    job_id = only_job(project, version)

    with FlakyGateway(api_url, every=2) as flaky:
        ticket = dispatch(job_id, flaky.url)
        RunnerProcess(ticket).wait(seconds=120)

    assert flaky.faults["api"] >= 3, flaky.faults
    build = project.build(version)
    assert build["status"] == "success", project.log(job_id)  # the log says why it did not succeed
    assert "line 5 of the log" in project.log(job_id)
    artifacts = project.account.api.get(f"/buildjobs/{job_id}/artifacts").json
    assert [artifact["fileName"] for artifact in artifacts] == ["out.txt"]


def test_a_call_answered_503_is_retried_even_when_the_runners_heartbeat_goes_out_before_its_retry(
    account: Account, git_server: GitServer, api_url: str
) -> None:
    """As CI met it under load: the heartbeat, every 0.5 s from its own thread, overtook the artifact registration's
    retry; the registration failed four times and the job ended "failed" with no artifact."""
    project = BuildProject(account, git_server, {"appveyor.yml": AN_ARTIFACT})
    version = project.start()["version"]
    job_id = only_job(project, version)

    with OvertakingGateway(api_url, every=2) as flaky:
        RunnerProcess(dispatch(job_id, flaky.url)).wait(seconds=120)

    assert flaky.overtaken, "no heartbeat came between the artifact registration's first attempt and its retry"
    assert project.build(version)["status"] == "success", project.log(job_id)
    artifacts = project.account.api.get(f"/buildjobs/{job_id}/artifacts").json
    assert [artifact["fileName"] for artifact in artifacts] == ["out.txt"]


def test_an_artifact_the_service_never_takes_fails_the_job_saying_which_and_what_the_service_answered(
    account: Account, git_server: GitServer, api_url: str
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": AN_ARTIFACT})
    version = project.start()["version"]
    job_id = only_job(project, version)

    with ArtifactRefusingGateway(api_url) as gateway:
        RunnerProcess(dispatch(job_id, gateway.url)).wait(seconds=120)

    assert gateway.faults["api"] >= 2, gateway.faults  # retried before the runner gave up
    build = project.build(version)
    said = "Artifact out.txt was not uploaded: POST /artifacts: HTTP 503 Service Unavailable"
    assert (build["status"], build["jobs"][0]["message"]) == ("failed", said)
    log = project.log(job_id)
    assert said in log
    assert "unexpectedly" not in log


class SlowingDownStore(ThreadingHTTPServer):
    """A store on loopback that answers S3's 503 SlowDown to the first PUT, takes the others, and keeps what each
    PUT sent."""

    def __init__(self) -> None:
        store = self
        self.bodies: list[bytes] = []

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:  # noqa: N802 (http.server's name)
                store.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                status, body = (503, SLOW_DOWN) if len(store.bodies) == 1 else (200, b"")
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Requests are not logged: test output stays readable."""

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


def test_an_upload_the_store_asks_to_slow_down_is_sent_again_whole(tmp_path: Path) -> None:
    """An artifact's or a cache entry's file, PUT to its presigned URL: S3 answers 503 SlowDown now and then."""
    artifact = tmp_path / "out.bin"
    artifact.write_bytes(bytes(range(256)) * 1024)
    store = SlowingDownStore()
    try:
        url = f"http://127.0.0.1:{store.server_address[1]}/bucket/out.bin"
        JobClient(Ticket("http://127.0.0.1:9", "job", "token")).send_file(Upload(url, {}), artifact)
    finally:
        store.shutdown()
        store.server_close()
    assert [len(body) for body in store.bodies] == [256 * 1024, 256 * 1024]
    assert store.bodies[-1] == artifact.read_bytes()
