"""A test's id across runs: its framework, file and name. No IO. (The module has functions named test_*: it is
imported whole, so that pytest does not take them for tests.)"""

from __future__ import annotations

from chalicelib.domain.testing import tests_history as history


def test_a_test_keeps_its_id_across_runs_and_another_file_or_framework_is_another_test() -> None:
    test_id = history.test_id_of("xUnit", "Calc.Tests.dll", "Adds")

    assert test_id == history.test_id_of("xUnit", "Calc.Tests.dll", "Adds")
    assert len(test_id) == 24 and test_id.isalnum()
    assert test_id != history.test_id_of("xUnit", "Other.Tests.dll", "Adds")
    assert test_id != history.test_id_of("NUnit", "Calc.Tests.dll", "Adds")
    assert history.test_id_of(None, None, "Adds") == history.test_id_of("", "", "Adds")
