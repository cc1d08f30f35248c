"""Home (`/`): who is signed in, the plan and credits, each workspace's projects, and a new project."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.edge import web
from svc_shared.wiring import services
from svc_shared.workspace import site, views

router = Router()


def home_page(user: User, status: int = 200, **extra: Any) -> Response:
    from svc_shared.domain.projects import TEMPLATES

    errors_ = extra.pop("new_errors", {})
    context = views.home(user)
    return site.page(
        router,
        status,
        "home.html",
        user,
        nav="home",
        templates=TEMPLATES,
        new_form=extra.pop("new_form", {"template_id": "", "prompt": ""}),
        new_errors=errors_,
        **context,
        # The New shop form opens when asked for, when it has errors to show, and for a merchant with no shop.
        open_new=bool(errors_)
        or extra.pop("open_new", False)
        or not any(w.projects for w in context["workspaces"]),
        **extra,
    )


@router.get("/")
def home() -> Response:
    asked = router.current_event.get_query_string_value("new") == "1"
    deleted = router.current_event.get_query_string_value("done") == "deleted"
    notice = say("workspace.deleted") if deleted else None
    return home_page(site.current_user(router), open_new=asked, notice=notice)


@router.post("/workspace/projects")
def create_project() -> Response:
    """A new shop from a template or a description, as the create_project tool makes it."""
    from svc_shared.domain.projects import TEMPLATES_BY_ID

    user = site.current_user(router)
    form = site.form(router)
    template_id = form.get("template_id", "").strip() or None
    prompt = form.get("prompt", "").strip()
    new_form = {"template_id": template_id or "", "prompt": prompt}
    if template_id is not None and template_id not in TEMPLATES_BY_ID:
        raise site.BadForm(say("workspace.template_unknown"))
    if not prompt and template_id is not None:
        prompt = TEMPLATES_BY_ID[template_id].prompt
    try:
        services.connections().require_for_projects(user.id)
        project = services.projects().create(
            owner_id=user.id, workspace_id=user.default_workspace_id, prompt=prompt, template_id=template_id
        )
    except (errors.Conflict, errors.InvalidInput) as exc:
        return home_page(user, web.status_for(exc), new_form=new_form, new_errors={"prompt": exc.message})
    return site.back(f"/workspace/projects/{project.id}")


@router.get("/workspace")
def workspace_root() -> Response:
    return site.back("/")
