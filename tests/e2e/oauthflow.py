"""OAuth as an MCP client does it, over HTTP against a running stack: a scripted browser for sign-in and
consent, and the whole flow (registration, consent, PKCE code exchange) for an access token."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx

REDIRECT = "http://127.0.0.1:33418/callback"


def public_client(name: str) -> dict[str, Any]:
    """The registration metadata of a public MCP client (no secret; code and refresh grants) that receives
    its codes on the loopback REDIRECT."""
    return {
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "client_name": name,
    }


class MemoryStorage:
    """An MCP SDK client's token storage (the SDK's TokenStorage protocol, 1.x and 2.x) kept in memory: the
    tokens and the client's registration."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


class ScriptedBrowser:
    """Follows the authorization URL like a user: signs in on the login form, presses Allow, and stops at
    the redirect to the client's loopback callback."""

    def __init__(self, email: str, password: str, redirect: str = REDIRECT) -> None:
        self.email, self.password, self.redirect = email, password, redirect
        self.callback: str | None = None
        self.pages: list[str] = []

    def visit(self, url: str) -> None:
        # Each browser is a person on a machine of their own (a loopback address of its own): sign-in
        # throttling counts attempts per client address, and the e2e suite signs in many times.
        here = httpx.HTTPTransport(
            local_address=f"127.{secrets.randbelow(250) + 1}.{secrets.randbelow(256)}.2"
        )
        with httpx.Client(timeout=20, transport=here) as browser:
            page = browser.get(url)
            while page.status_code in (302, 303):
                target = urljoin(str(page.url), page.headers["location"])
                if target.startswith(self.redirect):
                    self.callback = target
                    return
                page = browser.get(target)
            self.pages.append(page.text)
            if 'name="password"' in page.text:
                next_path = (
                    re.search(r'name="next" value="([^"]+)"', page.text).group(1).replace("&amp;", "&")
                )
                action = re.search(r'<form method="post" action="([^"]+)"', page.text).group(1)
                page = browser.post(
                    urljoin(str(page.url), action.replace("&amp;", "&")),
                    data={"email": self.email, "password": self.password, "next": next_path},
                )
                assert page.status_code == 303, page.text
                page = browser.get(urljoin(str(page.url), page.headers["location"]))
                self.pages.append(page.text)
            token = re.search(r'name="consent_token" value="([^"]+)"', page.text)
            assert token, page.text
            answer = browser.post(
                str(page.url).split("?")[0], data={"consent_token": token.group(1), "decision": "allow"}
            )
            assert answer.status_code == 302, answer.text
            self.callback = answer.headers["location"]


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def authorize_query(client_id: str, challenge: str, redirect: str = REDIRECT, **extra: str) -> str:
    """The query of an authorization request for a code, with the PKCE challenge."""
    return urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s",
            **extra,
        }
    )


def code_grant(
    client_id: str, code: str, verifier: str, redirect: str = REDIRECT, **extra: str
) -> dict[str, str]:
    """The token request's form exchanging a code for tokens."""
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect,
        "code_verifier": verifier,
        "client_id": client_id,
        **extra,
    }


def access_token(gateway: str, email: str, password: str, name: str) -> str:
    """An MCP client authorizing itself the OAuth way (registration, consent, PKCE code exchange)."""
    return str(client_tokens(gateway, email, password, name)["access_token"])


def client_tokens(gateway: str, email: str, password: str, name: str) -> dict[str, str]:
    """As access_token, with the whole token response and the client's id (`client_id`)."""
    client_id = httpx.post(
        f"{gateway}/oauth/register",
        timeout=10,
        json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": name},
    ).json()["client_id"]
    verifier, challenge = pkce_pair()
    browser = ScriptedBrowser(email, password)
    browser.visit(
        f"{gateway}/oauth/authorize?" + authorize_query(client_id, challenge, resource=f"{gateway}/mcp")
    )
    code = parse_qs(urlsplit(browser.callback or "").query)["code"][0]
    tokens = httpx.post(
        f"{gateway}/oauth/token",
        timeout=10,
        data=code_grant(client_id, code, verifier, resource=f"{gateway}/mcp"),
    )
    assert tokens.status_code == 200, tokens.text
    return {**tokens.json(), "client_id": client_id}
