"""make bench's command (bench/__main__.py): a section it does not have is named, and nothing runs."""

from __future__ import annotations

import pytest

from bench.__main__ import main


def test_a_section_bench_does_not_have_is_refused_naming_the_sections_it_has(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["queue_to_runing", "--help"]) == 2

    said = capsys.readouterr()
    assert "bench: no section queue_to_runing, --help; the sections: calls cold_start" in said.err
    assert "bench: queue_to_runing ..." not in said.out  # nothing started
