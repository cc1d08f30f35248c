"""OAuth protocol errors (RFC 6749 §5.2, RFC 7591 §3.2.2), carried as domain errors with their wire code."""

from __future__ import annotations

from svc_shared.core.errors import DomainError


class OAuthError(DomainError):
    """`code` is the RFC error code; `message` its error_description."""

    def __init__(self, code: str, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class AuthorizeRequestError(OAuthError):
    """An authorization request that cannot be answered with a redirect: the client or redirect URI is not
    trusted, so the error is shown to the user on a page instead."""
