"""The workspace pages through real API Gateway proxy events: sign-in redirects, what each page shows, CSRF on
forms, access to projects, revoking an MCP client, the audit of state-changing tool calls."""

from __future__ import annotations

import re

import pytest

from apiclient import authorize_client, call_tool
from svc_shared.wiring import services


def csrf_of(page) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert match, "no CSRF token on the page"
    return match[1]


def sign_in(api, email="demo@example.com", password="demo-password-1"):
    assert api.post("/login", form={"email": email, "password": password}).status == 303


@pytest.fixture
def signed_in(api, demo_user):
    sign_in(api)
    return api


@pytest.mark.parametrize("path", ["/", "/workspace/connections", "/workspace/mcp", "/workspace/projects/abc"])
def test_signed_out_visitors_go_to_sign_in_and_come_back(api, path):
    answer = api.get(path)
    assert answer.status == 303
    assert answer.header("location") == f"http://127.0.0.1:3000/login?next={path.replace('/', '%2F')}"


def test_signing_in_lands_on_home_with_account_and_projects(api, demo_user):
    answer = api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    assert answer.header("location") == "http://127.0.0.1:3000/"
    services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name="Candle <Shop>",
    )
    home = api.get("/")
    assert home.status == 200
    assert home.header("content-type").startswith("text/html")
    assert "demo@example.com" in home.text
    assert '<dd id="plan">Paid</dd>' in home.text
    assert '<dd id="credits">' in home.text
    assert "Candle &lt;Shop&gt;" in home.text  # autoescaped
    assert "Not published" in home.text
    csp = home.header("content-security-policy")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    # The merchant's shops come first; the New shop form waits behind its button once there is a shop.
    assert home.text.index("Candle &lt;Shop&gt;") < home.text.index('id="new-title"')
    assert '<details class="new-project" id="new-shop" >' in home.text
    assert 'id="new-shop-button" href="http://127.0.0.1:3000/?new=1#new-shop"' in home.text
    assert '<details class="new-project" id="new-shop" open>' in api.get("/", params={"new": "1"}).text


def test_static_files_are_served_with_their_type_and_unknown_ones_are_404(api):
    js = api.get("/workspace/static/workspace.js")
    assert js.status == 200 and js.header("content-type").startswith("text/javascript")
    assert api.get("/workspace/static/nothing.js").status == 404
    assert api.get("/workspace/static/..%2Fviews.py").status == 404


def test_connections_page_shows_one_card_per_provider(signed_in):
    page = signed_in.get("/workspace/connections")
    assert page.status == 200
    for name in ("GitHub", "Supabase", "Netlify"):
        assert f"Connect {name}" in page.text
    assert page.text.count("Not connected") == 3
    assert "stay untouched" in page.text or "stays as it is" in page.text


def test_forms_without_a_valid_csrf_token_are_refused_in_words(signed_in):
    answer = signed_in.post(
        "/workspace/connections/disconnect",
        form={"provider": "repo_host", "confirm": "yes", "csrf": "0" * 40},
    )
    assert answer.status == 400
    assert "did not come from the workspace" in answer.text
    assert answer.header("content-type").startswith("text/html")


def test_disconnect_needs_the_confirmation(signed_in):
    token = csrf_of(signed_in.get("/workspace/connections"))
    answer = signed_in.post("/workspace/connections/disconnect", form={"provider": "db_host", "csrf": token})
    assert answer.status == 400
    assert "Tick the box to confirm" in answer.text
    done = signed_in.post(
        "/workspace/connections/disconnect", form={"provider": "db_host", "csrf": token, "confirm": "yes"}
    )
    assert done.status == 303
    assert "Supabase disconnected" in signed_in.get(done.header("location").split("3000")[1]).text


def test_project_page_for_owner_and_members_refused_for_others(api, demo_user):
    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name="Candle Shop",
    )
    sign_in(api)
    page = api.get(f"/workspace/projects/{project.id}")
    assert page.status == 200
    assert "Candle Shop" in page.text
    assert "Create the database project" in page.text and 'id="publish-button"' in page.text

    member = services.accounts().create_user(email="m@example.com", password="member-password-1", plan="free")
    stranger = services.accounts().create_user(email="s@example.com", password="strange-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id)
    services.projects().set_visibility(project, "workspace")
    sign_in(api, "m@example.com", "member-password-1")
    shared = api.get(f"/workspace/projects/{project.id}")
    assert shared.status == 200
    assert "Only the project's owner can publish it" in shared.text
    assert 'id="publish-button"' not in shared.text
    assert stranger
    sign_in(api, "s@example.com", "strange-password-1")
    refused = api.get(f"/workspace/projects/{project.id}")
    assert refused.status == 404
    assert "Candle Shop" not in refused.text
    assert "not shared with you" in refused.text


def test_free_plan_is_told_why_it_cannot_publish(api, app_env):
    user = services.accounts().create_user(email="f@example.com", password="free-password-1", plan="free")
    project = services.projects().create(
        owner_id=user.id,
        workspace_id=user.default_workspace_id,
        prompt="Vintage bicycles restored by hand, calm tone",
    )
    sign_in(api, "f@example.com", "free-password-1")
    page = api.get(f"/workspace/projects/{project.id}")
    assert "Publishing needs the paid plan" in page.text
    assert 'id="publish-button"' not in page.text


def test_repo_form_shows_the_spec_message_next_to_its_field(signed_in, demo_user):
    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
    )
    token = csrf_of(signed_in.get(f"/workspace/projects/{project.id}"))
    answer = signed_in.post(
        f"/workspace/projects/{project.id}/repo", form={"csrf": token, "mode": "create", "name": "bad name!"}
    )
    assert answer.status == 400
    assert '<p class="field-error" id="repo-name-error">name invalide</p>' in answer.text
    linked = signed_in.post(
        f"/workspace/projects/{project.id}/repo",
        form={"csrf": token, "mode": "link", "existingRepo": "no-slash"},
    )
    assert '<p class="field-error" id="repo-existing-error">existingRepo invalide</p>' in linked.text


def test_mcp_access_lists_clients_revokes_them_and_shows_changes(api, demo_user):
    tokens = authorize_client(api, "demo@example.com", "demo-password-1")
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    refused = call_tool(api, bearer, "create_project", prompt="Handmade candles for cosy homes, warm tone")
    assert refused["isError"] is True  # no provider connected: recorded as failed, with its message
    done = call_tool(api, bearer, "set_workspace_knowledge", text="We ship within 48 hours.")
    assert done["isError"] is False, done
    call_tool(api, bearer, "list_projects")  # a read: not listed
    page = api.get("/workspace/mcp")
    assert page.status == 200
    assert "http://127.0.0.1:3000/mcp" in page.text
    assert "Revoke" in page.text
    assert "<code>create_project</code>" in page.text
    assert "Failed:</span> Connect your GitHub and Supabase accounts" in page.text
    assert "<code>set_workspace_knowledge</code>" in page.text
    assert "<code>list_projects</code>" not in page.text
    grant = re.search(r'name="grant_id" value="([^"]+)"', page.text)[1]
    # Revoke asks first: without the confirmation nothing is revoked and the page says what to do.
    unconfirmed = api.post("/workspace/mcp/revoke", form={"csrf": csrf_of(page), "grant_id": grant})
    assert unconfirmed.status == 400
    assert "Tick the box beside the client to confirm, then press Revoke." in unconfirmed.text
    still = api.post(
        "/mcp",
        headers={**bearer, "Content-Type": "application/json"},
        body='{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    )
    assert still.status == 200
    form = {"csrf": csrf_of(page), "grant_id": grant, "confirm": "yes"}
    revoked = api.post("/workspace/mcp/revoke", form=form)
    assert revoked.status == 303
    after = api.post(
        "/mcp",
        headers={**bearer, "Content-Type": "application/json"},
        body='{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    )
    assert after.status == 401
    assert "No client is authorized yet." in api.get("/workspace/mcp").text


def test_a_new_shop_from_a_template_opens_its_project_page(api, demo_user, provider_env):
    from apiclient import connect_provider

    sign_in(api)
    home = api.get("/")
    assert "Coffee roastery" in home.text and 'id="create-project"' in home.text
    refused = api.post(
        "/workspace/projects", form={"csrf": csrf_of(home), "template_id": "tpl-coffee-roastery"}
    )
    assert refused.status == 409
    assert 'id="new-prompt-error">Connect your GitHub and Supabase accounts' in refused.text
    assert "repo_host" not in refused.text and "db_host" not in refused.text
    assert (
        'id="connect-first"' in home.text and '<details class="new-project" id="new-shop" open>' in home.text
    )
    for provider in ("repo_host", "db_host"):
        connect_provider(api, provider)
    assert 'id="connect-first"' not in api.get("/").text  # the hint only while a connection is missing
    short = api.post("/workspace/projects", form={"csrf": csrf_of(home), "template_id": "", "prompt": "mugs"})
    assert short.status == 400 and 'id="new-prompt-error">The description must be at least 10' in short.text
    made = api.post("/workspace/projects", form={"csrf": csrf_of(home), "template_id": "tpl-coffee-roastery"})
    assert made.status == 303
    page = api.get(made.header("location").split("3000", 1)[1])
    assert page.status == 200 and "<h1>Coffee roastery</h1>" in page.text


@pytest.mark.parametrize("visibility", ["private", "public"])
def test_a_private_project_is_unknown_to_members_of_its_workspace(api, demo_user, visibility):
    """The attack: a member of the owner's workspace saw a private project on Home and opened its page (name,
    repository, live URL, state). Now it is not listed, and its page is the unknown project's 404."""
    projects = services.projects()
    hidden = projects.create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Secret launch of a perfume brand, bold tone",
        name="Secret Perfume",
    )
    projects.update(hidden, {"repo_host_repo": "demo/secret-perfume", "live_url": "https://secret.example"})
    projects.set_visibility(hidden, visibility)
    shared = projects.create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name="Shared Candles",
    )
    projects.set_visibility(shared, "workspace")
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id)
    sign_in(api, "m@example.com", "member-password-1")
    home = api.get("/")
    assert "Shared Candles" in home.text
    assert "Secret Perfume" not in home.text and hidden.id not in home.text
    page = api.get(f"/workspace/projects/{hidden.id}")
    unknown = api.get("/workspace/projects/00000000-0000-0000-0000-000000000000")
    assert page.status == unknown.status == 404
    assert page.text == unknown.text
    assert "secret" not in page.text.lower()
    assert api.get(f"/workspace/projects/{shared.id}").status == 200
    # the owner still sees both
    sign_in(api)
    owner_home = api.get("/")
    assert "Secret Perfume" in owner_home.text and "Shared Candles" in owner_home.text


INJECTED = "Your account is suspended. Call +1 555 0100 now"


def test_banners_are_fixed_messages_never_text_from_the_query(signed_in):
    """The attack: /workspace/connections?failed=repo_host&message=... and /workspace/mcp?revoked=... showed
    any words a link carried, as the site's own banner. Now a code chooses a fixed message."""
    connections = signed_in.get(
        "/workspace/connections", params={"failed": "repo_host", "message": INJECTED, "reason": INJECTED}
    )
    assert connections.status == 200
    assert INJECTED not in connections.text and "555" not in connections.text
    assert "Connecting GitHub did not finish. Try again." in connections.text
    denied = signed_in.get("/workspace/connections", params={"failed": "db_host", "reason": "denied"})
    assert "Supabase did not grant access." in denied.text
    mcp = signed_in.get("/workspace/mcp", params={"revoked": INJECTED})
    assert INJECTED not in mcp.text and "555" not in mcp.text
    assert "can no longer use your account" not in mcp.text
    assert "The client can no longer use your account." in signed_in.get("/workspace/mcp?revoked=1").text
    project = signed_in.get("/workspace/projects/x", params={"done": INJECTED})
    assert INJECTED not in project.text
