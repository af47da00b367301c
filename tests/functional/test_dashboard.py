"""The dashboard's page and files: served without a key, with their media types, a strict Content-Security-Policy
and revalidation, and nothing but the files of chalicelib/web/."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from chalice.test import Client

from chalicelib.api.cookies import session_cookie
from chalicelib.api.dashboard import WEB, assets, page
from chalicelib.api.http import mount_prefix
from tests.support import Account


def get(client: Client, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    response = client.http.get(path, headers=headers or {})
    return response.status_code, dict(response.headers), response.body.decode()


def test_the_page_is_served_without_a_key_with_a_strict_content_security_policy(client: Client) -> None:
    status, headers, body = get(client, "/")

    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    policy = dict(part.strip().split(" ", 1) for part in headers["Content-Security-Policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["default-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-cache"
    assert '<base href="/">' in body and '<script type="module" src="dashboard/app.js"></script>' in body


@pytest.mark.parametrize(
    ("path", "route", "prefix"),
    [
        ("/prod/", "/", "/prod"),  # the page at API Gateway's stage URL
        ("/prod", "/", "/prod"),
        ("/", "/", ""),  # at a custom domain's root, or in the local stack
        ("/prod/api/session", "/api/session", "/prod"),
        ("/api/session", "/api/session", ""),
        ("/prod/dashboard/app.js", "/dashboard/{asset}", ""),  # not needed there: links are relative
        ("", "", ""),
    ],
)
def test_the_mount_prefix_is_the_stage_path_before_the_apps_routes(path: str, route: str, prefix: str) -> None:
    assert mount_prefix({"path": path, "resourcePath": route}) == prefix


def test_at_a_stage_url_the_page_links_and_calls_under_the_stage_and_the_cookie_goes_there() -> None:
    staged = page("/prod")

    assert '<base href="/prod/">' in staged.body and '<base href="/">' not in staged.body
    assert staged.etag != page("").etag
    assert "; Path=/prod/api;" in session_cookie("token", datetime.now(UTC), 60, "/prod")
    assert "; Path=/api;" in session_cookie("token", datetime.now(UTC), 60)


def test_the_page_has_no_inline_script_or_style(client: Client) -> None:
    _, _, body = get(client, "/")

    assert re.findall(r"<script(?![^>]*\bsrc=)", body) == []
    assert "<style" not in body and " style=" not in body
    assert not re.search(r"\son[a-z]+=", body)  # no inline event handlers either


@pytest.mark.parametrize(
    ("name", "media_type"),
    [("app.js", "text/javascript; charset=utf-8"), ("style.css", "text/css; charset=utf-8"),
     ("icon.svg", "image/svg+xml")],
)  # fmt: skip
def test_each_file_is_served_with_its_media_type(client: Client, name: str, media_type: str) -> None:
    status, headers, body = get(client, f"/dashboard/{name}")

    assert status == 200
    assert headers["Content-Type"] == media_type
    assert body == (WEB / name).read_text(encoding="utf-8")
    assert "Content-Security-Policy" in headers


def test_every_module_the_scripts_import_is_served(client: Client) -> None:
    imported = {
        found
        for name, asset in assets().items()
        if name.endswith(".js")
        for found in re.findall(r'from "\./([\w.-]+)"', asset.body)
    }

    assert imported and all(get(client, f"/dashboard/{name}")[0] == 200 for name in imported)


def test_an_unchanged_file_is_a_304_to_a_browser_that_has_it(client: Client) -> None:
    _, headers, _ = get(client, "/dashboard/app.js")

    status, again, body = get(client, "/dashboard/app.js", {"If-None-Match": headers["ETag"]})

    assert status == 304 and body == ""
    assert again["ETag"] == headers["ETag"]


@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/nothing.js",
        "/dashboard/..%2F..%2Fapp.py",
        "/dashboard/..%2Fapi%2Fhttp.py",
        "/dashboard/%2E%2E%2Fconfig.py",
        "/dashboard/..",
        "/dashboard/.",
        "/dashboard/README.md",
        "/dashboard/__init__.py",
    ],
)
def test_anything_but_a_file_of_the_dashboard_is_a_404_in_the_error_shape(client: Client, path: str) -> None:
    status, headers, body = get(client, path)

    assert status == 404, body
    assert headers["Content-Type"] == "application/json"
    assert set(json.loads(body)) == {"message"}
    assert "import" not in body


def test_the_path_segments_beyond_one_name_nothing(client: Client) -> None:
    assert get(client, "/dashboard/../app.py")[0] in (403, 404)
    assert get(client, "/dashboard/sub/app.js")[0] in (403, 404)


def test_the_page_is_the_same_with_or_without_a_key(client: Client, account: Account) -> None:
    assert get(client, "/", {"Authorization": f"Bearer {account.key}"})[2] == get(client, "/")[2]
    assert get(client, "/", {"Authorization": "Bearer not-a-key"})[0] == 200
