"""Lambda entry of the backoffice admin function: the admin screens (svc_backoffice.admin)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_backoffice.admin.screens import ROUTERS, not_found_page
from svc_backoffice.web import create_app, logger

app = create_app(*ROUTERS, not_found_page=not_found_page)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
