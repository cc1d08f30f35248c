"""The account page, attacked as a user would: changing the password (and guessing the current one), signing
out everywhere, deleting the account; and authorization codes that must die with the sessions they came from."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from test_oauth import authorize_params, exchange, pkce, register, sign_in

from apiclient import authorize_client, connect_provider, mcp_status, refresh_tokens
from svc_shared.storage import keys
from svc_shared.wiring import cli, services

OWN = "http://127.0.0.1:3000"
EVIL = "https://evil.example"
DEMO = {"email": "demo@example.com", "password": "demo-password-1"}
NEW = "a-new-password-2"


def _csrf(api) -> str:
    page = api.get("/workspace/account")
    assert page.status == 200, page.text
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def _alert(page) -> str:
    found = re.search(r'role="alert">([^<]*)<', page.text)
    return found.group(1) if found else ""


def _change(api, current, new, again=None, **extra):
    form = {
        "csrf": _csrf(api),
        "current_password": current,
        "new_password": new,
        "new_password_again": new if again is None else again,
        **extra,
    }
    return api.post("/workspace/account/password", form=form, headers={"Origin": OWN})


def _code(api) -> tuple[str, str, str]:
    """A client registered, the consent allowed, the code not yet exchanged: (client_id, code, verifier)."""
    client_id = register(api).json()["client_id"]
    verifier, challenge = pkce()
    page = api.get("/oauth/authorize", params=authorize_params(client_id, challenge))
    token = re.search(r'name="consent_token" value="([^"]+)"', page.text).group(1)
    answer = api.post("/oauth/authorize", form={"consent_token": token, "decision": "allow"})
    return client_id, parse_qs(urlsplit(answer.header("location")).query)["code"][0], verifier


# -- the account page -------------------------------------------------------------------------------------------
def test_the_account_page_needs_a_session_and_is_in_the_nav(api, demo_user):
    answer = api.get("/workspace/account")
    assert answer.status == 303
    assert "/login?next=%2Fworkspace%2Faccount" in answer.header("location")
    sign_in(api)
    page = api.get("/workspace/account")
    assert page.status == 200
    assert 'href="http://127.0.0.1:3000/workspace/account" aria-current="page">Account</a>' in page.text
    for heading in ("Change password", "Sign out everywhere", "Delete account"):
        assert f">{heading}</h2>" in page.text
    assert 'href="http://127.0.0.1:3000/workspace/account"' in api.get("/").text


# -- 1. the password change -------------------------------------------------------------------------------------
def test_a_password_change_ends_every_other_session_and_grant_and_keeps_this_browser(api, demo_user):
    tokens = authorize_client(api, DEMO["email"], DEMO["password"])  # signs `api` in too
    other = type(api)(api.template_path)  # a second browser
    other.post("/login", form=DEMO)
    old_cookie = api.cookies["svc_ws_session"]

    answer = _change(api, DEMO["password"], NEW)
    assert answer.status == 303
    assert answer.header("location") == f"{OWN}/workspace/account?done=password"
    page = api.get("/workspace/account?done=password")
    assert page.status == 200
    assert "Password changed. Every other browser and every MCP client were signed out" in page.text
    assert api.cookies["svc_ws_session"] != old_cookie  # a fresh session

    assert other.get("/api/me").status == 401
    stolen = type(api)(api.template_path)
    stolen.cookies = {"svc_ws_session": old_cookie}
    assert stolen.get("/api/me").status == 401  # this browser's old session ended too
    assert mcp_status(api, tokens["access_token"]) == 401
    refreshed = refresh_tokens(api, tokens)
    assert refreshed.json()["error"] == "invalid_grant"
    fresh = type(api)(api.template_path)
    assert fresh.post("/login", form=DEMO).status == 401
    assert fresh.post("/login", form={**DEMO, "password": NEW}).status == 303


@pytest.mark.parametrize(
    ("current", "new", "again", "status", "message"),
    [
        ("demo-password-1", NEW, NEW + "x", 400, "The two new passwords differ. Type the same one twice."),
        ("demo-password-1", "", "", 400, "Type the new password twice."),
        ("demo-password-1", "seven77", "seven77", 400, "The new password must be 8 to 1024 characters."),
        ("demo-password-1", "x" * 1025, "x" * 1025, 400, "The new password must be 8 to 1024 characters."),
        ("", NEW, NEW, 400, "Type your current password."),
        ("wrong-password", NEW, NEW, 401, "Your current password is not right. Nothing was changed."),
        (
            "demo-password-1",
            "demo-password-1",
            "demo-password-1",
            400,
            "The new password is the current one. Choose another.",
        ),
    ],
)
def test_a_refused_password_change_says_why_and_changes_nothing(
    api, demo_user, current, new, again, status, message
):
    sign_in(api)
    answer = _change(api, current, new, again)
    assert answer.status == status
    assert _alert(answer) == message
    assert api.get("/api/me").status == 200  # still signed in
    assert services.signin().sign_in(DEMO["email"], DEMO["password"], "10.9.9.9").user_id == demo_user.id


def test_the_password_rules_hold_at_their_edges(api, demo_user):
    sign_in(api)
    assert _change(api, DEMO["password"], "8chars!!").status == 303  # 8: the least
    assert _change(api, "8chars!!", "y" * 1024).status == 303  # 1024: the most
    assert api.post("/login", form={**DEMO, "password": "y" * 1024}).status == 303


def test_guessing_the_current_password_is_throttled_like_sign_in(api, demo_user):
    sign_in(api)
    for _ in range(5):
        assert _change(api, "guess-password", NEW).status == 401
    limited = _change(api, "guess-password", NEW)
    assert limited.status == 429
    assert limited.header("retry-after") == "60"
    assert _alert(limited) == "Too many sign-in attempts. Try again in 60 seconds."
    # Even the right password waits: the throttle is the sign-in's, on the same counters.
    assert _change(api, DEMO["password"], NEW).status == 429
    assert services.accounts().authenticate(DEMO["email"], DEMO["password"]).id == demo_user.id


def test_a_password_change_from_another_site_or_without_the_pages_token_is_refused(api, demo_user):
    sign_in(api)
    form = {
        "csrf": _csrf(api),
        "current_password": DEMO["password"],
        "new_password": NEW,
        "new_password_again": NEW,
    }
    assert api.post("/workspace/account/password", form=form, headers={"Origin": EVIL}).status == 403
    forged = api.post("/workspace/account/password", form={**form, "csrf": "0" * 40}, headers={"Origin": OWN})
    assert forged.status == 400
    assert services.accounts().authenticate(DEMO["email"], DEMO["password"]).id == demo_user.id


def test_sign_out_everywhere_is_on_the_account_page(api, demo_user):
    tokens = authorize_client(api, DEMO["email"], DEMO["password"])
    other = type(api)(api.template_path)
    other.post("/login", form=DEMO)
    out = api.post("/logout", form={"everywhere": "yes", "csrf": _csrf(api)}, headers={"Origin": OWN})
    assert out.status == 303
    assert api.get("/api/me").status == other.get("/api/me").status == 401
    assert mcp_status(api, tokens["access_token"]) == 401


# -- 2. authorization codes die with the sessions they came from -----------------------------------------------
def _end_by_password(api, demo_user):
    assert _change(api, DEMO["password"], NEW).status == 303


def _end_everywhere(api, demo_user):
    assert api.post("/logout", form={"everywhere": "yes", "csrf": _csrf(api)}).status == 303


def _end_by_command(api, demo_user):
    table = services.table().name
    assert (
        cli.main(["--table", table, "users", "set-password", "--email", DEMO["email"], "--password", NEW])
        == 0
    )


def _end_by_deletion(api, demo_user):
    page = _delete(api, DEMO["password"])
    assert page.status == 303, page.text


@pytest.mark.parametrize("end", [_end_by_password, _end_everywhere, _end_by_command, _end_by_deletion])
def test_a_code_issued_before_the_sessions_ended_cannot_be_exchanged(api, demo_user, end):
    sign_in(api)
    client_id, code, verifier = _code(api)
    end(api, demo_user)
    answer = exchange(api, client_id, code, verifier)
    assert answer.status == 400
    assert answer.json() == {
        "error": "invalid_grant",
        "error_description": "code is invalid, expired, or already used",
    }


def test_a_code_issued_after_a_password_change_is_exchanged(api, demo_user):
    sign_in(api)
    _change(api, DEMO["password"], NEW)
    client_id, code, verifier = _code(api)
    assert exchange(api, client_id, code, verifier).status == 200


# -- 3. deleting the account -----------------------------------------------------------------------------------
def _delete(api, password, confirm="yes"):
    form = {"csrf": _csrf(api), "password": password}
    if confirm:
        form["confirm"] = confirm
    return api.post("/workspace/account/delete", form=form, headers={"Origin": OWN})


def _items(partition: str) -> list[dict]:
    return list(services.table().query(partition))


def test_deleting_the_account_ends_everything_and_forgets_the_user(api, demo_user, provider_env):
    tokens = authorize_client(api, DEMO["email"], DEMO["password"])
    connect_provider(api, "repo_host")
    assert services.tokens_table().get(demo_user.id, "repo_host") is not None
    other = type(api)(api.template_path)
    other.post("/login", form=DEMO)
    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="A shop of handmade soap for gifts",
    )
    # A collaborator in the user's workspace, and the user a collaborator in someone else's.
    accounts = services.accounts()
    helper = accounts.create_user(email="helper@example.com", password="helper-password-1")
    accounts.add_collaborator(demo_user.default_workspace_id, helper.id)
    accounts.add_collaborator(helper.default_workspace_id, demo_user.id)
    page = api.get("/workspace/account").text
    assert "1 other person belongs to your workspace and will lose access to it." in page
    assert "Your repositories, databases and sites stay untouched" in page

    answer = _delete(api, DEMO["password"])
    assert answer.status == 303
    assert answer.header("location") == f"{OWN}/workspace/account/deleted"
    assert any("svc_ws_session=;" in c for c in answer.headers_named("set-cookie"))
    gone = api.get("/workspace/account/deleted")
    assert gone.status == 200
    assert (
        "Your repositories, databases and sites in your GitHub, Supabase and Netlify accounts are untouched."
        in gone.text
    )

    assert api.get("/api/me").status == other.get("/api/me").status == 401
    assert mcp_status(api, tokens["access_token"]) == 401
    refreshed = refresh_tokens(api, tokens)
    assert refreshed.json()["error"] == "invalid_grant"
    # Signing in with the address fails exactly as for an address nobody has.
    known = type(api)(api.template_path).post("/login", form=DEMO)
    unknown = type(api)(api.template_path).post("/login", form={**DEMO, "email": "nobody@example.com"})
    assert known.status == unknown.status == 401
    assert _alert(known) == _alert(unknown) == "Invalid email or password."
    # Nothing of the user is left: profile, address, memberships, workspace, connections.
    assert _items(keys.user(demo_user.id)) == []
    assert _items(keys.email(DEMO["email"])) == []
    assert _items(keys.workspace(demo_user.default_workspace_id)) == []
    assert list(services.tokens_table().query(demo_user.id)) == []
    assert _items(keys.project(project.id)) == []
    # The collaborator lost the deleted workspace and kept their own; their own workspace lost the user.
    assert [w.id for w in accounts.list_workspaces(helper.id)] == [helper.default_workspace_id]
    members = list(
        services.table().query(
            keys.workspace(helper.default_workspace_id), sk_prefix=keys.MEMBER_PREFIX, index="gsi1"
        )
    )
    assert [m["user_id"] for m in members] == [helper.id]
    # The address is free again.
    again = services.accounts().create_user(email=DEMO["email"], password=NEW)
    assert again.id != demo_user.id
    assert type(api)(api.template_path).post("/login", form={**DEMO, "password": NEW}).status == 303


@pytest.mark.parametrize(
    ("password", "confirm", "status", "message"),
    [
        ("demo-password-1", "", 400, "Tick the box to confirm, then press Delete my account."),
        ("", "yes", 400, "Type your current password."),
        ("wrong-password", "yes", 401, "Your current password is not right. Nothing was changed."),
    ],
)
def test_a_deletion_without_the_password_or_the_confirmation_deletes_nothing(
    api, demo_user, password, confirm, status, message
):
    sign_in(api)
    answer = _delete(api, password, confirm)
    assert answer.status == status
    assert _alert(answer) == message
    assert api.get("/api/me").status == 200
    assert services.accounts().get_user(demo_user.id).email == DEMO["email"]


def test_a_deletion_from_another_site_is_refused(api, demo_user):
    sign_in(api)
    form = {"csrf": _csrf(api), "password": DEMO["password"], "confirm": "yes"}
    assert api.post("/workspace/account/delete", form=form, headers={"Origin": EVIL}).status == 403
    assert api.post("/workspace/account/delete", form={**form, "csrf": "x"}).status == 400
    assert api.get("/api/me").status == 200
