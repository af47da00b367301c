"""A stand-in forge on loopback: git over smart HTTP behind Basic auth (tests/gitserver.py), and each forge's
commit-status API, which records what it is sent and answers as a test tells it (201, a 500, or never)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from tests.gitserver import GitServer

# where each forge's API is on its server, as chalicelib/scm/forges/ reach it
API_PREFIXES = ("/api/v3/", "/api/v4/", "/api/2.0/", "/rest/api/latest/", "/api/v1/")


@dataclass(frozen=True)
class StatusPost:
    """One request the forge's API received."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    json: Any


class StandInForge(GitServer):
    """Serves the repositories under ``root`` to ``credentials`` only, and records status posts in ``posts``."""

    def __init__(self, root: Any, credentials: tuple[str, str] | None) -> None:
        super().__init__(root, credentials)
        self.posts: list[StatusPost] = []
        self.answer = 201  # what the API answers; 0: it never answers (until the forge stops)
        self.answer_headers: dict[str, str] = {}
        self._stopping = threading.Event()

    def _guarded(self, app: Any) -> Any:
        git = super()._guarded(app)

        def serve(environ: dict[str, Any], start_response: Any) -> Any:
            path = environ.get("PATH_INFO", "")
            if not path.startswith(API_PREFIXES):
                return git(environ, start_response)
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length else b""
            headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key[:5] == "HTTP_"}
            headers["content-type"] = environ.get("CONTENT_TYPE", "")
            raw_path = environ.get("RAW_URI", path).split("?")[0]
            post = StatusPost(environ["REQUEST_METHOD"], raw_path, headers, json.loads(body or b"null"))
            before = [earlier.json for earlier in self.posts if earlier.path == raw_path]
            self.posts.append(post)
            if self.answer == 0:
                self._stopping.wait(60)
            if raw_path.startswith("/api/v4/") and before and before[-1].get("state") == post.json.get("state"):
                # GitLab refuses a state the commit has already, as GitLab does
                start_response("400 Bad Request", [("Content-Type", "application/json")])
                return [b'{"message": "Cannot transition status via :run from :running"}']
            status = self.answer or 504
            start_response(f"{status} Stand-in", [("Content-Type", "application/json"), *self.answer_headers.items()])
            return [json.dumps({"id": len(self.posts)}).encode()]

        return serve

    def stop(self) -> None:
        self._stopping.set()
        super().stop()

    def states(self, path: str) -> list[str]:
        """The states posted to ``path``, in order, as each forge names the field."""
        return [str(post.json.get("state")) for post in self.posts if post.path == path]
