"""A project's settings: who sees it (private, its workspace; public explained as reserved) and Remix, a new
project from its brief. Same functions as the set_project_visibility and remix_project tools
(Projects.set_visibility, Projects.remix), for the project's owner."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.projects import Project
from svc_shared.wiring import services
from svc_shared.workspace import site

router = Router()

CHOICES = ("private", "workspace")
SAVED = {
    "private": lambda: say("workspace.visible_private"),
    "workspace": lambda: say("workspace.visible_workspace"),
}


def settings_page(user: User, project: Project, status: int = 200, **extra: object) -> Response:
    space = next(
        (w for w in services.accounts().list_workspaces(user.id) if w.id == project.workspace_id), None
    )
    return site.page(
        router,
        status,
        "settings.html",
        user,
        nav="home",
        project=project,
        workspace_name=space.name if space else "its workspace",
        **extra,
    )


@router.get("/workspace/projects/<projectId>/settings")
def settings(projectId: str) -> Response:
    user = site.current_user(router)
    project = services.projects().owned(projectId, user.id)
    saved = router.current_event.get_query_string_value("saved") or ""
    return settings_page(user, project, notice=SAVED[saved]() if saved in SAVED else None)


@router.post("/workspace/projects/<projectId>/visibility")
def visibility(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    projects = services.projects()
    project = projects.owned(projectId, user.id)
    choice = form.get("visibility", "")
    if choice not in CHOICES:
        message = say("workspace.visibility_choice")
        return settings_page(user, project, 400, notice=message, notice_kind="bad")
    project = projects.set_visibility(project, choice)
    return site.back(f"/workspace/projects/{project.id}/settings", saved=project.visibility)


@router.post("/workspace/projects/<projectId>/remix")
def remix(projectId: str) -> Response:
    user = site.current_user(router)
    site.form(router)
    projects = services.projects()
    remixed = projects.remix(projects.owned(projectId, user.id), user)
    return site.back(f"/workspace/projects/{remixed.id}", done="remixed")
