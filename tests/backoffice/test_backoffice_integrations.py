"""Integrations (sealed write-only secrets) and the search-console connect flow against a small local HTTP stub
of the provider (authorize/token/sites/revoke), reached through GSC_PROVIDER_BASE_URL."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from bohelpers import AUDIENCE

from svc_backoffice import config


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
class Provider:
    """What the stub saw and will answer."""

    def __init__(self) -> None:
        self.challenges: dict[str, str] = {}
        self.grants: list[dict[str, str]] = []
        self.revoked: list[str] = []
        self.access = "at-1"


def _stub(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/webmasters/v3/sites":
                if self.headers.get("Authorization") != f"Bearer {provider.access}":
                    return self._json(401, {"error": "invalid_token"})
                return self._json(
                    200, {"siteEntry": [{"siteUrl": "https://shop.example/", "permissionLevel": "siteOwner"}]}
                )
            self._json(404, {})

        def do_POST(self) -> None:
            form = {
                k: v[0]
                for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()
            }
            if self.path == "/revoke":
                provider.revoked.append(form["token"])
                return self._json(200, {})
            if self.path != "/token" or (form.get("client_id"), form.get("client_secret")) != (
                "gsc-client",
                "gsc-client-secret",
            ):
                return self._json(401, {"error": "invalid_client"})
            provider.grants.append(form)
            if form["grant_type"] == "refresh_token" and form["refresh_token"] == "rt-1":
                provider.access = "at-2"
                return self._json(200, {"access_token": "at-2", "expires_in": 3600})
            verifier = form.get("code_verifier", "")
            challenge = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            if form.get("code") != "good-code" or challenge not in provider.challenges.values():
                return self._json(400, {"error": "invalid_grant"})
            self._json(
                200,
                {
                    "access_token": "at-1",
                    "refresh_token": "rt-1",
                    "expires_in": 3600,
                    "scope": "webmasters.readonly",
                },
            )

    return Handler


@pytest.fixture
def provider(db, monkeypatch) -> Iterator[Provider]:
    state = Provider()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _stub(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("GSC_PROVIDER_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    config.reset_settings()
    yield state
    server.shutdown()
    server.server_close()


def connect(admin, provider: Provider) -> str:
    answer = admin.post("/api/gsc/connect")
    assert answer.status == 200
    assert answer.headers["Cache-Control"] == "no-store"
    url = urlsplit(answer.json()["authorize_url"])
    params = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert url.path == "/o/oauth2/v2/auth"
    assert params["redirect_uri"] == f"{AUDIENCE}/api/gsc/callback"
    assert (params["code_challenge_method"], params["response_type"], params["client_id"]) == (
        "S256",
        "code",
        "gsc-client",
    )
    provider.challenges[params["state"]] = params["code_challenge"]
    return params["state"]


def test_connect_callback_status_disconnect(admin, db, provider):
    assert admin.get("/api/gsc/status").json()["status"] == "disconnected"
    state = connect(admin, provider)
    assert admin.get("/api/gsc/status").json() | {"connected_at": None} == {
        "connected": False,
        "status": "pending",
        "connected_at": None,
        "last_error": None,
        "sites": [],
    }
    back = admin.get(f"/api/gsc/callback?code=good-code&state={state}")
    assert (back.status, back.location, back.headers["Cache-Control"]) == (
        302,
        "/integrations?gsc=connected",
        "no-store",
    )
    stored = bytes(db.one("SELECT secret_encrypted AS s FROM integrations WHERE kind = 'gsc'")["s"])
    assert b"at-1" not in stored and b"rt-1" not in stored
    status = admin.get("/api/gsc/status")
    assert status.headers["Cache-Control"] == "no-store"
    assert status.json()["connected"] is True
    assert status.json()["sites"] == [{"site_url": "https://shop.example/", "permission": "siteOwner"}]
    assert "at-1" not in status.body and "rt-1" not in admin.get("/api/integrations").body
    # The state was single-use.
    assert admin.get(f"/api/gsc/callback?code=good-code&state={state}").status == 400
    # An expired access token is refreshed with the stored refresh token.
    from svc_backoffice import integrations

    row = db.one("SELECT * FROM integrations WHERE kind = 'gsc'")
    tokens = integrations._opened_json(row) | {"expires_at": 0}
    db.all(
        "UPDATE integrations SET secret_encrypted = %s WHERE kind = 'gsc'",
        (integrations._sealed_json(tokens),),
    )
    assert admin.get("/api/gsc/status").json()["sites"][0]["site_url"] == "https://shop.example/"
    assert provider.grants[-1]["grant_type"] == "refresh_token"
    gone = admin.post("/api/gsc/disconnect")
    assert (gone.status, gone.json(), gone.headers["Cache-Control"]) == (
        200,
        {"ok": True, "revoked": True},
        "no-store",
    )
    assert provider.revoked == ["rt-1"]
    assert admin.get("/api/gsc/status").json()["status"] == "disconnected"
    assert admin.post("/api/gsc/disconnect").json() == {"ok": True, "revoked": False}


def test_callback_refusals(admin, as_role, db, provider):
    state = connect(admin, provider)
    for query in ("code=good-code", f"code=good-code&state={state}x", "state="):
        answer = admin.get(f"/api/gsc/callback?{query}")
        assert answer.status == 400 and "error" in answer.json(), query
    # Another admin cannot finish this admin's flow.
    other = as_role("owner").get(f"/api/gsc/callback?code=good-code&state={state}")
    assert other.status == 400
    # An expired state is refused and changes nothing.
    db.all("UPDATE integrations SET updated_at = now() WHERE kind = 'gsc'")
    from svc_backoffice import integrations

    row = db.one("SELECT * FROM integrations WHERE kind = 'gsc'")
    pending = integrations._opened_json(row)
    db.all(
        "UPDATE integrations SET secret_encrypted = %s WHERE kind = 'gsc'",
        (integrations._sealed_json(pending | {"expires_at": 1}),),
    )
    assert admin.get(f"/api/gsc/callback?code=good-code&state={state}").status == 400
    assert admin.get("/api/gsc/status").json()["status"] == "pending"


def test_provider_denial_and_failed_exchange_redirect_with_a_reason(admin, provider):
    state = connect(admin, provider)
    denied = admin.get(f"/api/gsc/callback?error=access_denied&state={state}")
    assert (denied.status, denied.location) == (302, "/integrations?gsc=error&reason=access_denied")
    assert admin.get("/api/gsc/status").json()["last_error"] == "access_denied"
    state = connect(admin, provider)
    failed = admin.get(f"/api/gsc/callback?code=bad-code&state={state}")
    assert (failed.status, failed.location) == (302, "/integrations?gsc=error&reason=code_exchange_failed")
    assert admin.get("/api/gsc/status").json()["status"] == "error"


def test_unreachable_provider_and_missing_configuration(admin, db, monkeypatch, provider):
    state = connect(admin, provider)
    assert admin.get(f"/api/gsc/callback?code=good-code&state={state}").status == 302
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
