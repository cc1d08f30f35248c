"""Domain errors of the backoffice. They know nothing of HTTP; web.py maps them to statuses in one table."""

from __future__ import annotations

from typing import Any

from svc_backoffice.core.catalogue import say


class DomainError(Exception):
    """An error raised on purpose; `message` is safe to show to the caller."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DomainError):
    """Malformed JSON or a body/query that fails its schema. `issues` is the flattened schema report."""

    def __init__(self, message: str, issues: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.issues = issues


class NotFound(DomainError):
    def __init__(self, message: str | None = None) -> None:
        super().__init__(say("request.not_found") if message is None else message)


class PayloadTooLarge(DomainError):
    """A request body over the size the route reads."""


class Forbidden(DomainError):
    pass


class UnsupportedMediaType(DomainError):
    """A write whose body is not declared JSON (415): what a form or a `no-cors` request can send."""


class Conflict(DomainError):
    """A uniqueness rule of the database refused the write (SQLSTATE 23505)."""


class Unprocessable(DomainError):
    """A rule of the database refused the write: check violation, missing reference, illegal transition."""


class Unavailable(DomainError):
    """Something the request needs cannot be reached now (the shop's database); worth retrying later.
    `reason` is for the log only."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class WebhookRejected(DomainError):
    """A payment webhook call that is not processed; `message` is a stable code (`signature_failed`, ...)."""


class RateLimited(DomainError):
    """Too many requests of one client in a window; `retry_after` is seconds until the window ends."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
