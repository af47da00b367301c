"""Values encrypted for ``secure:`` (``POST /api/account/encrypt``, AppVeyor's endpoint): bound, in their KMS
encryption context, to the caller's account, or with ``projectSlug`` to one of its projects
(domain/shared/secrets.py)."""

from __future__ import annotations

from chalicelib.domain.projects.project_lookup import find_project
from chalicelib.domain.shared import secrets
from chalicelib.domain.shared.validation import invalid
from chalicelib.domain.team.auth import Caller
from chalicelib.protocol.logstream import MIN_SECRET_CHARS  # the log masks no shorter value


def encrypt_value(caller: Caller, plain: str, project_slug: str | None) -> str:
    """The text to put after ``secure:``: it decrypts in builds of the caller's account's projects (of the project
    ``project_slug`` names, which the caller may view, only)."""
    if len(plain.strip()) < MIN_SECRET_CHARS:
        raise invalid(
            "plainValue",
            f"plainValue must be at least {MIN_SECRET_CHARS} characters long (surrounding spaces aside): the build "
            "log cannot mask a shorter one.",
        )
    if len(plain.encode()) > secrets.MAX_SECRET_BYTES:
        raise invalid("plainValue", f"plainValue must be at most {secrets.MAX_SECRET_BYTES} bytes long.")
    project_id = None
    if project_slug is not None:
        project_id = find_project(caller, caller.account_name, project_slug).project_id
    return secrets.encrypted_value(caller.account_id, project_id, plain)
