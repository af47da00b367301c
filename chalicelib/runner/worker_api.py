"""AppVeyor's Build Worker API, served by the runner on localhost for the job's scripts (``APPVEYOR_API_URL``).

Test reporters (mocha-appveyor-reporter, xunit's, Fixie's, minitest's) and the ``appveyor`` command post here; the
runner forwards what they report to the service through the job protocol. Clients join the base URL in several
ways, so any number of leading slashes is accepted. Field names are taken in either casing, categories and
outcomes in any case, durations as numbers or numeric strings: real clients send each of these.

Every job on a machine shares its loopback, so the URL carries a random path segment of its own
(``http://localhost:PORT/<secret>/``): another job's scripts, which can see the port, cannot report into this
job or set its variables. Clients that keep the URL's path (all but those that take only its host and port)
work unchanged.

``POST api/testresults/{format}/{jobId}`` takes a test results file (the body, or the multipart field ``file``), as
AppVeyor's own URL does, and forwards it as it came to the service with the job's token: no key in the build.

In a job's container (runner/container.py) it is served on a unix socket in the job's folder instead, which the
container's first process passes connections to from the container's own loopback: the container reaches the
runner through that socket and nothing else of this machine.
"""

from __future__ import annotations

import contextlib
import hmac
import inspect
import json
import logging
import os
import re
import secrets
import shutil
import socket
import socketserver
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from chalicelib.protocol.artifact_types import canonical_type
from chalicelib.runner import appveyor_cli
from chalicelib.runner import container as job_container
from chalicelib.runner.artifacts import Artifact, ArtifactRefused
from chalicelib.runner.beneath import Outside, Pinned, descriptor_path, opened, pin
from chalicelib.runner.protocol import ProtocolError

if TYPE_CHECKING:
    from chalicelib.runner.run import Run

log = logging.getLogger(__name__)
# The runner is outside the job's memory limit: what a job's scripts send it is bounded, and so is how much of it
# the runner holds at once.
MAX_BODY_BYTES = 1024 * 1024  # a JSON call: the service takes none bigger (protocol.MAX_JSON_BYTES)
MAX_RESULTS_BYTES = 5 * 1024 * 1024 + 64 * 1024  # a test results file: the service's own limit, with multipart headers
MAX_CONNECTIONS = 64  # open at once, each a thread (a parallel test run keeps one per worker); more get a 503
MAX_BODIES = 2  # requests read and handled at once; the others wait their turn
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
OUTCOMES = (
    "None",
    "Running",
    "Passed",
    "Failed",
    "Ignored",
    "Skipped",
    "Inconclusive",
    "NotFound",
    "Cancelled",
    "NotRunnable",
)
_OUTCOMES = {outcome.lower(): outcome for outcome in OUTCOMES}
_CATEGORIES = {"information": "information", "info": "information", "warning": "warning", "error": "error"}
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POLL_SECONDS = 0.05
ID_TOKEN_ROUTE = "api/id-token"  # below APPVEYOR_API_URL: a container job's ACTIONS_ID_TOKEN_REQUEST_URL


class BadRequest(Exception):
    """What a client sent cannot be used; the message says why."""


class WorkerApi:
    """The Build Worker API of one run, from ``with`` to its end; ``url`` and ``bin_folder`` go to the scripts."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._lock = threading.Lock()
        handler = _handler_for(self)
        self._secret = secrets.token_urlsafe(18)
        self._servers: list[socketserver.BaseServer] = []
        self.bodies = threading.BoundedSemaphore(MAX_BODIES)
        connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        if run.container is not None:
            self.bin_folder = run.container.work / job_container.BIN_FOLDER
            self._python = job_container.PYTHON
            socket_path = run.container.work / job_container.SOCKET_SUBFOLDER / job_container.SOCKET_NAME
            self._servers.append(_UnixServer(str(socket_path), handler))
            self.url = f"http://localhost:{job_container.API_PORT}/{self._secret}/"
        else:
            self.bin_folder = run.work / "bin"
            self._python = _python()
            first = _Ipv4Server(("127.0.0.1", 0), handler)
            self._servers.append(first)
            port = first.server_address[1]
            with contextlib.suppress(OSError):  # "localhost" may resolve to ::1 first (Node does so): answer there too
                self._servers.append(_Ipv6Server(("::1", port), handler))
            self.url = f"http://localhost:{port}/{self._secret}/"
        for server in self._servers:
            server.daemon_threads = True  # type: ignore[attr-defined]
            server.connections = connections  # type: ignore[attr-defined]

    def __enter__(self) -> WorkerApi:
        self.bin_folder.mkdir(exist_ok=True)
        command = self.bin_folder / "appveyor"
        # read through its loader: the runner may run from a zip (runner_package.py), where no file path works
        source = inspect.getsource(appveyor_cli)
        if os.name == "nt":  # cmd.exe runs no extensionless script: a .cmd launcher starts it (windows/launcher.py)
            from chalicelib.runner.windows.launcher import write_launcher

            write_launcher(self.bin_folder, self._python, source)
        else:
            # -I: the build's PYTHON* variables and user site do not change what the command does
            command.write_text(f"#!{self._python} -I\n{source}")
            command.chmod(0o755)
        for server in self._servers:
            # shutdown() waits for the loop's next look: a short poll keeps every job's end from waiting for it
            threading.Thread(target=server.serve_forever, args=(_POLL_SECONDS,), name="worker-api", daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()

    def upload_test_results(self, path: str, data: bytes, content_type: str) -> tuple[int, Any]:
        """``POST api/testresults/{format}/{jobId}``: the file forwarded to the service, for this job only."""
        parts = [part for part in path.split("?")[0].split("/") if part]
        if not self._own(path):
            return 403, {"message": "Use the whole APPVEYOR_API_URL, its path included: it is this job's own."}
        if len(parts) != 5 or parts[4] != self._run.spec["jobId"]:
            return 404, {"message": "Test results go to api/testresults/{format}/{jobId}, with this job's id."}
        try:
            answer = self._run.client.upload_test_results(parts[3], data, content_type or "application/xml")
        except ProtocolError as error:
            if error.status is not None and 400 <= error.status < 500:
                return error.status, {"message": str(error)}
            log.warning("worker API test results: %s", error)
            return 502, {"message": f"The service did not take it: {error}"}
        self._run.say(f"Test results ({parts[3]}): {answer.get('testsCount', 0)} tests.")
        return 200, answer

    def id_token_request(self, path: str, authorization: str) -> tuple[int, Any]:
        """``GET api/id-token?api-version=1&audience=AUD``: a container job's ``ACTIONS_ID_TOKEN_REQUEST_URL`` (the
        service's own is out of its network's reach), asked for with the job's request token as GitHub Actions'
        contract has it, and forwarded with it to the service: the same token, the same answer."""
        if not self._own(path):
            return 403, {"message": "Use the whole APPVEYOR_API_URL, its path included: it is this job's own."}
        token = self._request_token()
        scheme, _, given = authorization.partition(" ")
        if not token:
            return 404, {"message": "This job has no ID tokens: set id_token: true in appveyor.yml."}
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            return 401, {"message": "Send the job's ACTIONS_ID_TOKEN_REQUEST_TOKEN as a bearer token."}
        audience = parse_qs(urlsplit(path).query).get("audience", [""])[-1]
        try:
            value = self._run.client.id_token(token, audience)
        except ProtocolError as error:
            if error.status is not None and 400 <= error.status < 500:
                return error.status, {"message": str(error)}
            log.warning("worker API ID token: %s", error)
            return 502, {"message": f"The service did not answer: {error}"}
        self._run.log.add_secrets(value)
        return 200, {"value": value}

    def _request_token(self) -> str | None:
        """The job's ID token request token, when the service minted one (``idToken``, which appveyor.yml cannot
        set; the service's variables then replace any of the same name the yml set); else None."""
        if not self._run.spec.get("idToken"):
            return None
        return str(self._run.spec["variables"].get("ACTIONS_ID_TOKEN_REQUEST_TOKEN") or "") or None

    def _own(self, path: str) -> bool:
        parts = [part for part in path.split("?")[0].split("/") if part]
        return bool(parts) and hmac.compare_digest(parts[0], self._secret)

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """One request: (status, JSON answer)."""
        parts = [part for part in path.split("?")[0].split("/") if part]
        if not self._own(path):
            return 403, {"message": "Use the whole APPVEYOR_API_URL, its path included: it is this job's own."}
        route = "/".join(parts[1:]).lower()
        handler = _ROUTES.get((method, route))
        if handler is None:
            return 404, {"message": f"{method} /{route} is not an operation of the Build Worker API."}
        try:
            return 200, handler(self, body)
        except BadRequest as error:
            return 400, {"message": str(error)}
        except ProtocolError as error:
            if error.status is not None and 400 <= error.status < 500:  # the service refused what the script sent
                return error.status, {"message": str(error)}
            log.warning("worker API %s %s: %s", method, route, error)
            return 502, {"message": f"The service did not take it: {error}"}

    # The operations.

    def add_message(self, body: Any) -> None:
        self._run.client.add_messages([_message(_object(body), "message")])

    def add_compilation_message(self, body: Any) -> None:
        self._run.client.add_messages([_message(_object(body), "compilation")])

    def set_variable(self, body: Any) -> None:
        fields = _object(body)
        name, value = _text(fields, "name"), _text(fields, "value") or ""
        if not name or not _VARIABLE_NAME.fullmatch(name):
            raise BadRequest("A variable needs a name of letters, digits and underscores.")
        with self._lock:
            self._run.variables[name] = value  # the next scripts of the job see it

    def add_test(self, body: Any) -> None:
        self._run.client.add_tests([_test(_object(body))])

    def add_tests(self, body: Any) -> None:
        self._run.client.add_tests([_test(_object(item)) for item in _array(body)])

    def update_test(self, body: Any) -> None:
        self._run.client.add_tests([_test(_object(body), update=True)], update=True)

    @contextlib.contextmanager
    def _pushed_file(self, path_text: str) -> Iterator[Path]:
        """The file PushArtifact names, as a path to upload from: in a container's job, the descriptor of a file
        opened beneath the job's projects folder (runner/beneath.py), never its name again."""
        container = self._run.container
        if container is None:  # the scripts run beside the runner: they see what it sees
            path = Path(path_text) if Path(path_text).is_absolute() else self._run.folder / path_text
            if not path.is_file():
                raise BadRequest(f"{path_text} is not a file.")
            yield path
            return
        inside = PurePosixPath(container.inside(self._run.folder), path_text)
        projects = PurePosixPath(job_container.PROJECTS)
        if not inside.is_relative_to(projects) or ".." in inside.parts:
            raise BadRequest(f"{path_text} is not in the build folder: only its files can be pushed as artifacts.")
        relative = inside.relative_to(projects).as_posix()
        with (
            pin(container.work, container.work / job_container.PROJECTS_FOLDER) as root,
            opened(_open_pushed(root, relative, path_text)) as fd,
        ):
            yield descriptor_path(fd)

    def update_tests(self, body: Any) -> None:
        self._run.client.add_tests([_test(_object(item), update=True) for item in _array(body)], update=True)

    def push_artifact(self, body: Any) -> dict[str, Any]:
        fields = _object(body)
        path_text = _text(fields, "path")
        if not path_text:
            raise BadRequest("PushArtifact needs the path of a file.")
        with self._pushed_file(path_text) as path:
            file_name = (_text(fields, "fileName") or Path(path_text).name).replace("\\", "/").lstrip("/")
            if any(part in ("", ".", "..") for part in file_name.split("/")):
                raise BadRequest(f"{file_name!r} is not an artifact file name.")
            artifact_type = canonical_type(_text(fields, "type"), path_text, self._run.say)
            name = _text(fields, "name") or PurePosixPath(file_name).stem
            self._run.say(f"Uploading artifact {file_name} ({path.stat().st_size:,} bytes)")
            try:
                size = self._run.upload_artifact(file_name, path)
            except ArtifactRefused as error:
                self._run.say(str(error))
                raise BadRequest(str(error)) from error
        artifact = Artifact(file_name, name, artifact_type, size, datetime.now(UTC))
        with self._lock:
            self._run.artifacts[:] = [a for a in self._run.artifacts if a.file_name != file_name] + [artifact]
        return {"fileName": file_name, "size": size}

    def finish_artifact(self, body: Any) -> None:
        """The second step of the documented upload flow; the runner uploaded already, so nothing is left."""

    def update_build(self, body: Any) -> None:
        fields = _object(body)
        version = _text(fields, "version")
        if version:
            self._run.client.update_build({"version": version})
            with self._lock:
                self._run.variables["APPVEYOR_BUILD_VERSION"] = version
        ignored = sorted(name for name in fields if name.lower() != "version" and fields[name] not in (None, ""))
        if ignored:
            self._run.say(f"UpdateBuild: only -Version is applied here; {', '.join(ignored)} left as they are.")

    def get_id_token(self, body: Any) -> dict[str, str]:
        """``appveyor GetIdToken -Audience AUD``: the job's ID token, masked in the log from now on. The request
        token is the spec's, sent to the service's own route: a script's SetVariable does not send it elsewhere."""
        audience = _text(_object(body), "audience") or ""
        token = self._request_token()
        if not token:
            raise BadRequest(
                "This job has no ID tokens: set id_token: true in appveyor.yml (a pull request's build gets none "
                "unless the project's settings allow it)."
            )
        value = self._run.client.id_token(token, audience)
        self._run.log.add_secrets(value)
        return {"value": value}

    def exit_build(self, body: Any) -> None:
        """``appveyor exit``: the job ends as a success once the command that called it ends (runner/job.py)."""
        self._run.exit_requested = True


def _open_pushed(root: Pinned, relative: str, path_text: str) -> int:
    """A descriptor of the pushed file, checked to be a file beneath the projects folder once opened."""
    try:
        return root.open_file(relative)
    except Outside as error:
        raise BadRequest(
            f"{path_text} leads out of the build folder: only its files can be pushed as artifacts."
        ) from error
    except OSError as error:  # missing, a folder, a pipe
        raise BadRequest(f"{path_text} is not a file.") from error


_ROUTES = {
    ("POST", "api/build/messages"): WorkerApi.add_message,
    ("POST", "api/build/compilationmessages"): WorkerApi.add_compilation_message,
    ("POST", "api/build/variables"): WorkerApi.set_variable,
    ("POST", "api/tests"): WorkerApi.add_test,
    ("POST", "api/tests/batch"): WorkerApi.add_tests,
    ("PUT", "api/tests"): WorkerApi.update_test,
    ("PUT", "api/tests/batch"): WorkerApi.update_tests,
    ("POST", "api/artifacts"): WorkerApi.push_artifact,
    ("PUT", "api/artifacts"): WorkerApi.finish_artifact,
    ("PUT", "api/build"): WorkerApi.update_build,
    ("POST", "api/build/exit"): WorkerApi.exit_build,
    ("POST", "api/build/idtoken"): WorkerApi.get_id_token,
}


# none on Windows, where no job has a container
_UNIX_STREAM_SERVER: Any = getattr(socketserver, "UnixStreamServer", object)


class _Bounded(socketserver.ThreadingMixIn):
    """A threading server that serves at most ``connections`` (a semaphore) at once, and turns the next away."""

    connections: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.connections.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(1)
                request.sendall(_BUSY)
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()


class _UnixServer(_Bounded, _UNIX_STREAM_SERVER):
    """HTTP on a unix socket: the Build Worker API of a job in a container (its first process forwards to it)."""

    def get_request(self) -> tuple[Any, Any]:
        connection, _ = self.socket.accept()
        return connection, ("container", 0)  # http.server logs a client's address as a pair

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-request (the container's forwarder passes the hang-up on) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Ipv4Server(_Bounded, ThreadingHTTPServer):
    pass


class _Ipv6Server(_Ipv4Server):
    address_family = socket.AF_INET6


def _handler_for(api: WorkerApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60  # a client that stops sending mid-request loses its connection, not a thread for ever

        def do_POST(self) -> None:  # noqa: N802 (http.server's names)
            self._serve("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._serve("PUT")

        def do_GET(self) -> None:  # noqa: N802
            self._serve("GET")

        def _serve(self, method: str) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            results = method == "POST" and _is_test_results(self.path)
            limit = MAX_RESULTS_BYTES if results else MAX_BODY_BYTES
            if not 0 <= length <= limit:
                # a results file that big is refused as the service refuses it, with a 400
                self._answer(400 if results else 413, {"message": f"A request may carry at most {limit:,} bytes."})
                self.close_connection = True
                return
            with api.bodies:
                raw = self.rfile.read(length) if length else b""
                if len(raw) < length:  # the client hung up mid-body: nothing to act on
                    self.close_connection = True
                    return
                self._serve_body(method, raw, results)

        def _serve_body(self, method: str, raw: bytes, results: bool) -> None:
            if method == "GET" and _is_id_token_request(self.path):
                self._answer(*api.id_token_request(self.path, self.headers.get("Authorization") or ""))
                return
            if results:
                self._answer(*api.upload_test_results(self.path, raw, self.headers.get("Content-Type") or ""))
                return
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError:
                self._answer(400, {"message": "The body is not JSON."})
                return
            self._answer(*api.handle(method, self.path, body))

        def _answer(self, status: int, payload: Any) -> None:
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status if data or status != 200 else 204)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            return

    return Handler


def _is_test_results(path: str) -> bool:
    parts = [part for part in path.split("?")[0].split("/") if part]
    return len(parts) >= 3 and parts[1].lower() == "api" and parts[2].lower() == "testresults"


def _is_id_token_request(path: str) -> bool:
    parts = [part for part in path.split("?")[0].split("/") if part]
    return [part.lower() for part in parts[1:]] == ID_TOKEN_ROUTE.split("/")


def _python() -> str:
    """An interpreter the scripts' user can start: the runner's own may not be one, as in the sandbox, where the
    runner's virtual environment links to a Python below a home folder that user cannot enter."""
    for candidate in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return "/usr/bin/python3"


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def _array(body: Any) -> list[Any]:
    if not isinstance(body, list):
        raise BadRequest("The body must be a JSON array.")
    return body


def _field(fields: dict[str, Any], *names: str) -> Any:
    """A field by any of its names, in any case (clients send ``StdOut``, ``stdOut`` and ``stdout``)."""
    lowered = {str(key).lower(): value for key, value in fields.items()}
    for name in names:
        if lowered.get(name.lower()) is not None:
            return lowered[name.lower()]
    return None


def _text(fields: dict[str, Any], *names: str) -> str | None:
    value = _field(fields, *names)
    return None if value is None else str(value)


def _message(fields: dict[str, Any], kind: str) -> dict[str, Any]:
    text = _text(fields, "message")
    if not text:
        raise BadRequest("A message needs its text (message).")
    category = _CATEGORIES.get((_text(fields, "category") or "information").lower())
    if category is None:
        raise BadRequest("A message's category is Information, Warning or Error.")
    message = {"kind": kind, "message": text, "category": category, "details": _text(fields, "details")}
    if kind == "compilation":
        for name in ("fileName", "line", "column", "projectName", "projectFileName"):
            message[name] = _text(fields, name)
    return message


def _test(fields: dict[str, Any], update: bool = False) -> dict[str, Any]:
    """A test as the service stores it; an update leaves out (None) what it does not change, the outcome too."""
    name = _text(fields, "testName", "name")
    if not name:
        raise BadRequest("A test needs its name (testName).")
    outcome_text = _text(fields, "outcome") or (None if update else "None")
    outcome = None if outcome_text is None else _OUTCOMES.get(outcome_text.lower())
    if outcome_text is not None and outcome is None:
        raise BadRequest(f"A test's outcome is one of {', '.join(OUTCOMES)}.")
    duration = _field(fields, "durationMilliseconds", "duration")
    try:
        milliseconds = None if duration in (None, "") else int(float(duration))
    except (TypeError, ValueError) as error:
        raise BadRequest("A test's durationMilliseconds is a number.") from error
    return {
        "testName": name,
        "testFramework": _text(fields, "testFramework", "framework"),
        "fileName": _text(fields, "fileName"),
        "outcome": outcome,
        "durationMilliseconds": milliseconds,
        "ErrorMessage": _text(fields, "ErrorMessage"),
        "ErrorStackTrace": _text(fields, "ErrorStackTrace"),
        "StdOut": _text(fields, "StdOut"),
        "StdErr": _text(fields, "StdErr"),
    }
