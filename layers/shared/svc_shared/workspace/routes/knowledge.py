"""Knowledge: the builder instructions of the workspace and of each project (as get/set_workspace_knowledge
and get/set_project_knowledge): at most 10 KB, an empty text clears, a project's own take precedence."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.projects import Project, check_knowledge
from svc_shared.wiring import services
from svc_shared.workspace import site
from svc_shared.workspace import workbench_views as wv

router = Router()

# The page's banner, by the `done` code (a fixed message, never text from the query).
NOTICES = {
    "saved": lambda: say("workspace.knowledge_saved"),
    "cleared": lambda: say("workspace.knowledge_cleared"),
}


def _text(form: dict[str, str]) -> str:
    # Browsers send a textarea's line breaks as CRLF; the text is stored as typed, with \n.
    return form.get("text", "").replace("\r\n", "\n")


def _page(
    user: User, status: int, text: str, project: Project | None = None, error: str | None = None, **extra: Any
) -> Response:
    projects = [] if project else services.projects().list_owned(user.id)
    return site.page(
        router,
        status,
        "knowledge.html",
        user,
        nav="knowledge",
        project=project,
        projects=projects,
        text=text,
        count=wv.knowledge_count(text),
        error=error,
        **extra,
    )


def _notice() -> str | None:
    notice = NOTICES.get(router.current_event.get_query_string_value("done") or "")
    return notice() if notice else None


@router.get("/workspace/knowledge")
def workspace_knowledge() -> Response:
    user = site.current_user(router)
    text = services.accounts().workspace_knowledge(user.default_workspace_id)
    return _page(user, 200, text, notice=_notice())


@router.post("/workspace/knowledge")
def save_workspace_knowledge() -> Response:
    user = site.current_user(router)
    text = _text(site.form(router))
    try:
        services.accounts().set_workspace_knowledge(user.default_workspace_id, check_knowledge(text))
    except errors.InvalidInput as exc:
        return _page(user, 400, text, error=exc.message)
    return site.back("/workspace/knowledge", done="saved" if text else "cleared")


@router.get("/workspace/projects/<projectId>/knowledge")
def project_knowledge(projectId: str) -> Response:
    user = site.current_user(router)
    project = wv.owned_project(user, projectId)
    return _page(user, 200, project.knowledge, project, notice=_notice())


@router.post("/workspace/projects/<projectId>/knowledge")
def save_project_knowledge(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    project = wv.owned_project(user, projectId)
    text = _text(form)
    try:
        services.projects().update(project, {"knowledge": check_knowledge(text) or None})
    except errors.InvalidInput as exc:
        return _page(user, 400, text, project, error=exc.message)
    return site.back(f"/workspace/projects/{project.id}/knowledge", done="saved" if text else "cleared")
