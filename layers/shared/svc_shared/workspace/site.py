"""What every workspace route shares: the resolver with the workspace's error pages, the signed-in user, the
checked form (same origin and a CSRF token bound to the session), a rendered page and a redirect back.

Routes live on routers in `svc_shared.workspace.routes` (one module per page group); functions/workspace/app.py
only builds the resolver from them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger
from svc_shared.domain.accounts import User
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import pages, web
from svc_shared.wiring import services
from svc_shared.workspace import render

logger = get_logger()


class SignInRequired(Exception):
    """No valid session: the browser goes to /login and comes back here afterwards."""


class BadForm(Exception):
    """A form that did not come from our page (missing or wrong CSRF token)."""


def base() -> str:
    return services.public_base_url()


def page(
    request: web.HasEvent,
    status: int,
    template: str,
    user: User | None,
    *,
    nav: str = "",
    **context: Any,
) -> Response:
    """`template` rendered for `user` with the page's security headers and a CSRF token for its forms;
    `frame_src` in `context`, an origin the page frames (render.frame_origin)."""
    frame_src = context.pop("frame_src", None)
    cookie = web.cookie(request, SESSION_COOKIE) or ""
    html = render.render(
        template,
        base=base(),
        version=render.asset_version(),
        csrf=render.csrf_token(services.signing_key("workspace-csrf"), cookie) if cookie else "",
        user=user,
        nav=nav,
        notice=context.pop("notice", None),
        notice_kind=context.pop("notice_kind", None),
        **context,
    )
    return Response(
        status_code=status,
        content_type="text/html; charset=utf-8",
        body=html,
        headers=render.page_headers(frame_src),
    )


def error_page(request: web.HasEvent, status: int, user: User | None, title: str, message: str) -> Response:
    return page(request, status, "error.html", user, title=title, message=message)


def current_user(request: web.HasEvent) -> User:
    """The signed-in user; SignInRequired (a redirect to /login) without a valid session."""
    user_id = services.sessions().resolve(web.cookie(request, SESSION_COOKIE))
    if user_id is None:
        raise SignInRequired
    return services.accounts().get_user(user_id)


def maybe_user(request: web.HasEvent) -> User | None:
    try:
        return current_user(request)
    except Exception:  # noqa: BLE001 - an error page renders even when the session cannot be read
        return None


def form(request: web.HasEvent) -> dict[str, str]:
    """The posted form, once its origin (web.check_same_origin) and its CSRF token, bound to the session,
    are checked."""
    web.check_same_origin(request)
    try:
        fields = web.form_body(request)
    except errors.InvalidInput as exc:
        raise BadForm(exc.message) from None
    key = services.signing_key("workspace-csrf")
    if not render.csrf_valid(key, web.cookie(request, SESSION_COOKIE), fields.get("csrf")):
        raise BadForm(say("workspace.form_expired"))
    return fields


def back(path: str, **query: str) -> Response:
    """A 303 to `path` on the platform, with `query` (fixed codes the page turns into its own words)."""
    suffix = f"?{urlencode(query)}" if query else ""
    return web.redirect(f"{base()}{path}{suffix}")


def create_app(*routers: Router) -> APIGatewayRestResolver:
    """The workspace's resolver: `routers` included, every error answered as a page in words."""
    app = web.create_resolver()

    @app.exception_handler(SignInRequired)
    def _sign_in(_: SignInRequired) -> Response:
        event = app.current_event
        target = event.path
        if event.query_string_parameters:
            target += "?" + urlencode(event.query_string_parameters)
        next_path = web.safe_next(target) if event.http_method == "GET" else "/"
        return web.redirect(f"{base()}/login?{urlencode({'next': next_path})}")

    @app.exception_handler(BadForm)
    def _bad_form(exc: BadForm) -> Response:
        return error_page(app, 400, maybe_user(app), say("workspace.title_went_wrong"), str(exc))

    @app.exception_handler(errors.DomainError)
    def _domain_error(exc: errors.DomainError) -> Response:
        if isinstance(exc, errors.NotFound):
            message = say("workspace.not_shared")
            return error_page(app, 404, maybe_user(app), say("workspace.title_not_found"), message)
        title = say("workspace.title_went_wrong")
        return error_page(app, web.status_for(exc), maybe_user(app), title, exc.message)

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        request_id = app.current_event.request_context.request_id
        logger.exception("unhandled error", extra={"request_id": request_id})
        message = say("workspace.internal_error", request_id=request_id)
        return error_page(app, 500, None, say("workspace.title_went_wrong"), message)

    @app.not_found
    def _not_found(_: Exception) -> Response:
        # Also the API's $default route: a browser gets a page in words, an API client API Gateway's JSON.
        if not pages.wants_page(web.lower_headers(app)):
            return web.json_response(404, {"message": say("http.unrouted")})
        return error_page(
            app, 404, maybe_user(app), say("workspace.title_not_found"), say("workspace.no_page")
        )

    for router in routers:
        app.include_router(router)
    return app
