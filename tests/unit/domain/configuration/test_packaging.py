"""build:'s packaging options (publish_wap, publish_nuget ...) are not done anywhere: a Windows job's build names the
options set, and its log says each once, while MSBuild itself runs there; a Linux job's build says, as before, that
MSBuild is not available on a Linux runner."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.core.jobs import Job
from chalicelib.domain.configuration import packaging, unhonoured
from chalicelib.domain.configuration.job_overrides import job_warnings
from chalicelib.domain.configuration.yamlconfig import from_yaml

NOW = datetime(2026, 12, 7, tzinfo=UTC)
WINDOWS = "Visual Studio 2022"
LINUX_WORDS = "appveyor.yml build: is not honoured: MSBuild is not available on a Linux runner: use build_script."


def job(number: int, image: str | None) -> Job:
    return Job(f"job-{number}", 1, 2, 3, number, "", {"image": image}, False, "queued", NOW)


def build_messages(yml: str, *images: str | None) -> list[str]:
    configuration, _ = from_yaml(yml)
    jobs = [job(number, image) for number, image in enumerate(images, start=1)]
    return unhonoured.warnings(configuration, jobs, lambda job: job.spec["image"] == WINDOWS)


def test_a_windows_job_building_a_project_with_msbuild_is_not_warned_of() -> None:
    assert build_messages("build: {project: App.sln, parallel: true}", WINDOWS) == []


def test_a_linux_job_is_still_told_msbuild_is_not_available() -> None:
    assert build_messages("build: {project: App.sln}", None) == [LINUX_WORDS]


def test_a_windows_jobs_build_names_the_packaging_options_not_done() -> None:
    messages = build_messages("build: {project: App.sln, publish_wap: true, publish_nuget: true}", WINDOWS)

    assert messages == [f"appveyor.yml build: publish_wap, publish_nuget are not done: {packaging.NOT_PACKAGED}."]


def test_a_matrix_of_windows_and_linux_jobs_says_each_once() -> None:
    messages = build_messages("build: {publish_nuget: true}", WINDOWS, None, WINDOWS, "Ubuntu")

    assert messages == [f"appveyor.yml build: publish_nuget is not done: {packaging.NOT_PACKAGED}.", LINUX_WORDS]


def test_packaging_options_are_nothing_when_build_script_replaces_msbuild() -> None:
    configuration, _ = from_yaml("build: {publish_nuget: true}\nbuild_script: [make]")

    assert packaging.packaging_set(configuration) == []
    assert build_messages("build: {publish_nuget: true}\nbuild_script: [make]", WINDOWS, None) == []


def test_a_windows_jobs_log_says_each_packaging_option_set_once() -> None:
    configuration, _ = from_yaml("build: {publish_wap: true, publish_nuget_symbols: true, verbosity: quiet}")

    windows, linux = (job_warnings(configuration, {"image": image}) for image in (WINDOWS, "Ubuntu2204"))

    assert windows == [
        f"appveyor.yml build: publish_wap is not done: {packaging.NOT_PACKAGED}.",
        f"appveyor.yml build: publish_nuget_symbols is not done: {packaging.NOT_PACKAGED}.",
    ]
    assert linux == []  # its runner says it skips MSBuild altogether
