"""Session routes: the hand-off from the platform (`/auth/sso`), the page it lands on, and the signed-out page."""

from __future__ import annotations

import html
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from svc_backoffice.access import auth, handoff
from svc_backoffice.access.sessions import SESSION_COOKIE
from svc_backoffice.core import tenancy
from svc_backoffice.core.catalogue import Group, say
from svc_backoffice.core.config import get_settings
from svc_backoffice.core.logs import logger
from svc_backoffice.data.db import database
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.gate import check_same_origin
from svc_backoffice.edge.web import cookie, redirect, session_cookie

sessions = ApiRouter("/auth")

# What the signed-out page says for each `reason` it is sent with.
REASONS = Group("sign_in.reason")


def _safe_next(target: str | None) -> str:
    """A path of this backoffice only, so the hand-off is not an open redirect: no scheme or host, no `//`,
    no backslash, no control character, and no `.` or `..` segment (even percent-encoded), which a browser
    would resolve out of the shop's base path (`/shops/p_abc/../p_other`). Anything else becomes `/`."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return "/"
    path = target.split("?", 1)[0].split("#", 1)[0]
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        return "/"
    return target


@sessions.api(
    "GET",
    "/sso",
    role=None,
    query="HandoffQuery",
    answers="302",
    summary="Hand-off from the platform; sets svc_session",
)
def sso() -> Response:
    event = sessions.current_event
    token = event.get_query_string_value("token") or ""
    binding = cookie(sessions, handoff.BINDING_COOKIE)
    spent = [_binding_cookie_spent()] if binding is not None else []
    try:
        session = auth.sign_in(database(), token, binding)
    except handoff.NotInvited:
        return redirect("/auth/signed-out?reason=not_invited", cookies=spent)
    except handoff.HandoffRejected as exc:
        logger.info("hand-off rejected", extra={"reason": str(exc)})
        return redirect("/auth/signed-out?reason=invalid_handoff", cookies=spent)
    return redirect(
        _safe_next(event.get_query_string_value("next")),
        cookies=[session_cookie(session, max_age=get_settings().session_ttl_seconds), *spent],
    )


def _binding_cookie_spent() -> Cookie:
    """The hand-off's binding cookie, cleared where the platform set it (this route's path)."""
    shop = tenancy.current_shop()
    return Cookie(
        name=handoff.BINDING_COOKIE,
        value="",
        path=tenancy.path("/auth/sso"),
        secure=shop.secure if shop is not None else True,
        http_only=True,
        max_age=0,
        same_site=SameSite.LAX_MODE,
    )


@sessions.api(
    "POST",
    "/sign-out",
    role=None,
    answers="302 403",
    summary="Sign out: ends the session on the server (every session of the staff member) and clears svc_session",
)
def sign_out() -> Response:
    """A form button or a fetch may post it (no body needed); another site's page may not (403), or it could
    sign the staff member out at will."""
    check_same_origin(sessions)  # type: ignore[arg-type]
    auth.sign_out(database(), cookie(sessions, SESSION_COOKIE))
    return redirect("/auth/signed-out", cookies=[session_cookie("", max_age=0)])


@sessions.api(
    "GET",
    "/signed-out",
    role=None,
    answers="200",
    summary="Signed-out page; clears svc_session",
)
def signed_out() -> Response:
    reason = sessions.current_event.get_query_string_value("reason") or ""
    message = REASONS.get(reason) or say("sign_in.signed_out")
    title, heading = say("sign_in.signed_out_title"), say("sign_in.signed_out_heading")
    page = (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<main><h1>{html.escape(heading)}</h1><p>{html.escape(message)}</p></main></html>"
    )
    # Leave the session in place for insufficient_role: the member is signed in, just not allowed there.
    cookies = [] if reason == "insufficient_role" else [session_cookie("", max_age=0)]
    return Response(
        status_code=200,
        content_type="text/html; charset=utf-8",
        body=page,
        cookies=cookies,
        headers=PAGE_HEADERS,
    )


PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}

ROUTERS = (sessions,)
