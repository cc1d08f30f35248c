"""The official MCP Python SDK 1.x as a client (run by the interpreter of .venv-sdk1, `make install`): OAuth
discovery, registration, consent through a scripted browser, tools, a refresh. Prints one JSON line.

Usage: sdk1_client.py <mcp url> <email> <password>
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from sdk1_auth import signed_in_provider


async def main(url: str, email: str, password: str) -> dict:
    provider, browser = signed_in_provider(url, email, password, "SDK 1.x end-to-end")
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
