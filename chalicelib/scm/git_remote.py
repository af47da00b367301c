"""A repository's remote end over http(s)://, git://, ssh:// (scm/ssh.py) or a local path, as dulwich reaches it."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse, urlsplit, urlunsplit

from dulwich.client import (
    FetchPackResult,
    GitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    SSHGitClient,
    get_transport_and_path,
)
from dulwich.errors import NotGitRepository
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import BaseRepo
from urllib3 import exceptions as http_errors

from chalicelib import outbound
from chalicelib.scm import transport
from chalicelib.scm.transport import HostKeyRefused, SshAccess

_SCHEMES = {"http", "https", "git", "ssh", "file"}
_CONVEYOR_FOLDER = Path(__file__).resolve().parents[2]  # where a local stack's user may keep repositories
Credentials = tuple[str, str] | None  # a user name and a password (a token, usually), for HTTP(S) remotes


class SourceError(Exception):
    """The repository cannot be read (unreachable, not a git repository, protocol error); str() is for the user."""


@dataclass(frozen=True)
class Remote:
    """One repository's remote end, as dulwich reaches it."""

    client: GitClient
    path: str

    def fetch_ref(
        self, repo: BaseRepo, ref: str, depth: int | None, listed: Sequence[str], blobs: bool = True
    ) -> FetchPackResult:
        """Fetch the head of `ref` (nothing when there is no such ref), listing only the refs `listed` start.

        Without `blobs`, file contents stay behind where the server can filter them (protocol v2 partial clone, as
        GitHub, GitLab and git itself serve): commits and trees only. Other servers send them all the same.
        """

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            head = refs.get(Ref(ref.encode()))
            return [head] if head else []

        return self.client.fetch(
            self.path,
            repo,
            determine_wants=wants,
            depth=depth,
            ref_prefix=[name.encode() for name in listed],
            filter_spec=None if blobs else b"blob:none",
        )

    def fetch_object(self, repo: BaseRepo, object_id: ObjectID) -> None:
        """Fetch one object a filtered fetch left behind: protocol v2 servers give any object by its id."""
        self.client.fetch(
            self.path, repo, determine_wants=lambda refs, depth=None: [object_id], depth=1, ref_prefix=[b"HEAD"]
        )


@contextmanager
def connect(
    url: str, timeout: float, checked: bool = False, credentials: Credentials = None, ssh: SshAccess | None = None
) -> Iterator[Remote]:
    """Fetching from `url`: whatever reading it raises becomes one SourceError; its connections close after.

    ``checked``: the service fetches for a user, from its own network: only addresses chalicelib.outbound allows.
    A runner fetches unchecked: it runs in the build's sandbox, which reaches what the build reaches anyway.
    """
    scheme = urlsplit(url).scheme
    if scheme not in _SCHEMES and not (scheme == "" and url.startswith("/")):
        raise SourceError(
            f"Cannot read the repository {public_url(url)}: "
            "only http(s)://, git://, ssh:// and local repositories are supported."
        )
    manager = transport.http_manager(public_url(url), timeout, checked) if scheme in ("http", "https") else None
    if scheme == "git" and checked:
        try:
            url = transport.pinned_git_url(url)
        except outbound.Refused as error:
            raise SourceError(f"Cannot read the repository {public_url(url)}: {error}") from None
    client: GitClient
    if scheme == "ssh":
        if ssh is None:
            raise SourceError(f"Cannot read the repository {public_url(url)}: ssh:// needs the project's deploy key.")
        from chalicelib.scm.ssh import ParamikoVendor  # paramiko loads only where a fetch goes over SSH

        parsed = urlparse(url)
        client, path = SSHGitClient.from_parsedurl(parsed, vendor=ParamikoVendor(ssh, checked)), parsed.path
    else:
        username, password = credentials or (None, None)
        # given apart from the URL: dulwich sends them as Basic auth to the URL's origin only, never to a redirect's
        client, path = get_transport_and_path(url, pool_manager=manager, username=username, password=password)
    try:
        yield Remote(client, path)
    except SourceError:
        raise
    except Exception as error:
        # dulwich reports a failed read with many exception types (its own, urllib3's, OSError, ValueError from a
        # server that is not a git server): each is the user's "cannot read", with the reason they can act on
        raise SourceError(f"Cannot read the repository {public_url(url)}: {_reason(error, url, timeout)}.") from error
    finally:
        if manager is not None:
            manager.clear()


def _unseen(url: str) -> str | None:
    """Why a local repository cannot be read where it is named, when nothing there can be read at all: a build's
    sandbox (runner/sandbox.py) empties /tmp, /var/tmp, /dev/shm and the home folder and runs as nobody, so a
    repository the user made there is not where the build looks."""
    parsed = urlsplit(url)
    if parsed.scheme not in ("", "file"):
        return None
    path = unquote(parsed.path)
    if os.access(path, os.R_OK | os.X_OK):
        return None
    return (
        f"nothing at {path} can be read from here: a build runs in a sandbox, as the user nobody, which does not "
        "see /tmp, /var/tmp, /dev/shm or home folders; put the repository in a folder every user may read outside "
        f"those, such as out/ inside the Conveyor folder ({_CONVEYOR_FOLDER / 'out'}, ignored by git)"
    )


def _reason(error: Exception, url: str, timeout: float) -> str:
    chain = _causes(error)
    refusal = next((e for e in chain if isinstance(e, outbound.Refused | HostKeyRefused)), None)
    if refusal is not None:
        return str(refusal).rstrip(".")
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if any(isinstance(e, http_errors.NameResolutionError | socket.gaierror) for e in chain):
        return "host not found"
    if any(_timed_out(e) for e in chain):
        return f"no answer within {timeout:g} seconds"
    if isinstance(error, NotGitRepository):
        return _unseen(url) or "not found, or not a git repository"
    if isinstance(error, HTTPUnauthorized | HTTPProxyUnauthorized):
        return "authentication failed"
    status = re.search(r"unexpected http resp (\d+)", str(error))
    if status:
        return f"the server answered HTTP {status.group(1)}"
    if isinstance(error, ValueError | AssertionError | KeyError):
        return "the server did not answer as a git repository"
    detail = _scrub(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__, url)
    return detail[:200].rstrip(".")


def _causes(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        reason = getattr(current, "reason", None)  # urllib3's MaxRetryError keeps the error it gave up on here
        current = reason if isinstance(reason, BaseException) else current.__cause__ or current.__context__
    return chain


def _timed_out(error: BaseException) -> bool:
    if isinstance(error, http_errors.NewConnectionError):  # a subclass of ConnectTimeoutError, whatever its cause
        return False
    return isinstance(error, TimeoutError | http_errors.TimeoutError)


def public_url(url: str) -> str:
    """`url` without the credentials it may carry (https://user:token@host/...)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _scrub(text: str, url: str) -> str:
    """`text` without the URL's secret, in case an error message quotes it."""
    parts = urlsplit(url)
    secret = parts.password or parts.username  # a token may be given as the user: https://TOKEN@host/...
    for spelling in {secret, unquote(secret)} if secret else ():
        text = text.replace(spelling, "***")
    return text
