"""One attempt at a job: why it stops (a cancel, the time limit), and that ending it wakes its heartbeat. No IO."""

from __future__ import annotations

import time

from chalicelib.protocol.attempt import TIMED_OUT, Attempt
from chalicelib.protocol.logstream import LogStream, SecretMask


def attempt(seconds_left: float) -> Attempt:
    stream = LogStream(lambda index, body: None, SecretMask([]), flush_seconds=3600)
    return Attempt(log=stream, variables={}, deadline=time.monotonic() + seconds_left)


def test_an_attempt_past_its_deadline_stops_as_timed_out_and_one_within_it_goes_on() -> None:
    assert attempt(-1).should_stop() == TIMED_OUT
    assert attempt(60).should_stop() is None


def test_a_cancel_is_the_reason_it_ended_early_and_ending_wakes_the_heartbeat() -> None:
    cancelled, finished = attempt(60), attempt(60)
    cancelled.stop_reason = "cancelled"

    assert cancelled.end() == "cancelled"
    assert finished.end() is None  # it ran to its end
    assert finished.ended.is_set() and finished.should_stop() == "finished"
