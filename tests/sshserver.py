"""A git server over SSH on loopback, paramiko and dulwich alone: it serves `git-upload-pack` of every repository
under a root to clients whose public key it was given, with a host key of its own."""

from __future__ import annotations

import io
import shlex
import socket
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

import paramiko
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dulwich.protocol import Protocol
from dulwich.server import UploadPackHandler

from chalicelib.scm.ssh import receive
from tests.gitserver import _RepositoriesUnder


class _Login(paramiko.ServerInterface):
    def __init__(self, server: GitSshServer) -> None:
        self.server = server
        self.command: bytes | None = None
        self.ready = threading.Event()

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        offered = f"{key.get_name()} {key.get_base64()}"
        if any(offered == " ".join(line.split()[:2]) for line in self.server.authorized_keys):
            return paramiko.AUTH_SUCCESSFUL
        return paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return paramiko.OPEN_SUCCEEDED if kind == "session" else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_exec_request(self, channel: Any, command: bytes) -> bool:
        self.command = command
        self.ready.set()
        return True


class GitSshServer:
    """Serves every repository under `root` over SSH at 127.0.0.1 on a free port; `authorized_keys` lists the
    public keys (authorized_keys lines) it accepts, `host_key` is its own."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.authorized_keys: list[str] = []
        self.commands: list[str] = []  # the command of every session, as the client sent it
        self._key = paramiko.Ed25519Key.from_private_key(io.StringIO(_new_private_key()))
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None

    @property
    def host_key_line(self) -> str:
        """The server's host key as known_hosts has it, without the host: "type base64"."""
        return f"{self._key.get_name()} {self._key.get_base64()}"

    def url_of(self, name: str) -> str:
        """The ssh:// clone URL of the repository `name` (its path under the root)."""
        assert self._listener is not None
        return f"ssh://git@127.0.0.1:{self._listener.getsockname()[1]}/{name}"

    def start(self) -> GitSshServer:
        import io

        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
        self._key = paramiko.Ed25519Key.from_private_key(io.StringIO(pem.decode()))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._accept, name="git-ssh-server", daemon=True)
        self._thread.start()
        return self

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        transport = paramiko.Transport(connection)
        transport.add_server_key(self._key)
        login = _Login(self)
        try:
            transport.start_server(server=login)
            channel = transport.accept(20)
            if channel is None or not login.ready.wait(20) or login.command is None:
                return
            command = login.command.decode()
            self.commands.append(command)
            program, path = shlex.split(command)
            if program != "git-upload-pack":
                channel.send_exit_status(1)
                return
            backend = _RepositoriesUnder(self.root)
            proto = Protocol(lambda n=None: receive(channel, n), channel.sendall)
            UploadPackHandler(backend, [path], proto).handle()
            channel.send_exit_status(0)
            channel.close()
        except (paramiko.SSHException, OSError, EOFError):
            pass
        finally:
            transport.close()

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        self._listener = None

    def __enter__(self) -> GitSshServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def _new_private_key() -> str:
    return (
        Ed25519PrivateKey.generate()
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
        .decode()
    )
