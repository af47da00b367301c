"""No module of the service is named like a test (issue 46): pytest collects ``test_*.py`` and ``*_test.py`` (its
default ``python_files``), and so do IDEs and coverage, so a product module with such a name is taken for tests and
its functions named ``test_...`` are run as such."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

CHALICELIB = Path(__file__).resolve().parents[2] / "chalicelib"
TEST_FILES = ("test_*.py", "*_test.py")  # pytest's default python_files


def named_like_tests(paths: list[Path]) -> list[str]:
    """The paths whose file name pytest would collect as tests."""
    return [str(path) for path in paths if any(fnmatch(path.name, pattern) for pattern in TEST_FILES)]


def test_no_module_of_chalicelib_is_named_like_a_test() -> None:
    modules = sorted(CHALICELIB.rglob("*.py"))

    assert len(modules) > 100
    assert named_like_tests(modules) == []


def test_a_module_named_like_a_test_is_found() -> None:
    paths = [Path("chalicelib/store/test_history.py"), Path("chalicelib/core/stats_test.py")]

    assert named_like_tests([*paths, Path("chalicelib/store/tests_history.py")]) == [str(path) for path in paths]
