"""The builder: send a message to the AI builder (as send_message without waiting) from the project page's panel
or the builder page, follow it to its reply and commit (as get_message), and each edit session's page with its
whole conversation beside a live preview of the shop."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.credits import MESSAGE_COST
from svc_shared.edge import web
from svc_shared.providers.http import ProviderError
from svc_shared.wiring import services
from svc_shared.workspace import site
from svc_shared.workspace import workbench_views as wv
from svc_shared.workspace.routes.projects import project_page

router = Router()


def builder_page(
    user: User,
    project_id: str,
    edit_session_id: str | None = None,
    status: int = 200,
    form: dict[str, str] | None = None,
    error: str | None = None,
) -> Response:
    """The builder page of a new session (`edit_session_id` None) or of one session, for the project's owner."""
    project = wv.owned_project(user, project_id)
    builder = wv.builder_page(user, project, edit_session_id, form, error)
    preview = builder["preview"]
    return site.page(
        router,
        status,
        "builder.html",
        user,
        nav="home",
        frame_src=preview["origin"] if preview else None,
        project=project,
        owner=True,
        builder=builder,
        # What Send costs, beside it, as on the project page's panel.
        credit_balance=services.credits().balance(user.id),
        message_cost=MESSAGE_COST,
    )


@router.get("/workspace/projects/<projectId>/builder")
def new_session(projectId: str) -> Response:
    return builder_page(site.current_user(router), projectId)


@router.get("/workspace/projects/<projectId>/builder/<sessionId>")
def session_page(projectId: str, sessionId: str) -> Response:
    """An edit session's page: its conversation, all of it, whenever it is opened again."""
    return builder_page(site.current_user(router), projectId, sessionId)


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
    # Sent from the builder page (view=builder): answered there, else on the project page's panel.
    on_builder_page = form.get("view") == "builder"

    def refused(status: int, message: str) -> Response:
        if on_builder_page:
            return builder_page(user, project.id, session, status, kept, message)
        return project_page(user, project.id, status, builder_form=kept, builder_error=message)

    if problem:
        return refused(400, problem)
    knowledge = services.accounts().workspace_knowledge(user.default_workspace_id)
    try:
        sent = services.workbench().send_message(user.id, project.id, text, session, False, knowledge)
    except errors.DomainError as exc:
        if isinstance(exc, errors.NotFound) and not isinstance(exc, ProviderError):
            raise
        return refused(web.status_for(exc), exc.message)
    if on_builder_page and sent.get("edit_session_id"):
        page = wv.session_page(str(sent["edit_session_id"]))
        return web.redirect(wv.project_path(project.id, page) + "#latest")
    return web.redirect(wv.project_path(project.id, message=str(sent["message_id"])) + "#builder")


@router.get("/workspace/projects/<projectId>/builder/messages/<messageId>")
def message_state(projectId: str, messageId: str) -> Response:
    """The message's state as JSON, for the builder's script (a browser without script follows the Refresh
    link instead); with ?live=1, also whether the site serves its commit yet."""
    user = site.current_user(router)
    try:
        project = wv.owned_project(user, projectId)
        state = services.workbench().get_message(user.id, messageId[:100])
    except errors.DomainError as exc:
        message = exc.message
        if isinstance(exc, errors.NotFound) and not isinstance(exc, ProviderError):
            message = say("workspace.builder_message_not_found")
        return web.json_response(web.status_for(exc), {"message": message})
    view = wv.message_view(project.id, state)
    if router.current_event.get_query_string_value("live") == "1" and view["commit_sha"]:
        # Beside the preview: whether the site serves this commit yet (the page then reloads its preview).
        history = services.workbench().site_deploys(user.id, project, with_log=False)
        view["live"] = bool(history and history.live and history.live.commit_sha == view["commit_sha"])
    return web.json_response(200, view, headers={"Cache-Control": "no-store"})
