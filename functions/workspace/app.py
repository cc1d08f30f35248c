"""Lambda entry of the workspace pages (home, connections, a project with its publish progress and builder panel,
its files, diffs and knowledge, MCP access, and
their static files): the resolver for the routers of svc_shared.workspace.routes. Server-rendered, same-origin
with the §4.2 routes and authenticated by the same session cookie; forms carry a CSRF token bound to the
session (svc_shared.workspace.site)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget
from svc_shared.workspace.routes import ROUTERS
from svc_shared.workspace.site import create_app

logger = get_logger()
app = create_app(*ROUTERS)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    with time_budget(REQUEST_BUDGET_SECONDS):
        return app.resolve(event, context)
