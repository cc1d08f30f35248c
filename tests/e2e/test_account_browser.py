"""The account page in headless Chromium against the running local stack, as a merchant uses it: change the
password (a wrong current one refused in words), see the other browser and the MCP client signed out, then
delete the account and find its email refused like an unknown one."""

from __future__ import annotations

import httpx
import pytest
from oauthflow import access_token
from stackproc import browser_sign_in, create_user
from test_workspace_browser import mcp

EMAIL, PASSWORD, NEW = "account@example.com", "account-pass-1", "account-pass-2"


@pytest.fixture(scope="module")
def account(stack, gateway):
    create_user(stack, EMAIL, PASSWORD)
    return gateway


def sign_in(chromium, gateway: str, password: str, path: str = "/"):
    return browser_sign_in(EMAIL, password, chromium, gateway, path)


def test_change_the_password_then_delete_the_account_by_clicking(chromium, account):
    gateway = account
    token = access_token(gateway, EMAIL, PASSWORD, "Account Test Client")
    other, other_page = sign_in(chromium, gateway, PASSWORD)  # another browser
    context, page = sign_in(chromium, gateway, PASSWORD)
    try:
        page.get_by_role("link", name="Account").click()
        page.wait_for_url(f"{gateway}/workspace/account")
        assert page.locator("h1").inner_text() == "Account"

        # A wrong current password: refused in words, nothing changes.
        page.fill("#current-password", "not-my-password")
        page.fill("#new-password", NEW)
        page.fill("#new-password-again", NEW)
        page.get_by_role("button", name="Change password").click()
        page.wait_for_load_state()
        assert (
            page.get_by_role("alert").inner_text()
            == "Your current password is not right. Nothing was changed."
        )

        page.fill("#current-password", PASSWORD)
        page.fill("#new-password", NEW)
        page.fill("#new-password-again", NEW)
        page.get_by_role("button", name="Change password").click()
        page.wait_for_url(f"{gateway}/workspace/account?done=password")
        assert "Password changed." in page.get_by_role("status").inner_text()
        page.reload()  # this browser stays signed in
        assert page.url.startswith(f"{gateway}/workspace/account")
        assert page.locator("h1").inner_text() == "Account"
        other_page.reload()  # the other one is at the sign-in page
        assert "/login" in other_page.url
        assert mcp(gateway, token, "tools/list").status_code == 401

        # Delete: the password again and the box ticked.
        page.fill("#delete-password", NEW)
        page.get_by_label("I understand: my account").check()
        page.get_by_role("button", name="Delete my account").click()
        page.wait_for_url(f"{gateway}/workspace/account/deleted")
        assert page.locator("h1").inner_text() == "Your account is deleted"
        assert "are untouched" in page.content()
        page.goto(f"{gateway}/workspace/account")
        assert "/login" in page.url
        page.fill("#email", EMAIL)
        page.fill("#password", NEW)
        page.click("button[type=submit]")
        page.wait_for_load_state()
        assert page.get_by_role("alert").inner_text() == "Invalid email or password."
        unknown = httpx.post(
            f"{gateway}/login", data={"email": "nobody@example.com", "password": NEW}, timeout=10
        )
        assert unknown.status_code == 401 and "Invalid email or password." in unknown.text
    finally:
        context.close()
        other.close()
