"""Lambda entry of the backoffice admin function: the admin screens (svc_backoffice.admin)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_backoffice.admin import screens
from svc_backoffice.core.logs import logger
from svc_backoffice.edge.app import create_app
from svc_backoffice.routers.table import ROUTES

app = create_app(*screens.routers(ROUTES), not_found_page=screens.not_found_page)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
