"""POST /api/testresults/{resultsFormat}/{jobId} (and under /api/account/{accountName}): AppVeyor's upload of a
test results file (junit, xunit, nunit, nunit3, mstest) into a running job's tests, the file as the body or as the
multipart field ``file``.

A job's runner forwards what its scripts send to the Build Worker API's same path with its job token (no key is
needed inside a build); from outside, a key whose role may run the project's builds. Nothing else is taken: not
the dashboard's session, not a public project's visitor.
"""

from __future__ import annotations

from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response, respond
from chalicelib.domain.builds import result_files
from chalicelib.domain.execution.job_tokens import TOKEN_PREFIX
from chalicelib.domain.job_protocol import test_uploads
from chalicelib.domain.team.auth import authenticate
from chalicelib.errors import ConveyorError, Invalid

MAX_UPLOAD_BYTES = result_files.MAX_FILE_BYTES + 64 * 1024  # the file, and a multipart body's headers around it


def upload_test_results(
    request: Request, resultsFormat: str, jobId: str, prefixAccountName: str | None = None
) -> Response:
    try:
        check_parameters(request, {"resultsFormat": resultsFormat, "jobId": jobId, "account": prefixAccountName})
        authorization = request.headers.get("authorization")
        scheme, _, token = (authorization or "").strip().partition(" ")
        from_build = scheme.lower() == "bearer" and token.strip().startswith(TOKEN_PREFIX)
        if from_build:
            job = test_uploads.job_for_token(jobId, authorization)
        else:
            job = test_uploads.job_for_caller(authenticate(authorization, prefixAccountName), jobId)
        return respond(test_uploads.store_results(job, resultsFormat, _file(request), from_build))
    except ConveyorError as error:
        return error_response(error)


def _file(request: Request) -> bytes:
    """The file: the body as it is, or the multipart body's part named ``file`` (curl -F file=@..., WebClient's
    UploadFile); a 400 when there is none, or it is too big."""
    raw: Any = request.raw_body or b""
    data = raw if isinstance(raw, bytes) else str(raw).encode("utf-8", errors="surrogatepass")
    if len(data) > MAX_UPLOAD_BYTES:
        raise Invalid(
            f"A test results file is at most {result_files.MAX_FILE_BYTES:,} bytes; this body is {len(data):,}."
        )
    content_type = request.headers.get("content-type") or ""
    if not content_type.lower().startswith("multipart/"):
        return data
    message: Message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + data
    )
    if not message.is_multipart():
        raise Invalid("The multipart body could not be read: send the file as the body, or as the field 'file'.")
    parts = [part for part in message.get_payload() if isinstance(part, Message)]
    named = [part for part in parts if part.get_param("name", header="content-disposition") == "file"]
    chosen = named or [part for part in parts if part.get_filename()]
    if not chosen:
        raise Invalid("The multipart body has no field 'file' holding the test results file.")
    payload = chosen[0].get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""
