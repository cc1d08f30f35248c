"""POST /api/projects/{projectId}/provision: start or resume the publish sequence of a project and report
its stage. Owner only, paid plan only; the workspace polls it every 3 s."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import services, web
from svc_shared.bodies import ProvisionRequest
from svc_shared.logs import get_logger
from svc_shared.sessions import SESSION_COOKIE

logger = get_logger()
app = web.create_resolver(session_writes=True)  # CSRF: JSON from this site only


@app.post("/api/projects/<projectId>/provision")
def provision(projectId: str) -> Response:
    user = services.signin().current_user(web.cookie(app, SESSION_COOKIE))
    body = web.parse_body(app, ProvisionRequest, optional=True)
    report = services.provisioning().provision(user, projectId, start=body.action == "start")
    return web.json_response(200, report)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
