"""HTTP requests of the release providers (GitHub, NuGet): calls through the outbound guard, and uploads streamed
from the data bucket, which a stop interrupts between blocks. Failures become DeployFailed naming no secret."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import requests

from chalicelib import outbound
from chalicelib.deploy.base import DeployFailed
from chalicelib.outbound import http, shown

CALL_TIMEOUT_SECONDS = 30.0
# An upload's answer may wait while the receiver checks what it got (nuget.org validates a package first).
UPLOAD_TIMEOUT = (10.0, 300.0)  # connect, then read
BLOCK_BYTES = 64 * 1024


class StreamedBody:
    """A request body of known length made of bytes and one open stream, read in blocks; each read first asks
    ``stop_if_asked``, so a stopped deployment ends mid-file."""

    def __init__(self, parts: list[bytes | BinaryIO], length: int, stop_if_asked: Callable[[], None]) -> None:
        self._parts = list(parts)
        self._length = length
        self._stop_if_asked = stop_if_asked

    def __len__(self) -> int:
        return self._length  # requests sends it as Content-Length rather than chunking the body

    def __iter__(self) -> Iterator[bytes]:
        while block := self.read(BLOCK_BYTES):
            yield block

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (a block when negative); empty at the end."""
        self._stop_if_asked()
        size = size if size > 0 else BLOCK_BYTES
        while self._parts:
            part = self._parts[0]
            if isinstance(part, bytes):
                block, rest = part[:size], part[size:]
                self._parts[0] = rest
            else:
                block = part.read(size)
            if block:
                return block
            self._parts.pop(0)
        return b""


def call(method: str, url: str, who: str, *, headers: dict[str, str], data: bytes | None = None) -> requests.Response:
    """One request, redirects followed and checked (Authorization is never sent on to another host); DeployFailed
    when it gets no answer. The caller reads, then closes, the response."""
    with _answered(url, who, CALL_TIMEOUT_SECONDS):
        return http.request(method, url, data=data, headers=headers, timeout=CALL_TIMEOUT_SECONDS)


def upload(method: str, url: str, who: str, *, headers: dict[str, str], body: StreamedBody) -> requests.Response:
    """Send ``body`` once, through the guard, following no redirect (a stream cannot be sent twice, and a redirect
    would carry the credential elsewhere); DeployFailed when it gets no answer."""
    with _answered(url, who, UPLOAD_TIMEOUT[1]), http.session() as session:
        return _sent(session.request(method, url, data=body, headers=headers, timeout=UPLOAD_TIMEOUT))


@contextlib.contextmanager
def _answered(url: str, who: str, timeout_seconds: float) -> Iterator[None]:
    """A request that gets no answer raised as DeployFailed, saying why."""
    try:
        yield
    except outbound.Refused as error:
        raise DeployFailed(f"{who} was not called at {shown(url)}: {error}") from None
    except requests.Timeout:
        raise DeployFailed(f"{who} did not answer within {timeout_seconds:g} s at {shown(url)}.") from None
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, UnicodeError, ValueError):
        raise DeployFailed(f"{who} cannot be called at {shown(url)}: its URL or a credential is invalid.") from None
    except requests.RequestException:  # no details: they would describe the network the service runs in
        raise DeployFailed(f"{who} is unreachable at {shown(url)}.") from None


def _sent(response: requests.Response) -> requests.Response:
    response.content  # noqa: B018 (read while the session is open: the answer is small JSON or text)
    return response


def json_of(response: requests.Response) -> Any:
    """The answer's JSON, or None when it has none."""
    try:
        return response.json()
    except ValueError:
        return None
