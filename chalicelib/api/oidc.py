"""Jobs' OpenID Connect ID tokens: each account's issuer, public, and the token a running job asks for.

GET /oidc/{accountName}/.well-known/openid-configuration  -> the issuer's discovery document (no key, cacheable)
GET /oidc/{accountName}/.well-known/jwks                  -> its JSON Web Key Set (no key, cacheable)
GET /api/runner/jobs/{jobId}/id-token?api-version=1&audience=AUD, with the job's request token as a bearer
                                                          -> {"value": "<jwt>"} (GitHub Actions' contract)

Relying parties (AWS STS among them) fetch the first two, so they answer without a key and may be cached for
CACHE_SECONDS; a new signing key is published that long (and more, docs/oidc.md) before it signs.
"""

from __future__ import annotations

from typing import Any

from chalice import Response
from chalice.app import Request

from chalicelib.api.http import check_parameters, error_response
from chalicelib.domain.job_identity import id_tokens
from chalicelib.errors import ConveyorError

CACHE_SECONDS = 300
# not /api: the issuers' routes are OpenID Connect's, outside the API's document (docs/oidc.md says what they answer)
ROUTES = frozenset(
    {("GET", "/oidc/{accountName}/.well-known/openid-configuration"), ("GET", "/oidc/{accountName}/.well-known/jwks")}
)


def _request_base(request: Request) -> str:
    headers = request.headers
    return f"{headers.get('x-forwarded-proto', 'http')}://{headers.get('host', 'localhost')}"


def _public(request: Request, params: dict[str, str | None], answer: Any) -> Response:
    try:
        check_parameters(request, params)
        headers: dict[str, str | list[str]] = {
            "Content-Type": "application/json",
            "Cache-Control": f"public, max-age={CACHE_SECONDS}",
        }
        return Response(body=answer(), status_code=200, headers=headers)
    except ConveyorError as error:
        return error_response(error)


def openid_configuration(request: Request, accountName: str) -> Response:
    return _public(
        request, {"accountName": accountName}, lambda: id_tokens.discovery(_request_base(request), accountName)
    )


def issuer_jwks(request: Request, accountName: str) -> Response:
    return _public(request, {"accountName": accountName}, lambda: id_tokens.jwks(accountName))


def job_id_token(request: Request, jobId: str) -> Response:
    try:
        check_parameters(request, {"jobId": jobId})
        audience = request.query_params.get("audience") if request.query_params else None
        value = id_tokens.job_id_token(jobId, request.headers.get("authorization"), audience, _request_base(request))
        headers: dict[str, str | list[str]] = {"Content-Type": "application/json", "Cache-Control": "no-store"}
        return Response(body={"value": value}, status_code=200, headers=headers)
    except ConveyorError as error:
        return error_response(error)
