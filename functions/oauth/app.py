"""The tool server's OAuth 2.1 authorization server: discovery metadata, client registration, the consent
screen, the token endpoint and revocation (RFC 7009). OAuth errors are answered in RFC 6749 form here and
nowhere else. Browser clients reach the public endpoints under the one origin policy (svc_shared.origins)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import errors, pages, services, web
from svc_shared.logs import get_logger
from svc_shared.oauth import messages, metadata
from svc_shared.oauth.authorize import (
    RedirectError,
    check_request,
    consent_token,
    read_consent,
    redirect_with,
)
from svc_shared.oauth.clients import REGISTRATIONS_PER_MINUTE
from svc_shared.oauth.errors import AuthorizeRequestError, OAuthError
from svc_shared.origins import refused_origin_message
from svc_shared.sessions import SESSION_COOKIE

logger = get_logger()
app = web.create_resolver()
MAX_BODY = 64 * 1024
STATUS_BY_OAUTH_ERROR = {"invalid_client": 401, "rate_limited": 429, "server_error": 500}


@app.exception_handler(OAuthError)
def _oauth_error(exc: OAuthError) -> Response:
    headers = {"Pragma": "no-cache"}
    if exc.retry_after:
        headers["Retry-After"] = str(exc.retry_after)
    if (
        exc.code == "invalid_client"
        and (app.current_event.headers.get("authorization") or "")[:6].lower() == "basic "
    ):
        headers["WWW-Authenticate"] = 'Basic realm="svc"'
    status = STATUS_BY_OAUTH_ERROR.get(exc.code, 400)
    return web.json_response(status, {"error": exc.code, "error_description": exc.message}, headers=headers)


@app.exception_handler(AuthorizeRequestError)
def _authorize_page_error(exc: AuthorizeRequestError) -> Response:
    return web.html_response(400, pages.error_page("This authorization request cannot continue", exc.message))


# -- discovery ---------------------------------------------------------------------------------------------
@app.get("/.well-known/oauth-authorization-server")
# Behind an API Gateway stage (https://ID.execute-api.REGION.amazonaws.com/live) the issuer has a path, and
# RFC 8414's path-inserted URL (/.well-known/oauth-authorization-server/live) lies outside the stage, where
# API Gateway answers 403. MCP clients then try OpenID Connect discovery with the path appended
# (<issuer>/.well-known/openid-configuration), which is inside the stage: the same document answers there.
@app.get("/.well-known/openid-configuration")
def authorization_server_metadata() -> Response:
    return _public_json(metadata.authorization_server(services.public_base_url()))


@app.get("/.well-known/oauth-protected-resource")
@app.get("/.well-known/oauth-protected-resource/mcp")
def protected_resource_metadata() -> Response:
    return _public_json(metadata.protected_resource(services.public_base_url()))


def _public_json(body: dict[str, Any]) -> Response:
    response = web.json_response(200, body)
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


# -- registration ------------------------------------------------------------------------------------------
# The SDKs fall back to /register, /authorize and /token at the server's origin when they hold no metadata
# (for example after a restart with stored tokens), so those paths answer too.
@app.post("/oauth/register")
@app.post("/register")
def register() -> Response:
    allowed, wait = services.rate_limiter().take(
        "oauth-register", web.client_ip(app), 60, REGISTRATIONS_PER_MINUTE
    )
    if not allowed:
        raise OAuthError(
            "rate_limited",
            f"Too many registrations: {REGISTRATIONS_PER_MINUTE} per minute per address. Retry in {wait}s.",
            retry_after=wait,
        )
    if web.content_type(app) != "application/json":
        raise OAuthError("invalid_client_metadata", "Content-Type must be application/json")
    if len(app.current_event.decoded_body or "") > MAX_BODY:
        raise OAuthError("invalid_client_metadata", f"client metadata must be at most {MAX_BODY} bytes")
    try:
        body = web.json_body(app)
    except errors.InvalidInput as exc:
        raise OAuthError("invalid_client_metadata", exc.message) from exc
    metadata = messages.parse(messages.ClientMetadata, body)
    return web.json_response(201, services.oauth_clients().register(metadata))


# -- authorization -----------------------------------------------------------------------------------------
def _query() -> dict[str, str]:
    multi = app.current_event.multi_value_query_string_parameters or {}
    repeated = sorted(name for name, values in multi.items() if len(values or []) > 1)
    params = {name: values[0] for name, values in multi.items() if values}
    if not params:
        params = dict(app.current_event.query_string_parameters or {})
    if repeated:
        # RFC 6749 §3.1: parameters must not repeat. Which value to trust is unknown, so nothing redirects.
        # Only names this endpoint knows are repeated back: the page never shows the query's own text.
        known = [name for name in repeated if name in messages.AuthorizationQuery.model_fields]
        raise AuthorizeRequestError(
            "invalid_request", f"Parameters must not repeat: {', '.join(known) or 'a parameter is repeated'}."
        )
    return params


def _redirect_error(exc: RedirectError) -> Response:
    location = redirect_with(
        exc.redirect_uri,
        {
            "error": exc.code,
            "error_description": exc.message,
            "state": exc.state,
            "iss": metadata.issuer(services.public_base_url()),
        },
    )
    return web.redirect(location, 302)


@app.get("/oauth/authorize")
@app.get("/authorize")
def authorize() -> Response:
    base = services.public_base_url()
    params = _query()
    session_cookie = web.cookie(app, SESSION_COOKIE)
    user_id = services.sessions().resolve(session_cookie)
    try:
        request = check_request(
            messages.AuthorizationQuery.model_validate(params),
            services.oauth_clients(),
            resource=metadata.resource_url(base),
            explain=user_id is not None,
        )
    except RedirectError as exc:
        return _redirect_error(exc)
    if user_id is None or session_cookie is None:
        next_path = f"/oauth/authorize?{urlencode(params)}"
        return web.redirect(f"{base}/login?{urlencode({'next': next_path})}", 302)
    user = services.accounts().get_user(user_id)
    token = consent_token(
        request,
        user_id=user.id,
        session_cookie=session_cookie,
        key=services.signing_key("oauth-consent"),
        clock=services.clock(),
    )
    page = pages.consent_page(
        action=f"{base}/oauth/authorize",
        client_name=request.client.name,
        client_host=request.client.host,
        redirect_host=request.redirect_host,
        scope=request.scope,
        consent_token=token,
        user_email=user.email,
    )
    target = urlsplit(request.redirect_uri)
    # Browsers apply form-action to the redirect that follows the form post, so the client's origin is allowed.
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
        f"form-action 'self' {target.scheme}://{target.netloc}"
    )
    return web.html_response(200, page, headers={"Content-Security-Policy": csp})


@app.post("/oauth/authorize")
@app.post("/authorize")
def authorize_decision() -> Response:
    base = services.public_base_url()
    form = web.form_body(app)
    session_cookie = web.cookie(app, SESSION_COOKIE)
    signed_in = services.sessions().resolve_epoch(session_cookie)
    if signed_in is None or session_cookie is None:
        raise AuthorizeRequestError("access_denied", "Your session has ended. Start again from your app.")
    user_id, session_epoch = signed_in
    request = read_consent(
        form.get("consent_token"),
        user_id=user_id,
        session_cookie=session_cookie,
        key=services.signing_key("oauth-consent"),
        clock=services.clock(),
        clients=services.oauth_clients(),
    )
    iss = metadata.issuer(base)
    decision = form.get("decision")
    if decision not in ("allow", "deny"):
        raise AuthorizeRequestError("invalid_request", "Choose Allow or Deny.")
    # Each form is answered once (allow or deny): a second post of the same token gets no second code.
    if not services.grants().spend_consent(request.consent_id or "", request.consent_expires):
        raise AuthorizeRequestError(
            "invalid_request", "This consent form was already answered. Start again from your app."
        )
    if decision == "deny":
        return _redirect_error(
            RedirectError(
                "access_denied",
                "The user denied access.",
                redirect_uri=request.redirect_uri,
                state=request.state,
            )
        )
    code = services.grants().issue_code(
        client=request.client,
        redirect_uri=request.redirect_uri,
        redirect_explicit=request.redirect_explicit,
        code_challenge=request.code_challenge,
        user_id=user_id,
        resource=request.resource,
        scope=request.scope,
        session_epoch=session_epoch,
    )
    return web.redirect(
        redirect_with(request.redirect_uri, {"code": code, "state": request.state, "iss": iss}), 302
    )


# -- tokens ------------------------------------------------------------------------------------------------
def _token_form() -> dict[str, Any]:
    """The fields of a token or revocation request: form-encoded as RFC 6749 says, or JSON, which some
    clients send."""
    if len(app.current_event.decoded_body or "") > MAX_BODY:
        raise OAuthError("invalid_request", f"request body must be at most {MAX_BODY} bytes")
    kind = web.content_type(app)
    try:
        if kind == "application/x-www-form-urlencoded":
            return dict(web.form_body(app))
        if kind == "application/json":
            return web.json_body(app)
    except errors.InvalidInput as exc:
        raise OAuthError("invalid_request", exc.message) from exc
    raise OAuthError(
        "invalid_request", "Content-Type must be application/x-www-form-urlencoded or application/json"
    )


@app.post("/oauth/token")
@app.post("/token")
def token() -> Response:
    form = messages.parse(messages.TokenRequest, _token_form())
    clients = services.oauth_clients()
    client = clients.authenticate(form, app.current_event.headers.get("authorization"))
    grants = services.grants()
    if form.grant_type == "authorization_code":
        pair = grants.exchange_code(client, form)
        clients.mark_used(client)
    else:
        pair = grants.refresh(client, form)
    return web.json_response(200, pair.response(), headers={"Pragma": "no-cache"})


@app.post("/oauth/revoke")
@app.post("/revoke")
def revoke() -> Response:
    """RFC 7009: the client authenticates as at the token endpoint; the answer is 200 whether or not the
    token was known (a client cannot probe for tokens)."""
    fields = _token_form()
    # The client is authenticated before anything about the token is said (RFC 7009 §2.1).
    client = services.oauth_clients().authenticate(
        messages.parse(messages.ClientCredentials, fields), app.current_event.headers.get("authorization")
    )
    form = messages.parse(messages.RevocationRequest, fields)
    services.grants().revoke_token(client, form.token)
    return web.json_response(200, {}, headers={"Pragma": "no-cache"})


# -- the origin policy -------------------------------------------------------------------------------------
# Paths a browser-based MCP client calls cross-origin. The consent screen is not one of them: it is a page of
# this origin, protected by its consent token.
CROSS_ORIGIN_PATHS = (
    "/.well-known/",
    "/oauth/register",
    "/oauth/token",
    "/oauth/revoke",
    "/register",
    "/token",
    "/revoke",
)


def _header(event: dict[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name and value is not None:
            return str(value)
    return None


def _with_origin_policy(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    path = str(event.get("path") or "")
    if not path.startswith(CROSS_ORIGIN_PATHS):
        return app.resolve(event, context)
    policy = services.origin_policy()
    origin = _header(event, "origin")
    if not policy.origin_allowed(origin):
        body = {"error": "invalid_request", "error_description": refused_origin_message(origin or "")}
        return {
            "statusCode": 403,
            "headers": {"Content-Type": "application/json", "Cache-Control": "no-store", "Vary": "Origin"},
            "body": json.dumps(body),
            "isBase64Encoded": False,
        }
    if str(event.get("httpMethod") or "").upper() == "OPTIONS":
        methods = "GET,OPTIONS" if path.startswith("/.well-known/") else "POST,OPTIONS"
        return {
            "statusCode": 204,
            "headers": policy.preflight_headers(origin, methods),
            "body": "",
            "isBase64Encoded": False,
        }
    answer = app.resolve(event, context)
    answer.setdefault("headers", {}).update(policy.cors_headers(origin))
    return answer


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    services.bind_request(event)  # the origin policy below needs the base URL before the resolver runs
    return _with_origin_policy(event, context)
