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
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.auth import OAuthClientMetadata

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from oauthflow import MemoryStorage, ScriptedBrowser, public_client


async def main(url: str, email: str, password: str) -> dict:
    browser = ScriptedBrowser(email, password)

    async def redirect_handler(authorization_url: str) -> None:
        await asyncio.to_thread(browser.visit, authorization_url)

    async def callback_handler() -> tuple[str, str | None]:
        query = parse_qs(urlsplit(browser.callback or "").query)
        return query["code"][0], query.get("state", [None])[0]

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(**public_client("SDK 1.x end-to-end")),
        storage=MemoryStorage(),
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
