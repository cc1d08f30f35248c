"""The official MCP Python SDK 1.x as a client (run by the interpreter of .venv-sdk1, `make install`): OAuth
discovery, registration, consent through a scripted browser, tools, a refresh. Prints one JSON line.

Usage: sdk1_client.py <mcp url> <email> <password>
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from oauthflow import REDIRECT, ScriptedBrowser


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main(url: str, email: str, password: str) -> dict:
    browser = ScriptedBrowser(email, password)

    async def redirect_handler(authorization_url: str) -> None:
        await asyncio.to_thread(browser.visit, authorization_url)

    async def callback_handler() -> tuple[str, str | None]:
        query = parse_qs(urlsplit(browser.callback or "").query)
        return query["code"][0], query.get("state", [None])[0]

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[REDIRECT],
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            client_name="SDK 1.x end-to-end",
        ),
        storage=Memory(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with (
        streamablehttp_client(url, auth=provider, timeout=30) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        tools = await session.list_tools()
        me = await session.call_tool("get_me", {})
        provider.context.token_expiry_time = time.time() - 1  # refreshed before the next call
        again = await session.call_tool("get_me", {})
    return {
        "protocol": init.protocolVersion,
        "tools": len(tools.tools),
        "me": me.content[0].text,
        "same_after_refresh": again.content[0].text == me.content[0].text,
        "iss_in_callback": "iss=" in (browser.callback or ""),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:4]))))
    httpx.Client().close()
