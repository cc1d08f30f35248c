"""The consent page in headless Chromium: a signed-out user follows an authorization URL, signs in on the
login form, sees the consent screen and presses Allow for real; the browser lands on the client's loopback
callback with the code, the state and the issuer."""

from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from localhttp import QuietHandler, serving
from stackproc import launch_chromium


class Callback(QuietHandler):
    received: list[str] = []

    def do_GET(self) -> None:
        Callback.received.append(self.path)
        self.reply(200, "text/html", b"<html><body><h1>Authorized</h1></body></html>")


@pytest.fixture
def callback_server():
    Callback.received = []
    with serving(Callback) as url:
        yield f"{url}/callback"


def test_consent_page_allow_clicked_in_headless_chromium(gateway, callback_server, tmp_path):
    from playwright.sync_api import sync_playwright

    client_id = httpx.post(
        f"{gateway}/oauth/register",
        timeout=10,
        json={
            "redirect_uris": [callback_server],
            "token_endpoint_auth_method": "none",
            "client_name": "Browser Client",
        },
    ).json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    url = f"{gateway}/oauth/authorize?" + urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": callback_server,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "browser-state",
            "resource": f"{gateway}/mcp",
        }
    )

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page()
            page.goto(url)
            assert page.url.startswith(f"{gateway}/login")
            page.fill("#email", "demo@svc.local")
            page.fill("#password", "demo-password-123")
            page.click("button[type=submit]")
            page.wait_for_selector("#allow")
            assert "Allow Browser Client to use your account?" in page.content()
            assert page.locator("input[type=hidden][name=consent_token]").count() == 1
            page.screenshot(path=str(tmp_path / "consent.png"))
            page.click("#allow")
            page.wait_for_url(f"{callback_server}*")
            assert "Authorized" in page.content()
        finally:
            browser.close()

    callbacks = [path for path in Callback.received if path.startswith("/callback")]
    assert len(callbacks) == 1
    query = parse_qs(urlsplit(callbacks[0]).query)
    assert query["state"] == ["browser-state"]
    assert query["iss"] == [gateway]
    tokens = httpx.post(
        f"{gateway}/oauth/token",
        timeout=10,
        data={
            "grant_type": "authorization_code",
            "code": query["code"][0],
            "redirect_uri": callback_server,
            "code_verifier": verifier,
            "client_id": client_id,
            "resource": f"{gateway}/mcp",
        },
    )
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["token_type"] == "Bearer"
