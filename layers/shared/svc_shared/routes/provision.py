"""POST /api/projects/{projectId}/provision: start or resume the publish sequence of a project and report
its stage. Owner only, paid plan only; the workspace polls it every 3 s. Served by
functions/provision/app.py, with CSRF checks on every write (JSON from this site only)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router  # .router would be one more import

from svc_shared.domain.bodies import ProvisionRequest
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import web
from svc_shared.wiring import services

router = Router()


@router.post("/api/projects/<projectId>/provision")
def provision(projectId: str) -> Response:
    user = services.signin().current_user(web.cookie(router, SESSION_COOKIE))
    body = web.parse_body(router, ProvisionRequest, optional=True)
    report = services.provisioning().provision(user, projectId, start=body.action == "start")
    return web.json_response(200, report)
