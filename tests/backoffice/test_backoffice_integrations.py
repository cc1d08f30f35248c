"""Integrations (sealed write-only secrets) and the search-console connect flow against the gsc provider of the
platform's provider sandbox (authorize/token/sites/revoke over real HTTP), reached through GSC_PROVIDER_BASE_URL."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from bohelpers import AUDIENCE

from svc_backoffice.core import config
from svc_local.providers import Gsc, SandboxCredentials, base_urls
from svc_local.providers.gsc import s256
from svc_local.sandbox import Sandbox


@pytest.fixture
def admin(as_role):
    return as_role("admin")


def test_integration_crud_keeps_the_secret_write_only(admin, db):
    created = admin.post(
        "/api/integrations", {"kind": "mailer", "config": {"list": "news"}, "secret": "api-key-123"}
    )
    assert created.status == 201
    item = created.json()
    assert (item["secret_set"], item["status"], item["connected_at"]) == (True, "disconnected", None)
    assert "api-key-123" not in admin.get("/api/integrations").body
    stored = bytes(db.one("SELECT secret_encrypted AS s FROM integrations")["s"])
    assert b"api-key-123" not in stored
    assert admin.post("/api/integrations", {"kind": "mailer"}).status == 409
    assert admin.post("/api/integrations", {"kind": "Bad Kind"}).status == 400
    connected = admin.patch(f"/api/integrations/{item['id']}", {"status": "connected"}).json()
    assert connected["connected_at"] is not None
    cleared = admin.patch(f"/api/integrations/{item['id']}", {"status": "error", "secret": None}).json()
    assert (cleared["connected_at"], cleared["secret_set"]) == (None, False)
    assert admin.patch(f"/api/integrations/{item['id']}", {"status": "unknown"}).status == 400
    assert admin.patch(f"/api/integrations/{uuid.uuid4()}", {"config": {}}).status == 404
    assert admin.delete(f"/api/integrations/{item['id']}").json() == {"ok": True}
    assert admin.delete(f"/api/integrations/{item['id']}").status == 404


# -- search console ------------------------------------------------------------------------------------------
SITES = [{"siteUrl": "https://shop.example/", "permissionLevel": "siteOwner"}]


def call(url: str, *, form: dict[str, str] | None = None, json_body: Any = None, token: str | None = None):
    """(status, headers, JSON body) of a request to the sandbox; redirects are not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    data = urlencode(form).encode() if form is not None else None
    if json_body is not None:
        data = json.dumps(json_body).encode()
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    if json_body is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=5) as answer:
            status, headers, text = answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as exc:
        status, headers, text = exc.code, exc.headers, exc.read().decode()
    return status, headers, (json.loads(text) if text and "json" in headers.get("Content-Type", "") else text)


class Provider:
    """The running sandbox with its gsc provider and the credentials the backoffice is configured with."""

    def __init__(self, sandbox: Sandbox, gsc: Gsc, credentials: SandboxCredentials) -> None:
        self.sandbox, self.gsc, self.credentials = sandbox, gsc, credentials
        self.base = base_urls(sandbox.url)["GSC_PROVIDER_BASE_URL"]

    def admin(self, path: str, body: Any) -> Any:
        status, _, answer = call(f"{self.sandbox.url}/__admin/{path}", json_body=body)
        assert status in (200, 201), answer
        return answer

    def counts(self) -> dict[str, int]:
        return call(f"{self.sandbox.url}/__admin/requests?prefix=/gsc")[2]["counts"]

    def authorize(self, authorize_url: str) -> dict[str, str]:
        """The browser step: the sandbox's consent page redirects back; the redirect's query."""
        status, headers, _ = call(authorize_url)
        assert status == 302
        location = urlsplit(headers["Location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == f"{AUDIENCE}/api/gsc/callback"
        return {k: v[0] for k, v in parse_qs(location.query).items()}


@pytest.fixture
def provider(db, monkeypatch) -> Iterator[Provider]:
    credentials = SandboxCredentials.generate()
    gsc = Gsc(None, client_id=credentials.gsc_client_id, client_secret=credentials.gsc_client_secret)
    with Sandbox("127.0.0.1", 0, [gsc], quiet=True) as sandbox:
        running = Provider(sandbox, gsc, credentials)
        running.admin("gsc/sites", {"sites": SITES})
        monkeypatch.setenv("GSC_PROVIDER_BASE_URL", running.base)
        monkeypatch.setenv("GSC_CLIENT_ID", credentials.gsc_client_id)
        monkeypatch.setenv("GSC_CLIENT_SECRET", credentials.gsc_client_secret)
        config.reset_settings()
        yield running


def connect(admin, provider: Provider) -> tuple[str, str]:
    """Start the flow; (state, authorize URL)."""
    answer = admin.post("/api/gsc/connect")
    assert answer.status == 200
    assert answer.headers["Cache-Control"] == "no-store"
    authorize_url = answer.json()["authorize_url"]
    url = urlsplit(authorize_url)
    params = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{provider.base}/o/oauth2/v2/auth"
    assert params["redirect_uri"] == f"{AUDIENCE}/api/gsc/callback"
    assert (params["code_challenge_method"], params["response_type"], params["client_id"]) == (
        "S256",
        "code",
        provider.credentials.gsc_client_id,
    )
    return params["state"], authorize_url


def approve(admin, provider: Provider) -> tuple[str, str]:
    """Start the flow and let the sandbox approve it: (state, code) for the callback."""
    state, authorize_url = connect(admin, provider)
    back = provider.authorize(authorize_url)
    assert back["state"] == state
    return state, back["code"]


def test_connect_callback_status_disconnect(admin, db, provider):
    assert admin.get("/api/gsc/status").json()["status"] == "disconnected"
    state, code = approve(admin, provider)
    assert admin.get("/api/gsc/status").json() | {"connected_at": None} == {
        "connected": False,
        "status": "pending",
        "connected_at": None,
        "last_error": None,
        "sites": [],
    }
    back = admin.get(f"/api/gsc/callback?code={code}&state={state}")
    assert (back.status, back.location, back.headers["Cache-Control"]) == (
        302,
        "/settings/integrations?gsc=connected",
        "no-store",
    )
    [refresh_token] = provider.gsc.data["grants"]
    [access_token] = provider.gsc.data["access_tokens"]
    stored = bytes(db.one("SELECT secret_encrypted AS s FROM integrations WHERE kind = 'gsc'")["s"])
    assert access_token.encode() not in stored and refresh_token.encode() not in stored
    status = admin.get("/api/gsc/status")
    assert status.headers["Cache-Control"] == "no-store"
    assert status.json()["connected"] is True
    assert status.json()["sites"] == [{"site_url": "https://shop.example/", "permission": "siteOwner"}]
    assert access_token not in status.body and refresh_token not in admin.get("/api/integrations").body
    # The state was single-use (and so is the code at the provider).
    assert admin.get(f"/api/gsc/callback?code={code}&state={state}").status == 400
    # An expired access token is refreshed with the stored refresh token (the provider expired the old one).
    from svc_backoffice.domain import integrations

    row = db.one("SELECT * FROM integrations WHERE kind = 'gsc'")
    tokens = integrations._opened_json(row) | {"expires_at": 0}
    db.all(
        "UPDATE integrations SET secret_encrypted = %s WHERE kind = 'gsc'",
        (integrations._sealed_json(tokens),),
    )
    assert provider.admin("gsc/expire", {}) == {"expired": 1}
    before = provider.counts()
    assert admin.get("/api/gsc/status").json()["sites"][0]["site_url"] == "https://shop.example/"
    after = provider.counts()
    assert after["POST /gsc/token"] == before["POST /gsc/token"] + 1
    assert after["GET /gsc/webmasters/v3/sites"] == before["GET /gsc/webmasters/v3/sites"] + 1
    [renewed] = provider.gsc.data["access_tokens"]  # the expired one is gone
    assert renewed != access_token
    assert provider.gsc.data["access_tokens"][renewed]["refresh_token"] == refresh_token
    gone = admin.post("/api/gsc/disconnect")
    assert (gone.status, gone.json(), gone.headers["Cache-Control"]) == (
        200,
        {"ok": True, "revoked": True},
        "no-store",
    )
    # The refresh token was revoked, and with it every access token of the grant.
    assert provider.counts()["POST /gsc/revoke"] == 1
    assert (provider.gsc.data["grants"], provider.gsc.data["access_tokens"]) == ({}, {})
    assert admin.get("/api/gsc/status").json()["status"] == "disconnected"
    assert admin.post("/api/gsc/disconnect").json() == {"ok": True, "revoked": False}


def test_callback_refusals(admin, as_role, db, provider):
    state, code = approve(admin, provider)
    for query in (f"code={code}", f"code={code}&state={state}x", "state="):
        answer = admin.get(f"/api/gsc/callback?{query}")
        assert answer.status == 400 and "error" in answer.json(), query
    # Another admin cannot finish this admin's flow.
    other = as_role("owner").get(f"/api/gsc/callback?code={code}&state={state}")
    assert other.status == 400
    # An expired state is refused and changes nothing.
    db.all("UPDATE integrations SET updated_at = now() WHERE kind = 'gsc'")
    from svc_backoffice.domain import integrations

    row = db.one("SELECT * FROM integrations WHERE kind = 'gsc'")
    pending = integrations._opened_json(row)
    db.all(
        "UPDATE integrations SET secret_encrypted = %s WHERE kind = 'gsc'",
        (integrations._sealed_json(pending | {"expires_at": 1}),),
    )
    assert admin.get(f"/api/gsc/callback?code={code}&state={state}").status == 400
    assert admin.get("/api/gsc/status").json()["status"] == "pending"
    # None of the refusals reached the provider's token endpoint.
    assert "POST /gsc/token" not in provider.counts()


def test_provider_denial_and_failed_exchange_redirect_with_a_reason(admin, provider):
    provider.admin("oauth/next", {"provider": "gsc", "decision": "deny"})
    state, authorize_url = connect(admin, provider)
    back = provider.authorize(authorize_url)
    assert (back["error"], back["state"]) == ("access_denied", state)
    denied = admin.get(f"/api/gsc/callback?error={back['error']}&state={state}")
    assert (denied.status, denied.location) == (302, "/settings/integrations?gsc=error&reason=access_denied")
    assert admin.get("/api/gsc/status").json()["last_error"] == "access_denied"
    state, _ = connect(admin, provider)
    failed = admin.get(f"/api/gsc/callback?code=bad-code&state={state}")
    assert (failed.status, failed.location) == (
        302,
        "/settings/integrations?gsc=error&reason=code_exchange_failed",
    )
    assert admin.get("/api/gsc/status").json()["status"] == "error"
    # A real code whose PKCE challenge belongs to another flow (a restarted connect) is refused too.
    _, stale_code = approve(admin, provider)
    state, _ = connect(admin, provider)
    failed = admin.get(f"/api/gsc/callback?code={stale_code}&state={state}")
    assert (failed.status, failed.location) == (
        302,
        "/settings/integrations?gsc=error&reason=code_exchange_failed",
    )
    assert (provider.gsc.data["grants"], provider.gsc.data["access_tokens"]) == ({}, {})


def test_unreachable_provider_and_missing_configuration(admin, db, monkeypatch, provider):
    state, code = approve(admin, provider)
    assert admin.get(f"/api/gsc/callback?code={code}&state={state}").status == 302
    monkeypatch.setenv("GSC_PROVIDER_BASE_URL", "http://127.0.0.1:9")
    config.reset_settings()
    status = admin.get("/api/gsc/status").json()
    assert (status["connected"], status["sites"]) == (True, None)
    assert "could not be reached" in status["provider_error"]
    assert admin.post("/api/gsc/disconnect").json() == {"ok": True, "revoked": False}
    monkeypatch.delenv("GSC_CLIENT_ID")
    config.reset_settings()
    answer = admin.post("/api/gsc/connect")
    assert answer.status == 422
    assert "not configured" in answer.json()["error"]


# -- the provider sandbox's gsc endpoints, as Google answers them ----------------------------------------------
def authorize_params(provider: Provider, verifier: str, **extra: str) -> str:
    query = {
        "client_id": provider.credentials.gsc_client_id,
        "redirect_uri": f"{AUDIENCE}/api/gsc/callback",
        "response_type": "code",
        "scope": "https://www.googleapis.com/auth/webmasters.readonly",
        "state": "s1",
        "code_challenge": s256(verifier),
        "code_challenge_method": "S256",
        "access_type": "offline",
        **extra,
    }
    return f"{provider.base}/o/oauth2/v2/auth?{urlencode(query)}"


def exchange(provider: Provider, code: str, verifier: str | None, **extra: str) -> tuple[int, Any]:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": f"{AUDIENCE}/api/gsc/callback",
        "client_id": provider.credentials.gsc_client_id,
        "client_secret": provider.credentials.gsc_client_secret,
        **({"code_verifier": verifier} if verifier is not None else {}),
        **extra,
    }
    status, _, body = call(f"{provider.base}/token", form=form)
    return status, body


def test_sandbox_token_endpoint_checks_client_code_and_pkce(provider):
    verifier = "v" * 50
    code = provider.authorize(authorize_params(provider, verifier))["code"]
    assert exchange(provider, code, verifier, client_secret="wrong") == (
        401,
        {"error": "invalid_client", "error_description": "Unauthorized"},
    )
    status, body = exchange(provider, code, "w" * 50)
    assert (status, body) == (400, {"error": "invalid_grant", "error_description": "Invalid code verifier."})
    # A failed verifier used the code up, as a replayed code is.
    code = provider.authorize(authorize_params(provider, verifier))["code"]
    assert exchange(provider, code, None)[1]["error_description"] == "Missing code verifier."
    code = provider.authorize(authorize_params(provider, verifier))["code"]
    status, tokens = exchange(provider, code, verifier)
    assert status == 200
    assert (tokens["token_type"], tokens["expires_in"], tokens["scope"]) == (
        "Bearer",
        3599,
        "https://www.googleapis.com/auth/webmasters.readonly",
    )
    assert tokens["refresh_token"].startswith("1//") and tokens["access_token"].startswith("ya29.")
    assert exchange(provider, code, verifier)[1]["error"] == "invalid_grant"
    # Without access_type=offline there is no refresh token.
    code = provider.authorize(authorize_params(provider, verifier, access_type="online"))["code"]
    assert "refresh_token" not in exchange(provider, code, verifier)[1]
    form = {
        "grant_type": "refresh_token",
        "refresh_token": "1//nope",
        "client_id": provider.credentials.gsc_client_id,
        "client_secret": provider.credentials.gsc_client_secret,
    }
    assert call(f"{provider.base}/token", form=form)[:3:2] == (
        400,
        {"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
    )
    assert call(f"{provider.base}/token", form=form | {"grant_type": "password"})[0] == 400
    assert call(f"{provider.base}/revoke", form={"token": "nope"})[:3:2] == (
        400,
        {"error": "invalid_token", "error_description": "Token expired or revoked"},
    )


def test_sandbox_sites_are_the_signed_in_accounts(provider):
    verifier = "v" * 50
    status, headers, body = call(f"{provider.base}/webmasters/v3/sites", token="ya29.nope")
    assert (status, body["error"]["code"], body["error"]["status"]) == (401, 401, "UNAUTHENTICATED")
    assert 'error="invalid_token"' in headers["WWW-Authenticate"]
    tokens = exchange(provider, provider.authorize(authorize_params(provider, verifier))["code"], verifier)[1]
    assert call(f"{provider.base}/webmasters/v3/sites", token=tokens["access_token"])[2] == {
        "siteEntry": SITES
    }
    # Sign in as another account: its own sites.
    provider.admin("oauth/next", {"provider": "gsc", "decision": "approve", "account": "other"})
    other = exchange(provider, provider.authorize(authorize_params(provider, verifier))["code"], verifier)[1]
    assert call(f"{provider.base}/webmasters/v3/sites", token=other["access_token"])[2] == {
        "siteEntry": [
            {"siteUrl": "https://other.sandbox.test/", "permissionLevel": "siteOwner"},
            {"siteUrl": "sc-domain:other.sandbox.test", "permissionLevel": "siteFullUser"},
        ]
    }
    provider.admin("gsc/sites", {"account": "other", "sites": []})
    assert call(f"{provider.base}/webmasters/v3/sites", token=other["access_token"])[2] == {}
    # A token without a search-console scope is refused with 403; an expired one with 401.
    code = provider.authorize(authorize_params(provider, verifier, scope="openid email"))["code"]
    narrow = exchange(provider, code, verifier)[1]
    assert call(f"{provider.base}/webmasters/v3/sites", token=narrow["access_token"])[0] == 403
    provider.admin("gsc/expire", {})
    assert call(f"{provider.base}/webmasters/v3/sites", token=tokens["access_token"])[0] == 401
    # Revoking the access token revokes its grant: the refresh token no longer works.
    assert call(f"{provider.base}/revoke", form={"token": tokens["access_token"]})[:3:2] == (200, {})
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": provider.credentials.gsc_client_id,
        "client_secret": provider.credentials.gsc_client_secret,
    }
    assert call(f"{provider.base}/token", form=refresh)[0] == 400
