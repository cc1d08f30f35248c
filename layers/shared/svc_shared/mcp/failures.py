"""How /mcp answers a domain error a tool raises: the one table, by error class, and the tool result it makes.

The spec: a business-rule failure is a normal tool result with `isError: true` and a readable message. Every
domain error is one (the tool ran and refused); the table says, per class (a subclass takes its parent's row),
whether calling again as is may succeed. The result's text is the error's message; its `_meta` carries what
a client decides by, never the words: `{"svc/error": {"code", "retryable", "field"?, "retryAfter"?}}`.

The code rides in `_meta`, not `structuredContent`: SDK clients check `structuredContent` against the tool's
`outputSchema` (the TypeScript client even on an isError result), which an error's shape would fail; `_meta`
is never checked."""

from __future__ import annotations

from typing import Any

from svc_shared.core import errors

META_ERROR = "svc/error"

# Domain error class -> whether the same call may succeed later (a wait, a provider back up, a busy run done).
RETRYABLE_BY_ERROR: dict[type[errors.DomainError], bool] = {
    errors.InvalidInput: False,
    errors.Unauthenticated: False,
    errors.PaymentRequired: False,
    errors.Forbidden: False,
    errors.NotFound: False,
    errors.AlreadyExists: False,
    errors.Conflict: False,
    errors.PayloadTooLarge: False,
    errors.RateLimited: True,
    errors.UpstreamError: True,
    errors.DomainError: False,
}


def retryable(exc: errors.DomainError) -> bool:
    for cls in type(exc).__mro__:
        if cls in RETRYABLE_BY_ERROR:
            return RETRYABLE_BY_ERROR[cls]
    return False


def tool_error(
    message: str, code: str = "invalid_arguments", *, retryable: bool = False, **details: Any
) -> dict[str, Any]:
    """A tool result with isError true: `message` as its text, `code` (and `details`) in its `_meta`. The
    default code is the one of arguments the tool's input model refused."""
    return {
        "content": [{"type": "text", "text": message}],
        "isError": True,
        "_meta": {META_ERROR: {"code": code, "retryable": retryable, **details}},
    }


def answer(exc: errors.DomainError) -> dict[str, Any]:
    """The tool result for `exc`, by the table."""
    details: dict[str, Any] = {}
    if exc.field is not None:
        details["field"] = exc.field
    if isinstance(exc, errors.RateLimited):
        details["retryAfter"] = exc.retry_after
    return tool_error(exc.message, exc.code, retryable=retryable(exc), **details)
