"""Lambda entry of the workspace's provider connections (start a provider's OAuth flow, its callback, the
summary, disconnect): the resolver for svc_shared.routes.connections. Session-authenticated writes must be
JSON from this site (CSRF), which the resolver checks before any route runs."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.edge import web
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget
from svc_shared.routes import connections

logger = get_logger()
app = web.create_app(connections.router, session_writes=True)  # CSRF: JSON from this site only


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    with time_budget(REQUEST_BUDGET_SECONDS):  # API Gateway answers 504 at 29 s: finish well before
        return app.resolve(event, context)
