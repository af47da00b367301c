"""A project's scheduleCrontabExpression: NCrontab's five fields, read and evaluated in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from chalicelib.core.projects import Project
from chalicelib.domain.configuration.crontab import next_run, valid_expression, with_schedule
from chalicelib.errors import Invalid

NOON = datetime(2026, 3, 4, 12, 0, 30, tzinfo=UTC)  # a Wednesday


def project(**fields: object) -> Project:
    return Project(
        account_id=1,
        account_name="acme",
        project_id=2,
        slug="app",
        name="app",
        repository_type="git",
        repository_scm="git",
        repository_name="https://git.example/app.git",
        webhook_id="hook",
        version_format="1.0.{build}",
        configuration={},
        created=NOON,
        **fields,  # type: ignore[arg-type]
    )


def refusal(expression: str) -> str:
    with pytest.raises(Invalid) as refused:
        valid_expression(expression)
    assert list(refused.value.model_state) == ["request.scheduleCrontabExpression"]
    return refused.value.message


@pytest.mark.parametrize(
    ("expression", "after", "expected"),
    [
        ("* * * * *", NOON, datetime(2026, 3, 4, 12, 1, tzinfo=UTC)),
        ("* * * * *", datetime(2026, 3, 4, 12, 1, tzinfo=UTC), datetime(2026, 3, 4, 12, 2, tzinfo=UTC)),  # after
        ("05 11 * * *", NOON, datetime(2026, 3, 5, 11, 5, tzinfo=UTC)),  # 11:05 UTC daily
        ("0 3 * * 0", NOON, datetime(2026, 3, 8, 3, 0, tzinfo=UTC)),  # Sunday = 0
        ("0 3 * * sun", NOON, datetime(2026, 3, 8, 3, 0, tzinfo=UTC)),
        ("0 12 * * MON-FRI", NOON, datetime(2026, 3, 5, 12, 0, tzinfo=UTC)),
        ("5/15 * * * *", NOON, datetime(2026, 3, 4, 12, 5, tzinfo=UTC)),  # from 5, every 15 minutes
        ("0 0 1 jan *", NOON, datetime(2027, 1, 1, 0, 0, tzinfo=UTC)),
        ("0 0 13 * 5", NOON, datetime(2026, 3, 13, 0, 0, tzinfo=UTC)),  # a Friday the 13th
        ("0 0 13 * 5", datetime(2026, 3, 14, tzinfo=UTC), datetime(2026, 11, 13, 0, 0, tzinfo=UTC)),
    ],
)
def test_next_run_is_the_first_matching_minute_after_in_utc(
    expression: str, after: datetime, expected: datetime
) -> None:
    assert next_run(valid_expression(expression), after) == expected


def test_a_day_must_match_both_day_fields_as_in_ncrontab() -> None:
    runs, moment = [], NOON
    for _ in range(3):
        found = next_run("0 0 1-7 * 1", moment)  # the first Monday of the month, not every Monday and the 1st to 7th
        assert found is not None
        runs.append(found)
        moment = found
    assert [run.date().isoformat() for run in runs] == ["2026-04-06", "2026-05-04", "2026-06-01"]
    assert all(run.weekday() == 0 and run.day <= 7 for run in runs)


def test_a_time_in_another_zone_is_read_as_the_same_instant_in_utc() -> None:
    two_hours_east = datetime(2026, 3, 4, 14, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    assert next_run("0 13 * * *", two_hours_east) == datetime(2026, 3, 4, 13, 0, tzinfo=UTC)


def test_fields_are_kept_one_space_apart() -> None:
    assert valid_expression("  0   3 * *\t1 ") == "0 3 * * 1"


@pytest.mark.parametrize("expression", ["* * * *", "0 * * * * *", "@daily", "0 0 1 1 * 2030"])
def test_anything_but_five_fields_is_refused(expression: str) -> None:
    assert "five fields" in refusal(expression)


@pytest.mark.parametrize(
    ("expression", "field"),
    [
        ("0 0 L * *", "L"),  # croniter's last day of the month: not NCrontab's
        ("0 0 * * 5#2", "5#2"),
        ("0 0 ? * *", "?"),
        ("H * * * *", "H"),
        ("0 0 * * Monday", "Monday"),
        ("0 0 * mon *", "mon"),  # a day's name is no month
        ("0 jan * * *", "jan"),
    ],
)
def test_syntax_ncrontab_does_not_read_is_refused_naming_the_field(expression: str, field: str) -> None:
    assert f"'{field}' is not a" in refusal(expression)


@pytest.mark.parametrize("expression", ["60 * * * *", "* 24 * * *", "*/0 * * * *", "0 0 0 * *", "0 0 * 13 *"])
def test_values_out_of_range_are_refused(expression: str) -> None:
    assert "is not a schedule" in refusal(expression)


@pytest.mark.parametrize("expression", ["5-1 * * * *", "0 0 * * fri-mon", "0 0 * dec-jan *"])
def test_a_range_written_backwards_is_refused_as_ncrontab_and_croniter_read_it_differently(expression: str) -> None:
    assert "runs backwards" in refusal(expression)


@pytest.mark.parametrize("expression", ["0 0 * * 7", "0 0 * * 0-7", "0 0 * * 1,7", "0 0 * * 5-7/2"])
def test_a_day_of_week_past_6_is_refused_as_ncrontab_counts_sunday_as_0_only(expression: str) -> None:
    assert "Sunday = 0" in refusal(expression)


def test_a_step_in_the_day_of_week_field_is_no_day() -> None:
    assert valid_expression("0 0 * * */7") == "0 0 * * */7"


def test_a_schedule_that_never_comes_due_is_refused() -> None:
    assert "never comes due" in refusal("0 0 30 2 *")


def test_a_settings_change_keeps_removes_or_replaces_the_schedule() -> None:
    due = datetime(2026, 3, 4, 12, 1, tzinfo=UTC)
    scheduled = project(schedule_crontab_expression="* * * * *", schedule_next_run=due, schedule_last_error="x")

    assert with_schedule(scheduled, None, NOON) == scheduled  # left out: kept
    assert with_schedule(scheduled, "*  * * * *", NOON + timedelta(hours=1)) == scheduled  # the same: due as it was
    removed = with_schedule(scheduled, "", NOON)
    assert (removed.schedule_crontab_expression, removed.schedule_next_run, removed.schedule_last_error) == (
        None,
        None,
        None,
    )
    replaced = with_schedule(scheduled, "0 3 * * *", NOON)
    assert (replaced.schedule_crontab_expression, replaced.schedule_next_run, replaced.schedule_last_error) == (
        "0 3 * * *",
        datetime(2026, 3, 5, 3, 0, tzinfo=UTC),
        None,
    )


def test_setting_again_a_schedule_that_ran_out_of_runs_schedules_it_again() -> None:
    ran_out = project(schedule_crontab_expression="0 3 * * *", schedule_next_run=None, schedule_last_error="no run")

    again = with_schedule(ran_out, "0 3 * * *", NOON)

    assert (again.schedule_crontab_expression, again.schedule_next_run, again.schedule_last_error) == (
        "0 3 * * *",
        datetime(2026, 3, 5, 3, 0, tzinfo=UTC),
        None,
    )
