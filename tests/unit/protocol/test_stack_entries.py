"""How the runner reads appveyor.yml's stack: and services: (runner/stacks.py): the same reading the service refuses
by when the build is queued, so a job never starts a service nobody checked."""

from __future__ import annotations

from chalicelib.protocol.stack_entries import Stack, read


def values(*texts: str) -> list[dict[str, str]]:
    return [{"value": text} for text in texts]


def test_a_stack_line_names_languages_with_their_versions_and_services_in_order() -> None:
    assert read(values("node 18", "mysql", "Go 1.23", "jdk 21"), []) == Stack(
        languages=(("node", "18"), ("go", "1.23"), ("jdk", "21")), services=("mysql",)
    )


def test_services_take_appveyors_names_and_windows_versioned_names_name_the_same_service() -> None:
    stack = read(values("pgsql"), values("postgresql96", "redis", "MySQL57", "mongodb", "postgresql"))

    assert stack.services == ("postgresql", "redis", "mysql", "mongodb")  # each started once
    assert stack.versioned == ("postgresql96", "MySQL57")  # the log says the image's release stands for them


def test_an_entry_that_is_neither_is_kept_to_be_refused_not_dropped() -> None:
    stack = read(values("elixir 1.15", "node"), values("memcached"))

    assert stack.unknown == ("elixir 1.15", "node", "memcached")
    assert (stack.languages, stack.services) == ((), ())
