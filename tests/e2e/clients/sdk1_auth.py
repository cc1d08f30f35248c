"""The OAuth side of the SDK 1.x clients (run by the interpreter of .venv-sdk1): the SDK's own OAuth provider
(discovery, registration, PKCE, refresh) with its consent answered by a scripted browser signed in as the user."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from oauthflow import MemoryStorage, ScriptedBrowser, public_client


def signed_in_provider(
    url: str, email: str, password: str, name: str
) -> tuple[OAuthClientProvider, ScriptedBrowser]:
    """An OAuth provider for the MCP server at `url` registering the public client `name`, and the browser that
    consents for it (its `callback` is where the server sent it back)."""
    browser = ScriptedBrowser(email, password)

    async def redirect_handler(authorization_url: str) -> None:
        await asyncio.to_thread(browser.visit, authorization_url)

    async def callback_handler() -> tuple[str, str | None]:
        query = parse_qs(urlsplit(browser.callback or "").query)
        return query["code"][0], query.get("state", [None])[0]

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(**public_client(name)),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    return provider, browser
