"""Small factories and an HTTP helper for tests that call the API through Chalice's test client."""

from __future__ import annotations

import itertools
import json
import os
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from chalice.app import Request
from chalice.test import Client

from chalicelib.domain.team.accounts import create_account, create_api_key

_numbers = itertools.count(1)
T = TypeVar("T")


def in_parallel(calls: list[Callable[[], T]]) -> list[T]:
    """The results of ``calls`` made at once, one thread each.

    Chalice's test client swaps ``os.environ`` for a plain dict during each request and puts back what it found;
    requests that overlap can leave the dict in place for good, so the real one is put back here.
    """
    environ = os.environ
    try:
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            return [future.result() for future in [pool.submit(call) for call in calls]]
    finally:
        os.environ = environ  # noqa: B003 (the object itself is what goes back)


def unique(prefix: str) -> str:
    """A name no other test (or test process) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}-{next(_numbers)}"


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def assert_refused(reply: Reply, status: int) -> str:
    """The reply is ``status`` with a JSON object carrying a non-empty ``message``; returns the message."""
    assert reply.status == status, reply.body
    assert isinstance(reply.json, dict), reply.body
    message = reply.json.get("message")
    assert isinstance(message, str) and message, reply.body
    return message


def assert_names_field(reply: Reply, field: str) -> None:
    """A 400 whose message and ``modelState`` name the request field at fault."""
    assert field in assert_refused(reply, 400), reply.body
    model_state = reply.json.get("modelState")
    assert isinstance(model_state, dict) and list(model_state) == [f"request.{field}"], reply.body
    messages = model_state[f"request.{field}"]
    assert isinstance(messages, list) and messages and all(isinstance(text, str) and text for text in messages)


@dataclass
class Caller:
    """Calls the API with one key, optionally under the ``/api/account/{name}`` prefix; without a key,
    ``authorization`` (if any) is sent as the Authorization header as it is."""

    client: Client
    key: str | None
    prefix: str = "/api"
    authorization: str | None = None

    def call(
        self, method: str, path: str, body: Any = None, raw: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        sent = dict(headers or {})
        if self.key is not None:
            sent.setdefault("Authorization", f"Bearer {self.key}")
        elif self.authorization is not None:
            sent.setdefault("Authorization", self.authorization)
        payload = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        if payload:
            sent.setdefault("Content-Type", "application/json")
        response = getattr(self.client.http, method.lower())(self.prefix + path, headers=sent, body=payload)
        return Reply(response.status_code, response.body, dict(response.headers))

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.call("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Reply:
        return self.call("POST", path, body, **kwargs)

    def put(self, path: str, body: Any = None, **kwargs: Any) -> Reply:
        return self.call("PUT", path, body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Reply:
        return self.call("DELETE", path, **kwargs)


@dataclass
class Account:
    """A fresh account: its name, its owner's e-mail and key, and a caller acting as the owner."""

    client: Client
    name: str
    owner_email: str
    key: str

    @property
    def api(self) -> Caller:
        return Caller(self.client, self.key)

    def caller_for(self, email: str, user_level: bool = False) -> Caller:
        """A caller with a new key for a user of this account (a ``v2.`` key when ``user_level``)."""
        key = create_api_key(self.name, email, f"v2.{uuid.uuid4().hex}" if user_level else None)
        return Caller(self.client, key)

    def role_id(self, name: str) -> int:
        roles = self.api.get("/roles").json
        return next(role["roleId"] for role in roles if role["name"] == name)

    def add_user(self, email: str, role: str = "User", full_name: str = "Test User") -> dict[str, Any]:
        """Add a user through the API and return it as the user list shows it."""
        reply = self.api.post(
            "/users",
            {
                "fullName": full_name,
                "email": email,
                "roleId": self.role_id(role),
                "generatePassword": True,
            },
        )
        assert reply.status == 204, reply.body
        return next(user for user in self.api.get("/users").json if user["email"] == email)

    def add_role(self, name: str, allowed: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
        """Add a custom role granting ``allowed`` and return its details."""
        role = self.api.post("/roles", {"name": name}).json
        for group in role["groups"]:
            for permission in group["permissions"]:
                permission["allowed"] = permission["name"] in allowed
        reply = self.api.put("/roles", role)
        assert reply.status == 200, reply.body
        return reply.json


def new_account(client: Client) -> Account:
    name = unique("acct")
    email = f"owner@{name}.example"
    return Account(client, name, email, create_account(name, email))


def add_project(
    account: Account, repository: str | None = None, provider: str = "gitHub", caller: Caller | None = None
) -> dict[str, Any]:
    """Add a project through the API (as the owner unless ``caller``) and return it as the response shows it."""
    reply = (caller or account.api).post(
        "/projects",
        {
            "repositoryProvider": provider,
            "repositoryName": repository or f"octo/{unique('repo')}",
        },
    )
    assert reply.status == 200, reply.body
    return reply.json


def project_path(project: dict[str, Any]) -> str:
    """``/projects/{accountName}/{slug}``: where a project's endpoints live."""
    return f"/projects/{project['accountName']}/{project['slug']}"


def member_of_role(account: Account, role: str) -> Caller:
    """A caller acting as a new user of the account holding ``role``."""
    email = f"{unique('member')}@team.example"
    account.add_user(email, role=role)
    return account.caller_for(email)


def request_of(
    method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None, **query: str
) -> Request:
    """A request as Chalice hands it to a view of chalicelib/api/ (for tests that call a view directly)."""
    return Request(
        {
            "multiValueQueryStringParameters": {name: [value] for name, value in query.items()} or None,
            "headers": {"host": "localhost", **{name.lower(): value for name, value in (headers or {}).items()}},
            "pathParameters": {},
            "requestContext": {"httpMethod": method, "resourcePath": path},
            "body": None if body is None else body.decode(),
            "isBase64Encoded": False,
            "stageVariables": None,
        }
    )


def view_answer(account: Account, view: Callable[..., Any], path: str, **params: str) -> Any:
    """What ``view`` (a function of chalicelib/api/) answers the account's owner for a GET of ``path``, called as
    its route calls it (api/calls.answer: the owner's key authenticated, the result as HTTP): the JSON it serves."""
    from chalicelib.api.calls import answer  # loads what a first API request loads: only where it is used

    request = request_of("GET", path, {"Authorization": f"Bearer {account.key}"})
    response = answer(view, None, None, request, dict(params)).to_dict()
    assert response["statusCode"] == 200, response
    return json.loads(response["body"])
