"""The AzureBlob provider: each selected artifact copied to a blob ``{folder}/{file name}`` of a container."""

from __future__ import annotations

from azure.core.exceptions import AzureError, ResourceExistsError
from azure.core.pipeline.transport import RequestsTransport
from azure.storage.blob import BlobServiceClient, ContainerClient

from chalicelib import outbound
from chalicelib.deploy.base import Delivery, DeployArtifact, DeployFailed, open_artifact, selected
from chalicelib.outbound import http

# Uploads go in blocks of this size, so an artifact is never held whole in memory (the SDK's default is 64 MiB).
BLOCK_BYTES = 4 * 1024 * 1024
_UNSUPPORTED = ("unzip", "remove_files", "set_content_type", "gzip_files", "headers")


def deliver(delivery: Delivery) -> None:
    """Upload the selected artifacts, creating the container if it does not exist yet."""
    account, key, container_name = (
        delivery.setting("storage_account_name"),
        delivery.setting("storage_access_key"),
        delivery.setting("container"),
    )
    if not account or not key or not container_name:
        raise DeployFailed(
            "The AzureBlob provider needs the storage_account_name, storage_access_key and container settings."
        )
    artifacts = selected(delivery.artifacts, delivery.setting("artifact"))
    delivery.warn_unsupported(_UNSUPPORTED)
    endpoint = delivery.setting("endpoint") or f"https://{account}.blob.core.windows.net"
    folder = delivery.setting("folder").replace("\\", "/").strip("/")
    try:
        with BlobServiceClient(
            endpoint,
            credential={"account_name": account, "account_key": key},
            max_single_put_size=BLOCK_BYTES,
            max_block_size=BLOCK_BYTES,
            transport=RequestsTransport(session=http.session(), session_owner=True),  # each hop checked
        ) as service:
            container = service.get_container_client(container_name)
            _ensure_container(container, delivery)
            for artifact in artifacts:
                delivery.stop_if_asked()
                blob_name = f"{folder}/{artifact.file_name}" if folder else artifact.file_name
                _upload(container, delivery, artifact, blob_name)
    except outbound.Refused as error:
        raise DeployFailed(f"Azure Blob deployment to {endpoint} was not made: {error}") from None
    except (AzureError, ValueError) as error:
        raise DeployFailed(f"Azure Blob deployment to {endpoint}/{container_name} failed: {_reason(error)}") from None


def _ensure_container(container: ContainerClient, delivery: Delivery) -> None:
    try:
        container.create_container()
    except ResourceExistsError:
        return
    delivery.log(f"Created the container {container.container_name}")


def _upload(container: ContainerClient, delivery: Delivery, artifact: DeployArtifact, blob_name: str) -> None:
    with open_artifact(artifact) as stream:
        container.upload_blob(
            blob_name,
            stream,
            length=artifact.size,
            overwrite=True,
            max_concurrency=1,  # the stream is read in order, straight from S3
            progress_hook=lambda _sent, _total: delivery.stop_if_asked(),
        )
    delivery.log(f"Uploaded {artifact.file_name} to {container.container_name}/{blob_name} ({artifact.size} bytes)")


def _reason(error: Exception) -> str:
    """The service's own words, first line only (the SDK appends the whole response)."""
    message = getattr(error, "message", None) or str(error)
    return message.strip().splitlines()[0] if message.strip() else type(error).__name__
