"""Lambda entry of the backoffice auth function: the resolver for its routers (svc_backoffice.routers.auth and the
OpenAPI document's, which describes every router: svc_backoffice.routers.table)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_backoffice.core.logs import logger
from svc_backoffice.edge.app import create_app
from svc_backoffice.routers.table import ROUTERS

app = create_app(*ROUTERS["auth"])


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
