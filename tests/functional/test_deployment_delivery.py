"""A real build's artifacts delivered through the API and the deployments queue to real peers on loopback: FTP
(pyftpdlib), S3 (the emulator), Azure Blob (Azurite) and a webhook receiver; secrets are masked in the log and
``$(NAME)`` in a setting takes the deployment's variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
from azure.storage.blob import BlobServiceClient

from tests.builds import BuildProject
from tests.deployments import add_environment, deployed, deployment_log
from tests.peers import Azurite, FtpServer, WebhookReceiver, require_azurite
from tests.support import unique

APP = "out/app.txt"
SITE = "site/index.html"


def test_ftp_receives_the_artifacts_in_the_substituted_folder_and_the_log_hides_the_password(
    built: tuple[BuildProject, dict[str, Any]], tmp_path: Path
) -> None:
    project, build = built
    with FtpServer(tmp_path) as ftp:
        environment = add_environment(
            project.account,
            "FTP",
            {
                "host": f"{ftp.host}:{ftp.port}",  # AppVeyor's YAML name for the server
                "username": ftp.username,
                "password": ftp.password,
                "folder": "/releases/$(APPVEYOR_BUILD_VERSION)/$(STAGE)",
            },
            secure={"password"},
            STAGE="staging",
        )
        deployment = deployed(project, environment, build["version"], environmentVariables={"STAGE": "live"})

    assert deployment["status"] == "success", deployment
    folder = tmp_path / "releases" / build["version"] / "live"  # the request's variable wins over the environment's
    assert (folder / APP).read_text() == f"app-{build['version']}\n"
    assert (folder / SITE).read_text() == "<h1>hi</h1>\n"
    log = deployment_log(project, deployment)
    assert f"Uploaded {APP}" in log
    assert ftp.password not in log


def test_ftp_wrong_password_fails_the_deployment_saying_why(
    built: tuple[BuildProject, dict[str, Any]], tmp_path: Path
) -> None:
    project, build = built
    with FtpServer(tmp_path) as ftp:
        settings = {"server": f"{ftp.host}:{ftp.port}", "username": ftp.username, "password": "not-the-password-9"}
        environment = add_environment(project.account, "FTP", settings, secure={"password"})
        deployment = deployed(project, environment, build["version"])

    assert deployment["status"] == "failed"
    assert deployment["jobs"][0]["messagesCount"] == 1
    log = deployment_log(project, deployment)
    assert "Could not log in" in log
    assert "not-the-password-9" not in log
    assert list(tmp_path.iterdir()) == []


def test_s3_receives_the_chosen_artifact_below_the_folder(built: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = built
    bucket = unique("deploy-target")
    boto3.client("s3").create_bucket(Bucket=bucket)
    settings = {"bucket": bucket, "region": "us-east-1", "folder": "web/$(APPVEYOR_BUILD_VERSION)", "artifact": "site"}
    environment = add_environment(project.account, "S3", settings)

    deployment = deployed(project, environment, build["version"])

    assert deployment["status"] == "success", deployment
    s3 = boto3.client("s3")
    keys = [entry["Key"] for entry in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert keys == [f"web/{build['version']}/{SITE}"]
    assert s3.get_object(Bucket=bucket, Key=keys[0])["Body"].read() == b"<h1>hi</h1>\n"


def test_azure_blob_receives_the_artifacts(built: tuple[BuildProject, dict[str, Any]]) -> None:
    require_azurite()
    project, build = built
    container = unique("drop")
    with Azurite() as azurite:
        settings = {
            "storage_account_name": azurite.account_name,
            "storage_access_key": azurite.account_key,
            "container": container,
            "folder": "$(APPVEYOR_PROJECT_SLUG)",
            "endpoint": azurite.endpoint,
        }
        environment = add_environment(project.account, "AzureBlob", settings, secure={"storage_access_key"})
        deployment = deployed(project, environment, build["version"])

        credential = {"account_name": azurite.account_name, "account_key": azurite.account_key}
        with BlobServiceClient(azurite.endpoint, credential=credential) as service:
            client = service.get_container_client(container)
            stored = {blob.name: client.download_blob(blob.name).readall() for blob in client.list_blobs()}

    assert deployment["status"] == "success", deployment
    slug = project.project["slug"]
    assert stored == {f"{slug}/{APP}": f"app-{build['version']}\n".encode(), f"{slug}/{SITE}": b"<h1>hi</h1>\n"}
    assert azurite.account_key not in deployment_log(project, deployment)


def test_webhook_receives_the_build_and_its_artifacts(built: tuple[BuildProject, dict[str, Any]]) -> None:
    project, build = built
    with WebhookReceiver() as receiver:
        settings = {"url": f"{receiver.url}/deploy", "authorization": "Bearer hook-secret-value"}
        environment = add_environment(project.account, "Webhook", settings, secure={"authorization"}, REGION="eu")
        deployment = deployed(project, environment, build["version"])
        requests_seen = list(receiver.requests)

    assert deployment["status"] == "success", deployment
    (request,) = requests_seen
    assert request.headers["authorization"] == "Bearer hook-secret-value"
    body = request.json
    assert body["projectSlug"] == project.project["slug"]
    assert body["build"]["version"] == build["version"]
    assert body["commit"]["commitId"] == build["commitId"]
    assert body["environmentVariables"]["REGION"] == "eu"
    assert sorted(artifact["fileName"] for artifact in body["artifacts"]) == [APP, SITE]
    assert "hook-secret-value" not in deployment_log(project, deployment)


def test_a_provider_conveyor_cannot_deliver_to_fails_at_once_saying_so(
    built: tuple[BuildProject, dict[str, Any]],
) -> None:
    project, build = built
    environment = add_environment(project.account, "AzureCS", {"service": "web"})

    deployment = deployed(project, environment, build["version"])

    assert deployment["status"] == "failed"
    assert "AzureCS provider is not supported" in deployment_log(project, deployment)


def test_the_deployment_is_listed_for_its_project_and_environment_once_it_finished(
    built: tuple[BuildProject, dict[str, Any]], tmp_path: Path
) -> None:
    project, build = built
    with FtpServer(tmp_path) as ftp:
        settings = {"server": f"{ftp.host}:{ftp.port}", "username": ftp.username, "password": ftp.password}
        environment = add_environment(project.account, "FTP", settings, secure={"password"})
        deployment = deployed(project, environment, build["version"], buildJobId=build["jobs"][0]["jobId"])

    (listed,) = project.account.api.get(f"{project.path}/deployments").json["deployments"]
    assert listed["deployment"] == deployment
    assert listed["environment"]["name"] == environment["name"]
    assert deployment["jobs"][0]["name"] == environment["name"]
    assert deployment["started"] <= deployment["finished"]
