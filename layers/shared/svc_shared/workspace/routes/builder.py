"""The builder panel of a project's page: send a message to the AI builder (as send_message without waiting),
follow it to its reply and commit (as get_message), and continue an edit session (list_edits)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.edge import web
from svc_shared.providers.http import ProviderError
from svc_shared.wiring import services
from svc_shared.workspace import site
from svc_shared.workspace import workbench_views as wv
from svc_shared.workspace.routes.projects import project_page

router = Router()


@router.post("/workspace/projects/<projectId>/builder")
def send(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    project = wv.owned_project(user, projectId)
    text = form.get("message", "").replace("\r\n", "\n")
    session = form.get("edit_session_id", "").strip() or None
    kept = {"message": text, "edit_session_id": session or ""}
    if session is not None and len(session) > 100:
        raise site.BadForm(say("workspace.edit_session_unknown"))
    problem = None
    if not text.strip():
        problem = say("workspace.builder_message_empty")
    elif len(text) > wv.MAX_MESSAGE:
        problem = say(
            "workspace.builder_message_too_long", max_length=f"{wv.MAX_MESSAGE:,}", length=f"{len(text):,}"
        )
    if problem:
        return project_page(user, project.id, 400, builder_form=kept, builder_error=problem)
    knowledge = services.accounts().workspace_knowledge(user.default_workspace_id)
    try:
        sent = services.workbench().send_message(user.id, project.id, text, session, False, knowledge)
    except errors.DomainError as exc:
        if isinstance(exc, errors.NotFound) and not isinstance(exc, ProviderError):
            raise
        status = web.status_for(exc)
        return project_page(user, project.id, status, builder_form=kept, builder_error=exc.message)
    return web.redirect(wv.project_path(project.id, message=str(sent["message_id"])) + "#builder")


@router.get("/workspace/projects/<projectId>/builder/messages/<messageId>")
def message_state(projectId: str, messageId: str) -> Response:
    """The message's state as JSON, for the panel's script (a browser without script follows the panel's
    Refresh link to the project page instead)."""
    user = site.current_user(router)
    try:
        project = wv.owned_project(user, projectId)
        state = services.workbench().get_message(user.id, messageId[:100])
    except errors.DomainError as exc:
        message = exc.message
        if isinstance(exc, errors.NotFound) and not isinstance(exc, ProviderError):
            message = say("workspace.builder_message_not_found")
        return web.json_response(web.status_for(exc), {"message": message})
    return web.json_response(200, wv.message_view(project.id, state), headers={"Cache-Control": "no-store"})
