"""A project's page: its publish progress, Publish, the facts and deploys it follows without a reload (the
state its script polls), and the repository and database forms until it is published."""

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
# How soon the project page asks again: while a publish or a deploy is on its way, and otherwise.
MOVING_POLL_MS = 3000
IDLE_POLL_MS = 15000


def project_page(user: User, project_id: str, status: int = 200, **extra: Any) -> Response:
    context = views.project_page(user, project_id)
    builder = workbench_views.builder_panel(
        user,
        context["project"],
        context["owner"],
        extra.pop("message_id", None),
        extra.pop("builder_form", None),
        extra.pop("builder_error", None),
    )
    # The repository and database forms are here only until the shop is published (then on Settings).
    with_setup = context["owner"] and not context["publish"]["done"]
    return site.page(
        router,
        status,
        "project.html",
        user,
        nav="home",
        **(views.setup(user, context["project"], context["connections"]) if with_setup else {}),
        form=setup_form(extra.pop("form", {})),
        field_errors=extra.pop("field_errors", {}),
        builder=builder,
        **context,
        **extra,
    )


def setup_form(given: dict[str, str]) -> dict[str, str]:
    return {"mode": "create", "name": "", "existingRepo": "", "ref": "", **given}


@router.get("/workspace/projects/<projectId>")
def project(projectId: str) -> Response:
    user = site.current_user(router)
    done = router.current_event.get_query_string_value("done") or ""
    message_id = router.current_event.get_query_string_value("message") or None
    return project_page(
        user, projectId, notice=NOTICES[done]() if done in NOTICES else None, message_id=message_id
    )


@router.get("/workspace/projects/<projectId>/state")
def state(projectId: str) -> Response:
    """What the project page's script polls: a version of each part of the page (facts, deploys, builder,
    link forms) and the publish state, so the page redraws a part only when it changed. The reads are the
    page's own (the project, and for its owner the branch's head and the site's deploys), without the page."""
    user = site.current_user(router)
    try:
        now = views.project_now(user, projectId)
    except errors.DomainError as exc:
        return web.json_response(web.status_for(exc), {"message": exc.message})
    body = {
        "versions": now["versions"],
        "publish": now["publish"],
        "poll_after_ms": MOVING_POLL_MS if now["moving"] else IDLE_POLL_MS,
    }
    return web.json_response(200, body, headers={"Cache-Control": "no-store"})


@router.post("/workspace/projects/<projectId>/publish")
def publish(projectId: str) -> Response:
    user = site.current_user(router)
    site.form(router)
    try:
        services.provisioning().provision(user, projectId, start=True)
    except (errors.PaymentRequired, errors.Conflict) as exc:
        return project_page(user, projectId, web.status_for(exc), notice=exc.message, notice_kind="bad")
    return site.back(f"/workspace/projects/{projectId}", done="published")
