"""What Conveyor's Ubuntu image can give appveyor.yml's stack: and services:, and how the rest is refused when the
build is queued (domain/configuration/stacks.py): naming the entry and what is available instead."""

from __future__ import annotations

import pytest

from chalicelib.domain.configuration.stacks import asks, refusal


def configuration(stack: str = "", services: tuple[str, ...] = ()) -> dict[str, object]:
    entries = [{"value": part.strip()} for part in stack.split(",") if part.strip()]
    return {"stacks": entries, "services": [{"value": name} for name in services]}


@pytest.mark.parametrize(
    "stack",
    ["node 18", "node 14", "node 24", "node v16.20.2", "node lts/*", "go 1.23", "go 1.19", "jdk 21", "jdk 17",
     "ruby 3.1", "python 3.11", "postgresql, mysql, redis, rabbitmq", "pgsql"],
)  # fmt: skip
def test_what_the_image_or_a_registry_serves_is_not_refused(stack: str) -> None:
    assert refusal(configuration(stack)) is None
    assert asks(configuration(stack))


@pytest.mark.parametrize(
    ("stack", "named", "available"),
    [
        ("node 12", "node 12", "Node.js 14 ... 24"),
        ("python 3.12", "python 3.12", "Python 3.11"),
        ("ruby 3.3", "ruby 3.3", "Ruby 3.1"),
        ("go 1.18", "go 1.18", "Go 1.19, 1.21"),
        ("jdk 8", "jdk 8", "JDK 11, 17, 21, 25"),
    ],
)
def test_a_version_no_registry_serves_is_refused_naming_what_is_available(
    stack: str, named: str, available: str
) -> None:
    said = refusal(configuration(stack)) or ""

    assert f"{named} is not available" in said and available in said, said


@pytest.mark.parametrize("service", ["mongodb", "mssql", "docker", "mssql2017"])
def test_a_service_that_cannot_run_in_a_jobs_container_is_refused_naming_it_and_why(service: str) -> None:
    said = refusal(configuration(services=(service,))) or ""

    assert f"the service {service.rstrip('0123456789')} cannot run here" in said, said
    assert "use a build agent registered for the job's image" in said


def test_docker_is_refused_because_its_daemon_would_undo_the_container() -> None:
    assert "privileges that undo the container" in (refusal(configuration("docker")) or "")


def test_nothing_asked_is_nothing_refused() -> None:
    assert not asks(configuration())
    assert refusal(configuration()) is None


def test_two_versions_of_one_language_are_refused_naming_both() -> None:
    said = refusal(configuration("go 1.23, node 18, go 1.24")) or ""

    assert "go 1.23 and 1.24" in said and "one version of each" in said


def test_one_version_asked_for_thousands_of_times_is_refused_before_anything_is_installed() -> None:
    said = refusal(configuration(", ".join(["go 1.21.99"] * 5000))) or ""

    assert "5000 entries" in said
    assert refusal(configuration("go 1.23, go 1.23, node 18, jdk 21", ("mysql", "redis"))) is None


@pytest.mark.parametrize("stack", ["go 1.24.03", "go 01.24", "jdk 021", "node 018"])
def test_a_version_written_with_leading_zeros_is_refused(stack: str) -> None:
    said = refusal(configuration(stack)) or ""

    assert f"{stack} is not a version as written" in said


@pytest.mark.parametrize("stack", ["go 1.23.1\u0661", "go 1.23.\uff11", "node 1\u0668", "jdk 2\u0661"])
def test_a_version_of_digits_other_than_0_to_9_is_refused(stack: str) -> None:
    # a regular expression's \d takes an Arabic-Indic or full-width digit; no registry has such a release
    said = refusal(configuration(stack)) or ""

    assert f"{stack} is not available" in said
