"""Inline deployments: a successful build's appveyor.yml ``deploy:`` entries whose ``on:`` conditions hold run as
the build's deployments, delivering the job's artifacts to a real FTP server (or a webhook) on loopback; the entries
that do not apply, or cannot run, do not, and the build's messages say why; a secure setting is in no log and no
response."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from chalicelib.domain.deployments.inline_delivery import inline_inputs
from chalicelib.domain.deployments.inline_deployments import start_inline_deployments
from chalicelib.store import builds as build_store
from chalicelib.store import deployments as deployment_store
from chalicelib.store import projects as project_store
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import ARTIFACTS_YML, add_environment, allow_inline_deployments, wait_for_deployment
from tests.gitserver import GitServer
from tests.peers import FtpServer, WebhookReceiver
from tests.support import Account, project_path

SECONDS = 60


def secure_token(project: BuildProject, setting: str, plain: str, host: str) -> str:
    """The token of a secure deploy setting of this project's FTP entry to ``host``, as its settings' YAML shows it
    (what a user copies into the repository's appveyor.yml)."""
    path = project_path(project.project) + "/settings/yaml"
    text = f"deploy:\n  provider: FTP\n  host: {host}\n  {setting}:\n    secure: {plain}\n"
    reply = project.account.api.put(path, raw=text.encode(), headers={"Content-Type": "text/plain"})
    assert reply.status == 204, reply.body
    token: str = yaml.safe_load(project.account.api.get(path).body)["deploy"][0][setting]["secure"]
    assert plain not in token
    return token


def ftp_entry(ftp: FtpServer, password: str, *lines: str) -> list[str]:
    """An FTP entry of ``deploy:`` to the server, its password a secure token, then ``lines``."""
    return [
        "  - provider: FTP",
        f"    host: {ftp.host}:{ftp.port}",
        f"    username: {ftp.username}",
        "    password:",
        f"      secure: {password}",
        *lines,
    ]


def build_deployments(project: BuildProject, build: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The ``count`` deployments of the build as the project lists them, once each has finished (oldest first)."""
    path = project_path(project.project) + "/deployments"
    deadline = time.monotonic() + SECONDS
    while True:
        listed = project.account.api.get(path).json["deployments"]
        mine = [entry for entry in listed if entry["deployment"]["build"]["version"] == build["version"]]
        if len(mine) >= count:
            break
        assert time.monotonic() < deadline, f"{len(mine)} of {count} deployments of {build['version']}: {listed}"
        time.sleep(0.2)
    assert len(mine) == count, mine
    ids = sorted(entry["deployment"]["deploymentId"] for entry in mine)
    return [wait_for_deployment(project.account, deployment_id) for deployment_id in ids]


def build_messages(project: BuildProject, build: dict[str, Any], count: int) -> list[str]:
    """The build's messages, once it has ``count`` of them."""
    deadline = time.monotonic() + SECONDS
    while len(messages := [entry["message"] for entry in project.build(build["version"])["messages"]]) < count:
        assert time.monotonic() < deadline, f"build {build['version']} has the messages {messages}"
        time.sleep(0.2)
    return messages


def job_log(project: BuildProject, deployment: dict[str, Any]) -> str:
    (job,) = deployment["jobs"]
    return project.log(job["jobId"])


def project_with_token(account: Account, git_server: GitServer, ftp: FtpServer) -> tuple[BuildProject, str]:
    project = BuildProject(account, git_server, {"appveyor.yml": ARTIFACTS_YML})
    return project, secure_token(project, "password", ftp.password, f"{ftp.host}:{ftp.port}")


def test_an_ftp_entry_on_branch_main_delivers_the_named_artifact_and_the_release_entry_does_not_run(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path
) -> None:
    with FtpServer(tmp_path) as ftp:
        project, token = project_with_token(account, git_server, ftp)
        yml = ARTIFACTS_YML + appveyor_yml(
            "before_deploy:",
            "  - echo preparing the release",
            "deploy:",
            *ftp_entry(ftp, token, "    folder: /main/$(APPVEYOR_BUILD_VERSION)", "    artifact: app"),
            "    on:",
            "      branch: main",
            *ftp_entry(ftp, token, "    folder: /release"),
            "    on:",
            "      branch: release",
        )
        project.repository.commit({"appveyor.yml": yml}, branch="main")
        build = project.run(branch="main")
        assert build["status"] == "success", build
        (deployment,) = build_deployments(project, build, 1)

    assert deployment["status"] == "success", deployment
    assert deployment["environment"]["deploymentEnvironmentId"] == 0
    assert deployment["environment"]["provider"] == "FTP"
    delivered = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file())
    assert delivered == [f"main/{build['version']}/out/app.txt"]  # the named artifact, and only that entry's
    assert (tmp_path / "main" / build["version"] / "out" / "app.txt").read_text() == f"app-{build['version']}\n"
    messages = build_messages(project, build, 1)
    assert messages == [f"Inline deployment 1 (FTP) started: deployment {deployment['deploymentId']}."]
    build_log = project.log(build["jobs"][0]["jobId"])
    assert "preparing the release" in build_log  # before_deploy runs, as the entry deploys from this job
    assert "1 deploy: entry deploys from this job once the build has succeeded" in build_log
    deploy_log = job_log(project, deployment)
    assert "Uploaded out/app.txt" in deploy_log
    shown = [
        build_log,
        deploy_log,
        project.account.api.get(f"{project.path}/build/{build['version']}").body.decode(),
        project.account.api.get(f"/deployments/{deployment['deploymentId']}").body.decode(),
        project.account.api.get(f"{project.path}/deployments").body.decode(),
        project.account.api.get(f"{project.path}/settings").body.decode(),
    ]
    assert all(ftp.password not in text for text in shown)


def test_conditions_on_a_variable_and_a_branch_regex_pick_the_matrix_job_that_deploys(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path
) -> None:
    with FtpServer(tmp_path) as ftp:
        project, token = project_with_token(account, git_server, ftp)
        yml = ARTIFACTS_YML + appveyor_yml(
            "environment:",
            "  matrix:",
            "    - TARGET: linux",
            "    - TARGET: arm",
            "deploy:",
            *ftp_entry(ftp, token, "    folder: /$(TARGET)", "    artifact: /\\.txt$/"),
            "    on:",
            "      branch: [main, /^release-\\d+$/]",
            "      target: ARM",  # names and values alike compare without regard to case
            *ftp_entry(ftp, token, "    folder: /tags"),
            "    on:",
            "      appveyor_repo_tag: true",
        )
        project.repository.commit({"appveyor.yml": yml}, branch="release-2")
        # a start request's variables may not make a branch build pass for a tag's
        build = project.run(branch="release-2", environmentVariables={"APPVEYOR_REPO_TAG": "true"})
        assert build["status"] == "success", build
        (deployment,) = build_deployments(project, build, 1)

    assert deployment["status"] == "success", deployment
    assert [path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*.*")] == ["arm/out/app.txt"]
    arm_job = next(job for job in build["jobs"] if "arm" in job["name"])
    assert f"of job {arm_job['name']}" in build_messages(project, build, 1)[0]


def test_a_pull_request_build_runs_no_inline_deployment_and_says_so(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path
) -> None:
    with WebhookReceiver() as receiver:
        yml = ARTIFACTS_YML + appveyor_yml("deploy:", "  - provider: Webhook", f"    url: {receiver.url}/deployed")
        project = BuildProject(account, git_server, {"appveyor.yml": yml})
        head = project.repository.commit({"appveyor.yml": yml, "pr.txt": "x"}, branch="feature")
        project.repository.set_ref("refs/pull/7/head", head)
        build = project.run(pullRequestId=7)
        assert build["status"] == "success", build
        messages = build_messages(project, build, 1)
        sent = list(receiver.requests)

    assert messages == [
        "Inline deployments do not run for pull request builds (as on AppVeyor): its deploy: entry did not run."
    ]
    assert sent == []
    listed = project.account.api.get(f"{project.path}/deployments").json["deployments"]
    assert listed == []


def test_deploy_off_runs_none_and_deploy_script_replaces_the_providers_saying_so(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    with WebhookReceiver() as receiver:
        entry = ["  - provider: Webhook", f"    url: {receiver.url}/deployed"]
        project = BuildProject(account, git_server, {"appveyor.yml": ARTIFACTS_YML + appveyor_yml("deploy: off")})
        off = project.run()
        scripted = ARTIFACTS_YML + appveyor_yml("deploy:", *entry, "deploy_script:", "  - echo scripted deploy")
        project.repository.commit({"appveyor.yml": scripted})
        script = project.run()
        # the second build's message comes from the same queue as the first's finish: both were handled by then
        messages = build_messages(project, script, 1)
        sent = list(receiver.requests)

    assert (off["status"], script["status"]) == ("success", "success")
    assert messages == ["deploy_script replaces the deploy: providers (as on AppVeyor): its deploy: entry did not run."]
    assert "scripted deploy" in project.log(script["jobs"][0]["jobId"])
    assert project.build(off["version"])["messages"] == []
    assert sent == []
    assert project.account.api.get(f"{project.path}/deployments").json["deployments"] == []


def test_the_environment_provider_deploys_to_the_named_environment_with_the_entrys_variables(
    account: Account, git_server: GitServer, pump: Any
) -> None:
    with WebhookReceiver() as receiver, WebhookReceiver() as attacker:
        environment = add_environment(account, "Webhook", {"url": f"{receiver.url}/$(HOOK_PATH)"})
        yml = ARTIFACTS_YML + appveyor_yml(
            "deploy:",
            "  - provider: Environment",
            f"    name: {environment['name'].upper()}",
            "    SITE: site-$(APPVEYOR_BUILD_NUMBER)",
            # a pusher's try to send the environment's deployment (and its secrets) elsewhere, or to pass for another
            f"    HOOK_PATH: x@{attacker.url.removeprefix('http://')}",
            "    APPVEYOR_PROJECT_SLUG: someone-else",
            "  - provider: Environment",
            "    name: nowhere-to-be-found",
        )
        project = BuildProject(account, git_server, {"appveyor.yml": yml})
        allow_inline_deployments(account, environment, project.project)
        build = project.run()
        (deployment,) = build_deployments(project, build, 1)
        messages = build_messages(project, build, 3)
        sent, stolen = list(receiver.requests), list(attacker.requests)

    assert deployment["status"] == "success", deployment
    assert deployment["environment"]["deploymentEnvironmentId"] == environment["deploymentEnvironmentId"]
    (request,) = sent
    assert stolen == []
    assert request.path == "/$(HOOK_PATH)"  # as the environment wrote it: no pusher fills where it delivers
    assert request.json["environmentVariables"]["SITE"] == f"site-{build['buildNumber']}"
    assert request.json["environmentVariables"]["APPVEYOR_PROJECT_SLUG"] == project.project["slug"]
    assert sorted(messages) == [
        f"Inline deployment 1 (Environment) started: deployment {deployment['deploymentId']}.",
        "Inline deployment 1 (Environment): these settings were not passed, as they would replace the "
        "environment's own variables, the build's, or a part of where it delivers: APPVEYOR_PROJECT_SLUG, HOOK_PATH.",
        "Inline deployment 2 (Environment) did not run: the account has no environment named 'nowhere-to-be-found'.",
    ]
    listed = account.api.get(f"/environments/{environment['deploymentEnvironmentId']}/deployments").json
    assert [entry["deployment"]["deploymentId"] for entry in listed["deployments"]] == [deployment["deploymentId"]]


def test_a_provider_conveyor_lacks_is_named_in_a_message_and_a_failing_entry_fails_its_deployment(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path
) -> None:
    with FtpServer(tmp_path) as ftp:
        project, token = project_with_token(account, git_server, ftp)
        yml = ARTIFACTS_YML + appveyor_yml(
            "deploy:",
            "  - provider: WebDeploy",
            "    server: https://example.com/msdeploy.axd",
            *ftp_entry(ftp, token, "    artifact: no-such-artifact"),
        )
        project.repository.commit({"appveyor.yml": yml})
        build = project.run()
        (deployment,) = build_deployments(project, build, 1)
        messages = build_messages(project, build, 2)

    assert deployment["status"] == "failed"
    assert "'no-such-artifact' (the provider's artifact setting)" in job_log(project, deployment)
    assert list(tmp_path.rglob("*.*")) == []
    assert any(
        message.startswith("Inline deployment 1 (WebDeploy) did not run: Conveyor has no WebDeploy provider")
        for message in messages
    ), messages


def test_a_secure_setting_of_another_project_is_not_decrypted_and_a_second_message_starts_nothing(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path
) -> None:
    with FtpServer(tmp_path) as ftp:
        _, stolen = project_with_token(account, git_server, ftp)  # another project's secret
        project = BuildProject(account, git_server, {"appveyor.yml": ARTIFACTS_YML})
        project.repository.commit({"appveyor.yml": ARTIFACTS_YML + appveyor_yml("deploy:", *ftp_entry(ftp, stolen))})
        build = project.run()
        (deployment,) = build_deployments(project, build, 1)
        stored = build_store.get_build(build["projectId"], build["buildId"])
        owner = project_store.get_project_by_id(stored.account_id, stored.project_id) if stored else None
        assert stored is not None and owner is not None
        again = start_inline_deployments(owner, stored, stored.revision)
        started = deployment_store.get_deployment(stored.project_id, deployment["deploymentId"])
        assert started is not None
        inputs = inline_inputs(owner, stored, started, tmp_path)  # what its job read when it ran

    assert deployment["status"] == "failed"
    log = job_log(project, deployment)
    assert "The secure setting password cannot be used" in log
    assert inputs.refusal is not None and inputs.refusal in log
    assert (inputs.settings, inputs.secrets) == ({}, [])
    assert ftp.password not in log
    assert list(tmp_path.rglob("*.*")) == []
    assert again == 0
    assert len(project.account.api.get(f"{project.path}/deployments").json["deployments"]) == 1


def test_a_secure_setting_goes_only_where_its_entry_delivered_when_it_was_set(
    account: Account, git_server: GitServer, pump: Any, tmp_path: Path
) -> None:
    (tmp_path / "own").mkdir()
    (tmp_path / "theirs").mkdir()
    with FtpServer(tmp_path / "own") as ftp, FtpServer(tmp_path / "theirs") as theirs:
        project, token = project_with_token(account, git_server, ftp)
        own, their = f"{ftp.host}:{ftp.port}", f"{theirs.host}:{theirs.port}"
        elsewhere = [line.replace(own, their) for line in ftp_entry(ftp, token)]
        variable = [line.replace(own, "$(DEPLOY_HOST)") for line in ftp_entry(ftp, token)]
        twice = [*elsewhere, f"    HOST: {own}"]  # the binding would read one, the provider the other
        # a secure variable the entry names, sent where a start request's variable says
        project_variables = [{"name": "FTP_PASSWORD", "value": {"isEncrypted": True, "value": ftp.password}}]
        assert account.api.put(f"{project.path}/settings/environment-variables", project_variables).status == 204
        by_variable = [
            "  - provider: FTP",
            "    host: $(DEPLOY_HOST)",
            f"    username: {ftp.username}",
            "    password: $(FTP_PASSWORD)",
        ]
        yml = ARTIFACTS_YML + appveyor_yml("deploy:", *elsewhere, *variable, *twice, *by_variable)
        project.repository.commit({"appveyor.yml": yml})
        build = project.run(environmentVariables={"DEPLOY_HOST": their})
        redirected, through_variable, named_twice, secret_variable = build_deployments(project, build, 4)

    assert [entry["status"] for entry in (redirected, through_variable, named_twice, secret_variable)] == ["failed"] * 4
    assert "The secure setting password cannot be used here" in job_log(project, redirected)
    assert "must name its destination as it is, without a $(VARIABLE)" in job_log(project, through_variable)
    assert "The deploy: entry sets host twice" in job_log(project, named_twice)
    assert "host '$(DEPLOY_HOST)' names a variable this deployment does not have" in job_log(project, secret_variable)
    assert list((tmp_path / "theirs").rglob("*.*")) == []  # their server never heard from the service
    assert theirs.connections == 0
