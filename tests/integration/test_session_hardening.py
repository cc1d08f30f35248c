"""Attacks on the workspace's sessions, each refused: login and logout CSRF, JSON routes driven by another
site, sessions and MCP tokens outliving a password change, locking an account out, telling emails apart."""

import re
import time

import pytest

from apiclient import authorize_client, connect_provider, mcp_status, refresh_tokens
from svc_shared.core.errors import RateLimited, Unauthenticated
from svc_shared.wiring import cli, services

OWN = "http://127.0.0.1:3000"
EVIL = "https://evil.example"
SIBLING = "https://other-app.127.0.0.1.nip.io:3000"  # another app of the same site
DEMO = {"email": "demo@example.com", "password": "demo-password-1"}


# -- 1. login and logout CSRF ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": EVIL},
        {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": SIBLING, "Sec-Fetch-Site": "same-site"},
        {"Origin": "null"},  # a sandboxed frame
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_cross_site_login_form_does_not_sign_the_browser_in(api, demo_user, headers):
    answer = api.post("/login", form=DEMO, headers=headers)
    assert answer.status == 403
    assert "did not come from this site" in answer.text
    assert not answer.headers_named("set-cookie")
    assert api.get("/api/me").status == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": OWN, "Sec-Fetch-Site": "same-origin"},
        {"Origin": OWN},  # a browser without Sec-Fetch-Site
        {"Origin": "null", "Sec-Fetch-Site": "same-origin"},  # a no-referrer page of the site itself
        {},  # not a browser (curl)
    ],
)
def test_the_sites_own_login_form_signs_in(api, demo_user, headers):
    assert api.post("/login", form=DEMO, headers=headers).status == 303
    assert api.get("/api/me").json()["email"] == "demo@example.com"


def test_the_login_page_keeps_its_origin_on_the_post(api):
    assert api.get("/login").header("referrer-policy") == "same-origin"


def test_a_cross_site_logout_does_not_sign_the_browser_out(api, demo_user):
    api.post("/login", form=DEMO)
    refused = api.post("/logout", headers={"Origin": EVIL, "Sec-Fetch-Site": "cross-site"})
    assert refused.status == 403
    assert not refused.headers_named("set-cookie")
    assert api.get("/api/me").status == 200
    assert api.post("/logout", headers={"Origin": OWN, "Sec-Fetch-Site": "same-origin"}).status == 303
    assert api.get("/api/me").status == 401


def test_a_workspace_form_with_its_token_is_refused_from_another_origin(api, demo_user):
    api.post("/login", form=DEMO)
    csrf = re.search(r'name="csrf" value="([^"]+)"', api.get("/workspace/account").text).group(1)
    form = {"csrf": csrf, "provider": "repo_host", "confirm": "yes"}
    refused = api.post("/workspace/connections/disconnect", form=form, headers={"Origin": SIBLING})
    assert refused.status == 403
    assert api.post("/workspace/connections/disconnect", form=form, headers={"Origin": OWN}).status == 303


# -- 2. JSON routes driven by a same-site page --------------------------------------------------------------
@pytest.fixture
def connected(api, provider_env, demo_user):
    api.post("/login", form=DEMO)
    connect_provider(api, "repo_host")
    assert api.get("/api/oauth/check-connections").json()["connections"]["repo_host"] is True
    return api


def test_a_text_plain_disconnect_is_415_and_changes_nothing(connected):
    answer = connected.post(
        "/api/oauth/disconnect",
        body='{"provider": "repo_host"}',
        headers={"Content-Type": "text/plain", "Origin": SIBLING, "Sec-Fetch-Site": "same-site"},
    )
    assert answer.status in (403, 415)
    plain = connected.post(
        "/api/oauth/disconnect", body='{"provider": "repo_host"}', headers={"Content-Type": "text/plain"}
    )
    assert plain.status == 415
    assert plain.json() == {
        "error": "unsupported_media_type",
        "message": "Request body must be JSON (Content-Type: application/json).",
    }
    assert connected.get("/api/oauth/check-connections").json()["connections"]["repo_host"] is True


def test_json_from_another_origin_is_403_and_changes_nothing(connected):
    answer = connected.post(
        "/api/oauth/disconnect",
        json_body={"provider": "repo_host"},
        headers={"Origin": SIBLING, "Sec-Fetch-Site": "same-site"},
    )
    assert answer.status == 403
    assert answer.json()["error"] == "cross_site"
    assert connected.get("/api/oauth/check-connections").json()["connections"]["repo_host"] is True
    ok = connected.post(
        "/api/oauth/disconnect",
        json_body={"provider": "repo_host"},
        headers={"Origin": OWN, "Sec-Fetch-Site": "same-origin"},
    )
    assert ok.status == 200
    assert connected.get("/api/oauth/check-connections").json()["connections"]["repo_host"] is False


@pytest.mark.parametrize(
    "path",
    [
        "/api/repo-host/connect-repo",
        "/api/repo-host/push",
        "/api/integrations/db-host/link",
        "/api/projects/p_x/provision",
    ],
)
def test_every_session_write_refuses_text_plain_and_other_origins(connected, path):
    plain = connected.post(path, body="{}", headers={"Content-Type": "text/plain"})
    assert plain.status == 415, plain.text
    empty = connected.post(path)  # no body and no type: a cross-site `no-cors` POST can send that too
    assert empty.status == 415
    sibling = connected.post(path, json_body={}, headers={"Origin": SIBLING})
    assert sibling.status == 403


# -- 3. sessions and MCP grants end with a password change and "sign out everywhere" -------------------------
def test_a_password_change_ends_every_session_and_mcp_grant(api, demo_user):
    tokens = authorize_client(api, DEMO["email"], DEMO["password"])  # signs `api` in too
    other = type(api)(api.template_path)  # a second browser
    other.post("/login", form=DEMO)
    assert api.get("/api/me").status == other.get("/api/me").status == 200
    assert mcp_status(api, tokens["access_token"]) == 200

    table = services.table().name
    assert (
        cli.main(
            [
                "--table",
                table,
                "users",
                "set-password",
                "--email",
                DEMO["email"],
                "--password",
                "new-password-2",
            ]
        )
        == 0
    )

    assert api.get("/api/me").status == 401
    assert other.get("/api/me").status == 401
    assert mcp_status(api, tokens["access_token"]) == 401
    assert refresh_tokens(api, tokens).json()["error"] == "invalid_grant"
    assert api.post("/login", form={**DEMO, "password": "new-password-2"}).status == 303
    assert api.get("/api/me").status == 200


def test_sign_out_everywhere_ends_every_session_and_mcp_grant(api, demo_user):
    tokens = authorize_client(api, DEMO["email"], DEMO["password"])
    other = type(api)(api.template_path)
    other.post("/login", form=DEMO)
    page = api.get("/workspace/account").text
    assert "Sign out everywhere" in page
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)

    forged = api.post("/logout", form={"everywhere": "yes"})  # without the page's token
    assert forged.status == 400
    assert other.get("/api/me").status == 200

    out = api.post("/logout", form={"everywhere": "yes", "csrf": csrf}, headers={"Origin": OWN})
    assert out.status == 303
    assert api.get("/api/me").status == 401
    assert other.get("/api/me").status == 401
    assert mcp_status(api, tokens["access_token"]) == 401
    assert refresh_tokens(api, tokens).json()["error"] == "invalid_grant"
    assert api.post("/login", form=DEMO).status == 303  # the password still works


def test_a_session_whose_sign_in_raced_a_password_change_is_born_ended(app_env, demo_user):
    signin = services.signin()
    stale = services.accounts().get_user(demo_user.id)  # credentials checked before the change
    signin.change_password(demo_user.id, "new-password-2")
    session = services.sessions().create(demo_user.id, stale.session_epoch)
    with pytest.raises(Unauthenticated):
        signin.current_user_id(session.cookie)


# -- 4. throttling that cannot lock the owner out; sign-in time that does not tell emails apart ----------------
def test_failures_from_elsewhere_never_lock_the_owner_out(clock, demo_user):
    signin = services.signin()
    for address in ("10.0.0.1", "10.0.0.2"):
        for _ in range(8):
            with pytest.raises((Unauthenticated, RateLimited)):
                signin.sign_in(DEMO["email"], "wrong-pass", address)
    assert signin.sign_in(DEMO["email"], DEMO["password"], "10.0.0.9").user_id == demo_user.id


def test_failures_from_one_address_back_off_exponentially_then_clear(clock, demo_user):
    signin = services.signin()
    for _ in range(5):
        with pytest.raises(Unauthenticated):
            signin.sign_in(DEMO["email"], "wrong-pass", "10.0.0.1")
    waits = []
    for _ in range(4):
        with pytest.raises(RateLimited) as limited:
            signin.sign_in(DEMO["email"], DEMO["password"], "10.0.0.1")
        waits.append(limited.value.retry_after)
        clock.advance(limited.value.retry_after)
        with pytest.raises(Unauthenticated):
            signin.sign_in(DEMO["email"], "wrong-pass", "10.0.0.1")
    assert waits == [60, 120, 240, 480]
    clock.advance(900)  # capped at the window
    assert signin.sign_in(DEMO["email"], DEMO["password"], "10.0.0.1").user_id
    with pytest.raises(Unauthenticated):  # success cleared the count: a typo is not throttled
        signin.sign_in(DEMO["email"], "wrong-pass", "10.0.0.1")
    assert signin.sign_in(DEMO["email"], DEMO["password"], "10.0.0.1").user_id


def _requests_and_seconds(email: str) -> tuple[int, float]:
    calls = []
    events = services.table().client.meta.events

    def count(**_):
        calls.append(1)

    events.register("before-call.dynamodb", count)
    try:
        started = time.perf_counter()
        with pytest.raises(Unauthenticated):
            services.signin().sign_in(email, "wrong-pass", f"10.1.{len(email)}.1")
        return len(calls), time.perf_counter() - started
    finally:
        events.unregister("before-call.dynamodb", count)


def test_sign_in_does_the_same_work_for_unknown_and_existing_emails(app_env, demo_user):
    known, _ = _requests_and_seconds(DEMO["email"])
    unknown, unknown_time = _requests_and_seconds("nobody@example.com")
    malformed, malformed_time = _requests_and_seconds("not-an-email")
    assert known == unknown == malformed  # the same storage round trips
    assert min(unknown_time, malformed_time) > 0.02  # a scrypt verification of the real cost happened
