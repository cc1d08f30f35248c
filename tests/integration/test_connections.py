"""Provider connection routes through real proxy events, with the providers served by the sandbox."""

from __future__ import annotations

import httpx
import pytest

from svc_shared.core.catalogue import say
from svc_shared.wiring import services

STATE_EXPIRED = "La session OAuth a expiré (plus de 10 minutes). Veuillez relancer la connexion."
PROVIDERS = ("repo_host", "db_host", "static_host")


@pytest.fixture
def signed_in(api, provider_env, demo_user):
    assert api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"}).status == 303
    return api


def authorize_at_provider(url: str) -> dict[str, str]:
    """The provider's authorize page (the sandbox auto-approves): where it sends the browser back."""
    answer = httpx.get(url)
    assert answer.status_code == 302, answer.text
    return dict(httpx.URL(answer.headers["location"]).params)


def connect(api, provider: str) -> dict[str, str]:
    url = api.get("/api/oauth/initiate", params={"provider": provider}).json()["url"]
    params = authorize_at_provider(url)
    answer = api.get("/api/oauth/callback", params=params)
    assert answer.status == 200, answer.text
    return params


def test_initiate_builds_the_authorization_url_with_scopes_and_signed_state(signed_in):
    github = httpx.URL(signed_in.get("/api/oauth/initiate", params={"provider": "repo_host"}).json()["url"])
    assert github.params["scope"] == "repo user:email"
    assert github.params["redirect_uri"] == "http://127.0.0.1:3000/api/oauth/callback"
    assert github.params["state"].count(".") == 1
    supabase = httpx.URL(signed_in.get("/api/oauth/initiate", params={"provider": "db_host"}).json()["url"])
    assert supabase.params["scope"] == "all"
    assert supabase.params["response_type"] == "code"


def test_unknown_provider_is_400(signed_in):
    answer = signed_in.get("/api/oauth/initiate", params={"provider": "dropbox"})
    assert answer.status == 400
    assert answer.json()["error"] == "invalid_provider"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"provider": "dropbox"}, "provider: Input should be 'repo_host', 'db_host' or 'static_host'"),
        ({}, "provider: Field required"),
    ],
)
def test_disconnect_names_the_wrong_field_and_the_providers(signed_in, body, message):
    answer = signed_in.post("/api/oauth/disconnect", json_body=body)
    assert answer.status == 400
    assert answer.json() == {"error": "invalid_provider", "message": message}


def test_routes_need_a_workspace_session(api, provider_env):
    assert api.get("/api/oauth/check-connections").status == 401
    assert api.get("/api/oauth/initiate", params={"provider": "repo_host"}).status == 401


def test_connecting_turns_each_provider_on_and_disconnect_removes_only_its_token(signed_in, provider_env):
    assert signed_in.get("/api/oauth/check-connections").json() == {
        "success": True,
        "connections": dict.fromkeys(PROVIDERS, False),
    }
    seen = []
    for provider in PROVIDERS:
        connect(signed_in, provider)
        seen.append(provider)
        assert signed_in.get("/api/oauth/check-connections").json()["connections"] == {
            p: p in seen for p in PROVIDERS
        }
    me = signed_in.get("/api/me").json()
    assert me["repo_host_connected"] is True
    assert me["repo_host_username"]
    answer = signed_in.post("/api/oauth/disconnect", json_body={"provider": "db_host"})
    assert answer.status == 200
    assert signed_in.get("/api/oauth/check-connections").json()["connections"] == {
        "repo_host": True,
        "db_host": False,
        "static_host": True,
    }


def test_token_table_holds_ciphertext_only(signed_in, provider_env):
    connect(signed_in, "repo_host")
    user_id = signed_in.get("/api/me").json()["id"]
    token = services.connections().token(user_id, "repo_host").access_token
    raw = provider_env["dynamodb"].get_item(
        TableName=provider_env["TOKENS_TABLE_NAME"],
        Key={"user_id": {"S": user_id}, "provider": {"S": "repo_host"}},
    )["Item"]
    assert token not in str(raw)
    assert raw["access_token"]["S"].startswith("v1.")


def test_tampered_state_is_refused_with_the_spec_message(signed_in):
    url = signed_in.get("/api/oauth/initiate", params={"provider": "repo_host"}).json()["url"]
    params = authorize_at_provider(url)
    params["state"] = params["state"][:-4] + "AAAA"
    answer = signed_in.get("/api/oauth/callback", params=params)
    assert answer.status == 400
    assert say("connections.state_not_verified") in answer.text
    assert signed_in.get("/api/oauth/check-connections").json()["connections"]["repo_host"] is False


def test_replayed_callback_is_refused(signed_in):
    params = connect(signed_in, "static_host")
    replay = signed_in.get("/api/oauth/callback", params=params)
    assert replay.status == 400
    assert say("connections.state_not_verified") in replay.text


def test_state_older_than_ten_minutes_gets_the_expiry_message(clock, signed_in):
    url = signed_in.get("/api/oauth/initiate", params={"provider": "repo_host"}).json()["url"]
    params = authorize_at_provider(url)
    clock.advance(600)
    answer = signed_in.get("/api/oauth/callback", params=params)
    assert answer.status == 400
    assert "expir" in STATE_EXPIRED and STATE_EXPIRED.replace("'", "&#x27;") in answer.text


def test_state_of_another_user_is_refused(api, provider_env, demo_user):
    services.accounts().create_user(email="other@example.com", password="other-password-1")
    api.post("/login", form={"email": "other@example.com", "password": "other-password-1"})
    url = api.get("/api/oauth/initiate", params={"provider": "repo_host"}).json()["url"]
    params = authorize_at_provider(url)
    api.post("/logout")
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    assert say("connections.state_not_verified") in api.get("/api/oauth/callback", params=params).text


def test_rejected_code_gets_the_exchange_failure_and_stores_nothing(signed_in):
    url = signed_in.get("/api/oauth/initiate", params={"provider": "db_host"}).json()["url"]
    params = authorize_at_provider(url)
    params["code"] = "not-the-code"
    answer = signed_in.get("/api/oauth/callback", params=params)
    assert answer.status == 400
    assert "change du code" in answer.text
    assert signed_in.get("/api/oauth/check-connections").json()["connections"]["db_host"] is False


def test_provider_5xx_during_exchange_stores_nothing(signed_in, provider_env):
    sandbox = provider_env["sandbox"]
    url = signed_in.get("/api/oauth/initiate", params={"provider": "db_host"}).json()["url"]
    params = authorize_at_provider(url)
    httpx.post(
        f"{sandbox.url}/__admin/faults",
        json={"method": "POST", "path": "/supabase/v1/oauth/token", "status": 503, "times": 1},
    )
    answer = signed_in.get("/api/oauth/callback", params=params)
    assert answer.status == 400
    assert signed_in.get("/api/oauth/check-connections").json()["connections"]["db_host"] is False


def test_denied_at_the_provider_is_reported(signed_in, provider_env):
    sandbox = provider_env["sandbox"]
    httpx.post(f"{sandbox.url}/__admin/oauth/next", json={"provider": "github", "decision": "deny"})
    url = signed_in.get("/api/oauth/initiate", params={"provider": "repo_host"}).json()["url"]
    params = authorize_at_provider(url)
    assert params.get("error") == "access_denied"
    assert signed_in.get("/api/oauth/callback", params=params).status == 400


def test_expired_db_host_token_is_refreshed_once(signed_in, provider_env, clock):
    connect(signed_in, "db_host")
    user_id = signed_in.get("/api/me").json()["id"]
    first = services.connections().token(user_id, "db_host")
    clock.advance(86400)
    second = services.connections().token(user_id, "db_host")
    assert second.access_token != first.access_token
    assert services.connections().token(user_id, "db_host").access_token == second.access_token


def test_db_host_refresh_refused_asks_to_reconnect(clock, signed_in, provider_env):
    from svc_shared.domain.connections import ReconnectRequired

    connect(signed_in, "db_host")
    user_id = signed_in.get("/api/me").json()["id"]
    clock.advance(86400)
    sandbox = provider_env["sandbox"].url
    httpx.post(
        f"{sandbox}/__admin/faults",
        json={"method": "POST", "path": "/supabase/v1/oauth/token", "status": 400, "times": 1},
    )
    with pytest.raises(ReconnectRequired) as refused:
        services.connections().token(user_id, "db_host")
    assert refused.value.message == say("connections.db_host_not_connected")
