"""What test reporters and the ``appveyor`` command send the Build Worker API, read as real clients write it: field
names in any casing, outcomes and categories in any case, durations as numbers or numeric strings."""

from __future__ import annotations

import re

import pytest

from chalicelib.runner.worker_api_fields import BadRequest, json_array, reported_message, reported_test


def test_a_test_is_read_whatever_casing_its_client_writes_its_fields_in() -> None:
    sent = {"TestName": "adds", "Outcome": "passed", "Duration": "12.7", "stdout": "ok", "FRAMEWORK": "xUnit"}

    test = reported_test(sent)

    assert (test["testName"], test["outcome"], test["durationMilliseconds"]) == ("adds", "Passed", 12)
    assert (test["StdOut"], test["testFramework"]) == ("ok", "xUnit")


def test_an_update_leaves_out_the_outcome_it_does_not_change_but_a_new_test_has_one() -> None:
    assert reported_test({"testName": "adds"}, update=True)["outcome"] is None
    assert reported_test({"testName": "adds"})["outcome"] == "None"


@pytest.mark.parametrize(
    ("sent", "why"),
    [
        ({"outcome": "Passed"}, re.escape("A test needs its name (testName).")),
        ({"testName": "t", "outcome": "Green"}, "A test's outcome is one of None, Running, Passed"),
        ({"testName": "t", "durationMilliseconds": "soon"}, "A test's durationMilliseconds is a number."),
    ],
)
def test_a_test_the_service_could_not_store_is_refused_saying_why(sent: dict[str, str], why: str) -> None:
    with pytest.raises(BadRequest, match=why):
        reported_test(sent)


def test_a_compilation_message_keeps_where_it_was_found_and_a_category_in_any_case() -> None:
    sent = {"Message": "unused", "Category": "WARNING", "FileName": "a.cs", "Line": 3}

    message = reported_message(sent, "compilation")

    assert (message["category"], message["fileName"], message["line"]) == ("warning", "a.cs", "3")
    with pytest.raises(BadRequest, match="Information, Warning or Error"):
        reported_message({"message": "m", "category": "loud"}, "message")


def test_a_batch_must_be_an_array() -> None:
    with pytest.raises(BadRequest, match="JSON array"):
        json_array({"testName": "t"})
