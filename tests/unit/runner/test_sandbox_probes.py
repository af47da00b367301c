"""What the sandbox's runner cannot read (runner/sandbox_probes.py): a missing local repository is refused as one it
cannot read, naming the path and where to keep it; the runner's own code, as cloned here, is readable."""

from __future__ import annotations

from pathlib import Path

from chalicelib.runner import sandbox, sandbox_probes


def test_a_missing_repository_gets_the_refusal_of_an_unreadable_one_naming_where_to_keep_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-repository"

    why = sandbox_probes.unreadable_repository(str(missing))

    assert why is not None and why.startswith(f"Builds cannot read {missing}: there is no repository there, or ")
    assert f"{sandbox.PROJECT_DIR / 'out'}/" in why


def test_the_runners_own_code_as_cloned_here_is_readable_to_it() -> None:
    assert sandbox_probes.unreadable_code() is None  # make test's clone: else every build here would be refused
