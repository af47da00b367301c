"""Fetching over SSH with a project's deploy key: dulwich's SSH transport on paramiko (Lambda has no ssh binary).

The server's host key is checked, never accepted blindly: github.com, gitlab.com and bitbucket.org against the keys
they publish; any other host against the key the service saw at the project's first fetch (kept on the project,
and handed to its runners with the deploy key), so a server that changes its key is refused until the project's
known host key is cleared.
"""

from __future__ import annotations

import base64
import io
import socket
from dataclasses import dataclass
from typing import Any

import paramiko
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dulwich.client import SSHVendor

from chalicelib import outbound
from chalicelib.scm.transport import HostKeyRefused, SshAccess

# The Ed25519 keys the hosts publish (their SHA-256 fingerprints, as published, are checked in the tests).
PUBLISHED_HOST_KEYS = {
    "github.com": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    "gitlab.com": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAfuCHKVTjquxvt6CM6tdG4SLp1Btn/nOeHHE5UOzRdf",
    "bitbucket.org": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIazEu89wgQZ4bqs3d63QSMzYVa0MuJ2e2gKTKqu+UUO",
}
CONNECT_SECONDS = 20


@dataclass(frozen=True)
class DeployKey:
    """A project's key pair: the private key in OpenSSH form, the public key as one authorized_keys line."""

    private_key: str
    public_key: str


def new_deploy_key(comment: str) -> DeployKey:
    """A fresh Ed25519 key pair."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return DeployKey(private, f"{public.decode()} {comment}")


class ParamikoVendor(SSHVendor):  # type: ignore[misc]
    """dulwich's SSH vendor on paramiko: public-key authentication, the host key checked, and (``checked``) only
    addresses chalicelib.outbound allows, connected to the address checked."""

    def __init__(self, access: SshAccess, checked: bool) -> None:
        self._access = access
        self._checked = checked

    def run_command(  # type: ignore[override]  # a paramiko channel, not a subprocess
        self,
        host: str,
        command: bytes,
        username: str | None = None,
        port: int | None = None,
        password: str | None = None,
        key_filename: str | None = None,
        ssh_command: str | None = None,
        protocol_version: int | None = None,
    ) -> Any:
        """Open a session on ``host`` running ``command`` (git-upload-pack and its path), with the deploy key only."""
        port = port or 22
        address = outbound.resolve(host, port) if self._checked else host
        sock = socket.create_connection((address, port), timeout=CONNECT_SECONDS)
        transport = paramiko.Transport(sock)
        try:
            transport.start_client(timeout=CONNECT_SECONDS)
            self._check_host_key(host, transport.get_remote_server_key())
            key = paramiko.Ed25519Key.from_private_key(io.StringIO(self._access.private_key))
            transport.auth_publickey(username or "git", key)
            channel = transport.open_session()
            channel.exec_command(command.decode() if isinstance(command, bytes) else str(command))
        except Exception:
            transport.close()
            raise
        return _Channel(transport, channel)

    def _check_host_key(self, host: str, key: paramiko.PKey) -> None:
        offered = f"{key.get_name()} {key.get_base64()}"
        expected = PUBLISHED_HOST_KEYS.get(host.lower()) or self._access.host_key
        if expected is None and self._access.seen is not None:
            self._access.seen(offered)  # the first fetch of the project: this key is the one from now on
            return
        if expected is None or _key_of(expected) != _key_of(offered):
            raise HostKeyRefused(
                f"The host key of {host} is not the one expected: refused (it changed, or someone is in between)."
            )


def _key_of(line: str) -> tuple[str, bytes]:
    kind, _, data = line.strip().partition(" ")
    return kind, base64.b64decode(data.split()[0]) if data else b""


class _Channel:
    """What dulwich reads and writes a remote command through."""

    def __init__(self, transport: paramiko.Transport, channel: paramiko.Channel) -> None:
        self._transport = transport
        self._channel = channel
        channel.setblocking(True)

    def can_read(self) -> bool:
        return bool(self._channel.recv_ready())

    def write(self, data: bytes) -> None:
        self._channel.sendall(data)

    def read(self, n: int | None = None) -> bytes:
        return receive(self._channel, n)

    def close(self) -> None:
        try:
            self._channel.close()
        except (EOFError, OSError, paramiko.SSHException):
            pass  # the server hung up first, as it may once it has sent everything
        finally:
            self._transport.close()


def receive(channel: paramiko.Channel, n: int | None) -> bytes:
    """``n`` bytes from the channel, fewer only at its end (git's pkt-lines are read by length); with no ``n``,
    what is there."""
    wanted = n or 32768
    data = b""
    while len(data) < wanted:
        chunk = channel.recv(wanted - len(data))
        if not chunk:
            break
        data += chunk
        if n is None:
            break
    return data
