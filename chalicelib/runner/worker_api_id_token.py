"""The Build Worker API's ID tokens: a container job's ``ACTIONS_ID_TOKEN_REQUEST_URL`` and ``appveyor GetIdToken``,
each forwarded to the service's own route with the job's request token, never to a URL the job's variables name."""

from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from chalicelib.runner.protocol import ProtocolError
from chalicelib.runner.worker_api_fields import BadRequest, json_object, text_field

if TYPE_CHECKING:
    from chalicelib.runner.run import Run

log = logging.getLogger(__name__)
ID_TOKEN_ROUTE = "api/id-token"  # below APPVEYOR_API_URL: a container job's ACTIONS_ID_TOKEN_REQUEST_URL


def is_id_token_request(path: str) -> bool:
    """Whether a request's path is the ID token route below the job's own path segment."""
    parts = [part for part in path.split("?")[0].split("/") if part]
    return [part.lower() for part in parts[1:]] == ID_TOKEN_ROUTE.split("/")


def forward_id_token_request(run: Run, path: str, authorization: str) -> tuple[int, Any]:
    """``GET api/id-token?api-version=1&audience=AUD``: a container job's ``ACTIONS_ID_TOKEN_REQUEST_URL`` (the
    service's own is out of its network's reach), asked for with the job's request token as GitHub Actions'
    contract has it, and forwarded with it to the service: the same token, the same answer."""
    token = request_token(run)
    scheme, _, given = authorization.partition(" ")
    if not token:
        return 404, {"message": "This job has no ID tokens: set id_token: true in appveyor.yml."}
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        return 401, {"message": "Send the job's ACTIONS_ID_TOKEN_REQUEST_TOKEN as a bearer token."}
    audience = parse_qs(urlsplit(path).query).get("audience", [""])[-1]
    try:
        value = run.client.id_token(token, audience)
    except ProtocolError as error:
        if error.status is not None and 400 <= error.status < 500:
            return error.status, {"message": str(error)}
        log.warning("worker API ID token: %s", error)
        return 502, {"message": f"The service did not answer: {error}"}
    run.log.add_secrets(value)
    return 200, {"value": value}


def id_token_for_script(run: Run, body: Any) -> dict[str, str]:
    """``appveyor GetIdToken -Audience AUD``: the job's ID token, masked in the log from now on. The request
    token is the spec's, sent to the service's own route: a script's SetVariable does not send it elsewhere."""
    audience = text_field(json_object(body), "audience") or ""
    token = request_token(run)
    if not token:
        raise BadRequest(
            "This job has no ID tokens: set id_token: true in appveyor.yml (a pull request's build gets none "
            "unless the project's settings allow it)."
        )
    value = run.client.id_token(token, audience)
    run.log.add_secrets(value)
    return {"value": value}


def request_token(run: Run) -> str | None:
    """The job's ID token request token, when the service minted one (``idToken``, which appveyor.yml cannot
    set; the service's variables then replace any of the same name the yml set); else None."""
    if not run.spec.get("idToken"):
        return None
    return str(run.spec["variables"].get("ACTIONS_ID_TOKEN_REQUEST_TOKEN") or "") or None
