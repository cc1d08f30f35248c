"""The authorization endpoint: the consent screen for a checked request, and the user's decision on it. A
request whose client or redirect URI is not trusted is answered with a page (AuthorizeRequestError); any other
problem, and the decision, go back to the client through its redirect URI."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core.catalogue import say
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import pages, web
from svc_shared.oauth import messages, metadata
from svc_shared.oauth.authorize import (
    RedirectError,
    check_request,
    consent_token,
    read_consent,
    redirect_with,
)
from svc_shared.oauth.errors import AuthorizeRequestError
from svc_shared.wiring import services

router = Router()


def _query() -> dict[str, str]:
    multi = router.current_event.multi_value_query_string_parameters or {}
    repeated = sorted(name for name, values in multi.items() if len(values or []) > 1)
    params = {name: values[0] for name, values in multi.items() if values}
    if not params:
        params = dict(router.current_event.query_string_parameters or {})
    if repeated:
        # RFC 6749 §3.1: parameters must not repeat. Which value to trust is unknown, so nothing redirects.
        # Only names this endpoint knows are repeated back: the page never shows the query's own text.
        known = [name for name in repeated if name in messages.AuthorizationQuery.model_fields]
        names = ", ".join(known) or say("oauth.parameter_repeated")
        raise AuthorizeRequestError("invalid_request", say("oauth.parameters_repeat", names=names))
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


@router.get("/oauth/authorize")
@router.get("/authorize")
def authorize() -> Response:
    base = services.public_base_url()
    params = _query()
    session_cookie = web.cookie(router, SESSION_COOKIE)
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


@router.post("/oauth/authorize")
@router.post("/authorize")
def authorize_decision() -> Response:
    base = services.public_base_url()
    form = web.form_body(router)
    session_cookie = web.cookie(router, SESSION_COOKIE)
    signed_in = services.sessions().resolve_epoch(session_cookie)
    if signed_in is None or session_cookie is None:
        raise AuthorizeRequestError("access_denied", say("oauth.session_ended"))
    user_id, session_epoch = signed_in
    request = read_consent(
        form.get("consent_token"),
        user_id=user_id,
        session_cookie=session_cookie,
        key=services.signing_key("oauth-consent"),
        clock=services.clock(),
        clients=services.oauth_clients(),
    )
    decision = form.get("decision")
    if decision not in ("allow", "deny"):
        raise AuthorizeRequestError("invalid_request", say("oauth.choose"))
    # Each form is answered once (allow or deny): a second post of the same token gets no second code.
    if not services.grants().spend_consent(request.consent_id or "", request.consent_expires):
        raise AuthorizeRequestError("invalid_request", say("oauth.consent_answered"))
    if decision == "deny":
        denied = RedirectError(
            "access_denied", say("oauth.denied"), redirect_uri=request.redirect_uri, state=request.state
        )
        return _redirect_error(denied)
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
    iss = metadata.issuer(base)
    return web.redirect(
        redirect_with(request.redirect_uri, {"code": code, "state": request.state, "iss": iss}), 302
    )
