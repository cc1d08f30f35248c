"""Lambda entry of POST /api/projects/{projectId}/provision (start or resume the publish sequence): the
resolver for the router of svc_shared.routes.provision."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.edge import web
from svc_shared.routes import provision

logger = get_logger()
app = web.create_app(provision.router, session_writes=True)  # CSRF: JSON from this site only


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
