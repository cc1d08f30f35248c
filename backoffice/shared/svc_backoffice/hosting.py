"""The hosted backoffice: the platform's one deployment serves every published shop under
`{PUBLIC_BASE_URL}/shops/{project_id}`. The platform resolves the shop from the path, decrypts its
credentials and calls `handle` with the event (its `path` already relative to the shop) and the Shop; every
route of every group is served here, with everything per shop (database, session key, hand-off keys and
audience, field-sealing key, the paths the backoffice emits) current for that request only.

The merchant's own deployment (template.yaml, one function per group) never imports this module."""

from __future__ import annotations

import contextvars
from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from svc_backoffice import db, tenancy
from svc_backoffice.routers import (
    auth,
    blog,
    catalog,
    commerce,
    integrations,
    inventory,
    search,
    settings,
    shipping,
)
from svc_backoffice.tenancy import Shop
from svc_backoffice.web import create_app, logger, start_log_context

__all__ = ["Shop", "handle"]

# One resolver with every router: the groups share their heavy imports (Powertools, pydantic models,
# psycopg, cryptography), so all of them cost little more at a cold start than one (docs/decisions.md,
# "Backoffice hosting").
app = create_app(
    *catalog.ROUTERS,
    *inventory.ROUTERS,
    *settings.ROUTERS,
    *search.ROUTERS,
    *commerce.ROUTERS,
    *shipping.ROUTERS,
    *blog.ROUTERS,
    *integrations.ROUTERS,
    *auth.ROUTERS,
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def _resolve(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)


def _serve(event: dict[str, Any], context: Any, shop: Shop) -> dict[str, Any]:
    start_log_context(shop=shop.id)
    with tenancy.serving(shop), db.POOL.lease(shop.conninfo) as database, db.serving(database):
        return _resolve(event, context)


def handle(event: dict[str, Any], context: Any, shop: Shop) -> dict[str, Any]:
    """Serve one API Gateway proxy event (REST / payload format 1.0) whose `path` is already relative to
    the shop (`/api/products`, `/auth/sso`), as that shop's backoffice. Runs in a copy of the caller's
    context, so nothing this request makes current (the shop, its database, the resolver's event, log keys)
    outlives it or reaches the caller, even on errors."""
    return contextvars.copy_context().run(_serve, event, context, shop)
