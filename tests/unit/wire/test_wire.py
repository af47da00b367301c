"""Wire helpers: AppVeyor's timestamps, and typed fields that refuse bad input with a 400 naming the field."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from chalicelib.errors import Invalid, NotFound
from chalicelib.shapes.time import optional_timestamps, timestamp
from chalicelib.wire.fields import Fields, path_id

APPVEYOR_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00")


def test_timestamp_has_seven_fractional_digits_and_a_utc_offset() -> None:
    moment = datetime(2014, 8, 14, 5, 41, 49, 106183, tzinfo=UTC)

    assert timestamp(moment) == "2014-08-14T05:41:49.1061830+00:00"
    assert APPVEYOR_TIMESTAMP.fullmatch(timestamp(moment))


def test_timestamp_of_whole_second_still_has_seven_digits() -> None:
    assert timestamp(datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2020-01-02T03:04:05.0000000+00:00"


def test_timestamp_of_other_offset_is_converted_to_utc() -> None:
    in_berlin = datetime(2014, 8, 14, 7, 41, 49, 106183, tzinfo=timezone(timedelta(hours=2)))
    in_new_york = datetime(2014, 8, 14, 1, 11, 49, 106183, tzinfo=timezone(timedelta(hours=-4, minutes=-30)))

    assert timestamp(in_berlin) == "2014-08-14T05:41:49.1061830+00:00"
    assert timestamp(in_new_york) == "2014-08-14T05:41:49.1061830+00:00"


def test_timestamp_across_midnight_moves_the_date() -> None:
    moment = datetime(2021, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=3)))

    assert timestamp(moment) == "2020-12-31T22:30:00.0000000+00:00"


def test_optional_timestamps_leave_out_unset_ones() -> None:
    moment = datetime(2014, 8, 14, 5, 41, 49, tzinfo=UTC)

    assert optional_timestamps(updated=None) == {}
    assert optional_timestamps(updated=moment, started=None) == {"updated": "2014-08-14T05:41:49.0000000+00:00"}


@pytest.mark.parametrize(("sent", "read"), [(5, 5), ("5", 5), (" 5 ", 5), ("-12", -12), (0, 0), (2**53 - 1, 2**53 - 1)])
def test_integer_field_accepts_numbers_and_digit_strings(sent: Any, read: int) -> None:
    assert Fields({"roleId": sent}).integer("roleId") == read


@pytest.mark.parametrize(
    "sent", [True, False, "abc", 1.5, "1.5", "", "²", [], {}, 2**53, -(2**53), "99999999999999999"]
)
def test_integer_field_refuses_what_is_not_an_integer_in_range(sent: Any) -> None:
    with pytest.raises(Invalid) as refusal:
        Fields({"roleId": sent}).integer("roleId")

    assert "roleId" in refusal.value.message
    assert refusal.value.status == 400
    assert refusal.value.model_state == {"request.roleId": [refusal.value.message]}


def test_missing_integer_field_is_required() -> None:
    with pytest.raises(Invalid) as refusal:
        Fields({}).integer("roleId")

    assert refusal.value.message == "roleId is required."
    assert list(refusal.value.model_state) == ["request.roleId"]


def test_text_field_reads_strings() -> None:
    assert Fields({"name": "Build bots"}).text("name") == "Build bots"
    assert Fields({"name": ""}).text("name") == ""


@pytest.mark.parametrize("sent", [5, 1.5, True, ["a"], {"a": "b"}])
def test_text_field_refuses_what_is_not_a_string(sent: Any) -> None:
    with pytest.raises(Invalid) as refusal:
        Fields({"name": sent}).text("name")

    assert refusal.value.message == "name must be a string."
    assert refusal.value.model_state == {"request.name": ["name must be a string."]}


def test_optional_text_is_none_when_absent_but_refuses_a_non_string() -> None:
    assert Fields({}).optional_text("password") is None
    assert Fields({"password": None}).optional_text("password") is None
    with pytest.raises(Invalid) as refusal:
        Fields({"password": 12345678}).optional_text("password")
    assert "password" in refusal.value.model_state["request.password"][0]


def test_boolean_field_defaults_and_refuses_strings() -> None:
    assert Fields({}).boolean("isPrivate") is False
    assert Fields({}).boolean("isPrivate", default=True) is True
    assert Fields({"isPrivate": True}).boolean("isPrivate") is True
    with pytest.raises(Invalid) as refusal:
        Fields({"isPrivate": "true"}).boolean("isPrivate")
    assert list(refusal.value.model_state) == ["request.isPrivate"]


def test_array_field_refuses_an_object() -> None:
    assert Fields({"groups": []}).array("groups") == []
    with pytest.raises(Invalid) as refusal:
        Fields({"groups": {}}).array("groups")
    assert list(refusal.value.model_state) == ["request.groups"]


@pytest.mark.parametrize("body", [None, [], "text", 5])
def test_body_that_is_not_an_object_is_refused(body: Any) -> None:
    with pytest.raises(Invalid) as refusal:
        Fields(body)

    assert refusal.value.message == "The request body must be a JSON object."


@pytest.mark.parametrize(("value", "read"), [("1", 1), ("42", 42), ("007", 7)])
def test_path_id_reads_digits(value: str, read: int) -> None:
    assert path_id(value, "Role") == read


@pytest.mark.parametrize("value", ["abc", "", "-1", "1.0", " 1", "²", "1" * 16])
def test_path_id_that_is_not_a_number_is_not_found(value: str) -> None:
    with pytest.raises(NotFound) as refusal:
        path_id(value, "Role")

    assert refusal.value.message == "Role not found."
    assert refusal.value.status == 404
