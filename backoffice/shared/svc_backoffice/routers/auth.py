"""Session routes: the hand-off from the platform (`/auth/sso`), the page it lands on, and the signed-out page."""

from __future__ import annotations

import base64
import hashlib
import html
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.access import auth, handoff
from svc_backoffice.access.sessions import SESSION_COOKIE
from svc_backoffice.core.catalogue import Group, say
from svc_backoffice.core.config import get_settings
from svc_backoffice.core.logs import logger
from svc_backoffice.data.db import database
from svc_backoffice.domain import store
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
    try:
        cookie = auth.sign_in(database(), token)
    except handoff.NotInvited:
        return redirect("/auth/signed-out?reason=not_invited")
    except handoff.HandoffRejected as exc:
        logger.info("hand-off rejected", extra={"reason": str(exc)})
        return redirect("/auth/signed-out?reason=invalid_handoff")
    return redirect(
        _safe_next(event.get_query_string_value("next")),
        cookies=[session_cookie(cookie, max_age=get_settings().session_ttl_seconds)],
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

# The landing page's one style sheet, allowed by its hash (no inline script or style runs otherwise).
LANDING_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f7f9}"
    "main{max-width:40rem;margin:3rem auto;padding:1.5rem 1.75rem;background:#fff;border:1px solid #d8dce1;"
    "border-radius:10px}h1{font-size:1.5rem;margin:0 0 .75rem}p{margin:.5rem 0}"
    ".who{font-size:1.05rem}.hint{color:#57606a;font-size:.925rem}code{font-size:.9em}"
    "@media(max-width:480px){main{margin:0;border:0;border-radius:0}}"
)
LANDING_HEADERS = {
    **PAGE_HEADERS,
    "Content-Security-Policy": "default-src 'none'; style-src 'sha256-"
    + base64.b64encode(hashlib.sha256(LANDING_STYLE.encode()).digest()).decode()
    + "'",
}

home = ApiRouter("/")


@home.api(
    "GET",
    role="viewer",
    answers="200 302",
    summary="Where the sign-in lands: the store, and who is signed in with which role",
)
def landing() -> Response:
    staff = home.staff()
    name = store.get_settings_row(database()).get("store_name") or say("sign_in.your_store")
    who = say(
        "sign_in.signed_in_as",
        email=f"<strong id=email>{html.escape(staff.email)}</strong>",
        role=f"<strong id=role>{html.escape(staff.role)}</strong>",
    )
    hint = say(
        "sign_in.api_hint", routes="<code>api/</code>", document="<a href=openapi.json>openapi.json</a>"
    )
    page = (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        f"<title>{say('sign_in.landing_title', store=html.escape(name))}</title><style>{LANDING_STYLE}</style>"
        f"<main><h1 id=store>{html.escape(name)}</h1>"
        f"<p class=who>{who}</p><p class=hint>{hint}</p></main></html>"
    )
    return Response(
        status_code=200, content_type="text/html; charset=utf-8", body=page, headers=LANDING_HEADERS
    )


ROUTERS = (sessions, home)
