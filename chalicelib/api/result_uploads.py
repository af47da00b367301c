"""POST /api/testresults/{resultsFormat}/{jobId} (and under /api/account/{accountName}): AppVeyor's upload of a
test results file (junit, xunit, nunit, nunit3, mstest) into a running job's tests, the file as the body or as the
multipart field ``file``.

A job's runner forwards what its scripts send to the Build Worker API's same path with its job token (no key is
needed inside a build); from outside, a key whose role may run the project's builds. Nothing else is taken: not
the dashboard's session, not a public project's visitor.
"""

from __future__ import annotations

from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response, respond
from chalicelib.domain.job_identity.job_tokens import TOKEN_PREFIX
from chalicelib.domain.job_protocol import result_uploads
from chalicelib.domain.team.auth import authenticate
from chalicelib.domain.testing import result_files
from chalicelib.errors import ConveyorError


def upload_test_results(
    request: Request, resultsFormat: str, jobId: str, prefixAccountName: str | None = None
) -> Response:
    try:
        check_parameters(request, {"resultsFormat": resultsFormat, "jobId": jobId, "account": prefixAccountName})
        authorization = request.headers.get("authorization")
        scheme, _, token = (authorization or "").strip().partition(" ")
        from_build = scheme.lower() == "bearer" and token.strip().startswith(TOKEN_PREFIX)
        if from_build:
            job = result_uploads.job_for_token(jobId, authorization)
        else:
            job = result_uploads.job_for_caller(authenticate(authorization, prefixAccountName), jobId)
        return respond(result_uploads.store_results(job, resultsFormat, _file(request), from_build))
    except ConveyorError as error:
        return error_response(error)


def _file(request: Request) -> bytes:
    """The file: the body as it is, or the multipart body's part named ``file`` (result_files.uploaded_file)."""
    raw: Any = request.raw_body or b""
    data = raw if isinstance(raw, bytes) else str(raw).encode("utf-8", errors="surrogatepass")
    return result_files.uploaded_file(data, request.headers.get("content-type") or "")
