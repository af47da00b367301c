"""The service's side of the job protocol for ``conveyor exec``, in its own process, on 127.0.0.1: no stack, no AWS
emulator, nothing stored but what a job hands over.

It answers what a runner calls (runner/protocol.py ``JobClient``): the spec, heartbeats (a cancel after Ctrl-C),
the log, messages, tests and test result files, artifacts, ``UpdateBuild``, the finish; with ``--cache``, the build
cache. Each call needs the job's own token, made anew for each run: another process of this machine, which can see
the port, can do nothing with it. Uploads and downloads go to URLs holding a secret of their own, as presigned URLs
do. The source is served over git's smart HTTP at a secret path (the runner fetches it as any repository).

The job's scripts never reach this server: they run in a container, whose network has no way to this machine's
loopback; the runner, in its sandbox beside it, forwards what they report through the Build Worker API.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any, BinaryIO
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from dulwich.repo import MemoryRepo
from dulwich.server import BackendRepo, DictBackend
from dulwich.web import make_wsgi_chain

from chalicelib.domain.testing import result_files
from chalicelib.errors import Invalid
from chalicelib.local.exec import folders
from chalicelib.local.exec.jobs import ExecJob

Json = dict[str, Any]
StartResponse = Callable[..., Any]
MAX_BODY_BYTES = 8 * 1024 * 1024  # a log chunk (1 MiB), a result file (5 MiB), a finish with its tail
_JOB_PATH = re.compile(r"/api/runner/jobs/([^/]+)(/.*)?")
_RESULTS_PATH = re.compile(r"/api/testresults/([^/]+)/([^/]+)")
_CACHE_ENTRY = re.compile(r"[0-9a-f]{16}")
_BLOCK = 1024 * 1024


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Requests are not logged: the console shows the jobs' logs."""


class LocalService:
    """The job protocol for exec's jobs, from ``with`` to its end; ``source_url`` is the snapshot's repository."""

    def __init__(self, repository: MemoryRepo, state: folders.StateFolders, cache: bool = False) -> None:
        self._jobs: dict[str, ExecJob] = {}
        self._uploads: dict[str, Callable[[Any, int], None]] = {}  # secret -> where an upload's body goes
        self._downloads: dict[str, Path] = {}
        self._state, self._cache = state, cache
        repository_secret = secrets.token_urlsafe(24)
        served: dict[str, BackendRepo] = {f"/{repository_secret}": repository}  # type: ignore[dict-item]
        self._git = make_wsgi_chain(DictBackend(served))
        self._server = make_server(
            "127.0.0.1", 0, self._app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
        )
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.source_url = f"{self.url}/git/{repository_secret}"

    def __enter__(self) -> LocalService:
        threading.Thread(target=self._server.serve_forever, args=(0.05,), name="exec-service", daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add(self, job: ExecJob) -> None:
        """Answer this job's runner from now on."""
        self._jobs[job.spec["jobId"]] = job

    def _app(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path, method = str(environ.get("PATH_INFO") or "/"), str(environ.get("REQUEST_METHOD") or "GET")
        if path.startswith("/git/"):
            environ["PATH_INFO"] = path.removeprefix("/git")
            answer: Iterable[bytes] = self._git(environ, start_response)
            return answer
        if method == "GET" and path.startswith("/downloads/"):
            archive = self._downloads.get(path.removeprefix("/downloads/"))
            opened = folders.open_regular(archive) if archive is not None else None
            if opened is None:
                start_response("404 Not Found", [("Content-Length", "0")])
                return [b""]
            start_response("200 OK", [("Content-Type", "application/gzip"),
                                      ("Content-Length", str(os.fstat(opened.fileno()).st_size))])  # fmt: skip
            return _blocks(opened)
        try:
            status, body = self._answer(method, path, environ)
        except _Refused as refused:
            status, body = refused.status, {"message": str(refused)}
        except Invalid as error:
            status, body = 400, {"message": error.message}
        except ValueError as error:  # a body that is not the JSON asked for
            status, body = 400, {"message": f"The body could not be read: {error}"}
        data = json.dumps(body).encode()
        start_response(f"{status} {'OK' if status < 300 else 'Refused'}", [
            ("Content-Type", "application/json"), ("Content-Length", str(len(data)))])  # fmt: skip
        return [data]

    def _answer(self, method: str, path: str, environ: dict[str, Any]) -> tuple[int, Any]:
        if method == "PUT" and path.startswith("/uploads/"):
            receive = self._uploads.pop(path.removeprefix("/uploads/"), None)
            if receive is None:
                raise _Refused(403, "This upload URL is not known, or was used already.")
            receive(environ["wsgi.input"], int(environ.get("CONTENT_LENGTH") or 0))
            return 200, {}
        results = _RESULTS_PATH.fullmatch(path)
        if results is not None and method == "POST":
            job = self._job(results.group(2), environ)
            data = result_files.uploaded_file(_body(environ), str(environ.get("CONTENT_TYPE") or ""))
            tests = result_files.parse(results.group(1), data)
            job.add_tests(tests, update=False)
            passed = sum(test["outcome"] == "Passed" for test in tests)
            failed = sum(test["outcome"] == "Failed" for test in tests)
            return 200, {"testsCount": len(tests), "passedTestsCount": passed, "failedTestsCount": failed}
        matched = _JOB_PATH.fullmatch(path)
        if matched is None:
            raise _Refused(404, f"{method} {path} is not an operation of the job protocol.")
        job = self._job(matched.group(1), environ)
        return 200, self._job_call(job, method, matched.group(2) or "", environ)

    def _job(self, job_id: str, environ: dict[str, Any]) -> ExecJob:
        job = self._jobs.get(job_id)
        if job is None or not job.holds(str(environ.get("HTTP_AUTHORIZATION") or "")):
            raise _Refused(401, "This job's token is needed, and the job must be running.")
        return job

    def _job_call(self, job: ExecJob, method: str, route: str, environ: dict[str, Any]) -> Any:
        if (method, route) == ("GET", ""):
            return job.spec
        if (method, route) == ("POST", "/heartbeat"):
            return {"status": "cancelling" if job.cancelling else "running"}
        if method == "PUT" and route.startswith("/log/"):
            job.put_log(int(route.removeprefix("/log/")), _body(environ))
            return {}
        fields = json.loads(_body(environ) or b"{}")
        if (method, route) == ("POST", "/finish"):
            job.finish(fields)
            return {}
        if (method, route) == ("POST", "/messages"):
            job.add_messages([dict(message) for message in fields.get("messages") or []])
            return {}
        if route == "/tests" and method in ("POST", "PUT"):
            job.add_tests([dict(test) for test in fields.get("tests") or []], update=method == "PUT")
            return {}
        if (method, route) == ("POST", "/quarantine"):
            return {"quarantined": []}  # no project here keeps a quarantine
        if (method, route) == ("PUT", "/build"):
            job.version = str(fields.get("version") or "")
            job.console.say(f"UpdateBuild: the build's version is now {job.version}", job.prefix)
            return {}
        if (method, route) == ("POST", "/artifacts"):
            target = self._state.artifact_path(job, str(fields.get("fileName") or ""))
            return self._upload_to(lambda body, size: folders.receive(body, size, target))
        if route.startswith("/cache/") and not self._cache:
            raise _Refused(403, "The build cache is off (conveyor exec --cache turns it on).")
        if (method, route) == ("POST", "/cache/entries"):
            return {"entries": {entry: self._cache_entry(job, entry) for entry in _entries(fields.get("ids"))},
                    "save": True}  # fmt: skip
        if (method, route) == ("POST", "/cache/uploads"):
            (entry,) = _entries([fields.get("id")])
            archive, metadata = self._state.cache_paths(job, entry)
            described = json.dumps({str(k): str(v) for k, v in dict(fields.get("metadata") or {}).items()})

            def store(body: Any, size: int) -> None:
                folders.receive(body, size, archive)
                folders.write_new(metadata, described.encode())

            return self._upload_to(store)
        if (method, route) == ("POST", "/cache/prune"):
            return {"deleted": self._state.prune_cache(job, _entries(fields.get("keep") or []))}
        raise _Refused(404, f"{method} {route or '/'} is not an operation of the job protocol.")

    def _upload_to(self, receive: Callable[[Any, int], None]) -> Json:
        secret = secrets.token_urlsafe(24)
        self._uploads[secret] = receive
        return {"url": f"{self.url}/uploads/{secret}", "headers": {}}

    def _cache_entry(self, job: ExecJob, entry: str) -> Json | None:
        archive, metadata = self._state.cache_paths(job, entry)
        if archive.is_symlink() or not archive.is_file():  # checked again, without following a link, when fetched
            return None
        opened = folders.open_regular(metadata)  # never a host file a link there names
        if opened is None:
            return None
        with opened:
            described = json.loads(opened.read())
        secret = secrets.token_urlsafe(24)
        self._downloads[secret] = archive
        return {"metadata": described, "downloadUrl": f"{self.url}/downloads/{secret}"}


def _blocks(file: BinaryIO) -> Iterator[bytes]:
    with file:
        while block := file.read(_BLOCK):
            yield block


def _entries(ids: Any) -> list[str]:
    if (
        not isinstance(ids, list)
        or len(ids) > 100
        or not all(isinstance(e, str) and _CACHE_ENTRY.fullmatch(e) for e in ids)
    ):
        raise Invalid("Cache entries are named by up to 100 ids of 16 hexadecimal digits.")
    return ids


def _body(environ: dict[str, Any]) -> bytes:
    size = int(environ.get("CONTENT_LENGTH") or 0)
    if size > MAX_BODY_BYTES:
        raise _Refused(413, f"A body is at most {MAX_BODY_BYTES:,} bytes here.")
    data: bytes = environ["wsgi.input"].read(size) if size else b""
    return data
