"""The resolver factory: one database transaction per request, and the one table from domain error to HTTP
status and body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.router import Router

from svc_backoffice.core import tenancy
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import (
    Conflict,
    DomainError,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    Unavailable,
    Unprocessable,
    UnsupportedMediaType,
    WebhookRejected,
)
from svc_backoffice.core.logs import logger
from svc_backoffice.data.db import database
from svc_backoffice.domain import site_builds
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.gate import UNSAFE_METHODS
from svc_backoffice.edge.routes import methods_at
from svc_backoffice.edge.web import _RequestLocalResolver, answer_headers, json_response

# The one table from domain error to HTTP status.
STATUS_BY_ERROR: dict[type[DomainError], int] = {
    InvalidInput: 400,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    Unprocessable: 422,
    RateLimited: 429,
    Unavailable: 503,
    WebhookRejected: 400,
}


def _error_body(exc: DomainError) -> dict[str, Any]:
    if isinstance(exc, WebhookRejected):
        return {"ok": False, "error": exc.message}
    if isinstance(exc, InvalidInput) and exc.issues is not None:
        return {"error": exc.issues}
    return {"error": exc.message}


def _transaction(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
    shop = tenancy.current_shop()
    if shop is not None and shop.absent:  # a shop that is not there serves its sign-in pages, no database
        return next_middleware(app)
    with database().transaction():
        response = next_middleware(app)
    if app.current_event.http_method.upper() in UNSAFE_METHODS:
        # Committed: the storefront site is asked to rebuild if the catalog changed (debounced); a failure
        # here is logged, never the request's.
        try:
            site_builds.after_write(database())
        except Exception:  # noqa: BLE001 - logged with its stack; the write itself succeeded
            logger.exception("storefront rebuild check failed")
    return response


def create_app(
    *routers: ApiRouter | Router, not_found_page: Callable[[], Response] | None = None
) -> APIGatewayRestResolver:
    """A resolver serving `routers`, each request in one database transaction. `not_found_page` answers an
    unknown path outside /api/ that a browser asks for as a page (the admin screens' 404 in words)."""
    app = _RequestLocalResolver()
    app.use(middlewares=[_transaction])
    # The declared routes (the admin screens' plain Routers declare none): what a 405 names.
    routes = tuple(r for router in routers if isinstance(router, ApiRouter) for r in router.declared)

    @app.exception_handler(DomainError)
    def _domain_error(exc: DomainError) -> Response:
        if isinstance(exc, Unavailable):
            logger.warning("dependency unavailable", extra={"reason": exc.reason})
        status = next((STATUS_BY_ERROR[c] for c in type(exc).__mro__ if c in STATUS_BY_ERROR), 400)
        extra = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else {}
        return json_response(status, _error_body(exc), headers={**answer_headers(), **extra})

    @app.not_found
    def _not_found(_: Exception) -> Response:
        allowed = methods_at(app.current_event.path, routes)
        if allowed:
            return json_response(
                405,
                {"error": say("request.method_not_allowed", methods=", ".join(allowed))},
                headers={"Allow": ", ".join(allowed)},
            )
        event = app.current_event
        accept = {k.lower(): v for k, v in (event.headers or {}).items()}.get("accept", "")
        if not_found_page is not None and not event.path.startswith("/api/") and "text/html" in accept:
            return not_found_page()
        return json_response(404, {"error": say("request.not_found")})

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        # The detail (which may name tables, values or settings) stays in the log, found by the request id.
        request_id = app.current_event.request_context.request_id
        logger.exception("unhandled error", extra={"request_id": request_id})
        return json_response(500, {"error": say("request.internal_error"), "request_id": request_id})

    for router in routers:
        app.include_router(router, prefix=getattr(router, "prefix", None))
    return app
