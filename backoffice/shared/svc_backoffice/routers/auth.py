"""Session routes: the hand-off from the platform (`/auth/sso`), the page it lands on, and the signed-out page."""

from __future__ import annotations

import hmac
import html
import secrets
from urllib.parse import parse_qsl, unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from svc_backoffice.access import auth, handoff
from svc_backoffice.access.sessions import SESSION_COOKIE
from svc_backoffice.core import tenancy
from svc_backoffice.core.catalogue import Group, say
from svc_backoffice.core.config import get_settings, self_hosted_settings
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
    if tenancy.current_shop() is None:
        return _confirmation(token, event.get_query_string_value("next"))
    binding = cookie(sessions, handoff.BINDING_COOKIE)
    spent = [_binding_cookie_spent()] if binding is not None else []
    try:
        shop = tenancy.current_shop()
        session = auth.sign_in(None if shop is not None and shop.absent else database(), token, binding)
    except handoff.NotInvited:
        return redirect("/auth/signed-out?reason=not_invited", cookies=spent)
    except handoff.HandoffRejected as exc:
        logger.info("hand-off rejected", extra={"reason": str(exc)})
        return redirect("/auth/signed-out?reason=invalid_handoff", cookies=spent)
    return redirect(
        _safe_next(event.get_query_string_value("next")),
        cookies=[session_cookie(session, max_age=get_settings().session_ttl_seconds), *spent],
    )


# Self-hosted, the backoffice is on another origin than the platform, so no cookie of the platform's binds a
# hand-off to the browser that asked: the link opens a page naming the account, and only its own form (with
# the value of a SameSite=Strict cookie it set, which another site's form cannot send) signs in.
CONFIRM_COOKIE = "svc_sso_confirm"


def _confirm_cookie(value: str, *, max_age: int) -> Cookie:
    return Cookie(
        name=CONFIRM_COOKIE,
        value=value,
        path=tenancy.path("/auth/sso"),
        secure=self_hosted_settings().cookie_secure,
        http_only=True,
        max_age=max_age,
        same_site=SameSite.STRICT_MODE,
    )


def _confirmation(token: str, target: str | None) -> Response:
    """The page a self-hosted backoffice answers a hand-off with: whom it signs in, and a Continue button."""
    try:
        claims = auth.verified(token)
    except handoff.HandoffRejected as exc:
        logger.info("hand-off rejected", extra={"reason": str(exc)})
        return redirect("/auth/signed-out?reason=invalid_handoff")
    nonce = secrets.token_urlsafe(32)
    fields = {"token": token, "next": _safe_next(target), "confirm": nonce}
    hidden = "".join(
        f'<input type=hidden name={name} value="{html.escape(value)}">' for name, value in fields.items()
    )
    email = claims.email
    page = (
        f"<!doctype html><html lang=en><meta charset=utf-8>"
        f"<meta name=viewport content='width=device-width,initial-scale=1'>"
        f"<title>{html.escape(say('sign_in.confirm_title'))}</title><main>"
        f"<h1>{html.escape(say('sign_in.confirm_heading', email=email))}</h1>"
        f"<p>{html.escape(say('sign_in.confirm_body', email=email))}</p>"
        f'<form method=post action="{html.escape(tenancy.path("/auth/sso"))}">{hidden}'
        f"<button type=submit>{html.escape(say('sign_in.confirm_button', email=email))}</button></form>"
        f"</main></html>"
    )
    return _page(page, [_confirm_cookie(nonce, max_age=handoff.MAX_LIFETIME_SECONDS)])


@sessions.api(
    "POST",
    "/sso",
    role=None,
    answers="302",
    summary="Self-hosted: the hand-off confirmed on its page; sets svc_session",
)
def sso_confirmed() -> Response:
    fields = dict(parse_qsl(sessions.current_event.decoded_body or "", max_num_fields=10))
    nonce = cookie(sessions, CONFIRM_COOKIE) or ""
    spent = [_confirm_cookie("", max_age=0)]
    confirmed = bool(nonce) and hmac.compare_digest(nonce, fields.get("confirm", ""))
    if tenancy.current_shop() is not None or not confirmed:
        logger.info("hand-off rejected", extra={"reason": "not confirmed on its page in this browser"})
        return redirect("/auth/signed-out?reason=invalid_handoff", cookies=spent)
    try:
        session = auth.sign_in(database(), fields.get("token", ""))
    except handoff.NotInvited:
        return redirect("/auth/signed-out?reason=not_invited", cookies=spent)
    except handoff.HandoffRejected as exc:
        logger.info("hand-off rejected", extra={"reason": str(exc)})
        return redirect("/auth/signed-out?reason=invalid_handoff", cookies=spent)
    cookies = [session_cookie(session, max_age=get_settings().session_ttl_seconds), *spent]
    return redirect(_safe_next(fields.get("next")), cookies=cookies)


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
    return _page(page, [] if reason == "insufficient_role" else [session_cookie("", max_age=0)])


PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def _page(page: str, cookies: list[Cookie]) -> Response:
    """One of these routes' own HTML pages: never stored, nothing loaded from elsewhere, never framed."""
    return Response(
        status_code=200,
        content_type="text/html; charset=utf-8",
        body=page,
        cookies=cookies,
        headers=PAGE_HEADERS,
    )


ROUTERS = (sessions,)
