"""The gates a route passes before its handler: writes from this backoffice's own origin with a JSON body
(CSRF), and the role gate (a signed-in staff member of at least the route's minimum role)."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware

from svc_backoffice.access import auth
from svc_backoffice.access.roles import ROLE_RANK
from svc_backoffice.access.sessions import SESSION_COOKIE
from svc_backoffice.core import config, tenancy
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import (
    Forbidden,
    UnsupportedMediaType,
)
from svc_backoffice.core.logs import logger
from svc_backoffice.data.db import database
from svc_backoffice.domain.storefront_settings import origin_of as _origin_of
from svc_backoffice.edge.web import INSUFFICIENT_ROLE, SIGNED_OUT, cookie, redirect

# -- CSRF: writes authenticated by the session cookie ------------------------------------------------------
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def own_origin() -> str | None:
    """This backoffice's origin: its shop's base URL's when hosted, HANDOFF_AUDIENCE's self-hosted."""
    shop = tenancy.current_shop()
    return _origin_of(shop.base_url if shop is not None else config.self_hosted_settings().handoff_audience)


def check_same_origin(app: APIGatewayRestResolver) -> None:
    """Forbidden unless the request comes from this backoffice's origin or from no browser at all: a
    `Sec-Fetch-Site` other than same-origin, or an `Origin` other than ours, is another site's page (`null`
    passes only with Sec-Fetch-Site: same-origin). The platform applies the same rule
    (svc_shared.wiring.origins.cross_site_reason)."""
    headers = {k.lower(): v for k, v in (app.current_event.headers or {}).items()}
    site, origin = headers.get("sec-fetch-site"), headers.get("origin")
    refused = site is not None and site.strip().lower() != "same-origin"
    if origin is not None and not refused:
        if origin.strip().lower() == "null":
            refused = site is None
        else:
            refused = _origin_of(origin) is None or _origin_of(origin) != own_origin()
    if refused:
        logger.info("cross-site request refused", extra={"path": app.current_event.path})
        raise Forbidden(say("request.cross_site"))


def check_write(app: APIGatewayRestResolver) -> None:
    """A write of a signed-in staff member: from this backoffice's origin (403) with a JSON body type (415;
    a DELETE without a body needs none, as no form or `no-cors` request can send a DELETE)."""
    event = app.current_event
    method = event.http_method.upper()
    if method not in UNSAFE_METHODS:
        return
    check_same_origin(app)
    headers = {k.lower(): v for k, v in (event.headers or {}).items()}
    kind = (headers.get("content-type") or "").split(";")[0].strip().lower()
    if kind != "application/json" and (method != "DELETE" or event.body):
        raise UnsupportedMediaType(say("request.not_json"))


# -- role gate -----------------------------------------------------------------------------------------------
def role_gate(minimum: str) -> Callable[[APIGatewayRestResolver, NextMiddleware], Response]:
    needed = ROLE_RANK[minimum]

    def gate(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        staff = auth.current_staff(database(), cookie(app, SESSION_COOKIE))
        if staff is None:
            return redirect(SIGNED_OUT)
        # The role first, as the spec orders it: a member who may not write is told so before anything
        # about the request itself (its origin, its body) is looked at.
        if staff.rank < needed:
            return redirect(INSUFFICIENT_ROLE)
        check_write(app)
        app.append_context(staff=staff)
        return next_middleware(app)

    gate.__name__ = f"role_gate_{minimum}"
    return gate
