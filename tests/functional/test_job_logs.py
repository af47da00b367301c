"""A job's log: readable while the job runs, one object once it ends, no secret in it, served whole or in part."""

from __future__ import annotations

import base64
import re
import threading
import time
from collections.abc import Callable

import pytest
import requests
from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.core.logs import ByteRange, LogPart, LogReply
from chalicelib.protocol.logstream import MAX_LINE_BYTES, SecretMask
from chalicelib.store import blobs, log_reads, logs
from chalicelib.store.log_reads import read_log
from chalicelib.store.logs import delete_log
from tests.logs import StoredLog
from tests.support import unique

MIB = 1024 * 1024
NO_SECRETS = SecretMask([])


def new_job_prefix() -> str:
    return blobs.job_prefix(1, 1, 1, unique("job"))


def stored_objects(prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix``, by key, with its content."""
    s3 = aws.client("s3")
    bucket = settings().bucket
    keys = [
        entry["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for entry in page.get("Contents", [])
    ]
    return {key: s3.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def write_lines(stream: StoredLog, count: int, width: int = 20) -> bytes:
    """Write ``count`` numbered lines of ``width`` characters; returns the log they make."""
    lines = [f"line {number:08d} ".ljust(width, "-") for number in range(count)]
    for line in lines:
        stream.write(line)
    return "".join(f"{line}\n" for line in lines).encode()


def download(reply: LogReply) -> requests.Response:
    assert reply.text is None and reply.redirect_url
    response = requests.get(reply.redirect_url, timeout=30)
    response.raise_for_status()
    return response


def test_lines_are_readable_while_the_job_runs() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=0.2)

    stream.write("Build started")
    stream.write("git clone ...")

    assert wait_until(lambda: read_log(prefix) == LogReply(b"Build started\ngit clone ...\n", None))
    stream.write("Build success")
    assert wait_until(lambda: read_log(prefix).text == b"Build started\ngit clone ...\nBuild success\n")
    assert stream.lines == 3
    stream.close()


def test_finished_log_is_one_text_object_and_no_chunk_is_left() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, chunk_bytes=64)
    expected = write_lines(stream, 50)
    stream.flush()
    assert len(stored_objects(f"{prefix}log/chunks/")) > 10

    stream.close()

    assert stored_objects(prefix) == {f"{prefix}log/log.txt": expected}
    head = aws.client("s3").head_object(Bucket=settings().bucket, Key=f"{prefix}log/log.txt")
    assert head["ContentType"] == "text/plain; charset=utf-8"
    assert read_log(prefix) == LogReply(expected, None)


def test_single_chunk_log_becomes_the_finished_log() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS)
    expected = write_lines(stream, 3)

    stream.close()

    assert stored_objects(prefix) == {f"{prefix}log/log.txt": expected}


def test_no_secret_reaches_s3_in_any_form() -> None:
    key_material = "-----BEGIN KEY-----\nMIIEpAIBAAKCAQEAsecret\n-----END KEY-----"
    secrets = ["correct-horse-battery-staple", key_material]
    forbidden = [
        "correct-horse-battery-staple",
        "MIIEpAIBAAKCAQEAsecret",
        base64.b64encode(b"correct-horse-battery-staple").decode(),
    ]
    prefix = new_job_prefix()
    # chunks smaller than a secret: a secret masked after chunking would be split across chunks
    stream = StoredLog(prefix, SecretMask(secrets), flush_seconds=0.1, chunk_bytes=7)
    stream.write("export PASSWORD=correct-horse-battery-staple")
    stream.write(f"auth: {forbidden[2]}")
    for line in key_material.splitlines():
        stream.write(line)
    stream.write(key_material)
    stream.flush()

    def nothing_secret_stored() -> None:
        stored = stored_objects(prefix)
        assert stored
        for body in stored.values():
            for secret in forbidden:
                assert secret.encode() not in body

    nothing_secret_stored()
    time.sleep(0.3)  # the background flushes too
    nothing_secret_stored()
    stream.close()
    nothing_secret_stored()
    assert read_log(prefix).text == (
        b"export PASSWORD=[secure]\nauth: [secure]\n" + b"[secure]\n" * 4  # each line of a key is a secret too
    )


def test_running_log_of_many_chunks_reads_back_whole_and_in_order() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, chunk_bytes=100)
    expected = write_lines(stream, 100, width=33)

    stream.flush()

    assert len(stored_objects(f"{prefix}log/chunks/")) == -(-len(expected) // 100)
    assert read_log(prefix) == LogReply(expected, None)
    stream.close()
    assert read_log(prefix) == LogReply(expected, None)


def test_running_log_too_big_to_send_gives_its_last_lines_after_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_reads, "MAX_INLINE_LOG", 1000)
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, chunk_bytes=256)
    expected = write_lines(stream, 200, width=29)
    stream.flush()

    text = read_log(prefix).text

    assert text is not None and len(text) <= 1000
    note = re.match(rb"\[The first (\d+) bytes of this log are available when the job finishes\.\]\n", text)
    assert note, text[:100]
    skipped, tail = int(note.group(1)), text[note.end() :]
    assert expected[:skipped] + tail == expected
    assert expected[skipped - 1 : skipped] == b"\n"  # the tail starts a line
    assert len(text) > 1000 - 30  # no more than a line's room is left unused
    stream.close()


def test_finished_log_too_big_to_send_is_a_redirect_to_the_whole_log() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, chunk_bytes=1 * MIB)  # chunks under S3's part size: parts are buffered
    expected = write_lines(stream, 6 * MIB // 1000 + 7, width=999)
    stream.close()

    response = download(read_log(prefix))

    assert response.content == expected
    assert response.headers["Content-Type"].startswith("text/plain")
    assert list(stored_objects(prefix)) == [f"{prefix}log/log.txt"]


def test_log_of_full_size_chunks_is_joined_in_s3() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=60, chunk_bytes=5 * MIB)  # 5 MiB chunks: copied part by part
    expected = write_lines(stream, 11 * MIB // 4096 + 3, width=4095)
    stream.flush()
    assert len(stored_objects(f"{prefix}log/chunks/")) == 3

    stream.close()

    assert download(read_log(prefix)).content == expected
    assert list(stored_objects(prefix)) == [f"{prefix}log/log.txt"]


def test_job_without_output_has_an_empty_log() -> None:
    prefix = new_job_prefix()
    assert read_log(prefix) == LogReply(b"", None)

    stream = StoredLog(prefix, NO_SECRETS)
    assert read_log(prefix) == LogReply(b"", None)
    stream.close()

    assert read_log(prefix) == LogReply(b"", None)
    assert stored_objects(prefix) == {f"{prefix}log/log.txt": b""}


def test_delete_log_removes_a_running_or_finished_log() -> None:
    running, finished = new_job_prefix(), new_job_prefix()
    for index in range(3):
        logs.put_chunk(running, index, b"running\n")
    finished_stream = StoredLog(finished, NO_SECRETS)
    write_lines(finished_stream, 5)
    finished_stream.close()

    delete_log(running)
    delete_log(finished)

    assert stored_objects(running) == {} and stored_objects(finished) == {}
    assert read_log(running) == LogReply(b"", None) and read_log(finished) == LogReply(b"", None)


def test_very_long_line_is_split_into_lines_of_64_kib() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, SecretMask(["hidden-value"]))

    stream.write("hidden-value" + "x" * (3 * MAX_LINE_BYTES))
    stream.close()

    text = read_log(prefix).text
    assert text is not None
    lines = text.split(b"\n")[:-1]
    assert stream.lines == len(lines) == 4
    assert all(len(line) <= MAX_LINE_BYTES for line in lines)
    assert b"".join(lines) == b"[secure]" + b"x" * (3 * MAX_LINE_BYTES)


def test_closing_twice_is_harmless_and_writing_after_close_is_refused() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS)
    stream.write("done")

    stream.close()
    stream.close()

    assert read_log(prefix) == LogReply(b"done\n", None)
    with pytest.raises(ValueError):
        stream.write("too late")


def test_lines_from_several_threads_all_arrive() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=0.05, chunk_bytes=1000)

    def write(name: str) -> None:
        for number in range(200):
            stream.write(f"{name} {number}")

    threads = [threading.Thread(target=write, args=(f"thread-{index}",)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stream.close()

    text = read_log(prefix).text
    assert text is not None
    assert stream.lines == 800
    assert sorted(text.decode().splitlines()) == sorted(f"thread-{i} {n}" for i in range(4) for n in range(200))


def test_s3_failure_while_running_does_not_stop_the_job(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bucket = settings().bucket
    prefix = new_job_prefix()
    monkeypatch.setenv("CONVEYOR_BUCKET", unique("no-such-bucket"))
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=0.1)

    stream.write("private build output")
    stream.write("more output")

    assert wait_until(lambda: any("Could not store the log" in record.message for record in caplog.records))
    assert all("output" not in record.getMessage() for record in caplog.records)
    with pytest.raises(ClientError):
        stream.close()
    monkeypatch.setenv("CONVEYOR_BUCKET", bucket)
    stream.close()
    assert read_log(prefix) == LogReply(b"private build output\nmore output\n", None)


def test_finished_log_is_served_while_its_chunks_are_still_being_deleted() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, chunk_bytes=10)
    expected = write_lines(stream, 5)
    stream.flush()
    aws.client("s3").put_object(Bucket=settings().bucket, Key=f"{prefix}log/log.txt", Body=expected)

    assert read_log(prefix) == LogReply(expected, None)
    stream.close()


def test_sealing_refuses_to_make_a_log_with_a_missing_chunk() -> None:
    prefix = new_job_prefix()
    for index in (0, 2):
        logs.put_chunk(prefix, index, b"chunk\n")

    with pytest.raises(logs.LogIncomplete):
        logs.seal_log(prefix, 3)

    assert f"{prefix}log/log.txt" not in stored_objects(prefix)


@pytest.mark.parametrize("finished", [False, True], ids=["running", "finished"])
def test_a_range_of_the_log_is_those_bytes_and_says_which(finished: bool) -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=60)
    log = write_lines(stream, 100)
    stream.close() if finished else stream.flush()

    first = read_log(prefix, ByteRange(20, 39))
    last = read_log(prefix, ByteRange(None, 21))
    rest = read_log(prefix, ByteRange(len(log) - 5, None))

    assert (first.text, first.part) == (log[20:40], LogPart(20, 40, len(log)))
    assert (last.text, last.part) == (log[-21:], LogPart(len(log) - 21, len(log), len(log)))
    assert rest.text == log[-5:]


def test_a_range_past_the_end_of_the_log_has_nothing_and_gives_the_size() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=60)
    log = write_lines(stream, 10)
    stream.flush()

    reply = read_log(prefix, ByteRange(len(log), None))

    assert reply.part == LogPart(len(log), len(log), len(log))
    assert not reply.text


def test_a_range_never_cuts_a_character_in_two() -> None:
    prefix = new_job_prefix()
    stream = StoredLog(prefix, NO_SECRETS, flush_seconds=60)
    stream.write("ééé")  # two bytes each
    stream.close()

    reply = read_log(prefix, ByteRange(1, 2))

    assert reply.text is not None and reply.text.decode() == "éé"
