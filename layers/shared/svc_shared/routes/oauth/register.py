"""Dynamic client registration (RFC 7591), limited per address."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.edge import web
from svc_shared.oauth import messages
from svc_shared.oauth.clients import REGISTRATIONS_PER_MINUTE
from svc_shared.routes.oauth.site import MAX_BODY
from svc_shared.wiring import services

router = Router()


@router.post("/oauth/register")
@router.post("/register")
def register() -> Response:
    allowed, wait = services.rate_limiter().take(
        "oauth-register", web.client_ip(router), 60, REGISTRATIONS_PER_MINUTE
    )
    if not allowed:
        raise errors.RateLimited(
            say("oauth.too_many_registrations", limit=REGISTRATIONS_PER_MINUTE, wait=wait),
            retry_after=wait,
        )
    if web.content_type(router) != "application/json":
        raise web.UnsupportedMediaType(say("oauth.registration_needs_json"), code="unsupported_media_type")
    if len(router.current_event.decoded_body or "") > MAX_BODY:
        raise errors.PayloadTooLarge(say("oauth.metadata_too_large", max_body=MAX_BODY))
    metadata = messages.parse(messages.ClientMetadata, web.json_body(router))
    return web.json_response(201, services.oauth_clients().register(metadata))
