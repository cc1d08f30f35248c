"""Domain errors. They know nothing of HTTP; each surface maps them to its protocol in one place."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of every error the domain raises on purpose. `message` is safe to show to the caller; `code`
    says what went wrong and `field` which request field it concerns (None: the request as a whole), so
    callers and edges decide by them, never by the words of the message. A subclass names its code in its
    declaration: `class NotFound(DomainError, code="not_found")`."""

    code = "error"

    def __init_subclass__(cls, *, code: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code


class InvalidInput(DomainError, code="invalid_request"): ...


class NotFound(DomainError, code="not_found"): ...


class AlreadyExists(DomainError, code="already_exists"): ...


class Conflict(DomainError, code="conflict"): ...


class Unauthenticated(DomainError, code="unauthenticated"): ...


class Forbidden(DomainError, code="forbidden"): ...


class PaymentRequired(DomainError, code="UPGRADE_REQUIRED"): ...


class PayloadTooLarge(DomainError, code="payload_too_large"): ...


class RateLimited(DomainError, code="rate_limited"):
    def __init__(
        self, message: str, *, retry_after: int, code: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, code=code, field=field)
        self.retry_after = max(1, int(retry_after))


class UpstreamError(DomainError, code="upstream_error"):
    """A provider failed or could not be reached; the operation may be retried."""
