"""The ``appveyor`` command's parsing: a command line as AppVeyor documents it -> one Build Worker API request."""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from chalicelib.runner.appveyor_cli import UsageError, main, parse


def test_add_message_takes_its_text_first_and_options_after() -> None:
    assert parse(["AddMessage", "Deprecated", "-Category", "Warning", "-Details", "use --new"]) == (
        "POST",
        "api/build/messages",
        {"message": "Deprecated", "category": "Warning", "details": "use --new"},
    )


def test_verbs_and_options_ignore_case_and_options_may_come_first() -> None:
    assert parse(["addmessage", "-CATEGORY", "Error", "broken"]) == (
        "POST",
        "api/build/messages",
        {"message": "broken", "category": "Error"},
    )


def test_add_compilation_message_carries_where_it_points() -> None:
    method, path, body = parse(
        ["AddCompilationMessage", "unused x", "-FileName", "a.c", "-Line", "12", "-Column", "5", "-ProjectName", "app"]
    )

    assert (method, path) == ("POST", "api/build/compilationmessages")
    assert body == {"message": "unused x", "fileName": "a.c", "line": "12", "column": "5", "projectName": "app"}


def test_set_variable_needs_a_name_and_a_value() -> None:
    assert parse(["SetVariable", "-Name", "GREETING", "-Value", "hi"]) == (
        "POST",
        "api/build/variables",
        {"name": "GREETING", "value": "hi"},
    )
    with pytest.raises(UsageError, match="missing -name"):
        parse(["SetVariable", "-Value", "orphan"])
    with pytest.raises(UsageError, match="missing -value"):
        parse(["SetVariable", "-Name", "EMPTY"])


def test_add_test_maps_options_to_the_worker_apis_field_names() -> None:
    arguments = shlex.split(
        "AddTest adds -Framework NUnit -FileName math.cs -Outcome Failed -Duration 12 -ErrorMessage boom"
        ' -ErrorStackTrace "at X" -StdOut o -StdErr e'
    )

    assert parse(arguments) == (
        "POST",
        "api/tests",
        {
            "testName": "adds",
            "testFramework": "NUnit",
            "fileName": "math.cs",
            "outcome": "Failed",
            "durationMilliseconds": "12",
            "ErrorMessage": "boom",
            "ErrorStackTrace": "at X",
            "StdOut": "o",
            "StdErr": "e",
        },
    )


def test_add_test_needs_a_name_a_framework_and_a_file_name() -> None:
    with pytest.raises(UsageError, match="missing -framework, -filename"):
        parse(["AddTest", "adds"])
    with pytest.raises(UsageError, match="missing -name"):
        parse(["AddTest", "-Framework", "NUnit", "-FileName", "math.cs"])


def test_update_test_needs_only_the_name_and_sends_only_what_it_changes() -> None:
    assert parse(["UpdateTest", "adds", "-Outcome", "Passed"]) == (
        "PUT",
        "api/tests",
        {"testName": "adds", "outcome": "Passed"},
    )
    assert parse(["UpdateTest", "-Name", "adds", "-Duration", "3"]) == (
        "PUT",
        "api/tests",
        {"testName": "adds", "durationMilliseconds": "3"},
    )


def test_push_artifact_sends_an_absolute_path_and_the_deployment_name_as_name(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    method, path, body = parse(
        shlex.split("PushArtifact out/app.zip -FileName dist/app.zip -DeploymentName app -Type WebDeployPackage")
    )

    assert (method, path) == ("POST", "api/artifacts")
    assert body == {
        "path": os.path.join(os.fspath(tmp_path), "out", "app.zip"),
        "fileName": "dist/app.zip",
        "name": "app",
        "type": "WebDeployPackage",
    }


def test_push_artifact_takes_verbosity_and_ignores_it() -> None:
    _, _, body = parse(["PushArtifact", "/tmp/a.zip", "-Verbosity", "Quiet"])

    assert body == {"path": "/tmp/a.zip"}


def test_update_build_sends_what_it_is_given() -> None:
    assert parse(["UpdateBuild", "-Version", "1.2.3", "-Message", "release"]) == (
        "PUT",
        "api/build",
        {"version": "1.2.3", "message": "release"},
    )


def test_a_negative_number_is_a_value_not_an_option() -> None:
    _, _, body = parse(["AddCompilationMessage", "odd", "-Line", "-1"])

    assert body["line"] == "-1"
    _, _, body = parse(["AddMessage", "-5"])
    assert body == {"message": "-5"}


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ([], "a verb is needed"),
        (["Frobnicate"], "unknown verb 'Frobnicate'"),
        (["AddMessage"], "missing -message"),
        (["AddMessage", "text", "-Category"], "option -Category needs a value"),
        (["AddMessage", "one", "two"], "unexpected argument 'two'"),
        (["UpdateBuild", "1.2.3"], "unexpected argument '1.2.3'"),
        (["AddMessage", "text", "-Colour", "red"], "unknown option -colour"),
        (["SetVariable", "-Name", "A", "-Value", "1", "-Details", "x"], "unknown option -details"),
    ],
)
def test_a_command_line_the_verb_does_not_take_is_a_usage_error(arguments: list[str], complaint: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse(arguments)

    assert complaint in str(raised.value)


def test_exit_asks_the_runner_to_end_the_job_and_takes_no_argument() -> None:
    assert parse(["exit"]) == ("POST", "api/build/exit", {})
    with pytest.raises(UsageError):
        parse(["Exit", "3"])


def test_get_id_token_asks_the_runner_with_its_optional_audience() -> None:
    assert parse(["GetIdToken", "-Audience", "sts.amazonaws.com"]) == (
        "POST",
        "api/build/idtoken",
        {"audience": "sts.amazonaws.com"},
    )
    assert parse(["getidtoken"]) == ("POST", "api/build/idtoken", {})
    with pytest.raises(UsageError, match="unknown option -lifetime"):
        parse(["GetIdToken", "-Lifetime", "60"])


@pytest.fixture
def served_file() -> Iterator[str]:
    """A URL on loopback that serves b"payload" at /files/tool.zip."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200 if self.path == "/files/tool.zip" else 404)
            self.send_header("Content-Length", "7")
            self.end_headers()
            self.wfile.write(b"payload")

        def log_message(self, *_: object) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/files/tool.zip"
    server.shutdown()
    server.server_close()


def test_download_file_saves_the_url_into_the_current_folder_under_its_name_or_the_one_given(
    served_file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert main(["DownloadFile", served_file]) == 0
    assert main(["downloadfile", served_file, "-FileName", "renamed.zip"]) == 0
    assert main(["DownloadFile", served_file.replace("tool.zip", "missing.zip"), "-FileName", "missing.zip"]) == 1

    assert (tmp_path / "tool.zip").read_bytes() == (tmp_path / "renamed.zip").read_bytes() == b"payload"


def test_download_file_takes_only_web_urls() -> None:
    with pytest.raises(UsageError, match="http or https URL"):
        parse(["DownloadFile", "file:///etc/passwd"])
