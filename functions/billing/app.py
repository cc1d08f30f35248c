"""Lambda entry of the checkout provider's webhook (a paid credit top-up becomes credits, once per checkout
session): the resolver for svc_shared.routes.billing."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.edge import web
from svc_shared.routes import billing

logger = get_logger()
app = web.create_app(billing.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
