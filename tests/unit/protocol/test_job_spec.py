"""The job spec the service sends a runner (domain/job_protocol/job_specs.job_spec) holds each key of its type
(protocol/job_spec.JobSpec) and no other: a setting the runner honours cannot be added to one side and forgotten on
the other. Built here from a rich appveyor.yml through the domain's own code, as a build of it queues its jobs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.domain.configuration import job_overrides
from chalicelib.domain.configuration.matrix import MatrixJob, matrix_jobs
from chalicelib.domain.configuration.yamlconfig import read_repository_file
from chalicelib.domain.job_protocol import job_specs
from chalicelib.protocol.job_spec import RUNNER_SETTINGS, JobConfiguration, JobSource, JobSpec, read_spec

Json = dict[str, Any]
NOW = datetime(2026, 11, 28, tzinfo=UTC)

# every setting a runner honours, a matrix, and a for: item that specialises one job; deploy: and notifications:,
# which stay with the service
RICH_YML = """\
version: 2.0.{build}
init: [echo init]
clone_folder: /projects/app
clone_depth: 3
shallow_clone: true
environment:
  matrix:
    - PY: "3.11"
    - PY: "3.12"
cache:
  - .pip -> requirements.txt
install: [echo install]
build_script: [make]
before_build: [echo before build]
before_package: [echo before package]
after_build: [echo after build]
test_script: [make test]
before_test: [echo before test]
after_test: [echo after test]
artifacts:
  - path: dist/*.whl
before_deploy: [echo before deploy]
deploy_script: [./deploy.sh]
after_deploy: [echo after deploy]
on_success: [echo ok]
on_failure: [echo failed]
on_finish: [echo done]
notifications:
  - provider: Email
    to: [team@example.com]
for:
  - matrix:
      only:
        - PY: "3.12"
    clone_script: [git clone $URL .]
    deploy:
      - provider: Environment
        name: production
"""


def job_of(build: Build, cell: MatrixJob) -> Job:
    """The job a build of the file queues for one cell of its matrix (domain/builds/builds.py's)."""
    spec = {
        "image": cell.image,
        "configuration": cell.configuration,
        "platform": cell.platform,
        "variables": list(cell.variables),
        **job_overrides.spec_fields(build.configuration, cell),
    }
    return Job(f"job-{cell.number}", build.build_id, 2, 1, cell.number, cell.name, spec, False, "queued", NOW)


def sent_specs(text: str) -> list[JobSpec]:
    """The spec of each job of a build of ``text``, as sent (JSON)."""
    configuration, _ = read_repository_file(text, "main")
    project = Project(1, "team", 2, "app", "app", "gitHub", "git", "team/app", "hook", "1.0.{build}", {}, NOW)
    commit = {"commitId": "a" * 40, "message": "work"}
    build = Build(1, 2, 3, 1, "2.0.1", "main", "refs/heads/main", commit, configuration, [], "queued", NOW)
    return [job_specs.job_spec(job_of(build, cell), (build, project)) for cell in matrix_jobs(configuration)]


def script(text: str) -> Json:
    return {"language": "cmd", "script": text}


def keys(typed: type) -> set[str]:
    return set(typed.__annotations__)


def unsent_and_unknown(sent: Any, typed: type) -> tuple[set[str], set[str]]:
    """The keys of ``typed`` not sent, and the keys sent that ``typed`` does not name."""
    return keys(typed) - set(sent), set(sent) - keys(typed)


def test_a_runner_is_sent_each_key_of_its_job_spec_and_no_other() -> None:
    nothing: tuple[set[str], set[str]] = (set(), set())
    for spec in sent_specs(RICH_YML):
        assert unsent_and_unknown(spec, JobSpec) == nothing
        assert unsent_and_unknown(spec["source"], JobSource) == nothing
        assert unsent_and_unknown(spec["configuration"], JobConfiguration) == nothing  # a setting in defaults.py too


def test_the_settings_a_runner_honours_are_sent_in_their_order_with_the_jobs_own_applied() -> None:
    common, specialised = sent_specs(RICH_YML)

    assert list(common["configuration"]) == list(RUNNER_SETTINGS)
    assert (common["configuration"]["cloneScripts"], len(specialised["configuration"]["cloneScripts"])) == ([], 1)
    assert (common["inlineDeployments"], specialised["inlineDeployments"]) == (0, 1)


def test_a_runner_is_sent_no_setting_of_deployments_or_notifications() -> None:
    for spec in sent_specs(RICH_YML):
        assert not {"deployments", "notifications", "jobOverrides", "environmentVariables"} & set(spec["configuration"])


def test_a_runner_reads_a_spec_from_a_service_before_as_it_always_did() -> None:
    """A service from before log tails, inline deployments and clone credentials sent none of them, and a build
    stored before a setting existed holds none: the runner reads each as nothing to do."""
    [sent] = [spec for spec in sent_specs(RICH_YML) if not spec["inlineDeployments"]]
    before: dict[str, Any] = {
        key: value for key, value in sent.items() if key not in ("inlineDeployments", "logTailOnFinish")
    }
    before["source"] = {key: value for key, value in sent["source"].items() if key != "credentials"}
    before["configuration"] = {"buildScripts": sent["configuration"]["buildScripts"]}

    read = read_spec(before)

    assert (read["inlineDeployments"], read["logTailOnFinish"], read["source"]["credentials"]) == (0, False, False)
    assert set(read["configuration"]) == keys(JobConfiguration)
    assert (read["configuration"]["buildScripts"], read["configuration"]["testScripts"]) == ([script("make")], [])
    assert read_spec(dict(sent)) == sent  # a spec of this service's, read as sent
