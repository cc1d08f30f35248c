"""The hosted backoffice: every published shop at /shops/{projectId}/..., served by svc_backoffice.hosting.shops on
that shop's own database. This handler finds the shop (the backoffice's own `Shop`) and hands the request over
with a path relative to the shop (svc_shared.routes.shops); everything else is the backoffice's."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.routes import shops
from svc_shared.wiring import services

logger = get_logger()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    shop = shops.find(event)
    if isinstance(shop, dict):  # no such shop, or it could not be resolved
        return shop
    # Imported here, on the request path: the backoffice's routers load only when a shop is served.
    from svc_backoffice.hosting import shops as hosting

    migrations = services.shops().migrations_dir()
    return hosting.handle(shops.shop_event(event), context, shop, migrations_dir=migrations)
