"""A log closed with its last chunk kept back, for a runner's finish to carry: what the sink gets, what is kept."""

from __future__ import annotations

from chalicelib.protocol.logstream import LogEnd, LogStream, SecretMask

NO_SECRETS = SecretMask([])
NEVER = 3600.0  # seconds between background flushes: none happens during a test


class Sink:
    """Every chunk handed to it, in order, as (index, bytes)."""

    def __init__(self) -> None:
        self.received: list[tuple[int, bytes]] = []

    def __call__(self, index: int, body: memoryview) -> None:
        self.received.append((index, bytes(body)))


def stream_into(sink: Sink, chunk_bytes: int = 1024, mask: SecretMask = NO_SECRETS) -> LogStream:
    return LogStream(sink, mask, flush_seconds=NEVER, chunk_bytes=chunk_bytes)


def test_a_short_log_is_kept_back_whole_and_the_sink_gets_nothing() -> None:
    sink = Sink()
    stream = stream_into(sink)
    stream.write("Build started")
    stream.write("hello")

    end = stream.close_keeping_tail(max_tail_bytes=1024)

    assert end == LogEnd(chunks=1, tail=b"Build started\nhello\n", tail_sent=False)
    assert sink.received == []


def test_full_chunks_are_sent_and_only_the_last_is_kept_back() -> None:
    sink = Sink()
    stream = stream_into(sink, chunk_bytes=8)
    stream.write("0123456789abcdefghij")  # 21 bytes with its newline: two full chunks, sent at once with the rest
    stream.write("k")

    end = stream.close_keeping_tail(max_tail_bytes=8)

    assert sink.received == [(0, b"01234567"), (1, b"89abcdef"), (2, b"ghij\n")]
    assert end == LogEnd(chunks=3, tail=b"ghij\nk\n", tail_sent=True)


def test_a_chunk_begun_after_the_last_was_sent_is_kept_back_as_never_sent() -> None:
    sink = Sink()
    stream = stream_into(sink, chunk_bytes=8)
    stream.write("0123456")  # a full chunk, its newline included
    stream.write("tail")

    end = stream.close_keeping_tail(max_tail_bytes=8)

    assert sink.received == [(0, b"0123456\n")]
    assert end == LogEnd(chunks=2, tail=b"tail\n", tail_sent=False)


def test_a_tail_flushed_before_is_kept_back_in_full_and_says_it_was_sent() -> None:
    sink = Sink()
    stream = stream_into(sink)
    stream.write("first")
    stream.flush()
    stream.write("last")

    end = stream.close_keeping_tail(max_tail_bytes=1024)

    assert sink.received == [(0, b"first\n")]  # the flush's, never the last version
    assert end == LogEnd(chunks=1, tail=b"first\nlast\n", tail_sent=True)


def test_a_tail_bigger_than_the_caller_can_carry_is_sent_as_close_sends_it() -> None:
    sink = Sink()
    stream = stream_into(sink)
    stream.write("x" * 99)

    end = stream.close_keeping_tail(max_tail_bytes=99)

    assert sink.received == [(0, b"x" * 99 + b"\n")]
    assert end == LogEnd(chunks=1, tail=None, tail_sent=True)


def test_a_log_ending_with_a_full_chunk_keeps_nothing_back() -> None:
    sink = Sink()
    stream = stream_into(sink, chunk_bytes=4)
    stream.write("abc")

    end = stream.close_keeping_tail(max_tail_bytes=4)

    assert sink.received == [(0, b"abc\n")]
    assert end == LogEnd(chunks=1, tail=None, tail_sent=True)


def test_an_empty_log_has_no_chunk_and_no_tail() -> None:
    sink = Sink()

    end = stream_into(sink).close_keeping_tail(max_tail_bytes=1024)

    assert end == LogEnd(chunks=0, tail=None, tail_sent=False)
    assert sink.received == []


def test_the_tail_kept_back_is_masked_like_any_chunk() -> None:
    stream = stream_into(Sink(), mask=SecretMask(["correct-horse-battery"]))
    stream.write("password: correct-horse-battery")

    end = stream.close_keeping_tail(max_tail_bytes=1024)

    assert end.tail == b"password: [secure]\n"


def test_closing_again_gives_the_same_end_and_sends_nothing_more() -> None:
    sink = Sink()
    stream = stream_into(sink)
    stream.write("done")
    first = stream.close_keeping_tail(max_tail_bytes=1024)

    again = stream.close_keeping_tail(max_tail_bytes=1024)

    assert again == first == LogEnd(chunks=1, tail=b"done\n", tail_sent=False)
    assert sink.received == []


def test_a_flush_after_the_tail_is_kept_back_sends_nothing() -> None:
    sink = Sink()
    stream = stream_into(sink)
    stream.write("done")
    stream.close_keeping_tail(max_tail_bytes=1024)

    stream.flush()

    assert sink.received == []
