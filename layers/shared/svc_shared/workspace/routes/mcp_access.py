"""MCP access: the clients that can use the account, and revoking one."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.wiring import services
from svc_shared.workspace import site, views

router = Router()


@router.get("/workspace/mcp")
def mcp_access() -> Response:
    user = site.current_user(router)
    context = views.mcp_access(user)
    names = {p.id: p.name for p in services.projects().list_owned(user.id)}
    # A fixed message chosen by the code, never the query's text (a link could carry any words otherwise).
    revoked = router.current_event.get_query_string_value("revoked") == "1"
    notice = say("workspace.client_revoked") if revoked else None
    return site.page(router, 200, "mcp.html", user, nav="mcp", project_names=names, notice=notice, **context)


@router.post("/workspace/mcp/revoke")
def revoke() -> Response:
    user = site.current_user(router)
    form = site.form(router)
    grant_id = form.get("grant_id", "")
    if form.get("confirm") != "yes":
        context = views.mcp_access(user)
        names = {p.id: p.name for p in services.projects().list_owned(user.id)}
        notice = say("workspace.revoke_confirm")
        return site.page(
            router,
            400,
            "mcp.html",
            user,
            nav="mcp",
            project_names=names,
            notice=notice,
            notice_kind="bad",
            **context,
        )
    if not grant_id or not services.mcp_clients().revoke(user.id, grant_id):  # revoke reads the gate once
        raise errors.NotFound(say("workspace.client_not_found"))
    return site.back("/workspace/mcp", revoked="1")
