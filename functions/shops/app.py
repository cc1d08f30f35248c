"""The hosted backoffice: every published shop at /shops/{projectId}/..., served by svc_backoffice.hosting.shops on
that shop's own database. This handler finds the shop and hands the request over with a path relative to the
shop (svc_shared.routes.shops); everything else is the backoffice's."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.routes import shops

logger = get_logger()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    found = shops.find(event)
    if isinstance(found, dict):  # no such shop, or it could not be resolved
        return found
    # Imported here, on the request path: the backoffice layer loads only when a shop is served.
    from svc_backoffice.hosting import shops as hosting

    shop = hosting.Shop(
        id=found.id,
        base_url=found.base_url,
        conninfo=found.conninfo,
        session_key=found.session_key,
        field_key=found.field_key,
        handoff_public_keys=found.handoff_public_keys,
        storefront_url=found.storefront_url,
        build_hook_url=found.build_hook_url,
    )
    return hosting.handle(shops.shop_event(event), context, shop, migrations_dir=shops.migrations_dir())
