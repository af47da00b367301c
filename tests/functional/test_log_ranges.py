"""Following a running job's log through the API with ``Range``: each byte once, a 416 at the end so far, and
requests the endpoint cannot serve as ranges answered whole."""

from __future__ import annotations

import json
import re

import pytest

from chalicelib.protocol.logstream import SecretMask
from chalicelib.store import blobs, log_reads
from chalicelib.store import jobs as job_store
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.logs import StoredLog
from tests.support import Account, Caller

LOG = "/buildjobs/{}/log"


def queued_job(account: Account, git_server: GitServer) -> tuple[Caller, str, StoredLog]:
    """A build's job left queued (no runner here), and a log stream writing that job's log."""
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    job_id = project.build(project.start()["version"])["jobs"][0]["jobId"]
    job = job_store.get_job(job_id)
    assert job is not None
    prefix = blobs.job_prefix(job.account_id, job.project_id, job.build_id, job.job_id)
    return account.api, job_id, StoredLog(prefix, SecretMask([]), flush_seconds=60, chunk_bytes=700)


def follow(api: Caller, job_id: str, offset: int) -> tuple[bytes, int, str]:
    """Read the log from ``offset`` until a 416: what was read, the next offset, and the 416's Content-Range."""
    read = b""
    while True:
        reply = api.get(LOG.format(job_id), headers={"Range": f"bytes={offset}-"})
        if reply.status == 416:
            return read, offset, reply.headers["Content-Range"]
        assert reply.status == 206, reply.body
        assert reply.headers["Content-Type"].startswith("text/plain")
        match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", reply.headers["Content-Range"])
        assert match and int(match.group(1)) == offset, reply.headers
        assert int(match.group(2)) - offset + 1 == len(reply.body)
        read += reply.body
        offset = int(match.group(2)) + 1


def test_client_follows_a_running_log_by_ranges_and_reads_each_byte_once(
    account: Account, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_reads, "MAX_INLINE_LOG", 1000)  # several answers per read
    api, job_id, stream = queued_job(account, git_server)
    first = "".join(f"line {number:04d} of the build\n" for number in range(120)).encode()
    for line in first.decode().splitlines():
        stream.write(line)
    stream.flush()

    read, offset, end = follow(api, job_id, 0)

    assert read == first and end == f"bytes */{len(first)}"
    stream.write("Build success")
    stream.flush()
    more, _, end = follow(api, job_id, offset)
    assert more == b"Build success\n" and end == f"bytes */{len(first) + len(more)}"
    stream.close()


def test_last_bytes_of_a_log_by_a_suffix_range(account: Account, git_server: GitServer) -> None:
    api, job_id, stream = queued_job(account, git_server)
    stream.write("Build started")
    stream.write("Build success")
    stream.flush()

    reply = api.get(LOG.format(job_id), headers={"Range": "bytes=-14"})

    assert reply.status == 206 and reply.body == b"Build success\n"
    assert reply.headers["Content-Range"] == "bytes 14-27/28"
    stream.close()


@pytest.mark.parametrize("header", ["bytes=9-2", "lines=0-1", "bytes=0-1,4-5", "bytes=-", "bytes=x-"])
def test_range_the_endpoint_cannot_serve_is_ignored_and_the_log_sent_whole(
    account: Account, git_server: GitServer, header: str
) -> None:
    api, job_id, stream = queued_job(account, git_server)
    stream.write("Build success")
    stream.close()

    reply = api.get(LOG.format(job_id), headers={"Range": header})

    assert reply.status == 200 and reply.body == b"Build success\n"
    assert "Content-Range" not in reply.headers


# Lambda's response carries the log JSON-escaped: colour codes take six characters a byte there.
COLOURED = "\x1b[31m\x1b[1m!\x1b[0m\x1b[0m"


def escaped_size(body: bytes) -> int:
    return len(json.dumps(body.decode()))


@pytest.fixture
def small_responses(monkeypatch: pytest.MonkeyPatch) -> int:
    """Logs of a few KB stand in for logs of a few MB: inline up to 4,000 bytes, responses up to 6,000."""
    monkeypatch.setattr(log_reads, "MAX_INLINE_LOG", 4000)
    monkeypatch.setattr(log_reads, "MAX_RESPONSE_BODY", 6000)
    return 6000


def coloured_log(stream: StoredLog, count: int) -> bytes:
    lines = [f"{number:03d} {COLOURED}" for number in range(count)]
    for line in lines:
        stream.write(line)
    stream.flush()
    return "".join(line + "\n" for line in lines).encode()


def test_a_running_log_of_colour_codes_too_big_once_escaped_is_answered_by_its_tail(
    account: Account, git_server: GitServer, small_responses: int
) -> None:
    api, job_id, stream = queued_job(account, git_server)
    written = coloured_log(stream, 150)
    assert len(written) <= 4000 and escaped_size(written) > small_responses  # small in bytes, not once escaped

    reply = api.get(LOG.format(job_id))

    assert reply.status == 200, reply.body
    assert escaped_size(reply.body) <= small_responses
    note, tail = reply.body.split(b"\n", 1)
    assert note.startswith(b"[The first ") and written.endswith(tail) and len(tail) > 1000
    stream.close()


def test_a_finished_log_too_big_once_escaped_is_a_redirect(
    account: Account, git_server: GitServer, small_responses: int
) -> None:
    api, job_id, stream = queued_job(account, git_server)
    coloured_log(stream, 150)
    stream.close()

    reply = api.get(LOG.format(job_id))

    assert reply.status == 302 and reply.headers["Location"], reply.body


def test_ranges_of_a_log_of_colour_codes_fit_a_response_and_follow_it_whole(
    account: Account, git_server: GitServer, small_responses: int
) -> None:
    api, job_id, stream = queued_job(account, git_server)
    written = coloured_log(stream, 150)

    first = api.get(LOG.format(job_id), headers={"Range": "bytes=0-"})
    read, _, end = follow(api, job_id, 0)

    assert first.status == 206 and escaped_size(first.body) <= small_responses
    assert written.startswith(first.body) and len(first.body) > 1000
    assert read == written and end == f"bytes */{len(written)}"
    stream.close()
