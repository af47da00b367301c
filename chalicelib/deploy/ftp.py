"""The FTP provider: each selected artifact uploaded to ``{folder}/{file name}`` over FTP or FTPS (stdlib ftplib)."""

from __future__ import annotations

import contextlib
import ftplib
import posixpath
import ssl
from urllib.parse import urlsplit

from chalicelib import outbound
from chalicelib.deploy.base import Delivery, DeployArtifact, DeployFailed, open_artifact, selected

CONNECT_TIMEOUT_SECONDS = 60
_BLOCK_SIZE = 64 * 1024
_UNSUPPORTED = ("application", "beta", "debug")


def deliver(delivery: Delivery) -> None:
    """Upload the selected artifacts, creating the remote folders they need."""
    protocol = (delivery.setting("protocol") or "ftp").lower()
    if protocol == "sftp":
        raise DeployFailed("The FTP provider of Conveyor does not support SFTP; use the ftp or ftps protocol.")
    if protocol not in ("ftp", "ftps"):
        raise DeployFailed(f"Unknown FTP protocol {protocol!r}: use ftp or ftps.")
    host, port = _address(delivery.setting("server") or delivery.setting("host"))
    artifacts = selected(delivery.artifacts, delivery.setting("artifact"))
    delivery.warn_unsupported(_UNSUPPORTED)
    password = delivery.settings.get("password") or ""
    # FTP_TLS checks the server's certificate like any TLS client (SSL_CERT_FILE may name extra trusted roots).
    ftp = ftplib.FTP_TLS(context=ssl.create_default_context()) if protocol == "ftps" else ftplib.FTP()
    try:
        _connect(ftp, host, port, delivery.setting("username"), password, active=delivery.flag("active_mode"))
        delivery.log(f"Connected to {host}:{port} over {protocol.upper()}")
        made: set[str] = set()
        for artifact in artifacts:
            delivery.stop_if_asked()
            remote = _remote_path(delivery.setting("folder"), artifact.file_name)
            _upload(ftp, delivery, artifact, remote, made)
    except (ftplib.Error, OSError, EOFError) as error:
        raise DeployFailed(_without(f"FTP deployment to {host}:{port} failed: {_reason(error)}", password)) from None
    finally:
        ftp.close()


def _connect(ftp: ftplib.FTP, host: str, port: int, username: str, password: str, active: bool) -> None:
    try:
        address = outbound.resolve(host, port)
    except outbound.Refused as error:
        raise DeployFailed(f"Did not connect to the FTP server {host}:{port}: {error}") from None
    try:
        # the address checked, not the name again (it could resolve elsewhere by now); passive data connections go to
        # that same address, whatever PASV answers (ftplib ignores the address in it)
        ftp.connect(address, port, timeout=CONNECT_TIMEOUT_SECONDS)
    except (OSError, EOFError, ftplib.Error):
        raise DeployFailed(f"The FTP server {host}:{port} is unreachable.") from None
    ftp.host = host  # FTPS checks the server's certificate for the name, not the address
    try:
        ftp.login(username, password)  # no username: ftplib logs in as anonymous
        if isinstance(ftp, ftplib.FTP_TLS):
            ftp.prot_p()  # the files travel encrypted too, not only the password
    except (OSError, EOFError, ftplib.Error) as error:
        message = f"Could not log in to {host}:{port} as {username or 'anonymous'}: {_reason(error)}"
        raise DeployFailed(_without(message, password)) from None
    ftp.set_pasv(not active)


def _upload(ftp: ftplib.FTP, delivery: Delivery, artifact: DeployArtifact, remote: str, made: set[str]) -> None:
    _make_folders(ftp, posixpath.dirname(remote), made)
    with open_artifact(artifact) as stream:
        ftp.storbinary(f"STOR {remote}", stream, _BLOCK_SIZE, callback=lambda _block: delivery.stop_if_asked())
    delivery.log(f"Uploaded {artifact.file_name} to {remote} ({artifact.size} bytes)")


def _make_folders(ftp: ftplib.FTP, folder: str, made: set[str]) -> None:
    """Create ``folder`` and its parents; one that exists already is fine (a real refusal shows at STOR)."""
    if folder in ("", "/", ".") or folder in made:
        return
    _make_folders(ftp, posixpath.dirname(folder), made)
    with contextlib.suppress(ftplib.error_perm):  # servers word "already exists" differently, all as a 550
        ftp.mkd(folder)
    made.add(folder)


def _remote_path(folder: str, file_name: str) -> str:
    """Where a file goes: below ``folder`` (absolute, or relative to the login folder)."""
    folder = folder.replace("\\", "/").rstrip("/")
    return f"{folder}/{file_name}" if folder else file_name


def _address(server: str) -> tuple[str, int]:
    """Host and port of ``host``, ``host:port`` or ``ftp://host:port``."""
    if not server:
        raise DeployFailed("The FTP provider needs the server's address (the server or host setting).")
    try:
        parts = urlsplit(server if "://" in server else f"//{server}")
        host, port = parts.hostname, parts.port or 21
    except ValueError:
        host = None
    if not host:
        raise DeployFailed(f"{server!r} is not an FTP server address (host or host:port).")
    return host, port


def _reason(error: BaseException) -> str:
    text = str(error).strip()
    return text or type(error).__name__


def _without(message: str, secret: str) -> str:
    """The message, never quoting the password (whatever a server or socket echoed back)."""
    return message.replace(secret, "***") if secret else message
