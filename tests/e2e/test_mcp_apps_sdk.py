"""MCP Apps through the official MCP Python SDK client against the running local stack, in both protocol eras:
a client that declares the `io.modelcontextprotocol/ui` extension sees it advertised, lists and reads the three
views (HTML with their CSP) and gets the tools' `_meta.ui` and the app-only tools; a client that declares
nothing gets the 26 tools and the results it always had."""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client import advertise
from mcp.client.streamable_http import streamable_http_client
from oauthflow import ScriptedBrowser
from stackproc import create_user
from test_journeys import connect, signed_in
from test_mcp_sdk_oauth import MemoryStorage, provider_for

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
VIEWS = {"ui://svc/project-card.html", "ui://svc/publish-progress.html", "ui://svc/traffic.html"}
EMAIL, PASSWORD = "apps-sdk@example.com", "apps-sdk-pass-1"


@pytest.fixture(scope="module")
def merchant(stack, gateway):
    create_user(stack, EMAIL, PASSWORD)
    with signed_in(gateway, EMAIL, PASSWORD) as browser:
        for provider in ("repo_host", "db_host"):
            connect(browser, provider)
    return {"storage": MemoryStorage(), "browser": ScriptedBrowser(EMAIL, PASSWORD)}


async def session(gateway: str, merchant: dict, mode: str, ui: bool) -> dict:
    provider = provider_for(gateway, merchant["storage"], merchant["browser"])
    extensions = [advertise(UI, {"mimeTypes": [MIME]})] if ui else None
    out: dict = {}
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(
            streamable_http_client(f"{gateway}/mcp", http_client=http), mode=mode, extensions=extensions
        ) as client,
    ):
        out["version"] = client.protocol_version
        capabilities = client.server_capabilities
        out["extensions"] = (capabilities.model_extra or {}).get("extensions") or getattr(
            capabilities, "extensions", None
        )
        out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        out["resources"] = (await client.list_resources()).resources
        out["reads"] = {uri: (await client.read_resource(uri)).contents for uri in sorted(VIEWS)}
        created = await client.call_tool("create_project", {"prompt": "Beeswax wraps for tidy kitchens"})
        out["created"] = created
    return out


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_a_ui_client_lists_and_reads_the_views_and_sees_the_app_tools(gateway, merchant, mode, version):
    seen = anyio.run(session, gateway, merchant, mode, True)
    assert seen["version"] == version
    assert seen["extensions"] == {UI: {"mimeTypes": [MIME]}}
    assert {r.uri for r in seen["resources"]} == VIEWS
    assert all(r.mime_type == MIME for r in seen["resources"])
    for uri, contents in seen["reads"].items():
        (content,) = contents
        assert (content.uri, content.mime_type) == (uri, MIME)
        assert content.text.startswith("<!DOCTYPE html>") and "class Host {" in content.text
        assert content.meta == {"ui": {"csp": {}, "prefersBorder": True}}
    tools = seen["tools"]
    assert len(tools) == 28
    assert tools["create_project"].meta["ui"]["resourceUri"] == "ui://svc/project-card.html"
    assert tools["resume_publish"].meta["ui"]["visibility"] == ["app"]
    assert seen["created"].is_error is False


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_a_client_without_the_extension_gets_the_same_tools_and_results(gateway, merchant, mode, version):
    plain = anyio.run(session, gateway, merchant, mode, False)
    assert plain["version"] == version
    assert not plain["extensions"]
    assert len(plain["tools"]) == 26
    assert not {"resume_publish", "get_project_traffic_daily"} & set(plain["tools"])
    assert all(not (t.meta or {}).get("ui") for t in plain["tools"].values())
    created = plain["created"]
    assert created.is_error is False
    body = json.loads(created.content[0].text)
    assert set(body) == {"project_id", "workspace_url", "name", "status"}
    assert created.structured_content == body
