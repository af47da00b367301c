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

Its listeners and their bounds are in worker_api_server.py, the reading of what clients send in
worker_api_fields.py, a pushed artifact's file in worker_api_pushed.py, the ID tokens in worker_api_id_token.py.
"""

from __future__ import annotations

import contextlib
import hmac
import inspect
import logging
import os
import re
import secrets
import shutil
import socketserver
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from chalicelib.protocol.artifact_types import canonical_type
from chalicelib.runner import appveyor_cli
from chalicelib.runner import container as job_container
from chalicelib.runner.artifacts import Artifact, ArtifactRefused
from chalicelib.runner.protocol import ProtocolError
from chalicelib.runner.worker_api_fields import (
    BadRequest,
    json_array,
    json_object,
    reported_message,
    reported_test,
    text_field,
)
from chalicelib.runner.worker_api_id_token import forward_id_token_request, id_token_for_script
from chalicelib.runner.worker_api_pushed import pushed_file
from chalicelib.runner.worker_api_server import (
    MAX_BODIES,
    MAX_CONNECTIONS,
    Ipv4Server,
    Ipv6Server,
    UnixServer,
    handler_for,
)

if TYPE_CHECKING:
    from chalicelib.runner.run import Run

log = logging.getLogger(__name__)
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POLL_SECONDS = 0.05


class WorkerApi:
    """The Build Worker API of one run, from ``with`` to its end; ``url`` and ``bin_folder`` go to the scripts."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._lock = threading.Lock()
        handler = handler_for(self)
        self._secret = secrets.token_urlsafe(18)
        self._servers: list[socketserver.BaseServer] = []
        self.bodies = threading.BoundedSemaphore(MAX_BODIES)
        connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        if run.container is not None:
            self.bin_folder = run.container.work / job_container.BIN_FOLDER
            self._python = job_container.PYTHON
            socket_path = run.container.work / job_container.SOCKET_SUBFOLDER / job_container.SOCKET_NAME
            self._servers.append(UnixServer(str(socket_path), handler))
            self.url = f"http://localhost:{job_container.API_PORT}/{self._secret}/"
        else:
            self.bin_folder = run.work / "bin"
            self._python = _python()
            first = Ipv4Server(("127.0.0.1", 0), handler)
            self._servers.append(first)
            port = first.server_address[1]
            with contextlib.suppress(OSError):  # "localhost" may resolve to ::1 first (Node does so): answer there too
                self._servers.append(Ipv6Server(("::1", port), handler))
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
        """``GET api/id-token``: forwarded to the service for this job only (runner/worker_api_id_token.py)."""
        if not self._own(path):
            return 403, {"message": "Use the whole APPVEYOR_API_URL, its path included: it is this job's own."}
        return forward_id_token_request(self._run, path, authorization)

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
        self._run.client.add_messages([reported_message(json_object(body), "message")])

    def add_compilation_message(self, body: Any) -> None:
        self._run.client.add_messages([reported_message(json_object(body), "compilation")])

    def set_variable(self, body: Any) -> None:
        fields = json_object(body)
        name, value = text_field(fields, "name"), text_field(fields, "value") or ""
        if not name or not _VARIABLE_NAME.fullmatch(name):
            raise BadRequest("A variable needs a name of letters, digits and underscores.")
        with self._lock:
            self._run.variables[name] = value  # the next scripts of the job see it

    def add_test(self, body: Any) -> None:
        self._run.client.add_tests([reported_test(json_object(body))])

    def add_tests(self, body: Any) -> None:
        self._run.client.add_tests([reported_test(json_object(item)) for item in json_array(body)])

    def update_test(self, body: Any) -> None:
        self._run.client.add_tests([reported_test(json_object(body), update=True)], update=True)

    def update_tests(self, body: Any) -> None:
        self._run.client.add_tests(
            [reported_test(json_object(item), update=True) for item in json_array(body)], update=True
        )

    def push_artifact(self, body: Any) -> dict[str, Any]:
        fields = json_object(body)
        path_text = text_field(fields, "path")
        if not path_text:
            raise BadRequest("PushArtifact needs the path of a file.")
        with pushed_file(self._run, path_text) as path:
            file_name = (text_field(fields, "fileName") or Path(path_text).name).replace("\\", "/").lstrip("/")
            if any(part in ("", ".", "..") for part in file_name.split("/")):
                raise BadRequest(f"{file_name!r} is not an artifact file name.")
            artifact_type = canonical_type(text_field(fields, "type"), path_text, self._run.say)
            name = text_field(fields, "name") or PurePosixPath(file_name).stem
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
        fields = json_object(body)
        version = text_field(fields, "version")
        if version:
            self._run.client.update_build({"version": version})
            with self._lock:
                self._run.variables["APPVEYOR_BUILD_VERSION"] = version
        ignored = sorted(name for name in fields if name.lower() != "version" and fields[name] not in (None, ""))
        if ignored:
            self._run.say(f"UpdateBuild: only -Version is applied here; {', '.join(ignored)} left as they are.")

    def get_id_token(self, body: Any) -> dict[str, str]:
        """``appveyor GetIdToken -Audience AUD``: the job's ID token (runner/worker_api_id_token.py)."""
        return id_token_for_script(self._run, body)

    def exit_build(self, body: Any) -> None:
        """``appveyor exit``: the job ends as a success once the command that called it ends (runner/job_phases.py)."""
        self._run.exit_requested = True


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


def _python() -> str:
    """An interpreter the scripts' user can start: the runner's own may not be one, as in the sandbox, where the
    runner's virtual environment links to a Python below a home folder that user cannot enter."""
    for candidate in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return "/usr/bin/python3"
