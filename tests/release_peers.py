"""Stand-ins on loopback for the release providers: GitHub's releases API (and its uploads host) and a NuGet feed.
Each records every request it gets and keeps what was published, answering as the real service does where the
providers depend on it (a draft is not found by its tag, an asset name is taken once, a version is pushed once)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
import threading
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.peers import ReceivedRequest

Answer = tuple[int, Any]  # status, JSON body (None: no body)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (a stopped upload) is expected: no traceback on the test's output."""
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class _Server:
    """An HTTP server on 127.0.0.1 in a daemon thread, recording requests and answering with ``answer``."""

    def __init__(self) -> None:
        self.requests: list[ReceivedRequest] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Any:
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: ReceivedRequest) -> Answer:
        raise NotImplementedError

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = ReceivedRequest(self.command, self.path, headers, body)
                server.requests.append(request)
                status, answer = server.answer(request)
                content = b"" if answer is None else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815

            def log_message(self, format: str, *args: object) -> None:
                """Requests are not logged: test output stays readable."""

        return Handler


@dataclass
class Release:
    """A release as the stand-in keeps it; ``assets`` by name: (id, content type, bytes)."""

    id: int
    tag_name: str
    name: str
    body: str | None
    draft: bool
    prerelease: bool
    target_commitish: str | None
    assets: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)


_RELEASES = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/releases(?P<rest>/.*)?$")
_UPLOADS = re.compile(r"^/uploads/repos/(?P<repo>[^/]+/[^/]+)/releases/(?P<id>\d+)/assets$")


class StandInGitHub(_Server):
    """GitHub's releases API for one token; uploads go to ``/uploads/...`` of ``upload_host`` (this server's own
    address unless a test names another)."""

    def __init__(self, token: str, upload_host: str = "127.0.0.1") -> None:
        super().__init__()
        self.token = token
        self.upload_host = upload_host
        self.releases: dict[str, list[Release]] = {}  # by "owner/repo"
        self._ids = itertools.count(1)

    def release(self, repository: str, tag: str) -> Release:
        """The one release of ``tag`` (drafts included)."""
        (found,) = [release for release in self.releases.get(repository, []) if release.tag_name == tag]
        return found

    def add_release(
        self, repository: str, tag: str, assets: dict[str, bytes] | None = None, draft: bool = False
    ) -> Release:
        """A release made before the deployment, with assets by name."""
        release = Release(next(self._ids), tag, tag, None, draft, False, None)
        for name, content in (assets or {}).items():
            release.assets[name] = (next(self._ids), "application/octet-stream", content)
        self.releases.setdefault(repository, []).append(release)
        return release

    def answer(self, request: ReceivedRequest) -> Answer:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return 401, {"message": "Bad credentials"}
        target = urlsplit(request.path)
        if uploading := _UPLOADS.match(target.path):
            name = parse_qs(target.query)["name"][0]
            return self._upload(uploading["repo"], int(uploading["id"]), name, request)
        found = _RELEASES.match(target.path)
        if not found:
            return 404, {"message": "Not Found"}
        repository, rest = found["repo"], found["rest"] or ""
        releases = self.releases.setdefault(repository, [])
        if request.method == "GET" and rest.startswith("/tags/"):
            tag = unquote(rest.removeprefix("/tags/"))
            published = [release for release in releases if release.tag_name == tag and not release.draft]
            return (200, self._json(repository, published[0])) if published else (404, {"message": "Not Found"})
        if request.method == "GET" and rest == "":
            return 200, [self._json(repository, release) for release in releases]
        if request.method == "POST" and rest == "":
            return self._create(repository, request.json)
        if request.method == "PATCH" and (by_id := self._by_id(releases, rest.removeprefix("/"))):
            for key in ("name", "body", "draft", "prerelease"):
                if key in request.json:
                    setattr(by_id, key, request.json[key])
            return 200, self._json(repository, by_id)
        if request.method == "DELETE" and rest.startswith("/assets/"):
            asset_id = int(rest.removeprefix("/assets/"))
            for release in releases:
                for name, (kept_id, _, _) in list(release.assets.items()):
                    if kept_id == asset_id:
                        del release.assets[name]
                        return 204, None
        return 404, {"message": "Not Found"}

    def _create(self, repository: str, fields: dict[str, Any]) -> Answer:
        releases = self.releases[repository]
        if any(release.tag_name == fields["tag_name"] and not release.draft for release in releases):
            return 422, {"message": "Validation Failed", "errors": [{"field": "tag_name", "code": "already_exists"}]}
        release = Release(
            next(self._ids),
            fields["tag_name"],
            fields.get("name") or fields["tag_name"],
            fields.get("body"),
            bool(fields.get("draft")),
            bool(fields.get("prerelease")),
            fields.get("target_commitish"),
        )
        releases.append(release)
        return 201, self._json(repository, release)

    def _upload(self, repository: str, release_id: int, name: str, request: ReceivedRequest) -> Answer:
        release = self._by_id(self.releases.get(repository, []), str(release_id))
        if release is None:
            return 404, {"message": "Not Found"}
        if name in release.assets:
            return 422, {"message": "Validation Failed", "errors": [{"field": "name", "code": "already_exists"}]}
        release.assets[name] = (next(self._ids), request.headers.get("content-type", ""), request.body)
        return 201, {"id": release.assets[name][0], "name": name, "size": len(request.body)}

    @staticmethod
    def _by_id(releases: list[Release], release_id: str) -> Release | None:
        return next((release for release in releases if str(release.id) == release_id), None)

    def _json(self, repository: str, release: Release) -> dict[str, Any]:
        port = urlsplit(self.url).port
        return {
            "id": release.id,
            "tag_name": release.tag_name,
            "name": release.name,
            "body": release.body,
            "draft": release.draft,
            "prerelease": release.prerelease,
            "upload_url": f"http://{self.upload_host}:{port}/uploads/repos/{repository}/releases/{release.id}/assets"
            "{?name,label}",
            "assets": [{"id": asset_id, "name": name} for name, (asset_id, _, _) in release.assets.items()],
        }


@dataclass(frozen=True)
class Push:
    """One package a feed took: where, with which key, the file part's bytes."""

    path: str
    api_key: str | None
    content: bytes


class StandInNuGetFeed(_Server):
    """A NuGet feed taking pushes with ``api_key`` at /api/v2/package and /api/v2/symbolpackage; its v3 service index
    is /v3/index.json, naming them on ``publish_host`` (this server's own address unless a test names another). The
    same package bytes pushed twice to one place: 409, as a version already there."""

    def __init__(self, api_key: str, publish_host: str = "127.0.0.1") -> None:
        super().__init__()
        self.api_key = api_key
        self.publish_host = publish_host
        self.pushes: list[Push] = []

    def answer(self, request: ReceivedRequest) -> Answer:
        if request.method == "GET" and request.path == "/v3/index.json":
            publish = f"http://{self.publish_host}:{urlsplit(self.url).port}"
            resources = [
                {"@id": f"{self.url}/api/v3/query", "@type": "SearchQueryService"},
                {"@id": f"{publish}/api/v2/package", "@type": "PackagePublish/2.0.0"},
                {"@id": f"{publish}/api/v2/symbolpackage", "@type": "SymbolPackagePublish/4.9.0"},
            ]
            return 200, {"version": "3.0.0", "resources": resources}
        if request.method != "PUT" or request.path not in ("/api/v2/package", "/api/v2/symbolpackage"):
            return 404, None
        if request.headers.get("x-nuget-apikey") != self.api_key:
            return 403, None
        content = package_of(request)
        digest = hashlib.sha256(content).digest()
        if any(push.path == request.path and hashlib.sha256(push.content).digest() == digest for push in self.pushes):
            return 409, None
        self.pushes.append(Push(request.path, request.headers.get("x-nuget-apikey"), content))
        return 201, None


def package_of(request: ReceivedRequest) -> bytes:
    """The file part of a multipart/form-data push."""
    head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    (part,) = [part for part in message.iter_parts() if part.get_filename()]
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload
