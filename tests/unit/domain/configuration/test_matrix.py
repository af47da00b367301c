"""The jobs of a build matrix: their order, names, exclusions and allowed failures; and a build's version."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.domain.configuration.matrix import MatrixJob, build_version, matrix_jobs
from chalicelib.domain.configuration.yamlconfig import from_yaml
from chalicelib.errors import Invalid

Json = dict[str, Any]


def named(name: str, value: str | None = None, *, secure: bool = False) -> Json:
    stored: Json = {"isEncrypted": secure} if value is None else {"isEncrypted": secure, "value": value}
    return {"name": name, "value": stored}


def values(*texts: str) -> list[Json]:
    return [{"value": text} for text in texts]


def row(**variables: str) -> Json:
    return {"variables": [named(name, value) for name, value in variables.items()]}


def configuration(**fields: Any) -> Json:
    return {
        "operatingSystem": [],
        "environmentVariables": [],
        "environmentVariablesMatrix": [],
        "configuration": [],
        "platform": [],
        "matrixAllowFailures": [],
        "matrixExclude": [],
        "matrixOnly": [],
        "matrixExcept": [],
        **fields,
    }


def names(jobs: list[MatrixJob]) -> list[str]:
    return [job.name for job in jobs]


def two_rows_two_platforms(**fields: Any) -> Json:
    return configuration(
        environmentVariablesMatrix=[row(PY="3.11"), row(PY="3.12")], platform=values("x86", "x64"), **fields
    )


def test_build_without_a_matrix_has_one_nameless_job() -> None:
    assert matrix_jobs(configuration()) == [
        MatrixJob(number=1, name="", image=None, configuration=None, platform=None, variables=(), allow_failure=False)
    ]


def test_single_job_build_has_no_name_even_with_a_value_in_each_dimension() -> None:
    [job] = matrix_jobs(
        configuration(
            operatingSystem=values("Ubuntu"),
            environmentVariablesMatrix=[row(PY="3.12")],
            configuration=values("Release"),
            platform=values("x64"),
        )
    )

    assert job.name == ""
    assert (job.image, job.configuration, job.platform) == ("Ubuntu", "Release", "x64")
    assert job.variables == (named("PY", "3.12"),)


def test_env_rows_times_platforms_vary_platform_innermost() -> None:
    jobs = matrix_jobs(two_rows_two_platforms())

    assert [(job.number, job.variables, job.platform) for job in jobs] == [
        (1, (named("PY", "3.11"),), "x86"),
        (2, (named("PY", "3.11"),), "x64"),
        (3, (named("PY", "3.12"),), "x86"),
        (4, (named("PY", "3.12"),), "x64"),
    ]
    assert names(jobs) == [
        "Environment: PY=3.11; Platform: x86",
        "Environment: PY=3.11; Platform: x64",
        "Environment: PY=3.12; Platform: x86",
        "Environment: PY=3.12; Platform: x64",
    ]


def test_image_is_outermost_and_configuration_comes_before_platform() -> None:
    jobs = matrix_jobs(
        configuration(
            operatingSystem=values("Ubuntu", "Visual Studio 2019"),
            configuration=values("Debug", "Release"),
            platform=values("x64"),
        )
    )

    assert names(jobs) == [
        "Image: Ubuntu; Configuration: Debug; Platform: x64",
        "Image: Ubuntu; Configuration: Release; Platform: x64",
        "Image: Visual Studio 2019; Configuration: Debug; Platform: x64",
        "Image: Visual Studio 2019; Configuration: Release; Platform: x64",
    ]


def test_configurations_alone_name_jobs_by_configuration() -> None:
    jobs = matrix_jobs(configuration(configuration=values("Debug", "Release")))

    assert names(jobs) == ["Configuration: Debug", "Configuration: Release"]
    assert [job.image for job in jobs] == [None, None]


def test_environment_part_lists_a_rows_variables_in_order() -> None:
    jobs = matrix_jobs(
        configuration(
            environmentVariablesMatrix=[
                row(PYTHON="C:\\Python38", PYTHON_VERSION="3.8.x", PYTHON_ARCH="32"),
                row(RWE_COMPILER="MSYS"),
            ],
            configuration=values("Release"),
        )
    )

    assert names(jobs) == [
        "Environment: PYTHON=C:\\Python38, PYTHON_VERSION=3.8.x, PYTHON_ARCH=32; Configuration: Release",
        "Environment: RWE_COMPILER=MSYS; Configuration: Release",
    ]


def test_secure_variable_shows_as_secure_in_the_name() -> None:
    jobs = matrix_jobs(
        configuration(
            environmentVariablesMatrix=[
                {"variables": [named("DB", "mysql"), named("PASSWORD", "DHEU39J6X9VD376==", secure=True)]},
                {"variables": [named("DB", "mssql"), named("EMPTY")]},
            ]
        )
    )

    assert names(jobs) == ["Environment: DB=mysql, PASSWORD=[secure]", "Environment: DB=mssql, EMPTY="]
    assert jobs[0].variables[1] == named("PASSWORD", "DHEU39J6X9VD376==", secure=True)


def test_common_variables_are_not_part_of_a_jobs_name_or_variables() -> None:
    jobs = matrix_jobs(two_rows_two_platforms(environmentVariables=[named("COMMON", "x")]))

    assert jobs[0].name == "Environment: PY=3.11; Platform: x86"
    assert jobs[0].variables == (named("PY", "3.11"),)


def test_empty_row_gives_no_environment_part() -> None:
    jobs = matrix_jobs(configuration(environmentVariablesMatrix=[row(), row(FULL="1")], platform=values("x64")))

    assert names(jobs) == ["Platform: x64", "Environment: FULL=1; Platform: x64"]


def test_job_name_in_a_row_names_the_job_and_is_not_a_variable() -> None:
    jobs = matrix_jobs(
        configuration(
            environmentVariablesMatrix=[
                row(
                    job_name="Linux build",
                    job_group="Builds",
                    job_depends_on="Lint",
                    job_allow_cancellation="true",
                    jobs_per_group="2",
                    MODE="full",
                ),
                row(MODE="lint"),
            ]
        )
    )

    assert names(jobs) == ["Linux build", "Environment: MODE=lint"]
    assert jobs[0].variables == (named("MODE", "full"),)


def test_job_name_names_even_a_single_job() -> None:
    [job] = matrix_jobs(configuration(environmentVariablesMatrix=[row(job_name="Only")]))

    assert job.name == "Only"


def test_worker_image_in_a_row_sets_that_jobs_image() -> None:
    jobs = matrix_jobs(
        configuration(
            operatingSystem=values("Visual Studio 2019"),
            environmentVariablesMatrix=[row(APPVEYOR_BUILD_WORKER_IMAGE="Ubuntu", CC="gcc"), row(CC="msvc")],
        )
    )

    assert [job.image for job in jobs] == ["Ubuntu", "Visual Studio 2019"]
    assert names(jobs) == [
        "Image: Ubuntu; Environment: APPVEYOR_BUILD_WORKER_IMAGE=Ubuntu, CC=gcc",
        "Image: Visual Studio 2019; Environment: CC=msvc",
    ]


def test_worker_image_rows_without_an_image_list_are_named_by_their_environment() -> None:
    jobs = matrix_jobs(
        configuration(
            environmentVariablesMatrix=[
                row(APPVEYOR_BUILD_WORKER_IMAGE="Visual Studio 2015", TOOLSET="msvc-14.0"),
                row(APPVEYOR_BUILD_WORKER_IMAGE="Ubuntu", TOOLSET="gcc"),
            ]
        )
    )

    assert [job.image for job in jobs] == ["Visual Studio 2015", "Ubuntu"]
    assert jobs[0].name == "Environment: APPVEYOR_BUILD_WORKER_IMAGE=Visual Studio 2015, TOOLSET=msvc-14.0"


def test_exclude_removes_matching_jobs_and_numbers_the_rest() -> None:
    jobs = matrix_jobs(two_rows_two_platforms(matrixExclude=[row(PY="3.11", platform="x86")]))

    assert [(job.number, job.name) for job in jobs] == [
        (1, "Environment: PY=3.11; Platform: x64"),
        (2, "Environment: PY=3.12; Platform: x86"),
        (3, "Environment: PY=3.12; Platform: x64"),
    ]


def test_except_removes_matching_jobs_like_exclude() -> None:
    jobs = matrix_jobs(two_rows_two_platforms(matrixExcept=[row(platform="x86")]))

    assert [job.platform for job in jobs] == ["x64", "x64"]


def test_only_keeps_jobs_matching_any_of_its_rows() -> None:
    jobs = matrix_jobs(
        two_rows_two_platforms(matrixOnly=[row(PY="3.12", platform="x64"), row(PY="3.11", platform="x86")])
    )

    assert names(jobs) == ["Environment: PY=3.11; Platform: x86", "Environment: PY=3.12; Platform: x64"]


def test_exclusions_narrowing_to_one_job_leave_it_nameless() -> None:
    [job] = matrix_jobs(two_rows_two_platforms(matrixOnly=[row(PY="3.12", platform="x64")]))

    assert (job.number, job.name, job.platform) == (1, "", "x64")


def test_condition_keys_for_dimensions_ignore_case_but_values_do_not() -> None:
    config = configuration(operatingSystem=values("Ubuntu", "macOS"), platform=values("x64", "ARM"))

    assert [job.image for job in matrix_jobs({**config, "matrixExclude": [row(OS="Ubuntu")]})] == ["macOS", "macOS"]
    assert len(matrix_jobs({**config, "matrixExclude": [row(image="ubuntu")]})) == 4
    assert [job.platform for job in matrix_jobs({**config, "matrixExcept": [row(Platform="ARM")]})] == ["x64", "x64"]


def test_condition_on_a_variable_the_job_does_not_have_does_not_match() -> None:
    jobs = matrix_jobs(two_rows_two_platforms(matrixExclude=[row(NODE="18")]))

    assert len(jobs) == 4


def test_condition_may_name_a_common_variable() -> None:
    config = two_rows_two_platforms(
        environmentVariables=[named("PY", "3.11"), named("TARGET", "web")], matrixExclude=[row(TARGET="web", PY="3.12")]
    )

    assert [job.name for job in matrix_jobs(config)] == [
        "Environment: PY=3.11; Platform: x86",
        "Environment: PY=3.11; Platform: x64",
    ]


def test_condition_on_a_test_category_matches_no_job() -> None:
    jobs = matrix_jobs(
        two_rows_two_platforms(
            matrixExclude=[row(test_category="UI")], matrixAllowFailures=[row(test_category="UI", platform="x86")]
        )
    )

    assert len(jobs) == 4
    assert not any(job.allow_failure for job in jobs)


def test_condition_without_keys_matches_every_job() -> None:
    assert matrix_jobs(two_rows_two_platforms(matrixExclude=[row()])) == []


def test_allow_failures_marks_matching_jobs() -> None:
    jobs = matrix_jobs(
        two_rows_two_platforms(matrixAllowFailures=[row(platform="x86", PY="3.12"), row(PY="3.11", platform="x64")])
    )

    assert [job.allow_failure for job in jobs] == [False, True, True, False]


def test_everything_excluded_leaves_no_jobs() -> None:
    assert matrix_jobs(two_rows_two_platforms(matrixExclude=[row(platform="x86"), row(platform="x64")])) == []
    assert matrix_jobs(two_rows_two_platforms(matrixOnly=[row(platform="ARM")])) == []


def test_matrix_from_appveyor_yml() -> None:
    config, _ = from_yaml(
        "image: [Ubuntu, Visual Studio 2022]\n"
        "environment:\n  matrix:\n    - PY: 3.11\n    - PY: 3.12\n"
        "configuration: Release\n"
        "matrix:\n  exclude:\n    - os: Visual Studio 2022\n      PY: 3.11\n"
        "  allow_failures:\n    - image: Ubuntu\n      PY: 3.12\n"
    )

    assert [(job.number, job.name, job.allow_failure) for job in matrix_jobs(config)] == [
        (1, "Image: Ubuntu; Environment: PY=3.11; Configuration: Release", False),
        (2, "Image: Ubuntu; Environment: PY=3.12; Configuration: Release", True),
        (3, "Image: Visual Studio 2022; Environment: PY=3.12; Configuration: Release", False),
    ]


def test_version_replaces_build_number_and_branch() -> None:
    assert build_version("1.0.{build}", 7, "main") == "1.0.7"
    assert build_version("{branch}-{build}.{build}", 12, "feature/x") == "feature/x-12.12"


def test_version_keeps_other_braces_as_written() -> None:
    assert build_version("{version}.{build}-{BRANCH}", 3, "main") == "{version}.3-{BRANCH}"


def test_version_does_not_expand_placeholders_inside_the_branch() -> None:
    assert build_version("{branch}.{build}", 5, "{build}") == "{build}.5"


def test_more_than_90_jobs_are_refused_naming_the_limit() -> None:
    with pytest.raises(Invalid, match=r"91 jobs; at most 90"):
        matrix_jobs(configuration(configuration=values(*map(str, range(91)))))


def test_a_product_of_at_most_1000_cells_may_be_excluded_down_to_its_jobs() -> None:
    jobs = matrix_jobs(configuration(configuration=values(*map(str, range(10))), platform=values(*map(str, range(100))),
                                   matrixOnly=[{"variables": [named("platform", "7")]}]))  # fmt: skip

    assert len(jobs) == 10


def test_a_product_over_1000_cells_is_refused_whatever_it_excludes() -> None:
    with pytest.raises(Invalid, match=r"1001 combinations .* at most 1000"):
        matrix_jobs(configuration(configuration=values(*map(str, range(7))), platform=values(*map(str, range(143))),
                                matrixOnly=[{"variables": [named("platform", "7")]}]))  # fmt: skip
