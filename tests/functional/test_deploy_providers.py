"""Deployment providers delivering a build's stored artifacts to real servers on loopback: files arrive under the
configured folder with the right bytes, the artifact setting chooses which, and every failure or stop becomes
DeployFailed or DeployStopped with a reason a user can act on (and no password in it)."""

from __future__ import annotations

import itertools
import os
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
import pytest
import requests
from azure.storage.blob import BlobServiceClient

from chalicelib import deploy
from chalicelib.config import settings as service_settings
from chalicelib.deploy import azure_blob
from chalicelib.deploy import ftp as ftp_provider
from chalicelib.deploy import webhook as webhook_provider
from chalicelib.deploy.base import Delivery, DeployArtifact, DeployFailed, DeployStopped, selected
from tests.outbound_stubs import stubbed_resolver  # noqa: F401 (a fixture)
from tests.peers import Azurite, FtpServer, WebhookReceiver, require_azurite
from tests.storage import put_artifact
from tests.support import unique

APP_ZIP = b"PK\x03\x04 the application, zipped \x00\xff" * 50
INDEX_HTML = b"<!doctype html><title>Deployed</title>\n"


class Log(list[str]):
    """The deployment's log lines."""

    def __call__(self, line: str) -> None:
        self.append(line)


def store(
    job_prefix: str, file_name: str, content: bytes, folder: Path, name: str = "", kind: str = "File"
) -> DeployArtifact:
    local = folder / file_name.replace("/", "_")
    local.write_bytes(content)
    size = put_artifact(job_prefix, file_name, local)
    return DeployArtifact(file_name, name or Path(file_name).stem, kind, size, job_prefix)


@pytest.fixture(scope="module")
def artifacts(fresh_resources: None, tmp_path_factory: pytest.TempPathFactory) -> list[DeployArtifact]:
    """Two artifacts of one job, one of them in a subfolder of the build, stored as the runner stores them."""
    folder = tmp_path_factory.mktemp("artifacts")
    job_prefix = f"builds/1/2/3/{unique('job')}/"
    return [
        store(job_prefix, "out/app.zip", APP_ZIP, folder, name="App", kind="Zip"),
        store(job_prefix, "index.html", INDEX_HTML, folder, name="Site"),
    ]


@pytest.fixture(scope="module")
def big_artifact(fresh_resources: None, tmp_path_factory: pytest.TempPathFactory) -> DeployArtifact:
    """An artifact large enough to travel in several FTP blocks and Azure blocks."""
    content = bytes(range(256)) * (5 * 1024 * 1024 // 256)  # 5 MiB: more than one 4 MiB Azure block
    return store(f"builds/1/2/4/{unique('job')}/", "dist/big.bin", content, tmp_path_factory.mktemp("big"))


def delivery(
    settings: dict[str, str], artifacts: list[DeployArtifact], should_stop: Callable[[], bool] = lambda: False
) -> Delivery:
    return Delivery(
        settings=settings,
        artifacts=artifacts,
        variables={"APPVEYOR_BUILD_VERSION": "1.0.7", "TARGET": "staging"},
        context={
            "accountName": "acme",
            "projectName": "Web App",
            "projectSlug": "web-app",
            "build": {"buildId": 3, "version": "1.0.7", "jobs": []},
            "job": {"jobId": "job-1", "status": "success"},
            "commit": {"commitId": "abc123", "message": "Ship it", "authorName": "Ada", "committed": None},
        },
        log=Log(),
        should_stop=should_stop,
    )


def logged(sent: Delivery) -> list[str]:
    assert isinstance(sent.log, Log)
    return sent.log


def files_under(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def stop_after(checks: int) -> Callable[[], bool]:
    """A should_stop that turns true after ``checks`` calls."""
    counter = itertools.count()
    return lambda: next(counter) >= checks


def refused_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# FTP


@pytest.fixture
def ftp(tmp_path: Path) -> Iterator[FtpServer]:
    with FtpServer(tmp_path) as server:
        yield server


def ftp_settings(server: FtpServer, **extra: str) -> dict[str, str]:
    return {
        "server": f"{server.host}:{server.port}",
        "username": server.username,
        "password": server.password,
        **extra,
    }


@pytest.mark.parametrize("active_mode", ["false", "true"])
def test_ftp_uploads_every_artifact_below_the_folder_creating_nested_folders(
    ftp: FtpServer, artifacts: list[DeployArtifact], active_mode: str
) -> None:
    sent = delivery(ftp_settings(ftp, folder="/site/www", active_mode=active_mode), artifacts)

    ftp_provider.deliver(sent)  # the provider's module itself, which deploy.deliver("FTP", ...) runs

    assert files_under(ftp.root) == {"site/www/out/app.zip": APP_ZIP, "site/www/index.html": INDEX_HTML}
    assert any("out/app.zip" in line for line in logged(sent))


def test_ftp_with_host_and_no_folder_uploads_to_the_login_folder(ftp: FtpServer, artifacts: list[DeployArtifact]):
    settings = ftp_settings(ftp)
    settings["host"] = settings.pop("server")

    deploy.deliver("FTP", delivery(settings, artifacts))

    assert files_under(ftp.root) == {"out/app.zip": APP_ZIP, "index.html": INDEX_HTML}


@pytest.mark.parametrize("choice", ["Site", "index.html", " index.html , "])
def test_ftp_artifact_setting_chooses_by_name_or_file_name(
    ftp: FtpServer, artifacts: list[DeployArtifact], choice: str
) -> None:
    deploy.deliver("FTP", delivery(ftp_settings(ftp, folder="www", artifact=choice), artifacts))

    assert files_under(ftp.root) == {"www/index.html": INDEX_HTML}


def test_ftp_wrong_password_fails_without_revealing_it(ftp: FtpServer, artifacts: list[DeployArtifact]) -> None:
    wrong = "n0t-the-Passw0rd"

    with pytest.raises(DeployFailed) as failure:
        deploy.deliver("FTP", delivery(ftp_settings(ftp, password=wrong), artifacts))

    assert "log in" in str(failure.value) and ftp.username in str(failure.value)
    assert wrong not in str(failure.value)
    assert files_under(ftp.root) == {}


def test_ftp_connection_refused_fails_naming_the_server(artifacts: list[DeployArtifact]) -> None:
    port = refused_port()

    with pytest.raises(DeployFailed, match=f"The FTP server 127.0.0.1:{port} is unreachable"):
        deploy.deliver("FTP", delivery({"server": f"127.0.0.1:{port}", "password": "secret"}, artifacts))


def test_ftp_sftp_is_refused(artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match="SFTP"):
        deploy.deliver("FTP", delivery({"server": "example.com", "protocol": "sftp"}, artifacts))


def test_ftp_stops_between_blocks_of_a_file(ftp: FtpServer, big_artifact: DeployArtifact) -> None:
    with pytest.raises(DeployStopped):
        deploy.deliver("FTP", delivery(ftp_settings(ftp), [big_artifact], should_stop=stop_after(3)))

    assert len(files_under(ftp.root).get("dist/big.bin", b"")) < big_artifact.size


def test_ftps_uploads_over_tls(tmp_path: Path, artifacts: list[DeployArtifact], monkeypatch: pytest.MonkeyPatch):
    with FtpServer(tmp_path, tls=True) as server:
        monkeypatch.setenv("SSL_CERT_FILE", str(server.certificate))  # trust the server's self-signed certificate
        deploy.deliver("FTP", delivery(ftp_settings(server, protocol="ftps", folder="tls"), artifacts))

        assert files_under(tmp_path) == {"tls/out/app.zip": APP_ZIP, "tls/index.html": INDEX_HTML}


# S3


@pytest.fixture
def target_bucket() -> str:
    name = unique("deploy-target")
    boto3.client("s3").create_bucket(Bucket=name)
    return name


def objects(bucket: str) -> dict[str, bytes]:
    s3 = boto3.client("s3")
    keys = [entry["Key"] for entry in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    return {key: s3.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


def test_s3_copies_the_artifacts_below_the_folder(target_bucket: str, artifacts: list[DeployArtifact]) -> None:
    settings = {"bucket": target_bucket, "folder": "/releases/1.0.7/", "region": "us-east-1"}
    # the emulator takes only the stack's own keys: the settings' keys are used, not the function's default
    settings |= {
        "access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
        "secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
    }

    deploy.deliver("S3", delivery(settings, artifacts))

    assert objects(target_bucket) == {"releases/1.0.7/out/app.zip": APP_ZIP, "releases/1.0.7/index.html": INDEX_HTML}


def test_s3_with_keys_the_target_refuses_fails_saying_so(target_bucket: str, artifacts: list[DeployArtifact]) -> None:
    settings = {"bucket": target_bucket, "access_key_id": "AKIAEXAMPLE", "secret_access_key": "example-secret"}

    with pytest.raises(DeployFailed, match="failed: AccessDenied"):  # as S3 answers, in its XML
        deploy.deliver("S3", delivery(settings, artifacts))

    assert objects(target_bucket) == {}


def test_s3_without_a_folder_or_keys_uses_the_file_names_and_default_credentials(
    target_bucket: str, artifacts: list[DeployArtifact]
) -> None:
    deploy.deliver("S3", delivery({"bucket": target_bucket, "artifact": "App"}, artifacts))

    assert objects(target_bucket) == {"out/app.zip": APP_ZIP}


def test_s3_set_public_grants_everyone_read(target_bucket: str, artifacts: list[DeployArtifact]) -> None:
    deploy.deliver("S3", delivery({"bucket": target_bucket, "set_public": "true"}, artifacts))

    grants = boto3.client("s3").get_object_acl(Bucket=target_bucket, Key="index.html")["Grants"]
    assert any(
        grant["Grantee"].get("URI") == "http://acs.amazonaws.com/groups/global/AllUsers"
        and grant["Permission"] == "READ"
        for grant in grants
    )


def test_s3_needs_a_bucket_that_exists(artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match="needs the bucket"):
        deploy.deliver("S3", delivery({"folder": "x"}, artifacts))

    missing = unique("no-such-bucket")
    with pytest.raises(DeployFailed, match=f"s3://{missing}/.*NoSuchBucket"):
        deploy.deliver("S3", delivery({"bucket": missing}, artifacts))


def test_s3_refuses_the_services_own_bucket(artifacts: list[DeployArtifact]) -> None:
    own_bucket = service_settings().bucket
    before = boto3.client("s3").list_objects_v2(Bucket=own_bucket).get("KeyCount")

    with pytest.raises(DeployFailed, match="Conveyor's own data"):
        deploy.deliver("S3", delivery({"bucket": own_bucket, "folder": "builds"}, artifacts))

    assert boto3.client("s3").list_objects_v2(Bucket=own_bucket).get("KeyCount") == before


def test_s3_stops_between_files(target_bucket: str, artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployStopped):
        deploy.deliver("S3", delivery({"bucket": target_bucket}, artifacts, should_stop=lambda: True))

    assert objects(target_bucket) == {}


def test_s3_stops_while_a_file_travels(target_bucket: str, big_artifact: DeployArtifact) -> None:
    with pytest.raises(DeployStopped):
        deploy.deliver("S3", delivery({"bucket": target_bucket}, [big_artifact], should_stop=stop_after(2)))

    assert objects(target_bucket) == {}


# Azure Blob


@pytest.fixture(scope="module")
def azurite() -> Iterator[Azurite]:
    require_azurite()
    with Azurite() as server:
        yield server


def azure_settings(server: Azurite, container: str, **extra: str) -> dict[str, str]:
    return {
        "storage_account_name": server.account_name,
        "storage_access_key": server.account_key,
        "container": container,
        "endpoint": server.endpoint,
        **extra,
    }


def blobs(server: Azurite, container: str) -> dict[str, bytes]:
    credential = {"account_name": server.account_name, "account_key": server.account_key}
    with BlobServiceClient(server.endpoint, credential=credential) as service:
        client = service.get_container_client(container)
        return {blob.name: client.download_blob(blob.name).readall() for blob in client.list_blobs()}


def test_azure_blob_creates_the_container_and_uploads_below_the_folder(
    azurite: Azurite, artifacts: list[DeployArtifact], big_artifact: DeployArtifact
) -> None:
    container = unique("releases")
    sent = delivery(azure_settings(azurite, container, folder="web/1.0.7"), [*artifacts, big_artifact])

    azure_blob.deliver(sent)  # the provider's module itself, which deploy.deliver("AzureBlob", ...) runs

    stored = blobs(azurite, container)
    assert stored.keys() == {"web/1.0.7/out/app.zip", "web/1.0.7/index.html", "web/1.0.7/dist/big.bin"}
    assert stored["web/1.0.7/out/app.zip"] == APP_ZIP and stored["web/1.0.7/index.html"] == INDEX_HTML
    assert len(stored["web/1.0.7/dist/big.bin"]) == big_artifact.size
    assert any(f"Created the container {container}" in line for line in logged(sent))


def test_azure_blob_into_an_existing_container_overwrites(azurite: Azurite, artifacts: list[DeployArtifact]) -> None:
    container = unique("site")
    deploy.deliver("AzureBlob", delivery(azure_settings(azurite, container), artifacts))

    deploy.deliver("AzureBlob", delivery(azure_settings(azurite, container, artifact="Site"), artifacts))

    assert blobs(azurite, container) == {"out/app.zip": APP_ZIP, "index.html": INDEX_HTML}


def test_azure_blob_stops_between_blocks(azurite: Azurite, big_artifact: DeployArtifact) -> None:
    container = unique("stopped")

    with pytest.raises(DeployStopped):
        deploy.deliver("AzureBlob", delivery(azure_settings(azurite, container), [big_artifact], stop_after(2)))

    assert blobs(azurite, container) == {}


def test_azure_blob_with_a_wrong_key_fails(azurite: Azurite, artifacts: list[DeployArtifact]) -> None:
    wrong_key = "d3JvbmcgYnV0IHdlbGwgZm9ybWVkIGJhc2U2NCBrZXk="
    settings = azure_settings(azurite, unique("locked"), storage_access_key=wrong_key)

    with pytest.raises(DeployFailed, match="Azure Blob deployment") as failure:
        deploy.deliver("AzureBlob", delivery(settings, artifacts))

    assert wrong_key not in str(failure.value)


def test_azure_blob_needs_its_account_settings(artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match="storage_account_name, storage_access_key and container"):
        deploy.deliver("AzureBlob", delivery({"container": "x"}, artifacts))


# Webhook


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def test_webhook_posts_the_build_its_artifacts_and_variables(
    receiver: WebhookReceiver, artifacts: list[DeployArtifact]
) -> None:
    settings = {"url": f"{receiver.url}/hooks/deploy?token=t", "authorization": "Bearer hook-secret"}
    sent = delivery(settings, artifacts)

    deploy.deliver("Webhook", sent)

    (request,) = receiver.requests
    assert (request.method, request.path) == ("POST", "/hooks/deploy?token=t")
    assert request.headers["authorization"] == "Bearer hook-secret"
    assert request.headers["content-type"] == "application/json"
    body = request.json
    assert (body["accountName"], body["projectName"], body["projectSlug"]) == ("acme", "Web App", "web-app")
    assert body["build"]["version"] == "1.0.7" and body["job"]["jobId"] == "job-1"
    assert body["commit"]["commitId"] == "abc123"
    assert body["environmentVariables"] == {"APPVEYOR_BUILD_VERSION": "1.0.7", "TARGET": "staging"}
    described = {artifact["fileName"]: artifact for artifact in body["artifacts"]}
    assert described["out/app.zip"] | {"url": None} == {
        "fileName": "out/app.zip",
        "name": "App",
        "type": "Zip",
        "size": len(APP_ZIP),
        "url": None,
    }
    assert requests.get(described["out/app.zip"]["url"], timeout=10).content == APP_ZIP
    assert requests.get(described["index.html"]["url"], timeout=10).content == INDEX_HTML
    shown = webhook_provider.body(sent)  # what the provider describes is what the receiver got, URLs apart
    assert [artifact["fileName"] for artifact in shown["artifacts"]] == [
        artifact["fileName"] for artifact in body["artifacts"]
    ]
    assert {name: value for name, value in shown.items() if name != "artifacts"} == {
        name: value for name, value in body.items() if name != "artifacts"
    }


def test_webhook_error_answer_fails_naming_the_status(receiver: WebhookReceiver, artifacts: list[DeployArtifact]):
    receiver.status = 500

    with pytest.raises(DeployFailed, match="answered 500"):
        deploy.deliver("Webhook", delivery({"url": receiver.url}, artifacts))


def test_webhook_unreachable_fails(artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match="is unreachable"):
        deploy.deliver("Webhook", delivery({"url": f"http://127.0.0.1:{refused_port()}/"}, artifacts))


@pytest.mark.parametrize("url", ["", "file:///etc/passwd", "ftp://example.com/hook"])
def test_webhook_needs_an_http_url(url: str, artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match="http"):
        deploy.deliver("Webhook", delivery({"url": url}, artifacts))


def test_webhook_stopped_before_sending_sends_nothing(receiver: WebhookReceiver, artifacts: list[DeployArtifact]):
    with pytest.raises(DeployStopped):
        deploy.deliver("Webhook", delivery({"url": receiver.url}, artifacts, should_stop=lambda: True))

    assert receiver.requests == []


# Every provider


@pytest.mark.parametrize("provider", ["AzureCS", "WebDeploy", "BinTray", "SqlDatabase", "ftp", "github", "Nuget"])
def test_unsupported_provider_fails_saying_so(provider: str, artifacts: list[DeployArtifact]) -> None:
    with pytest.raises(DeployFailed, match=f"^The {provider} provider is not supported by Conveyor: "):
        deploy.deliver(provider, delivery({}, artifacts))


def test_artifact_setting_naming_no_artifact_fails(artifacts: list[DeployArtifact]) -> None:
    assert selected(artifacts, "") == artifacts
    assert selected(artifacts, "App, index.html") == artifacts
    assert selected(artifacts, "App Site") == artifacts
    with pytest.raises(DeployFailed, match="'Docs'"):
        selected(artifacts, "App Docs")


def test_an_artifact_no_longer_stored_fails_the_deployment(ftp: FtpServer, artifacts: list[DeployArtifact]) -> None:
    gone = DeployArtifact("gone.txt", "Gone", "File", 3, artifacts[0].job_prefix)

    with pytest.raises(DeployFailed, match="gone.txt is no longer stored"):
        deploy.deliver("FTP", delivery(ftp_settings(ftp), [gone]))


# Where deployments connect: never to the metadata address or the service's own network (chalicelib/outbound)


class Redirector:
    """An HTTP server on 127.0.0.1 that answers every request with a redirect to ``location``, counting them."""

    def __init__(self, location: str) -> None:
        redirector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                redirector.requests += 1
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.requests = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.usefixtures("stubbed_resolver")
def test_a_webhook_deployment_to_a_name_of_the_metadata_address_is_refused_before_connecting(
    artifacts: list[DeployArtifact],
) -> None:
    with pytest.raises(DeployFailed, match="refused"):
        deploy.deliver("Webhook", delivery({"url": "http://metadata.stub.test/latest/meta-data/"}, artifacts))


@pytest.mark.usefixtures("stubbed_resolver")
def test_a_webhook_that_redirects_to_the_metadata_address_is_not_followed(artifacts: list[DeployArtifact]) -> None:
    redirector = Redirector("http://metadata.stub.test/latest/meta-data/iam/security-credentials/")
    try:
        with pytest.raises(DeployFailed, match="refused"):
            deploy.deliver("Webhook", delivery({"url": redirector.url, "authorization": "Bearer t0ken"}, artifacts))
    finally:
        redirector.close()

    assert redirector.requests == 1  # the first hop was sent; the redirect was checked, and refused, before connecting


@pytest.mark.usefixtures("stubbed_resolver")
@pytest.mark.parametrize("server", ["metadata.stub.test:21", "169.254.169.254", "mixed.stub.test"])
def test_an_ftp_deployment_to_a_refused_address_is_refused_before_connecting(
    server: str, artifacts: list[DeployArtifact]
) -> None:
    with pytest.raises(DeployFailed, match="refused") as failed:
        deploy.deliver("FTP", delivery({"server": server, "password": "secret"}, artifacts))

    assert "169.254" not in str(failed.value).replace(server, "")  # the message maps nothing beyond what was sent


@pytest.mark.usefixtures("stubbed_resolver")
def test_an_azure_blob_deployment_to_a_refused_endpoint_is_refused_before_connecting(
    artifacts: list[DeployArtifact],
) -> None:
    settings = {
        "storage_account_name": "devstoreaccount1",
        "storage_access_key": "a2V5",
        "container": "site",
        "endpoint": "http://metadata.stub.test/devstoreaccount1",
    }

    with pytest.raises(DeployFailed, match="refused"):
        deploy.deliver("AzureBlob", delivery(settings, artifacts))
