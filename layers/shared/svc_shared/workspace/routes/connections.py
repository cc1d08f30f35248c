"""The connections page: connect, see and disconnect the repo, database and site hosts."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core.catalogue import say
from svc_shared.domain.connections import PROVIDERS
from svc_shared.edge import web
from svc_shared.providers import label
from svc_shared.wiring import services
from svc_shared.workspace import site, views

router = Router()

# The page's failure banner, by the `reason` code of `?failed=<provider>&reason=<code>`.
CONNECT_FAILURES = {
    "": lambda provider: say("workspace.connect_unfinished", provider=provider),
    "denied": lambda provider: say("workspace.connect_denied", provider=provider),
    "expired": lambda provider: say("workspace.connect_expired"),
}


@router.get("/workspace/connections")
def connections() -> Response:
    user = site.current_user(router)
    query = router.current_event.query_string_parameters or {}
    # Banners are fixed messages chosen by a code in the query, never text taken from it.
    failed = None
    if query.get("failed") in PROVIDERS:
        reason = CONNECT_FAILURES.get(query.get("reason") or "", CONNECT_FAILURES[""])
        failed = {"provider": query["failed"], "message": reason(label(query["failed"]))}
    notice, kind = None, None
    if query.get("disconnected") in PROVIDERS:
        notice = say("workspace.disconnected", provider=label(query["disconnected"]))
    elif "failed" in query and failed is None:  # a flow whose provider could not be told
        notice, kind = say("workspace.connect_unfinished_unknown"), "bad"
    cards = views.connections(user)
    return site.page(
        router,
        200,
        "connections.html",
        user,
        nav="connections",
        cards=cards,
        failed=failed,
        notice=notice,
        notice_kind=kind,
    )


@router.get("/workspace/connections/state")
def connections_state() -> Response:
    """The cards' state for the page's script (which asks for JSON); a browser opening it gets the page."""
    user = site.current_user(router)
    if "application/json" not in (router.current_event.headers.get("accept") or ""):
        return site.back("/workspace/connections")
    return web.json_response(200, {"connections": services.connections().details(user.id)})


@router.get("/workspace/connections/connect")
def connect() -> Response:
    """Without script, Connect is a link: straight to the provider in this tab."""
    user = site.current_user(router)
    provider = router.current_event.get_query_string_value("provider") or ""
    if provider not in PROVIDERS:
        return site.error_page(
            router, 400, user, say("workspace.title_unknown_service"), say("workspace.choose_provider")
        )
    return web.redirect(services.connections().initiate(user.id, provider))


@router.post("/workspace/connections/disconnect")
def disconnect() -> Response:
    user = site.current_user(router)
    form = site.form(router)
    provider = form.get("provider", "")
    if provider not in PROVIDERS:
        raise site.BadForm(say("workspace.choose_provider"))
    if form.get("confirm") != "yes":
        failed = {"provider": provider, "message": say("workspace.disconnect_confirm")}
        cards = views.connections(user)
        return site.page(router, 400, "connections.html", user, nav="connections", cards=cards, failed=failed)
    services.connections().disconnect(user.id, provider)
    return site.back("/workspace/connections", disconnected=provider)
