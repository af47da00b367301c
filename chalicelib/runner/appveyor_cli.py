"""The ``appveyor`` command a build's scripts find on PATH: AppVeyor's Build Worker API verbs, on the command line.

    appveyor AddMessage "text" [-Category Information|Warning|Error] [-Details "..."]
    appveyor AddCompilationMessage "text" [-Category ...] [-Details] [-FileName] [-Line] [-Column] [-ProjectName]
                                          [-ProjectFileName]
    appveyor SetVariable -Name NAME -Value VALUE
    appveyor AddTest NAME -Framework F -FileName F [-Outcome O] [-Duration MS] [-ErrorMessage] [-ErrorStackTrace]
                                                   [-StdOut] [-StdErr]
    appveyor UpdateTest NAME ... (the same options)
    appveyor PushArtifact PATH [-FileName NAME] [-DeploymentName NAME] [-Type TYPE]
    appveyor UpdateBuild -Version VERSION
    appveyor GetIdToken [-Audience AUDIENCE]   (prints the job's OpenID Connect ID token; id_token: true)
    appveyor DownloadFile URL [-FileName NAME] [-Timeout SECONDS]   (to the current folder, as Start-FileDownload)
    appveyor exit            (ends the job as a success once this command ends, after on_success and on_finish)

Verbs and options ignore case, as on AppVeyor. Each call is one request to ``$APPVEYOR_API_URL``, which the runner
serves on localhost. The runner copies this file into the build's PATH as it is: it uses the standard library only.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

_VERBS: dict[str, tuple[str, str, str | None, tuple[str, ...]]] = {
    # verb: (method, path, positional option, required options)
    "addmessage": ("POST", "api/build/messages", "message", ("message",)),
    "addcompilationmessage": ("POST", "api/build/compilationmessages", "message", ("message",)),
    "setvariable": ("POST", "api/build/variables", "name", ("name", "value")),
    "addtest": ("POST", "api/tests", "name", ("name", "framework", "filename")),
    "updatetest": ("PUT", "api/tests", "name", ("name",)),
    "pushartifact": ("POST", "api/artifacts", "path", ("path",)),
    "updatebuild": ("PUT", "api/build", None, ()),
    "exit": ("POST", "api/build/exit", None, ()),  # the runner's own route: AppVeyor's agent takes it its own way
    "getidtoken": ("POST", "api/build/idtoken", None, ()),  # the runner's own too: it masks the token it hands out
    "downloadfile": ("GET", "", "url", ("url",)),  # no call to the runner: the file is fetched here
}
_TEST_FIELDS = {
    "name": "testName",
    "framework": "testFramework",
    "filename": "fileName",
    "outcome": "outcome",
    "duration": "durationMilliseconds",
    "errormessage": "ErrorMessage",
    "errorstacktrace": "ErrorStackTrace",
    "stdout": "StdOut",
    "stderr": "StdErr",
}
_MESSAGE_FIELDS = {
    "message": "message",
    "category": "category",
    "details": "details",
    "filename": "fileName",
    "line": "line",
    "column": "column",
    "projectname": "projectName",
    "projectfilename": "projectFileName",
}
_ARTIFACT_FIELDS = {"path": "path", "filename": "fileName", "deploymentname": "name", "type": "type"}
_BUILD_FIELDS = {
    "version": "version",
    "message": "message",
    "commitid": "commitId",
    "committed": "committed",
    "authorname": "authorName",
    "authoremail": "authorEmail",
    "committername": "committerName",
    "committeremail": "committerEmail",
}


class UsageError(Exception):
    """The command line is not one the verb takes."""


def parse(arguments: list[str]) -> tuple[str, str, dict[str, Any]]:
    """(method, path, JSON body) for a command line."""
    if not arguments:
        raise UsageError("a verb is needed: " + ", ".join(sorted(_VERBS)))
    verb = arguments[0].lower()
    if verb not in _VERBS:
        raise UsageError(
            f"unknown verb '{arguments[0]}'; known: AddMessage, AddCompilationMessage, SetVariable, "
            "AddTest, UpdateTest, PushArtifact, UpdateBuild, GetIdToken, DownloadFile, exit"
        )
    method, path, positional, required = _VERBS[verb]
    options: dict[str, str] = {}
    rest = arguments[1:]
    index = 0
    while index < len(rest):
        word = rest[index]
        if word.startswith("-") and len(word) > 1 and not word[1:].lstrip("-").isdigit():
            name = word.lstrip("-").lower()
            if index + 1 >= len(rest):
                raise UsageError(f"option {word} needs a value")
            options[name] = rest[index + 1]
            index += 2
        elif positional is not None and positional not in options:
            options[positional] = word
            index += 1
        else:
            raise UsageError(f"unexpected argument '{word}'")
    missing = [name for name in required if not options.get(name)]
    if missing:
        raise UsageError("missing " + ", ".join(f"-{name}" for name in missing))
    fields = {
        "addmessage": _MESSAGE_FIELDS,
        "addcompilationmessage": _MESSAGE_FIELDS,
        "setvariable": {"name": "name", "value": "value"},
        "addtest": _TEST_FIELDS,
        "updatetest": _TEST_FIELDS,
        "pushartifact": _ARTIFACT_FIELDS,
        "updatebuild": _BUILD_FIELDS,
        "exit": {},
        "getidtoken": {"audience": "audience"},
        "downloadfile": {"url": "url", "filename": "fileName", "timeout": "timeout"},
    }[verb]
    unknown = [name for name in options if name not in fields and name != "verbosity"]
    if unknown:
        raise UsageError("unknown option " + ", ".join(f"-{name}" for name in unknown))
    body: dict[str, Any] = {fields[name]: value for name, value in options.items() if name in fields}
    if verb == "pushartifact":
        body["path"] = os.path.abspath(body["path"])
    if verb == "downloadfile":
        if urllib.parse.urlsplit(body["url"]).scheme not in ("http", "https"):
            raise UsageError(f"DownloadFile takes an http or https URL, not '{body['url']}'")
        name = body.get("fileName") or posixpath.basename(urllib.parse.urlsplit(body["url"]).path) or "download"
        body["fileName"] = os.path.abspath(name)
    return method, path, body


def download(body: dict[str, Any]) -> int:
    """``appveyor DownloadFile``: the URL's content into the file, through the build's own proxy settings."""
    try:
        timeout = float(body.get("timeout") or 600)
    except ValueError:
        print(f"appveyor: -Timeout takes seconds, not '{body['timeout']}'", file=sys.stderr)
        return 2
    print(f"Downloading {body['fileName']} from {body['url']}")
    try:
        with urllib.request.urlopen(body["url"], timeout=timeout) as response, open(body["fileName"], "wb") as file:
            shutil.copyfileobj(response, file)
    except OSError as error:
        print(f"appveyor: the download failed: {error}", file=sys.stderr)
        return 1
    return 0


def main(arguments: list[str]) -> int:
    try:
        method, path, body = parse(arguments)
    except UsageError as error:
        print(f"appveyor: {error}", file=sys.stderr)
        return 2
    if method == "GET":  # DownloadFile
        return download(body)
    base = os.environ.get("APPVEYOR_API_URL")
    if not base:
        print("appveyor: APPVEYOR_API_URL is not set: this command works inside a build", file=sys.stderr)
        return 2
    request = urllib.request.Request(
        base.rstrip("/") + "/" + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method=method,
    )
    try:
        # the build worker is on localhost: a proxy the build sets for its downloads must not carry these calls
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=600) as response:
            answer = response.read()
    except urllib.error.HTTPError as error:
        print(f"appveyor: {_message(error.read())}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"appveyor: the build worker could not be reached: {error}", file=sys.stderr)
        return 1
    if path == _VERBS["getidtoken"][1]:
        print(json.loads(answer)["value"])
    return 0


def _message(data: bytes) -> str:
    try:
        return str(json.loads(data)["message"])
    except (ValueError, KeyError, TypeError):
        return data.decode(errors="replace")[:300]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
