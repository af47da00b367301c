"""What conveyor exec prints (chalicelib/local/exec/console.py): a log's chunks as whole new lines, the summary."""

from __future__ import annotations

import io

from chalicelib.local.exec.console import Console, LogLines, Row, prefix_for, summary


def test_a_growing_chunk_gives_only_its_new_whole_lines() -> None:
    log = LogLines()

    assert log.put(0, b"one\ntw") == ["one"]
    assert log.put(0, b"one\ntwo\nthree\n") == ["two", "three"]
    assert log.put(0, b"one\ntwo\nthree\n") == []


def test_a_line_cut_at_a_chunks_end_comes_whole_with_the_next_chunk() -> None:
    log = LogLines()

    assert log.put(0, b"first\nhal") == ["first"]
    assert log.put(1, b"f\nnext\n") == ["half", "next"]
    assert log.put(0, b"first\nhal") == []  # a chunk read whole already, sent again


def test_the_last_line_without_a_newline_comes_at_the_end() -> None:
    log = LogLines()

    assert log.put(0, b"a\nlast", final=True) == ["a", "last"]
    log.put(1, b"x")
    assert log.end() == ["x"]


def test_lines_carry_the_jobs_name_only_when_several_jobs_run() -> None:
    stream = io.StringIO()
    console = Console(stream)

    console.say("a\nb", prefix_for("Image: Ubuntu", several=True))
    console.say("c", prefix_for("Image: Ubuntu", several=False))

    assert stream.getvalue() == "[Image: Ubuntu] a\n[Image: Ubuntu] b\nc\n"


def test_the_summary_has_a_row_per_job_and_says_where_artifacts_are() -> None:
    table = summary(
        [Row("Environment: A=1", "success", 1.234, 3, 0, 1), Row("Image: macos", "skipped", None, 0, 0, 0)],
        "/src/.conveyor/exec/artifacts",
    )

    assert table.splitlines() == [
        "job               status   duration  tests passed  tests failed  artifacts",
        "----------------  -------  --------  ------------  ------------  ---------",
        "Environment: A=1  success  1.2 s     3             0             1",
        "Image: macos      skipped            0             0             0",
        "Artifacts are in /src/.conveyor/exec/artifacts",
    ]
