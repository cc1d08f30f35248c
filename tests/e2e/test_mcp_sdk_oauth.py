"""The official MCP Python SDK client against the running local stack: it gets 401, discovers the metadata,
registers itself, sends the user through sign-in and consent (a scripted browser), exchanges the code,
uses the tools, and refreshes its tokens."""

from __future__ import annotations

import secrets
import time
from urllib.parse import parse_qs, quote, urlsplit

import anyio
import httpx
import httpx2
import psycopg
import pytest
from docserver import DocumentServer
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from oauthflow import REDIRECT, MemoryStorage, ScriptedBrowser, public_client
from stackproc import DATABASE_URL, create_user


def provider_for(
    gateway: str, storage: MemoryStorage, browser: ScriptedBrowser, client_metadata_url: str | None = None
) -> OAuthClientProvider:
    async def redirect_handler(url: str) -> None:
        await anyio.to_thread.run_sync(browser.visit, url)

    async def callback_handler() -> AuthorizationCodeResult:
        assert browser.callback
        query = parse_qs(urlsplit(browser.callback).query)
        return AuthorizationCodeResult(
            code=query["code"][0], state=query["state"][0], iss=query.get("iss", [None])[0]
        )

    metadata = OAuthClientMetadata(**public_client("SDK end-to-end"), scope="mcp:all")
    return OAuthClientProvider(
        server_url=f"{gateway}/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )


NEGOTIATED: list[str] = []


async def session_round(gateway: str, provider: OAuthClientProvider, mode: str) -> tuple[list[str], dict]:
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(f"{gateway}/mcp", http_client=http), mode=mode) as client,
    ):
        tools = await client.list_tools()
        me = await client.call_tool("get_me", {})
        provider.context.token_expiry_time = time.time() - 1  # the SDK refreshes before the next call
        again = await client.call_tool("get_me", {})
        assert again.content[0].text == me.content[0].text
        NEGOTIATED.append(client.protocol_version)
        return [t.name for t in tools.tools], me.model_dump()


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_sdk_client_discovers_registers_authorizes_exchanges_and_refreshes(gateway, mode, version):
    storage = MemoryStorage()
    browser = ScriptedBrowser("demo@svc.local", "demo-password-123")
    provider = provider_for(gateway, storage, browser)

    names, me = anyio.run(session_round, gateway, provider, mode)
    # auto: server/discover, then stateless 2026-07-28 requests; legacy: the initialize handshake.
    assert NEGOTIATED[-1] == version

    assert "get_me" in names
    assert '"email":"demo@svc.local"' in me["content"][0]["text"]
    assert storage.client_info is not None and storage.client_info.client_id
    assert any("Allow SDK end-to-end to use your account?" in page for page in browser.pages)
    assert browser.callback and "iss=" in browser.callback
    # The refresh rotated the pair: the first access token no longer works, the stored one does.
    assert storage.tokens is not None
    current = storage.tokens.access_token
    ok = httpx.post(
        f"{gateway}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": f"Bearer {current}"},
        timeout=10,
    )
    assert ok.status_code == 200


def test_sdk_client_with_stored_tokens_skips_the_browser(gateway):
    storage = MemoryStorage()
    browser = ScriptedBrowser("demo@svc.local", "demo-password-123")
    anyio.run(session_round, gateway, provider_for(gateway, storage, browser), "legacy")
    visits = len(browser.pages)
    second = provider_for(gateway, storage, browser)
    names, _ = anyio.run(session_round, gateway, second, "legacy")
    assert "get_me" in names
    assert len(browser.pages) == visits


def test_sdk_client_identified_by_its_metadata_document_needs_no_registration(stack, gateway, tls_authority):
    """The SDK's URL-based client ID: the server offers client metadata documents, so the SDK skips
    registration and uses the https URL of its document (served on loopback, local mode) as client_id."""
    email = f"cimd-{secrets.token_hex(4)}@example.com"
    create_user(stack, email, "cimd-pass-123")
    with DocumentServer(tls=tls_authority) as documents:
        url = documents.document(
            "/mcp/client-metadata.json",
            host="localhost",
            client_name="SDK by document",
            redirect_uris=[REDIRECT],
        )
        storage = MemoryStorage()
        browser = ScriptedBrowser(email, "cimd-pass-123")
        names, me = anyio.run(session_round, gateway, provider_for(gateway, storage, browser, url), "auto")
        hits = dict(documents.hits)
    assert "get_me" in names
    assert f'"email":"{email}"' in me["content"][0]["text"]
    assert storage.client_info is not None and storage.client_info.client_id == url
    consent = next(page for page in browser.pages if "consent_token" in page)
    assert "Allow SDK by document to use your account?" in consent
    assert "Identified by <strong>localhost</strong>" in consent
    # Consent, code exchange and the refresh in session_round: one fetch (the document says max-age=300).
    assert hits == {"/mcp/client-metadata.json": 1}


@pytest.fixture(scope="module")
def derived_gateway(tmp_path_factory: pytest.TempPathFactory):
    """A second stack as deployed with the template's defaults (no custom domain): PublicBaseUrl is empty and
    the functions read the base URL from the request context the gateway sets, as on an HTTP API's
    execute-api URL (no stage path)."""
    from stackproc import start_stack

    running = start_stack(
        tmp_path_factory.mktemp("derived") / "state",
        database_url=DATABASE_URL,
        extra_env={
            "SVC_DERIVE_BASE_URL": "true",
            "SVC_DEMO_STORE_DATABASE": f"svc_demo_store_e2e_derived_{secrets.token_hex(4)}",
        },
    )
    try:
        yield running.services["gateway"]
    finally:
        running.stop()
        with psycopg.connect(DATABASE_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{running.env["SVC_DEMO_STORE_DATABASE"]}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{running.env["SVC_DEMO_STORE_DATABASE"]}"')


def test_sdk_client_discovers_everything_at_the_raw_url_with_no_custom_domain(derived_gateway):
    assert urlsplit(derived_gateway).path == ""
    # RFC 9728 (path-inserted for /mcp, and at the root) and RFC 8414 for the issuer at the root, as an HTTP
    # API's $default stage serves them at the execute-api URL; each names the URL the client used.
    resource = httpx.get(f"{derived_gateway}/.well-known/oauth-protected-resource/mcp", timeout=10)
    assert resource.status_code == 200 and resource.json()["resource"] == f"{derived_gateway}/mcp"
    root_resource = httpx.get(f"{derived_gateway}/.well-known/oauth-protected-resource", timeout=10)
    assert root_resource.json()["authorization_servers"] == [derived_gateway]
    server = httpx.get(f"{derived_gateway}/.well-known/oauth-authorization-server", timeout=10)
    assert server.json()["issuer"] == derived_gateway
    # A client-written Host does not move the issuer: the gateway names its own address, as API Gateway does.
    forged = httpx.get(
        f"{derived_gateway}/.well-known/oauth-authorization-server",
        headers={"Host": "evil.example"},
        timeout=10,
    )
    assert forged.json()["issuer"] == derived_gateway
    storage = MemoryStorage()
    browser = ScriptedBrowser("demo@svc.local", "demo-password-123")
    names, me = anyio.run(
        session_round, derived_gateway, provider_for(derived_gateway, storage, browser), "auto"
    )
    assert "get_me" in names
    assert '"email":"demo@svc.local"' in me["content"][0]["text"]
    assert browser.callback and f"iss={quote(derived_gateway, safe='')}" in browser.callback
