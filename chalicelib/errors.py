"""The one error vocabulary of the service; the HTTP layer turns each into ``{"message": ...}``."""

from __future__ import annotations


class ConveyorError(Exception):
    """A refusal the caller can act on; ``status`` is its HTTP status code."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Invalid(ConveyorError):
    """The request is malformed: wrong type, missing field, value out of range."""

    status = 400

    def __init__(self, message: str, model_state: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.model_state = model_state or {}


class Unauthorized(ConveyorError):
    """No credentials, or credentials that name nobody."""

    status = 401

    def __init__(self, message: str = "Authorization required") -> None:
        super().__init__(message)


class Forbidden(ConveyorError):
    """The caller is known but its role does not allow the operation."""

    status = 403


class NotFound(ConveyorError):
    """No such thing in the caller's account (or the caller may not know it exists)."""

    status = 404


class Conflict(ConveyorError):
    """The request contradicts the current state: a duplicate, a thing in use, a lost race."""

    status = 409


class TooManyRequests(ConveyorError):
    """Too many attempts in a while (failed sign-ins): the caller must wait before trying again."""

    status = 429


class Unavailable(ConveyorError):
    """What the request needs of the service's own setup is missing or failing (a KMS key): nothing the caller
    did, and nothing changed."""

    status = 503
