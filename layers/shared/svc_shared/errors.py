"""Domain errors. They know nothing of HTTP; each surface maps them to its protocol in one place."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error the domain raises on purpose. `message` is safe to show to the caller."""

    code = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidInput(DomainError):
    code = "invalid_request"


class NotFound(DomainError):
    code = "not_found"


class AlreadyExists(DomainError):
    code = "already_exists"


class Conflict(DomainError):
    code = "conflict"


class Unauthenticated(DomainError):
    code = "unauthenticated"


class Forbidden(DomainError):
    code = "forbidden"


class PaymentRequired(DomainError):
    code = "UPGRADE_REQUIRED"


class PayloadTooLarge(DomainError):
    code = "payload_too_large"


class RateLimited(DomainError):
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = max(1, int(retry_after))


class UpstreamError(DomainError):
    """A provider failed or could not be reached; the operation may be retried."""

    code = "upstream_error"
