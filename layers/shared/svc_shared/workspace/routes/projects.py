"""A project's page: its publish progress, Publish, and the repository and database it uses."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.edge import web
from svc_shared.wiring import services
from svc_shared.workspace import site, views, workbench_views

router = Router()

NOTICES = {
    "published": lambda: say("workspace.publishing_started"),
    "repo": lambda: say("workspace.repo_saved"),
    "database": lambda: say("workspace.database_linked"),
    "remixed": lambda: say("workspace.remixed"),
}
# Which form field an integrations error names (its code), so the message shows next to that field.
FIELD_OF_CODE = {"name_invalid": "name", "existing_repo_invalid": "existingRepo", "ref_invalid": "ref"}


def project_page(user: User, project_id: str, status: int = 200, **extra: Any) -> Response:
    context = views.project_page(user, project_id)
    db_projects: list[dict[str, Any]] = []
    db_note = None
    if context["owner"] and context["connections"].get("db_host", {}).get("connected"):
        try:
            db_projects = services.integrations().list_db_projects(user.id)
        except errors.DomainError as exc:
            db_note = exc.message
    elif context["owner"]:
        db_note = say("workspace.connect_db_host")
    form = {"mode": "create", "name": "", "existingRepo": "", "ref": "", **extra.pop("form", {})}
    builder = workbench_views.builder_panel(
        user,
        context["project"],
        context["owner"],
        extra.pop("message_id", None),
        extra.pop("builder_form", None),
        extra.pop("builder_error", None),
    )
    return site.page(
        router,
        status,
        "project.html",
        user,
        nav="home",
        db_projects=db_projects,
        db_note=db_note,
        form=form,
        field_errors=extra.pop("field_errors", {}),
        builder=builder,
        **context,
        **extra,
    )


@router.get("/workspace/projects/<projectId>")
def project(projectId: str) -> Response:
    user = site.current_user(router)
    done = router.current_event.get_query_string_value("done") or ""
    message_id = router.current_event.get_query_string_value("message") or None
    return project_page(
        user, projectId, notice=NOTICES[done]() if done in NOTICES else None, message_id=message_id
    )


@router.post("/workspace/projects/<projectId>/publish")
def publish(projectId: str) -> Response:
    user = site.current_user(router)
    site.form(router)
    try:
        services.provisioning().provision(user, projectId, start=True)
    except (errors.PaymentRequired, errors.Conflict) as exc:
        return project_page(user, projectId, web.status_for(exc), notice=exc.message, notice_kind="bad")
    return site.back(f"/workspace/projects/{projectId}", done="published")


@router.post("/workspace/projects/<projectId>/repo")
def connect_repo(projectId: str) -> Response:
    from svc_shared.domain.bodies import ConnectRepoRequest

    user = site.current_user(router)
    form = site.form(router)
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
        errors_by_field = {field: exc.message}
        return project_page(user, projectId, web.status_for(exc), form=fields, field_errors=errors_by_field)
    return site.back(f"/workspace/projects/{projectId}", done="repo")


@router.post("/workspace/projects/<projectId>/database")
def link_database(projectId: str) -> Response:
    user = site.current_user(router)
    form = site.form(router)
    ref = form.get("ref", "").strip()
    try:
        services.integrations().link_db_project(user.id, projectId, ref)
    except (errors.InvalidInput, errors.NotFound) as exc:
        if isinstance(exc, errors.NotFound) and exc.field != "ref":
            raise
        field_errors = {"ref": exc.message}
        return project_page(
            user, projectId, web.status_for(exc), form={"ref": ref}, field_errors=field_errors
        )
    return site.back(f"/workspace/projects/{projectId}", done="database")
