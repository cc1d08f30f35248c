"""Workspace integration routes of a project: its repository (create or link, listing, manual push) and its
database project (list, link). Session required; the project must be the caller's."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import services, web
from svc_shared.bodies import ConnectRepoRequest, LinkDbProjectRequest, PushRequest
from svc_shared.logs import get_logger
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget
from svc_shared.sessions import SESSION_COOKIE

logger = get_logger()
app = web.create_resolver(session_writes=True)  # CSRF: JSON from this site only


def _user_id() -> str:
    return services.signin().current_user_id(web.cookie(app, SESSION_COOKIE))


@app.get("/api/integrations/db-host/projects/list")
def db_projects() -> Response:
    return web.json_response(
        200, {"success": True, "projects": services.integrations().list_db_projects(_user_id())}
    )


@app.post("/api/integrations/db-host/link")
def link_db_project() -> Response:
    body = web.parse_body(app, LinkDbProjectRequest)
    project = services.integrations().link_db_project(_user_id(), body.project_id, body.ref)
    return web.json_response(200, {"success": True, "projectId": project.id, "ref": project.db_project_ref})


@app.get("/api/repo-host/repos")
def list_repos() -> Response:
    raw_page = app.current_event.get_query_string_value("page") or "1"
    page = int(raw_page) if raw_page.isdigit() and 0 < int(raw_page) <= 1000 else 1
    return web.json_response(
        200, {"success": True, "repos": services.integrations().list_repos(_user_id(), page)}
    )


@app.post("/api/repo-host/connect-repo")
def connect_repo() -> Response:
    body = web.parse_body(app, ConnectRepoRequest)
    project = services.integrations().connect_repo(_user_id(), body)
    return web.json_response(
        200,
        {
            "success": True,
            "projectId": project.id,
            "repo": project.repo_host_repo,
            "branch": project.repo_host_branch,
        },
    )


@app.post("/api/repo-host/push")
def push() -> Response:
    body = web.parse_body(app, PushRequest)
    result = services.integrations().push(_user_id(), body)
    return web.json_response(
        200,
        {
            "success": True,
            "sha": result.sha,
            "url": result.url,
            "files": result.files,
            "dropped": result.dropped,
        },
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    with time_budget(REQUEST_BUDGET_SECONDS):  # API Gateway answers 504 at 29 s: finish well before
        return app.resolve(event, context)
