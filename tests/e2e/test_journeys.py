"""The journeys of DESIGN.md over HTTP against the running local stack: connecting the three providers
through their OAuth pages, creating a project through MCP, publishing it by polling the provision route
until ready, then every one of the 26 tools through the official MCP SDK client."""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import time
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import anyio
import httpx
import httpx2
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from oauthflow import ScriptedBrowser
from stackproc import create_user
from test_mcp_sdk_oauth import MemoryStorage, provider_for

PROVIDERS = ("repo_host", "db_host", "static_host")


@contextlib.contextmanager
def signed_in(gateway: str, email: str, password: str) -> Iterator[httpx.Client]:
    # A person on a machine of their own: sign-in throttling counts attempts per client address.
    here = httpx.HTTPTransport(local_address=f"127.{secrets.randbelow(250) + 1}.{secrets.randbelow(256)}.3")
    with httpx.Client(base_url=gateway, timeout=30, transport=here) as browser:
        assert browser.post("/login", data={"email": email, "password": password}).status_code == 303
        yield browser


def connect(browser: httpx.Client, provider: str) -> None:
    """Start at our initiate route, follow the provider's OAuth page back to our callback, as a browser does."""
    url = browser.get("/api/oauth/initiate", params={"provider": provider}).json()["url"]
    page = browser.get(url)
    while page.status_code in (302, 303):
        page = browser.get(urljoin(str(page.url), page.headers["location"]))
    assert page.status_code == 200, page.text
    assert "Connected" in page.text


def connections(browser: httpx.Client) -> dict[str, bool]:
    return browser.get("/api/oauth/check-connections").json()["connections"]


@pytest.fixture(scope="module")
def merchant(gateway):
    """The paid demo user with all three providers connected."""
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as browser:
        for provider in PROVIDERS:
            connect(browser, provider)
        yield browser


def test_connecting_providers_one_by_one_and_disconnecting_one(gateway, stack):
    create_user(stack, "connector@example.com", "connector-pass-1")
    with signed_in(gateway, "connector@example.com", "connector-pass-1") as browser:
        assert connections(browser) == dict.fromkeys(PROVIDERS, False)
        done = []
        for provider in PROVIDERS:
            connect(browser, provider)
            done.append(provider)
            assert connections(browser) == {p: p in done for p in PROVIDERS}
        assert browser.post("/api/oauth/disconnect", json={"provider": "static_host"}).status_code == 200
        assert connections(browser) == {"repo_host": True, "db_host": True, "static_host": False}


async def tool_round(gateway: str, provider, calls) -> dict[str, object]:
    results: dict[str, object] = {}
    async with (
        httpx2.AsyncClient(auth=provider, timeout=60) as http,
        Client(streamable_http_client(f"{gateway}/mcp", http_client=http), mode="legacy") as client,
    ):
        listed = await client.list_tools()
        results["__tools__"] = sorted(t.name for t in listed.tools)
        for name, arguments in calls:
            if callable(arguments):
                arguments = arguments(results)
            result = await client.call_tool(name, arguments)
            text = result.content[0].text if result.content else ""
            results[name] = {
                "isError": result.is_error,
                "body": json.loads(text) if not result.is_error else text,
            }
    return results


def test_publish_journey_then_every_tool(gateway, stack, merchant, tmp_path):
    storage = MemoryStorage()
    provider = provider_for(gateway, storage, ScriptedBrowser("demo@svc.local", "demo-password-123"))
    created = anyio.run(
        tool_round,
        gateway,
        provider,
        [("create_project", {"prompt": "Hand-thrown ceramic mugs for coffee lovers, warm and crafted tone"})],
    )
    assert created["create_project"]["isError"] is False, created
    project_id = created["create_project"]["body"]["project_id"]

    # Publish: the workspace polls the provision route every 3 s until ready.
    first = merchant.post(f"/api/projects/{project_id}/provision", json={})
    assert first.status_code == 200, first.text
    stages = [first.json()["stage"]]
    deadline = time.monotonic() + 120
    report = first.json()
    while report["status"] not in ("ready", "failed") and time.monotonic() < deadline:
        time.sleep(1)
        report = merchant.post(f"/api/projects/{project_id}/provision", json={"action": "status"}).json()
        stages.append(report["stage"])
    assert report["status"] == "ready", report
    assert "db_waiting_ready" in stages or "db_applying_migrations" in stages

    # Every tool, through the SDK client that authorized itself with OAuth.
    calls = [
        ("get_me", {}),
        ("list_workspaces", {}),
        ("get_workspace", {}),
        ("get_credits", {}),
        ("top_up_credits", {"amount": 25}),
        ("list_template_projects", {}),
        ("list_library_projects", {}),
        ("list_projects", {}),
        ("get_project_status", {"project_id": project_id}),
        ("set_project_visibility", {"project_id": project_id, "visibility": "workspace"}),
        ("set_workspace_knowledge", {"text": "Prices in euros."}),
        ("get_workspace_knowledge", {}),
        ("set_project_knowledge", {"project_id": project_id, "text": "Earthy colours."}),
        ("get_project_knowledge", {"project_id": project_id}),
        ("list_files", {"project_id": project_id}),
        ("read_file", {"project_id": project_id, "path": "template.yaml"}),
        ("send_message", {"project_id": project_id, "message": "Add a returns page"}),
        ("get_message", lambda r: {"message_id": r["send_message"]["body"]["message_id"]}),
        ("list_edits", {"project_id": project_id}),
        ("get_diff", lambda r: {"project_id": project_id, "base": r["list_files"]["body"]["commit_sha"]}),
        (
            "get_file_upload_url",
            {
                "project_id": project_id,
                "filename": "hero.jpg",
                "content_type": "image/jpeg",
                "size_bytes": 1024,
            },
        ),
        (
            "get_project_analytics",
            {"project_id": project_id, "start_date": "2026-11-01", "end_date": "2026-11-30"},
        ),
        ("get_project_analytics_trend", {"project_id": project_id}),
        ("deploy_project", {"project_id": project_id}),
        ("remix_project", {"project_id": project_id}),
    ]
    results = anyio.run(tool_round, gateway, provider, calls)
    assert len(results["__tools__"]) == 26
    assert set(results["__tools__"]) == {name for name, _ in calls} | {"create_project"}
    for name, _ in calls:
        assert results[name]["isError"] is False, (name, results[name])
    assert results["send_message"]["body"]["status"] == "complete"
    assert results["top_up_credits"]["body"]["checkout_url"].startswith(stack.services["sandbox"])
    assert results["get_project_knowledge"]["body"]["text"] == "Earthy colours."
    assert any(f["path"] == "template.yaml" for f in results["list_files"]["body"]["files"])
    diff_files = {f["filename"] for f in results["get_diff"]["body"]["files"]}
    assert diff_files  # the builder's commit changed files

    # The providers hold what publishing made: one template commit, the schema, the site's variables.
    sandbox = stack.services["sandbox"]
    status = results["get_project_status"]["body"]
    repo = status["repo_host_repo"]
    token = httpx.post(f"{sandbox}/__admin/github/tokens", json={}).json()["access_token"]
    clone = tmp_path / "clone"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            f"{sandbox.replace('http://', f'http://x-access-token:{token}@')}/github/git/{repo}.git",
            str(clone),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    subjects = subprocess.run(
        ["git", "-C", str(clone), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert subjects.count("feat: scaffold merchant backoffice from svc template") == 1
    details = httpx.get(f"{sandbox}/__admin/supabase/projects/{status['db_project_ref']}").json()
    with psycopg.connect(details["database_url"]) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] >= 5
    assert status["live_url"]


def test_free_plan_user_gets_402_on_provision(gateway):
    with signed_in(gateway, "free@svc.local", "free-password-123") as browser:
        answer = browser.post("/api/projects/any-project/provision", json={})
        assert answer.status_code == 402
        assert answer.json()["error"] == "UPGRADE_REQUIRED"
        assert "payant" in answer.json()["message"]


def test_demo_store_backoffice_opens_signed_in_from_the_platform(gateway, stack):
    """The printed sign-in link: platform session -> 60 s hand-off token -> backoffice session cookie."""
    link = stack.services["sign-in"].split(" ")[0]
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as browser:
        handoff = browser.get(link)
        assert handoff.status_code == 303
        sso = browser.get(handoff.headers["location"])
        assert sso.status_code == 302
        assert "svc_session" in sso.cookies
        backoffice = stack.services["backoffice"]
        products = browser.get(f"{backoffice}/api/products").json()["items"]
        assert {p["sku"] for p in products} >= {"MUG-001", "BWL-001"}
        replay = browser.get(handoff.headers["location"])  # the same token a second time
        assert replay.status_code == 302
        assert "signed-out" in replay.headers["location"]


def test_an_invited_person_joins_the_store_backoffice_and_a_stranger_does_not(gateway, stack):
    """Staff invitations across both systems: the owner invites an email in the backoffice; that person,
    signed in to the platform but in no workspace of the owner's, opens the store's sign-in link and lands
    in the backoffice in the invited role; someone not invited is told to ask for an invitation."""
    link = stack.services["sign-in"].split(" ")[0]
    backoffice = stack.services["backoffice"]
    invitee, stranger = (f"{who}-{secrets.token_hex(3)}@example.com" for who in ("nina", "sam"))
    for email in (invitee, stranger):
        create_user(stack, email, "person-pass-123")
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as owner:
        owner.get(owner.get(link).headers["location"])  # the owner's own backoffice session
        invited = owner.post(f"{backoffice}/api/staff", json={"email": invitee, "role": "editor"})
        assert (invited.status_code, invited.json()["status"]) == (201, "invited")
    with signed_in(gateway, invitee, "person-pass-123") as nina:
        sso = nina.get(nina.get(link).headers["location"])
        assert sso.status_code == 302 and "svc_session" in sso.cookies
        assert nina.post(f"{backoffice}/api/products", json={"title": "Nina's mug"}).status_code == 201
        # An editor, not an admin: the staff list is not hers to see.
        assert nina.get(f"{backoffice}/api/staff").headers["location"].endswith("reason=insufficient_role")
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as owner:
        owner.get(owner.get(link).headers["location"])
        members = {m["email"]: m for m in owner.get(f"{backoffice}/api/staff").json()["items"]}
        assert (members[invitee]["role"], members[invitee]["status"]) == ("editor", "active")
    with signed_in(gateway, stranger, "person-pass-123") as sam:
        refused = sam.get(sam.get(link).headers["location"])
        # The shop's own pages are under its path on the platform's host (its cookie path too).
        assert (refused.status_code, refused.headers["location"]) == (
            302,
            f"{urlsplit(backoffice).path}/auth/signed-out?reason=not_invited",
        )
        page = sam.get(f"{backoffice}/auth/signed-out?reason=not_invited").text
        assert "This store has not invited your email address" in page


def test_backoffice_sign_in_link_needs_a_platform_session(gateway, stack):
    link = stack.services["sign-in"].split(" ")[0]
    answer = httpx.get(link, timeout=10)
    assert answer.status_code == 303
    assert "/login?next=" in answer.headers["location"]
