"""/api/openapi.json: the service's own OpenAPI 3 document, served without a key.

The document is kept beside this module (openapi.json) and read on the first request, not at import.
tests/functional/test_openapi.py fails when a route and the document's operations disagree.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from chalice import Response
from chalice.app import Request

DOCUMENT = Path(__file__).with_name("openapi.json")


@cache
def document_text() -> str:
    """The document as kept in the repository (read once per process)."""
    return DOCUMENT.read_text(encoding="utf-8")


def openapi_document(request: Request) -> Response:
    """The document, as JSON."""
    return Response(body=document_text(), status_code=200, headers={"Content-Type": "application/json"})
