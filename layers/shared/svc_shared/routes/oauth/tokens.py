"""The token endpoint (RFC 6749 §4.1.3, §6) and revocation (RFC 7009)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.edge import web
from svc_shared.oauth import messages
from svc_shared.routes.oauth.site import MAX_BODY
from svc_shared.wiring import services

router = Router()


def _token_form() -> dict[str, Any]:
    """The fields of a token or revocation request: form-encoded as RFC 6749 says, or JSON, which some
    clients send."""
    if len(router.current_event.decoded_body or "") > MAX_BODY:
        raise errors.PayloadTooLarge(say("oauth.body_too_large", max_body=MAX_BODY))
    kind = web.content_type(router)
    if kind == "application/x-www-form-urlencoded":
        return dict(web.form_body(router))
    if kind == "application/json":
        return web.json_body(router)
    raise web.UnsupportedMediaType(say("oauth.token_media_type"), code="unsupported_media_type")


@router.post("/oauth/token")
@router.post("/token")
def token() -> Response:
    form = messages.parse(messages.TokenRequest, _token_form())
    clients = services.oauth_clients()
    client = clients.authenticate(form, router.current_event.headers.get("authorization"))
    grants = services.grants()
    if form.grant_type == "authorization_code":
        pair = grants.exchange_code(client, form)
        clients.mark_used(client)
    else:
        pair = grants.refresh(client, form)
    return web.json_response(200, pair.response(), headers={"Pragma": "no-cache"})


@router.post("/oauth/revoke")
@router.post("/revoke")
def revoke() -> Response:
    """RFC 7009: the client authenticates as at the token endpoint; the answer is 200 whether or not the
    token was known (a client cannot probe for tokens)."""
    fields = _token_form()
    # The client is authenticated before anything about the token is said (RFC 7009 §2.1).
    client = services.oauth_clients().authenticate(
        messages.parse(messages.ClientCredentials, fields), router.current_event.headers.get("authorization")
    )
    form = messages.parse(messages.RevocationRequest, fields)
    services.grants().revoke_token(client, form.token)
    return web.json_response(200, {}, headers={"Pragma": "no-cache"})
