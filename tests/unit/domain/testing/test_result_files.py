"""Test result files (JUnit, xUnit, NUnit, MSTest) read into test records, and the files refused: no IO."""

from __future__ import annotations

import pytest

from chalicelib.domain.testing.result_files import parse
from chalicelib.errors import Invalid

JUNIT = b"""<?xml version="1.0"?>
<testsuite name="calc">
  <testcase classname="calc.Adding" name="adds" time="0.25" file="test_calc.py"/>
  <testcase classname="calc.Adding" name="carries" time="1"><failure message="2 != 3">Traceback</failure></testcase>
  <testcase classname="calc.Adding" name="later"><skipped/></testcase>
</testsuite>
"""


def test_a_junit_file_reads_as_one_record_per_test_with_its_outcome_and_duration() -> None:
    tests = parse("junit", JUNIT)

    assert [(test["outcome"], test["durationMilliseconds"]) for test in tests] == [
        ("Passed", 250),
        ("Failed", 1000),
        ("Skipped", None),
    ]
    assert tests[1]["ErrorMessage"] == "2 != 3" and {test["testFramework"] for test in tests} == {"JUnit"}


@pytest.mark.parametrize(
    ("format_name", "data", "message"),
    [
        ("tap", JUNIT, "Test results are taken as junit"),
        ("junit", b"  ", "is empty"),
        ("junit", b"<testsuite>\n<testcase", "not well-formed XML: line 2"),
        ("junit", b'<!DOCTYPE x [<!ENTITY a "b">]><testsuite/>', "declares a DTD or entities"),
    ],
)
def test_another_format_an_empty_file_broken_xml_and_entities_are_refused(
    format_name: str, data: bytes, message: str
) -> None:
    with pytest.raises(Invalid, match=message):
        parse(format_name, data)
