"""The authorization endpoint's request checks and the consent token that carries a checked request from the
consent page back to the server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.tokens import BadSignature, hash_token, new_token, sign, unsign
from svc_shared.oauth.clients import Client, Clients
from svc_shared.oauth.documents import DocumentError
from svc_shared.oauth.errors import AuthorizeRequestError, OAuthError
from svc_shared.oauth.messages import AuthorizationQuery, redirect_uri_problem
from svc_shared.oauth.metadata import SCOPE
from svc_shared.oauth.pkce import valid_challenge

CONSENT_TTL = 600
MAX_STATE_LENGTH = 1000
_PURPOSE = "oauth-consent"


class RedirectError(OAuthError):
    """An error for a trusted redirect URI: the client hears about it through the redirect."""

    def __init__(self, code: str, message: str, *, redirect_uri: str, state: str | None) -> None:
        super().__init__(code, message)
        self.redirect_uri = redirect_uri
        self.state = state


@dataclass(frozen=True)
class AuthorizationRequest:
    client: Client
    redirect_uri: str
    redirect_explicit: bool
    state: str | None
    code_challenge: str
    resource: str
    scope: str
    # The consent form's own id and expiry (a request read back from a form; None when just checked).
    consent_id: str | None = None
    consent_expires: int = 0

    @property
    def redirect_host(self) -> str:
        return urlsplit(self.redirect_uri).netloc


def redirect_with(redirect_uri: str, params: dict[str, str | None]) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{redirect_uri}{'&' if urlsplit(redirect_uri).query else '?'}{query}"


def _client(clients: Clients, client_id: object, *, explain: bool = True) -> Client | None:
    try:
        return clients.lookup(client_id)
    except DocumentError as exc:
        # A request that is not signed in hears nothing of what the fetch found (an anonymous party must
        # not learn what a URL of its choosing answered).
        message = exc.message if explain else say("oauth.document_client_invalid")
        raise AuthorizeRequestError("invalid_client", message) from None


def check_request(
    query: AuthorizationQuery, clients: Clients, *, resource: str, explain: bool = True
) -> AuthorizationRequest:
    """Validate an authorization request. Problems with the client or redirect URI raise
    AuthorizeRequestError (shown on a page); anything else raises RedirectError. `explain` (a signed-in
    person) says why a client metadata document cannot be used; otherwise only that the client is invalid."""
    client = _client(clients, query.client_id, explain=explain)
    if client is None:
        raise AuthorizeRequestError("invalid_client", say("oauth.client_unknown"))
    redirect_uri = query.redirect_uri
    explicit = bool(redirect_uri)
    if not redirect_uri:
        if len(client.redirect_uris) != 1:
            raise AuthorizeRequestError("invalid_request", say("oauth.redirect_uri_required"))
        redirect_uri = client.redirect_uris[0]
    elif redirect_uri not in client.redirect_uris:
        raise AuthorizeRequestError("invalid_request", say("oauth.redirect_uri_unregistered"))
    if redirect_uri_problem(redirect_uri) is not None:  # registered before the rule was strict
        raise AuthorizeRequestError("invalid_request", say("oauth.redirect_uri_disallowed"))

    state = query.state

    def fail(code: str, message: str) -> RedirectError:
        return RedirectError(code, message, redirect_uri=redirect_uri, state=state)

    if state is not None and len(state) > MAX_STATE_LENGTH:
        raise fail("invalid_request", say("oauth.state_too_long", max_length=MAX_STATE_LENGTH))
    if query.response_type != "code":
        raise fail("unsupported_response_type", say("oauth.response_type_invalid"))
    if query.code_challenge_method != "S256":
        raise fail("invalid_request", say("oauth.unsupported_method"))
    if query.code_challenge is None or not valid_challenge(query.code_challenge):
        raise fail("invalid_request", say("oauth.code_challenge_invalid"))
    scope = query.scope or SCOPE
    if set(scope.split()) != {SCOPE}:
        raise fail("invalid_scope", say("oauth.only_scope", scope=SCOPE))
    wanted = query.resource
    if wanted is not None and wanted.rstrip("/") != resource:
        raise fail("invalid_target", say("oauth.resource_must_be", resource=resource))
    return AuthorizationRequest(
        client=client,
        redirect_uri=redirect_uri,
        redirect_explicit=explicit,
        state=state,
        code_challenge=query.code_challenge,
        resource=resource,
        scope=SCOPE,
    )


def consent_token(
    request: AuthorizationRequest, *, user_id: str, session_cookie: str, key: bytes, clock: Clock
) -> str:
    """A short-lived token bound to the signed-in session that carries the checked request (CSRF protection:
    only a page rendered for this session can produce it)."""
    payload: dict[str, Any] = {
        "u": user_id,
        "b": hash_token(session_cookie)[:32],
        "c": request.client.client_id,
        "r": request.redirect_uri,
        "x": request.redirect_explicit,
        "s": request.state,
        "cc": request.code_challenge,
        "rs": request.resource,
        "exp": int(clock.now()) + CONSENT_TTL,
        "n": new_token(16),  # the form's id: it can be answered once (Grants.spend_consent)
    }
    return sign(payload, key, _PURPOSE)


def read_consent(
    token: str | None, *, user_id: str, session_cookie: str, key: bytes, clock: Clock, clients: Clients
) -> AuthorizationRequest:
    """The request a consent token carries, if it was made for this session, is fresh, and its client and
    redirect URI are still registered."""
    if not token:
        raise AuthorizeRequestError("invalid_request", say("oauth.consent_incomplete"))
    try:
        data = unsign(token, key, _PURPOSE)
    except BadSignature:
        raise AuthorizeRequestError("invalid_request", say("oauth.consent_invalid")) from None
    if data.get("u") != user_id or data.get("b") != hash_token(session_cookie)[:32]:
        raise AuthorizeRequestError("invalid_request", say("oauth.consent_other_session"))
    if not isinstance(data.get("n"), str) or not data["n"]:
        raise AuthorizeRequestError("invalid_request", say("oauth.consent_invalid"))
    if not isinstance(data.get("exp"), int) or data["exp"] <= clock.now():
        raise AuthorizeRequestError("invalid_request", say("oauth.consent_expired"))
    client = _client(clients, data.get("c"))
    if client is None or data.get("r") not in client.redirect_uris:
        raise AuthorizeRequestError("invalid_client", say("oauth.client_gone"))
    return AuthorizationRequest(
        client=client,
        redirect_uri=data["r"],
        redirect_explicit=bool(data.get("x")),
        state=data.get("s"),
        code_challenge=data["cc"],
        resource=data["rs"],
        scope=SCOPE,
        consent_id=data["n"],
        consent_expires=data["exp"],
    )
