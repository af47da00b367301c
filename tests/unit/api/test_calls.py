"""An API route's request before its view runs: who calls it, with what, answered as HTTP in the error shape. These
refusals come before any table is read (no IO): no key, a cookie's write without the CSRF header, a path segment
longer than anything stored."""

from __future__ import annotations

import json
from typing import Any

from chalice.app import Request

from chalicelib.api.calls import answer
from chalicelib.domain.team.permissions import Permission


def request(method: str, headers: dict[str, str]) -> Request:
    return Request(
        {
            "multiValueQueryStringParameters": None,
            "headers": headers,
            "pathParameters": {},
            "requestContext": {"httpMethod": method, "resourcePath": "/api/roles"},
            "body": None,
            "isBase64Encoded": False,
            "stageVariables": None,
        }
    )


def never_called(call: Any, **params: str) -> None:
    raise AssertionError("the view ran")


def answered(method: str, headers: dict[str, str], params: dict[str, str] | None = None) -> tuple[int, Any]:
    response = answer(never_called, Permission.ADD_ROLE, None, request(method, headers), params or {}).to_dict()
    return response["statusCode"], json.loads(response["body"])


def test_a_request_without_a_key_is_a_401_in_the_error_shape() -> None:
    assert answered("GET", {}) == (401, {"message": "Authorization required"})


def test_a_write_signed_by_the_session_cookie_alone_needs_the_csrf_header() -> None:
    status, body = answered("POST", {"cookie": "conveyor_session=s3ss10n"})

    assert status == 403 and "X-Requested-With" in body["message"]


def test_a_path_segment_longer_than_anything_stored_names_nothing() -> None:
    status, body = answered("GET", {"authorization": "Bearer k3y"}, {"roleId": "9" * 5000})

    assert status == 404 and body["message"].startswith("Not found: no roleId is longer than")
