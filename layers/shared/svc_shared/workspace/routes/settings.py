"""A project's settings, for its owner: its name, who sees it (private, its workspace; public explained as
reserved), Remix (a new project from its brief), the repository and database it uses, and Delete. Visibility
and Remix are the set_project_visibility and remix_project tools' functions (Projects.set_visibility,
Projects.remix); rename and delete have no tool (Projects.rename, Projects.delete). A workspace member who
may see the project is refused in words; anyone else finds nothing, as for an unknown project."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.projects import MAX_NAME, Project
from svc_shared.edge import web
from svc_shared.wiring import services
from svc_shared.workspace import site, views
from svc_shared.workspace.routes.projects import project_page, setup_form

router = Router()

CHOICES = ("private", "workspace")
SAVED = {
    "private": lambda: say("workspace.visible_private"),
    "workspace": lambda: say("workspace.visible_workspace"),
    "repo": lambda: say("workspace.repo_saved"),
    "database": lambda: say("workspace.database_linked"),
    "renamed": lambda: say("workspace.renamed"),
}
# Which form field an integrations error names (its code), so the message shows next to that field.
FIELD_OF_CODE = {"name_invalid": "name", "existing_repo_invalid": "existingRepo", "ref_invalid": "ref"}


def owned(user: User, project_id: str) -> Project:
    return views.owned_project(user, project_id, say("workspace.owner_only_settings"))


def settings_page(user: User, project: Project, status: int = 200, **extra: Any) -> Response:
    space = next(
        (w for w in services.accounts().list_workspaces(user.id) if w.id == project.workspace_id), None
    )
    connections = services.connections().details(user.id)
    return site.page(
        router,
        status,
        "settings.html",
        user,
        nav="home",
        project=project,
        workspace_name=space.name if space else "its workspace",
        max_name=MAX_NAME,
        publish=views.publish_state(project),
        rename=extra.pop("rename", {"name": project.name, "error": None}),
        delete_error=extra.pop("delete_error", None),
        form=setup_form(extra.pop("form", {})),
        field_errors=extra.pop("field_errors", {}),
        **views.setup(user, project, connections),
        **extra,
    )


@router.get("/workspace/projects/<projectId>/settings")
def settings(projectId: str) -> Response:
    user = site.current_user(router)
    project = owned(user, projectId)
    saved = router.current_event.get_query_string_value("saved") or ""
    return settings_page(user, project, notice=SAVED[saved]() if saved in SAVED else None)


@router.post("/workspace/projects/<projectId>/visibility")
def visibility(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    projects = services.projects()
    project = owned(user, projectId)
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
    remixed = services.projects().remix(owned(user, projectId), user)
    return site.back(f"/workspace/projects/{remixed.id}", done="remixed")


@router.post("/workspace/projects/<projectId>/rename")
def rename(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    project = owned(user, projectId)
    name = form.get("name", "")
    try:
        project = services.projects().rename(project, name)
    except errors.InvalidInput as exc:
        return settings_page(user, project, 400, rename={"name": name, "error": exc.message})
    return site.back(f"/workspace/projects/{project.id}/settings", saved="renamed")


@router.post("/workspace/projects/<projectId>/delete")
def delete(projectId: str) -> Response:
    """Delete after the project's name is typed (exactly, surrounding spaces aside): what publishing made in
    the owner's own GitHub, Supabase and Netlify accounts stays, as the form says."""
    user = site.current_user(router)
    form = site.form(router)
    project = owned(user, projectId)
    if form.get("confirm_name", "").strip() != project.name:
        message = say("workspace.delete_name_mismatch", name=project.name)
        return settings_page(user, project, 400, delete_error=message)
    try:
        services.projects().delete(project)
    except errors.Conflict as exc:
        return settings_page(user, project, 409, delete_error=exc.message)
    return site.back("/", done="deleted")


def setup_answer(user: User, project_id: str, status: int, on_settings: bool, **extra: Any) -> Response:
    """A repository or database form's refusal, on the page the form was on."""
    if on_settings:
        return settings_page(user, owned(user, project_id), status, **extra)
    return project_page(user, project_id, status, **extra)


def setup_done(project_id: str, on_settings: bool, what: str) -> Response:
    if on_settings:
        return site.back(f"/workspace/projects/{project_id}/settings", saved=what)
    return site.back(f"/workspace/projects/{project_id}", done=what)


@router.post("/workspace/projects/<projectId>/repo")
def connect_repo(projectId: str) -> Response:
    from svc_shared.domain.bodies import ConnectRepoRequest

    user = site.current_user(router)
    form = site.form(router)
    on_settings = form.get("from") == "settings"
    fields = {k: form.get(k, "").strip() for k in ("mode", "name", "existingRepo")}
    try:
        body = web.parse(
            ConnectRepoRequest,
            {
                "projectId": projectId,
                "mode": fields["mode"] or "create",
                "name": fields["name"] if fields["mode"] != "link" else None,
                "existingRepo": fields["existingRepo"] if fields["mode"] == "link" else None,
            },
        )
        services.integrations().connect_repo(user.id, body)
    except (errors.InvalidInput, errors.NotFound) as exc:
        if isinstance(exc, errors.NotFound) and exc.field != "existingRepo":
            raise
        field = FIELD_OF_CODE.get(exc.code, "existingRepo" if fields["mode"] == "link" else "name")
        status = web.status_for(exc)
        return setup_answer(
            user, projectId, status, on_settings, form=fields, field_errors={field: exc.message}
        )
    return setup_done(projectId, on_settings, "repo")


@router.post("/workspace/projects/<projectId>/database")
def link_database(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    on_settings = form.get("from") == "settings"
    ref = form.get("ref", "").strip()
    try:
        services.integrations().link_db_project(user.id, projectId, ref)
    except (errors.InvalidInput, errors.NotFound) as exc:
        if isinstance(exc, errors.NotFound) and exc.field != "ref":
            raise
        status = web.status_for(exc)
        return setup_answer(
            user, projectId, status, on_settings, form={"ref": ref}, field_errors={"ref": exc.message}
        )
    return setup_done(projectId, on_settings, "database")
