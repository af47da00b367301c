"""The store keeps what it snapshots in its own form (issue 20: nothing persists an API-shaped snapshot): a project's
newest build's summary, a job's counts and artifacts, a deployment's environment as it started. Items written
before kept the API's JSON of them; those still show the same, and `conveyor migrate` rewrites them."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.migrations import migrate
from chalicelib.local.pump import SqsPump
from chalicelib.store.delivery_models import DeploymentModel
from chalicelib.store.models import JobModel, ProjectModel
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment, deploy, wait_for_deployment
from tests.gitserver import GitServer
from tests.peers import WebhookReceiver
from tests.support import Account

COUNT_NAMES = (
    "messagesCount",
    "compilationMessagesCount",
    "compilationErrorsCount",
    "compilationWarningsCount",
    "testsCount",
    "passedTestsCount",
    "failedTestsCount",
    "artifactsCount",
)
REPORTING = (
    "build_script:",
    '  - appveyor AddMessage "look here" -Category Warning',
    '  - appveyor AddCompilationMessage "unused x" -Category Warning -FileName a.c -Line 1',
    "  - appveyor AddTest first -Framework xUnit -FileName t.dll -Outcome Passed",
    "  - appveyor AddTest second -Framework xUnit -FileName t.dll -Outcome Failed",
    "  - echo made > out.txt",
    "artifacts:",
    "  - path: out.txt",
    "    name: the-output",
)


def listed(account: Account, slug: str) -> dict[str, Any]:
    return next(project for project in account.api.get("/projects").json if project["slug"] == slug)


def test_a_summary_stored_as_the_api_showed_it_reads_the_same_and_the_migration_rewrites_it(
    account: Account, git_server: GitServer
) -> None:
    files = {"appveyor.yml": appveyor_yml("version: 2.3.{build}", "build_script:", "  - echo hi")}
    project = BuildProject(account, git_server, files, message="Add it\n\nWith a body.")
    project.start()
    slug = project.project["slug"]
    shown = listed(account, slug)
    item = ProjectModel.get(shown["accountId"], slug)
    item.update(actions=[ProjectModel.last_build.set(shown["builds"][0])])  # as the code before wrote it

    before_migration = listed(account, slug)
    first, second = migrate(), migrate()
    after_migration = listed(account, slug)

    assert shown["builds"][0]["version"] == "2.3.1" and shown["builds"][0]["messageExtended"] == "With a body."
    assert before_migration == shown and after_migration == shown
    assert first["last build summaries"] >= 1 and second["last build summaries"] == 0
    stored = ProjectModel.get(shown["accountId"], slug).last_build
    assert stored["form"] == 2 and "buildId" not in stored and stored["build_id"] == shown["builds"][0]["buildId"]


def test_a_summary_no_version_wrote_leaves_the_project_readable_without_a_last_build(
    account: Account, git_server: GitServer
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    project.start()
    slug = project.project["slug"]
    item = ProjectModel.get(project.project["accountId"], slug)
    item.update(actions=[ProjectModel.last_build.set({"buildId": "not a number"})])

    listed_now = listed(account, slug)
    read = account.api.get(project.path)

    assert listed_now["builds"] == []
    assert read.status == 200 and read.json["build"]["buildNumber"] == 1  # the build itself is read from its item


def test_a_jobs_counts_and_artifacts_stored_as_the_api_showed_them_read_the_same_and_the_migration_rewrites_them(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml(*REPORTING)})
    build = project.run()
    (job,) = build["jobs"]
    artifacts_path = f"/buildjobs/{job['jobId']}/artifacts"
    shown_artifacts = account.api.get(artifacts_path).json
    JobModel(job["jobId"]).update(  # as the code before wrote them
        actions=[
            JobModel.counts.set({name: job[name] for name in COUNT_NAMES}),
            JobModel.artifacts.set(shown_artifacts),
        ]
    )

    before_migration = project.build(build["version"])["jobs"], account.api.get(artifacts_path).json
    first, second = migrate(), migrate()
    after_migration = project.build(build["version"])["jobs"], account.api.get(artifacts_path).json

    assert build["status"] == "success"
    assert [job[name] for name in COUNT_NAMES] == [1, 1, 0, 1, 2, 1, 1, 1]
    assert [(artifact["fileName"], artifact["name"]) for artifact in shown_artifacts] == [("out.txt", "the-output")]
    assert before_migration == after_migration == ([job], shown_artifacts)
    assert first["job counts and artifacts"] >= 1 and second["job counts and artifacts"] == 0
    stored = JobModel.get(job["jobId"])
    assert stored.counts["tests"] == 2 and "testsCount" not in stored.counts
    assert stored.artifacts[0]["file_name"] == "out.txt" and "fileName" not in stored.artifacts[0]


def test_a_deployments_environment_stored_as_the_api_showed_it_reads_the_same_and_the_migration_rewrites_it(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    project = BuildProject(account, git_server, {"appveyor.yml": appveyor_yml("build_script:", "  - echo hi")})
    build = project.run()
    with WebhookReceiver() as receiver:
        environment = add_environment(account, "Webhook", {"url": f"{receiver.url}/deployed"})
        deployment_id = deploy(project, environment, build["version"]).json["deploymentId"]
        shown = wait_for_deployment(account, deployment_id)
    project_id = project.project["projectId"]

    def deployment_reads() -> list[Any]:
        return [
            account.api.get(f"/deployments/{deployment_id}").json["deployment"],
            account.api.get(f"/projects/{project.project['accountName']}/{project.project['slug']}/deployments").json[
                "deployments"
            ],
            account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments").json,
        ]

    shown_before = deployment_reads()
    item = DeploymentModel.get(project_id, deployment_id)
    item.update(actions=[DeploymentModel.environment.set(shown["environment"])])  # as the code before wrote it
    (job_id,) = [job["jobId"] for job in shown["jobs"]]
    JobModel(job_id).update(actions=[JobModel.counts.set({"messagesCount": 0})])  # a deployment job's, before

    before_migration = deployment_reads()
    first, second = migrate(), migrate()
    after_migration = deployment_reads()

    assert shown["status"] == "success"
    assert shown["environment"]["deploymentEnvironmentId"] == environment["deploymentEnvironmentId"]
    assert shown["environment"]["name"] == environment["name"]
    assert before_migration == after_migration == shown_before
    assert first["deployments' environments"] >= 1 and second["deployments' environments"] == 0
    assert first["job counts and artifacts"] >= 1 and second["job counts and artifacts"] == 0
    job = JobModel.get(job_id)
    assert job.counts["messages"] == 0 and job.artifacts is None  # it kept no artifacts, and gets no empty list
    stored = DeploymentModel.get(project_id, deployment_id).environment
    assert (
        stored["environment_id"] == environment["deploymentEnvironmentId"] and "deploymentEnvironmentId" not in stored
    )
