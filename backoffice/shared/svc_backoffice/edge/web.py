"""The HTTP surface every backoffice router shares: the resolver that keeps each request's event and context
per `contextvars` context, JSON and redirect responses, and the session cookie (written here, read by
`core/cookies.py`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.shared.cookies import Cookie, SameSite
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from svc_backoffice.access.sessions import SESSION_COOKIE
from svc_backoffice.core import config, tenancy
from svc_backoffice.core.cookies import PerContext
from svc_backoffice.core.cookies import cookie as cookie  # the product's one cookie reader

_current_event: ContextVar[Any] = ContextVar("backoffice_current_event", default=None)
_lambda_context: ContextVar[Any] = ContextVar("backoffice_lambda_context", default=None)
_request_context: ContextVar[dict[str, Any] | None] = ContextVar("backoffice_request_context", default=None)
# Headers a route's middleware wants on every answer of the request, an error's too (CORS).
_answer_headers: ContextVar[dict[str, str] | None] = ContextVar("backoffice_answer_headers", default=None)


def answer_with(headers: dict[str, str]) -> None:
    """`headers` on this request's answer, whatever it is (a domain error's included)."""
    _answer_headers.set({**(_answer_headers.get() or {}), **headers})


def answer_headers() -> dict[str, str]:
    return dict(_answer_headers.get() or {})


class _RequestLocalResolver(APIGatewayRestResolver):
    """Powertools keeps the current event as a class attribute of its routers (one request per process on
    Lambda) and the request's context (`append_context`) on the resolver that last included a router; this
    resolver keeps both per `contextvars` context, so requests served side by side in one process each see
    their own, and a router included by two resolvers in one process (a group's function and the hosted
    one) reads the context of the resolver serving the request."""

    @property
    def context(self) -> dict[str, Any]:
        value = _request_context.get()
        if value is None:
            value = {}
            _request_context.set(value)
        return value

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        _request_context.set(value)

    current_event = PerContext(_current_event)
    lambda_context = PerContext(_lambda_context)

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        _request_context.set({})
        _answer_headers.set(None)
        if isinstance(event, dict):
            _current_event.set(APIGatewayProxyEvent(event))
        _lambda_context.set(context)
        return with_security_headers(super().resolve(event, context))


# Every answer, whatever gave it (a route, the gate, an error handler, the resolver's own 404 or 405): never
# sniffed as another type, and, unless it is a page with a policy of its own, loading and framing nothing (the
# hosted shops share the workspace's origin).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}


def with_security_headers(result: dict[str, Any]) -> dict[str, Any]:
    """`result` (a proxy answer) with SECURITY_HEADERS where it has none of that name."""
    multi = result.setdefault("multiValueHeaders", {})
    present = {name.lower() for name in (*multi, *(result.get("headers") or {}))}
    for name, value in SECURITY_HEADERS.items():
        if name.lower() not in present:
            multi[name] = [value]
    return result


SIGNED_OUT = "/auth/signed-out"
OK = {"ok": True}
INSUFFICIENT_ROLE = "/auth/signed-out?reason=insufficient_role"


def json_response(status: int, body: Any, *, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(body, separators=(",", ":"), default=str),
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def redirect(location: str, *, cookies: list[Cookie] | None = None) -> Response:
    """A 302 to `location`. A path (`/auth/signed-out`) is one of this backoffice's: under the shop's base
    path when hosted (tenancy.path), as it is when self-hosted; an absolute URL (a configured return URL) is
    sent as it is."""
    if location.startswith("/") and not location.startswith("//"):
        location = tenancy.path(location)
    return Response(
        status_code=302, headers={"Location": location, "Cache-Control": "no-store"}, cookies=cookies
    )


def session_cookie(value: str, *, max_age: int) -> Cookie:
    """The svc_session cookie: Path is the shop's base path when hosted (`/` self-hosted), so a browser never
    sends one shop's session to another; Secure unless the shop (or COOKIE_SECURE=false) says plain HTTP."""
    shop = tenancy.current_shop()
    return Cookie(
        name=SESSION_COOKIE,
        value=value,
        path=tenancy.cookie_path(),
        secure=shop.secure if shop is not None else config.self_hosted_settings().cookie_secure,
        http_only=True,
        max_age=max_age,
        same_site=SameSite.LAX_MODE,
    )
