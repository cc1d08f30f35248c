"""Workspace sign-in: the login form, the session cookie, sign-out, the signed-in user's account (§4.2) and the
backoffice's single sign-on link. Served by functions/accounts/app.py."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlencode, urlsplit

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger
from svc_shared.domain.accounts import User
from svc_shared.domain.bodies import SignInForm
from svc_shared.domain.handoff import BINDING_COOKIE, LIFETIME, NotPublished
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import pages, web
from svc_shared.wiring import services

logger = get_logger()
router = Router()


# The sign-in page's form posts with a full Origin (no-referrer would make it `null`), and no other site
# learns the page's address from it.
_LOGIN_HEADERS = {"Referrer-Policy": "same-origin"}


def _login_form(
    status: int,
    *,
    next_path: str,
    error: str | None = None,
    email: str = "",
    headers: dict[str, str] | None = None,
) -> Response:
    base = services.public_base_url()
    return web.html_response(
        status,
        pages.login_page(action=f"{base}/login", next_path=next_path, error=error, email=email),
        headers={**_LOGIN_HEADERS, **(headers or {})},
    )


@router.get("/login")
def login_form() -> Response:
    return _login_form(200, next_path=web.safe_next(router.current_event.get_query_string_value("next")))


@router.post("/login")
def login() -> Response:
    settings = services.settings()
    try:
        web.check_same_origin(router)  # login CSRF: another site must not sign the browser in as someone
    except errors.Forbidden:
        return _login_form(403, next_path="/", error=say("sign_in.cross_site"))
    try:
        form = web.parse(SignInForm, web.form_body(router))
    except errors.InvalidInput as exc:
        return _login_form(400, next_path="/", error=exc.message)
    next_path = web.safe_next(form.next)
    email, password = form.email.strip(), form.password
    if not email or not password:
        return _login_form(400, next_path=next_path, error=say("sign_in.credentials_required"), email=email)
    try:
        session = services.signin().sign_in(email, password, web.client_ip(router))
    except errors.RateLimited as exc:
        return _login_form(
            429,
            next_path=next_path,
            error=exc.message,
            email=email,
            headers={"Retry-After": str(exc.retry_after)},
        )
    except errors.Unauthenticated as exc:
        return _login_form(401, next_path=next_path, error=exc.message, email=email)
    services.remember_public_base_url()  # for the publish steps, which no request reaches
    cookie = web.session_cookie(
        SESSION_COOKIE, session.cookie, max_age=settings.session_ttl_seconds, secure=services.cookie_secure()
    )
    return web.redirect(f"{services.public_base_url()}{next_path}", cookies=[cookie])


@router.post("/logout")
def logout() -> Response:
    """Sign out this browser; with `everywhere=yes` (and the workspace's CSRF token), end every session of
    the user and revoke every MCP client too. Refused from another site (logout CSRF)."""
    try:
        web.check_same_origin(router)
    except errors.Forbidden as exc:
        return _page(403, "error.html", None, title=say("sign_in.title_not_signed_out"), message=exc.message)
    cookie = web.cookie(router, SESSION_COOKIE)
    form = web.form_body(router) if web.content_type(router) == "application/x-www-form-urlencoded" else {}
    if form.get("everywhere") == "yes":
        from svc_shared.workspace.render import csrf_valid

        user_id = services.sessions().resolve(cookie)
        if user_id is None or not csrf_valid(
            services.signing_key("workspace-csrf"), cookie, form.get("csrf")
        ):
            message = say("workspace.form_expired")
            return _page(400, "error.html", None, title=say("sign_in.title_not_signed_out"), message=message)
        services.signin().sign_out_everywhere(user_id)
    else:
        services.signin().sign_out(cookie)
    gone = web.expired_cookie(SESSION_COOKIE, secure=services.cookie_secure())
    return web.redirect(f"{services.public_base_url()}/login", cookies=[gone])


@router.get("/api/me")
def me() -> Response:
    user = services.signin().current_user(web.cookie(router, SESSION_COOKIE))
    return web.json_response(200, user.public())


@router.get("/api/workspaces")
def workspaces() -> Response:
    user_id = services.signin().current_user_id(web.cookie(router, SESSION_COOKIE))
    spaces = services.accounts().list_workspaces(user_id)
    return web.json_response(200, {"workspaces": [w.public() for w in spaces]})


def _page(status: int, template: str, user: User | None, **context: Any) -> Response:
    """A page in the workspace's layout and with its headers (this route is opened by a browser)."""
    from svc_shared.workspace import render

    html = render.page(template, base=services.settings().public_base_url, user=user, **context)
    return Response(
        status_code=status,
        content_type="text/html; charset=utf-8",
        body=html,
        headers=dict(render.PAGE_HEADERS),
    )


def _binding_cookie(url: str, binding: str) -> list[Cookie]:
    """The cookie that binds the hand-off to this browser, sent only to the shop's /auth/sso: a shop hosted on
    the platform's origin requires it, so a link minted for one browser signs in no other (login CSRF). A
    backoffice on another origin cannot receive it, and gets none."""
    if not url.startswith(f"{services.public_base_url()}/"):
        return []
    return [
        Cookie(
            name=BINDING_COOKIE,
            value=binding,
            path=urlsplit(url).path,
            secure=services.cookie_secure(),
            http_only=True,
            max_age=LIFETIME,
            same_site=SameSite.LAX_MODE,
        )
    ]


@router.get("/backoffice/sso")
def backoffice_sign_in() -> Response:
    """Open a project's backoffice signed in: a redirect with a 60 s token. A browser opens this link, so
    every answer that is not the redirect is a page, never JSON."""
    project_id = router.current_event.get_query_string_value("project") or ""
    user_id = services.sessions().resolve(web.cookie(router, SESSION_COOKIE))
    if user_id is None:
        target = f"/backoffice/sso?{urlencode({'project': project_id})}"
        return web.redirect(f"{services.public_base_url()}/login?{urlencode({'next': target})}")
    user: User | None = None
    try:
        user = services.accounts().get_user(user_id)
        binding = secrets.token_urlsafe(32)
        hosted = f"{services.public_base_url()}/shops"
        url = services.handoffs().sign_in_url(user, project_id, binding=binding, hosted_base=hosted)
        return web.redirect(url, cookies=_binding_cookie(url, binding))
    except errors.RateLimited as exc:
        page = _page(429, "error.html", user, title=say("handoff.too_many_title"), message=exc.message)
        page.headers["Retry-After"] = str(exc.retry_after)
        return page
    except NotPublished as exc:
        project = exc.project
        return _page(
            409,
            "backoffice_pending.html",
            user,
            nav="home",
            project=project,
            owner=user is not None and project.owner_id == user.id,
            project_url=services.workspace_url(project.id),
        )
    except errors.NotFound:
        message = say("workspace.not_shared")
        return _page(404, "error.html", user, title=say("workspace.title_not_found"), message=message)
    except errors.DomainError as exc:
        return _page(
            web.status_for(exc),
            "error.html",
            user,
            title=say("workspace.title_went_wrong"),
            message=exc.message,
        )
    except Exception:  # the resolver's own 500 answer is JSON; a browser gets the page
        event: Any = router.current_event  # the resolver's API Gateway proxy event
        request_id = event.request_context.request_id
        logger.exception("unhandled error", extra={"request_id": request_id})
        message = say("workspace.internal_error", request_id=request_id)
        return _page(500, "error.html", user, title=say("workspace.title_went_wrong"), message=message)
