"""The OAuth endpoints' one error table. A domain error that reaches the registration, token or revocation
endpoint (or any OAuthError) is answered in RFC 6749 §5.2 form, `{"error", "error_description"}`, with the
error code and HTTP status its domain code has here; routes raise domain errors and never convert them.

Codes not in the table fall back to the platform's own table (svc_shared.edge.web)."""

from __future__ import annotations

from svc_shared.core import errors
from svc_shared.oauth.errors import OAuthError

# The endpoints that answer in RFC form, by path, each with its error for a request it cannot read: RFC 7591
# §3.2.2 names invalid_client_metadata for registration; RFC 6749 §5.2 and RFC 7009 §2.2.1 invalid_request.
# The SDKs fall back to /register, /token and /revoke at the origin, so those paths are the same endpoints.
MALFORMED_BY_PATH = {
    "/oauth/register": "invalid_client_metadata",
    "/register": "invalid_client_metadata",
    "/oauth/token": "invalid_request",
    "/token": "invalid_request",
    "/oauth/revoke": "invalid_request",
    "/revoke": "invalid_request",
}
MALFORMED = ""  # in the table: the endpoint's error for a request it cannot read (MALFORMED_BY_PATH)

# Domain error code -> (OAuth error code, HTTP status).
WIRE_ERRORS: dict[str, tuple[str, int]] = {
    # A body the endpoint cannot read: its content type, its size, its JSON or form syntax.
    "unsupported_media_type": (MALFORMED, 400),
    "payload_too_large": (MALFORMED, 400),
    "invalid_json": (MALFORMED, 400),
    "invalid_form": (MALFORMED, 400),
    # RFC 6749 §5.2 (and RFC 8707 §2 invalid_target), raised by the oauth modules with their wire code.
    "invalid_request": ("invalid_request", 400),
    "invalid_client": ("invalid_client", 401),
    "invalid_grant": ("invalid_grant", 400),
    "unauthorized_client": ("unauthorized_client", 400),
    "unsupported_grant_type": ("unsupported_grant_type", 400),
    "invalid_scope": ("invalid_scope", 400),
    "invalid_target": ("invalid_target", 400),
    "server_error": ("server_error", 500),
    # RFC 7591 §3.2.2.
    "invalid_client_metadata": ("invalid_client_metadata", 400),
    "invalid_redirect_uri": ("invalid_redirect_uri", 400),
    # RFC 7009 §2.2.1.
    "unsupported_token_type": ("unsupported_token_type", 400),
    # Registration's rate limit (errors.RateLimited); the answer carries Retry-After.
    "rate_limited": ("rate_limited", 429),
}


def wire_error(exc: errors.DomainError, path: str) -> tuple[str, int] | None:
    """The OAuth error code and status for `exc` raised while serving `path`; None when the platform's table
    answers instead (a path outside the RFC endpoints, or a code this table does not have)."""
    if path not in MALFORMED_BY_PATH and not isinstance(exc, OAuthError):
        return None
    row = WIRE_ERRORS.get(exc.code)
    if row is None:
        return None
    code, status = row
    return (code or MALFORMED_BY_PATH.get(path, "invalid_request")), status
