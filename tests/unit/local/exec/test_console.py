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


def test_a_jobs_terminal_escape_sequences_are_printed_without_their_control_characters() -> None:
    stream = io.StringIO()
    console = Console(stream)
    clipboard = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"  # OSC 52: sets the terminal's clipboard
    forged = "\x1b[2J\x1b[Hjob 1  success"  # clears the screen to forge the summary
    c1 = "\x9b31m\x9d0;title\x9c"  # the same as C1 controls

    console.say(f"before{clipboard}after\tand tab\n{forged}\n{c1}\x00\x7f", prefix_for("A\x1b[8m", several=True))

    assert stream.getvalue() == (
        "[A[8m] before]52;c;Y3VybCBldmlsIHwgc2g=after\tand tab\n[A[8m] [2J[Hjob 1  success\n[A[8m] 31m0;title\n"
    )


def test_unicode_bidirectional_overrides_cannot_reorder_what_a_job_prints() -> None:
    stream = io.StringIO()

    Console(stream).say("job 1  \u202eliaf\u202c  \u2067ok\u2069 caf\u00e9 \u05e9\u05dc\u05d5\u05dd")

    # the marks that reorder a line are gone; letters of any script, right-to-left ones too, stay
    assert stream.getvalue() == "job 1  liaf  ok caf\u00e9 \u05e9\u05dc\u05d5\u05dd\n"
