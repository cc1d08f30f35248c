"""What every route of the authorization server shares: the resolver with its error answers (OAuth errors in
RFC 6749 form by the table of svc_shared.routes.oauth.wire, authorization requests that cannot continue as a page) and
the origin policy for the endpoints a browser-based MCP client calls cross-origin (svc_shared.wiring.origins).

Routes live on routers in `svc_shared.routes.oauth`; functions/oauth/app.py only builds the resolver from them."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.edge import pages, web
from svc_shared.oauth.errors import AuthorizeRequestError
from svc_shared.routes.oauth.wire import wire_error
from svc_shared.wiring import services
from svc_shared.wiring.origins import refused_origin_message

MAX_BODY = 64 * 1024  # of a registration, token or revocation request

# Paths a browser-based MCP client calls cross-origin. The consent screen is not one of them: it is a page of
# this origin, protected by its consent token.
CROSS_ORIGIN_PATHS = (
    "/.well-known/",
    "/oauth/register",
    "/oauth/token",
    "/oauth/revoke",
    "/register",
    "/token",
    "/revoke",
)


def create_app(*routers: Router) -> APIGatewayRestResolver:
    """The authorization server's resolver: `routers` included, domain errors answered by the OAuth table."""
    app = web.create_app(*routers)

    @app.exception_handler(errors.DomainError)
    def _domain_error(exc: errors.DomainError) -> Response:
        wire = wire_error(exc, app.current_event.path)
        retry_after = getattr(exc, "retry_after", None)
        if wire is None:  # the platform's answer, as every other function gives it
            headers = {"Retry-After": str(retry_after)} if isinstance(exc, errors.RateLimited) else None
            return web.json_response(web.status_for(exc), web.error_body(exc), headers=headers)
        code, status = wire
        headers = {"Pragma": "no-cache"}
        if retry_after:
            headers["Retry-After"] = str(retry_after)
        authorization = app.current_event.headers.get("authorization") or ""
        if code == "invalid_client" and authorization[:6].lower() == "basic ":
            headers["WWW-Authenticate"] = 'Basic realm="svc"'
        return web.json_response(status, {"error": code, "error_description": exc.message}, headers=headers)

    @app.exception_handler(AuthorizeRequestError)
    def _authorize_page_error(exc: AuthorizeRequestError) -> Response:
        page = pages.error_page(say("oauth.request_cannot_continue"), exc.message)
        return web.html_response(400, page)

    return app


def _header(event: dict[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name and value is not None:
            return str(value)
    return None


def serve(app: APIGatewayRestResolver, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """`event` answered by `app` under the origin policy: on the cross-origin paths, a refused Origin gets a
    403 and a preflight its answer before any route runs, and every answer carries the CORS headers."""
    path = str(event.get("path") or "")
    if not path.startswith(CROSS_ORIGIN_PATHS):
        return app.resolve(event, context)
    policy = services.origin_policy()
    origin = _header(event, "origin")
    if not policy.origin_allowed(origin):
        body = {"error": "invalid_request", "error_description": refused_origin_message(origin or "")}
        return {
            "statusCode": 403,
            "headers": {"Content-Type": "application/json", "Cache-Control": "no-store", "Vary": "Origin"},
            "body": json.dumps(body),
            "isBase64Encoded": False,
        }
    if str(event.get("httpMethod") or "").upper() == "OPTIONS":
        methods = "GET,OPTIONS" if path.startswith("/.well-known/") else "POST,OPTIONS"
        return {
            "statusCode": 204,
            "headers": policy.preflight_headers(origin, methods),
            "body": "",
            "isBase64Encoded": False,
        }
    answer = app.resolve(event, context)
    answer.setdefault("headers", {}).update(policy.cors_headers(origin))
    return answer
