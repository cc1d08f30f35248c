"""Workspace integration routes of a project: its repository (create or link, listing, manual push) and its
database project (list, link). Session required; the project must be the caller's. Served by
functions/integrations/app.py, with CSRF checks on every write (JSON from this site only)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router  # .router would be one more import

from svc_shared.domain.bodies import ConnectRepoRequest, LinkDbProjectRequest, PushRequest
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import web
from svc_shared.wiring import services

router = Router()


def _user_id() -> str:
    return services.signin().current_user_id(web.cookie(router, SESSION_COOKIE))


@router.get("/api/integrations/db-host/projects/list")
def db_projects() -> Response:
    return web.success(projects=services.integrations().list_db_projects(_user_id()))


@router.post("/api/integrations/db-host/link")
def link_db_project() -> Response:
    body = web.parse_body(router, LinkDbProjectRequest)
    project = services.integrations().link_db_project(_user_id(), body.project_id, body.ref)
    return web.success(projectId=project.id, ref=project.db_project_ref)


@router.get("/api/repo-host/repos")
def list_repos() -> Response:
    raw_page = router.current_event.get_query_string_value("page") or "1"
    page = int(raw_page) if raw_page.isdecimal() and 0 < int(raw_page) <= 1000 else 1
    return web.success(repos=services.integrations().list_repos(_user_id(), page))


@router.post("/api/repo-host/connect-repo")
def connect_repo() -> Response:
    body = web.parse_body(router, ConnectRepoRequest)
    project = services.integrations().connect_repo(_user_id(), body)
    return web.success(projectId=project.id, repo=project.repo_host_repo, branch=project.repo_host_branch)


@router.post("/api/repo-host/push")
def push() -> Response:
    body = web.parse_body(router, PushRequest)
    result = services.integrations().push(_user_id(), body)
    return web.success(sha=result.sha, url=result.url, files=result.files, dropped=result.dropped)
