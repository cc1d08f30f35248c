"""The workspace in headless Chromium against the running local stack, as a merchant uses it: sign in, connect
the providers (popups, and the repo_host panel flow in the same tab), disconnect one, publish a project
watching the steps advance, see a failure in words and press Retry, revoke an MCP client and see its token
refused, and open the project page from the URL create_project returns."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from localhttp import live_site_status
from oauthflow import access_token
from screenshots import assert_readme_shows, shot
from stackproc import browser_sign_in, create_user, new_merchant

EMAIL, PASSWORD = "workspace@example.com", "workspace-pass-1"


def mcp(gateway: str, token: str, method: str, **params) -> httpx.Response:
    return httpx.post(
        f"{gateway}/mcp",
        timeout=30,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
    )


def tool(gateway: str, token: str, name: str, **arguments) -> dict:
    answer = mcp(gateway, token, "tools/call", name=name, arguments=arguments)
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


@pytest.fixture(scope="module")
def merchant(stack):
    return new_merchant(stack, EMAIL, PASSWORD)


signed_in_page = functools.partial(browser_sign_in, EMAIL, PASSWORD)


def test_a_failed_code_exchange_shows_in_the_card_in_the_specs_words(chromium, merchant):
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    context, page = signed_in_page(chromium, gateway, "/workspace/connections")
    card = page.locator("#card-db_host")
    was_connected = card.get_attribute("data-connected")
    httpx.post(
        f"{sandbox}/__admin/faults",
        json={"method": "POST", "path": "/supabase/v1/oauth/token", "status": 400, "times": 1},
    )
    try:
        with page.expect_popup() as popup_info:
            card.get_by_role("link", name="Connect Supabase").click()
        popup_info.value.wait_for_event("close")
        error = card.locator(".error")
        error.wait_for(state="visible")
        assert error.inner_text() == (
            "L'échange du code d'autorisation avec le fournisseur a échoué. Veuillez réessayer."
        )
        assert card.get_attribute("data-connected") == was_connected
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
        context.close()


def test_connect_through_popups_and_panel_flow_then_disconnect(chromium, merchant):
    gateway = merchant["gateway"]
    context, page = signed_in_page(chromium, gateway, "/workspace/connections")
    try:
        card = page.locator("#card-db_host")
        assert "Not connected" in card.inner_text()
        with page.expect_popup() as popup_info:
            card.get_by_role("link", name="Connect Supabase").click()
        popup = popup_info.value
        popup.wait_for_event("close")
        card.locator(".ok").wait_for()
        assert "Connected" in card.inner_text()
        # Only the action that applies is offered: Disconnect, not Connect again.
        assert card.get_by_role("link", name="Connect Supabase").is_hidden()
        assert card.get_by_role("button", name="Disconnect").is_visible()
        assert page.url == f"{gateway}/workspace/connections"  # the card changed without a reload

        static = page.locator("#card-static_host")
        with page.expect_popup() as popup_info:
            static.get_by_role("link", name="Connect Netlify").click()
        popup_info.value.wait_for_event("close")
        static.locator(".ok").wait_for()

        # repo_host: the panel flow goes in the same tab and comes back to the connections page.
        page.locator("#card-repo_host").get_by_role("link", name="Connect GitHub").click()
        repo = page.locator("#card-repo_host")
        repo.locator(".ok").wait_for()  # after the provider and the callback page, back on this page
        assert page.url == f"{gateway}/workspace/connections"
        assert "Connected as" in repo.inner_text()
        assert repo.locator(".account").inner_text()
        shot(page, "connections")

        # Disconnect asks first, says what stays, and the card changes without a reload.
        messages = []

        def answer(dialog) -> None:
            messages.append(dialog.message)
            dialog.accept()

        page.on("dialog", answer)
        static.get_by_role("button", name="Disconnect").click()
        static.locator(".off").wait_for()
        assert static.get_by_role("button", name="Disconnect").is_hidden()
        assert "stay untouched" in messages[0]
        page.remove_listener("dialog", answer)
        with page.expect_popup() as popup_info:
            static.get_by_role("link", name="Connect Netlify").click()
        popup_info.value.wait_for_event("close")
        static.locator(".ok").wait_for()
    finally:
        context.close()


def test_a_new_shop_is_created_by_clicking_only(chromium, merchant):
    """After connecting (the test above), a template and one button make a project."""
    context, page = signed_in_page(chromium, merchant["gateway"], "/?new=1")
    try:
        page.get_by_label("Independent bookshop", exact=False).check()
        page.click("#create-project")
        page.wait_for_url(f"{merchant['gateway']}/workspace/projects/*")
        assert page.locator("h1").inner_text() == "Independent bookshop"
        assert page.locator("#publish-button").is_visible()
    finally:
        context.close()


def test_publish_to_ready_with_a_failure_and_retry_then_revoke_the_client(chromium, merchant):
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})
    token = access_token(gateway, EMAIL, PASSWORD, "Browser Test Client")
    created = tool(
        gateway, token, "create_project", prompt="Hand-thrown ceramics for calm kitchens, warm tone"
    )
    project_url = created["workspace_url"]
    assert project_url == f"{gateway}/workspace/projects/{created['project_id']}"

    context, page = signed_in_page(chromium, gateway, urlsplit(project_url).path)
    try:
        assert page.locator("h1").inner_text() == created["name"]
        assert "Not published" in page.locator("#publish-words").inner_text()
        # A lasting failure at the template push: the stage stops with the spec's message.
        httpx.post(
            f"{sandbox}/__admin/faults",
            json={"method": "POST", "path": "/github/api/repos/*/*/git/commits", "status": 500, "times": 50},
        )
        page.click("#publish-button")
        page.locator(".step-current, .step-done").first.wait_for()
        shot(page, "publish-in-progress")
        page.reload()  # a run already going when the page opens is picked up and followed
        page.locator("#publish-error").wait_for(state="visible", timeout=60_000)
        assert page.locator("#publish-error").inner_text() == (
            "La configuration du dépôt GitHub a échoué. Vérifiez la connexion GitHub puis relancez la publication."
        )
        assert (
            page.locator("li[data-stage=repo_host_pushing_template]").get_attribute("data-state") == "failed"
        )
        assert page.locator("li[data-stage=db_creating]").get_attribute("data-state") == "done"
        assert page.locator("#publish-button").inner_text() == "Retry"

        httpx.delete(f"{sandbox}/__admin/faults")
        page.click("#publish-button")
        page.locator("li[data-stage=ready][data-state=done]").wait_for(timeout=90_000)
        live = page.locator("#live a")
        assert live.inner_text().startswith("http")
        assert live_site_status(live.get_attribute("href")) == 200
        assert page.locator("#publish-error").is_hidden()

        page.reload()
        assert page.get_by_role("link", name="Open backoffice").is_visible()
        page.goto(f"{gateway}/")
        assert "Live" in page.locator(".project-row", has_text=created["name"]).inner_text()
        shot(page, "home")

        # MCP access: the client is listed with its last use; Revoke stops its token at once.
        assert mcp(gateway, token, "tools/list").status_code == 200
        page.goto(f"{gateway}/workspace/mcp")
        row = page.locator("tr", has_text="Browser Test Client")
        assert "never" not in row.inner_text()
        change = page.locator("tr", has_text="create_project")
        assert created["name"] in change.inner_text() and "Done" in change.inner_text()
        shot(page, "mcp-access")
        # Revoke asks first: cancelled, the client keeps its access.
        asked: list[str] = []
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        row.get_by_role("button", name="Revoke Browser Test Client").click()
        assert asked and asked[0].startswith("Revoke Browser Test Client?")
        assert mcp(gateway, token, "tools/list").status_code == 200
        page.once("dialog", lambda dialog: dialog.accept())
        row.get_by_role("button", name="Revoke Browser Test Client").click()
        page.wait_for_url(f"{gateway}/workspace/mcp?*")
        assert "The client can no longer use your account." in page.content()
        assert mcp(gateway, token, "tools/list").status_code == 401
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
        context.close()


def publish_by_clicking(page, gateway: str, template: str) -> str:
    """Home -> New shop from `template` -> its project page -> Publish -> ready; returns the project id."""
    page.goto(f"{gateway}/?new=1")
    page.get_by_label(template, exact=False).check()
    page.click("#create-project")
    page.wait_for_url(f"{gateway}/workspace/projects/*")
    assert page.get_by_role("link", name="Open backoffice").count() == 0
    assert "opens here once the shop is published" in page.locator("#backoffice-pending").inner_text()
    page.click("#publish-button")
    page.locator("li[data-stage=ready][data-state=done], #publish-error:visible").first.wait_for(
        timeout=180_000
    )
    assert page.locator("#publish-error").is_hidden(), page.locator("#publish-error").inner_text()
    page.reload()
    return urlsplit(page.url).path.rsplit("/", 1)[1]


def open_backoffice(page, gateway: str, project_id: str):
    """Open backoffice on the project page: the backoffice opens in a new tab, signed in."""
    page.goto(f"{gateway}/workspace/projects/{project_id}")
    with page.expect_popup() as popup_info:
        page.get_by_role("link", name="Open backoffice").click()
    backoffice = popup_info.value
    backoffice.wait_for_load_state()
    return backoffice


def api(page, method: str, path: str, body: object = None) -> tuple[int, dict]:
    """A call to the backoffice's API from the browser that signed in, with the cookies it holds (a path
    relative to the page, as the backoffice's own front end would send it)."""
    answer = page.request.fetch(urljoin(page.url, path), method=method, data=body)
    return answer.status, answer.json()


def test_every_published_shop_opens_its_own_backoffice(chromium, merchant, stack):
    """Two shops published by clicking; each opens its own backoffice on its own database; the owner, an invited
    editor and a stranger each get what the invitation rules give them."""
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})
    editor, stranger = "shop-editor@example.com", "shop-stranger@example.com"
    for email in (editor, stranger):
        create_user(stack, email, "shop-person-pass-1")
    context, page = signed_in_page(chromium, gateway, "/")
    try:
        first = publish_by_clicking(page, gateway, "Clean skincare")
        second = publish_by_clicking(page, gateway, "Outdoor gear")

        backoffice = open_backoffice(page, gateway, first)
        assert urlsplit(backoffice.url).path == f"/shops/{first}/"
        assert backoffice.locator("#email").inner_text() == EMAIL
        assert backoffice.locator("#role").inner_text() == "owner"
        status, product = api(backoffice, "POST", "api/products", {"title": "Calendula night balm"})
        assert status == 201, product
        status, listed = api(backoffice, "GET", "api/products")
        assert [p["title"] for p in listed["items"]] == ["Calendula night balm"]
        status, invited = api(backoffice, "POST", "api/staff", {"email": editor, "role": "editor"})
        assert (status, invited["status"]) == (201, "invited")

        other = open_backoffice(page, gateway, second)
        assert urlsplit(other.url).path == f"/shops/{second}/"
        status, listed = api(other, "GET", "api/products")
        assert (status, listed["items"]) == (200, [])
        # Each shop's session cookie stays on its own path.
        cookies = {c["path"] for c in context.cookies() if c["name"] == "svc_session"}
        assert cookies == {f"/shops/{first}", f"/shops/{second}"}
    finally:
        context.close()

    for email, expected in ((editor, "editor"), (stranger, None)):
        person = chromium.new_context()
        try:
            tab = person.new_page()
            tab.goto(f"{gateway}/backoffice/sso?project={first}")
            tab.fill("#email", email)
            tab.fill("#password", "shop-person-pass-1")
            tab.click("button[type=submit]")
            tab.wait_for_url(f"{gateway}/shops/{first}/**")
            if expected:
                assert tab.locator("#role").inner_text() == expected
                assert api(tab, "POST", "api/products", {"title": "Rosehip oil"})[0] == 201
            else:
                assert "This store has not invited your email address" in tab.content()
                assert person.cookies() and not [c for c in person.cookies() if c["name"] == "svc_session"]
        finally:
            person.close()


def test_pages_read_at_375_px_without_sideways_scrolling(chromium, merchant):
    context, page = signed_in_page(chromium, merchant["gateway"], "/", width=375)
    try:
        for path in ("/", "/workspace/connections", "/workspace/mcp"):
            page.goto(f"{merchant['gateway']}{path}")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
    finally:
        context.close()


def test_a_project_of_someone_else_is_refused_in_words(chromium, merchant, stack):
    create_user(stack, "other@example.com", "other-pass-123")
    token = access_token(merchant["gateway"], "other@example.com", "other-pass-123", "Other Client")
    assert token
    context, page = signed_in_page(chromium, merchant["gateway"], "/")
    try:
        page.goto(f"{merchant['gateway']}/workspace/projects/00000000-0000-0000-0000-000000000000")
        assert "not shared with you" in page.content()
        assert "Traceback" not in page.content()
    finally:
        context.close()


def test_screenshots_are_where_the_readme_shows_them():
    assert_readme_shows("home", "connections", "publish-in-progress", "mcp-access")


assert Path(__file__).parent.name == "e2e"
