"""Provider connections of the workspace: start the OAuth flow with a provider, finish it on the callback,
summarise and remove connections. Same-origin routes of the workspace application, session required; served by
functions/connections/app.py, whose resolver checks every write for origin and body type (CSRF)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger
from svc_shared.domain.bodies import DisconnectRequest
from svc_shared.domain.connections import ConnectionFailed, check_provider
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import pages, web
from svc_shared.wiring import services

logger = get_logger()
router = Router()


def _user_id() -> str:
    return services.signin().current_user_id(web.cookie(router, SESSION_COOKIE))


@router.get("/api/oauth/initiate")
def initiate() -> Response:
    provider = check_provider(router.current_event.get_query_string_value("provider"))
    url = services.connections().initiate(_user_id(), provider)
    return web.success(provider=provider, url=url)


@router.get("/api/oauth/callback")
def callback() -> Response:
    query = router.current_event.query_string_parameters or {}
    try:
        user_id = _user_id()
        if query.get("error"):
            # The user pressed Deny at the provider (or it refused): nothing to store.
            raise ConnectionFailed(
                say("provider_connect.denied"),
                code=query["error"][:64],
                provider=services.connections().provider_of(user_id, query.get("state")),
            )
        provider = services.connections().complete(user_id, code=query.get("code"), state=query.get("state"))
    except (ConnectionFailed, errors.Unauthenticated) as exc:
        logger.info("provider connection failed", extra={"reason": exc.code})
        # Opened in the same tab, the page goes back to the connections page, whose card says it in words.
        reason = "denied" if query.get("error") else "expired" if exc.code == "state_expired" else ""
        page = pages.connection_result(
            ok=False, provider=getattr(exc, "provider", None), message=exc.message, reason=reason
        )
        return web.html_response(400, page, headers={"Content-Security-Policy": pages.CONNECTION_RESULT_CSP})
    page = pages.connection_result(ok=True, provider=provider, message=say("provider_connect.connected"))
    return web.html_response(200, page, headers={"Content-Security-Policy": pages.CONNECTION_RESULT_CSP})


@router.get("/api/oauth/check-connections")
def check_connections() -> Response:
    return web.json_response(200, services.connections().summary(_user_id()))


@router.post("/api/oauth/disconnect")
def disconnect() -> Response:
    provider = web.parse_body(router, DisconnectRequest).provider
    services.connections().disconnect(_user_id(), provider)
    return web.success(provider=provider)
