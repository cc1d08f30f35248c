"""What the journeys of tests/e2e leave out, so that every function of the template makes its AWS calls
under its own role at least once (`make iam` runs this with tests/e2e/test_journeys.py): the workspace
pages, the integrations routes, an upload through a presigned URL, a beacon through the queue to the
aggregator, and a paid top-up through the checkout webhook."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
from oauthflow import access_token, client_tokens
from stackproc import cli, create_user
from test_backoffice_sessions import open_backoffice
from test_journeys import connect, connections, signed_in
from test_workspace_browser import mcp, tool

EMAIL, PASSWORD = "iam@example.com", "iam-coverage-pass-1"


def test_every_function_makes_its_calls_with_its_own_role(stack, gateway):
    create_user(stack, EMAIL, PASSWORD)
    # Database host tokens that are about to expire when issued: each use refreshes and re-seals the token.
    supabase_settings = f"{stack.services['sandbox']}/__admin/supabase/settings"
    lifetime = httpx.get(supabase_settings, timeout=10).json()["access_token_lifetime"]
    assert httpx.post(supabase_settings, json={"access_token_lifetime": 60}, timeout=10).status_code == 200
    try:
        _journey(stack, gateway)
    finally:
        httpx.post(supabase_settings, json={"access_token_lifetime": lifetime}, timeout=10)
        cli(stack, "users", "set-plan", "--email", EMAIL, "--plan", "paid")


@contextlib.contextmanager
def databases_slow_to_start(stack) -> Iterator[None]:
    """New database projects stay "coming up" until the block ends: a publish started inside it is still
    running when pressed again, whatever the machine's speed (each press then reads its execution)."""
    settings = f"{stack.services['sandbox']}/__admin/supabase/settings"
    delay = httpx.get(settings, timeout=10).json()["project_ready_delay"]
    assert httpx.post(settings, json={"project_ready_delay": 3600}, timeout=10).status_code == 200
    try:
        yield
    finally:
        httpx.post(settings, json={"project_ready_delay": delay}, timeout=10)


def _journey(stack, gateway):
    with signed_in(gateway, EMAIL, PASSWORD) as browser:
        for provider in ("repo_host", "db_host", "static_host"):
            connect(browser, provider)
        token = access_token(gateway, EMAIL, PASSWORD, "IAM Client")
        project = tool(gateway, token, "create_project", prompt="Beeswax candles poured in small batches")
        project_id = project["project_id"]

        # The workspace (its pages read sessions, projects, connections, MCP clients and credits).
        for path in (
            "/",
            "/workspace/connections",
            f"/workspace/projects/{project_id}",
            "/workspace/mcp",
        ):
            page = browser.get(path)
            assert page.status_code == 200, (path, page.status_code, page.text[:300])

        other = tool(gateway, token, "create_project", prompt="Hand-thrown stoneware mugs and bowls")[
            "project_id"
        ]
        with databases_slow_to_start(stack):
            # Publishing started from the project page's form, pressed again once the run is going: the
            # second press reads the run (DescribeExecution) instead of starting another.
            for press in range(2):
                if press:
                    _until_running(gateway, token, project_id)
                form = browser.get(f"/workspace/projects/{project_id}").text
                csrf = re.search(r'name="csrf" value="([^"]+)"', form)
                assert csrf, form[:300]
                pressed = browser.post(
                    f"/workspace/projects/{project_id}/publish",
                    data={"csrf": csrf.group(1)},
                    headers={"Origin": gateway},
                )
                assert pressed.status_code == 303, pressed.text[:300]
                assert "done=published" in pressed.headers["location"], pressed.headers["location"]
            # The provision route (the workspace's polling client) pressed again on the run still going.
            again = browser.post(f"/api/projects/{project_id}/provision", json={})
            assert again.status_code == 200, again.text
            assert again.json()["status"] not in ("ready", "failed"), again.json()
        # One run at a time: the next runs on the same provider accounts (and their db_host token).
        _until_ready(gateway, token, project_id)

        # The MCP app's Retry (an app-only tool) on a second project, twice: a start, then the run found
        # going.
        with databases_slow_to_start(stack):
            for press in range(2):
                if press:
                    _until_running(gateway, token, other)
                resumed = app_tool(gateway, token, "resume_publish", project_id=other)
                assert resumed["project_id"] == other and resumed["publish_status"] not in (
                    "ready",
                    "failed",
                ), resumed

    with signed_in(gateway, EMAIL, PASSWORD) as browser:
        # The account's workspaces (its memberships, a query).
        workspaces = browser.get("/api/workspaces")
        assert workspaces.status_code == 200, workspaces.text

        # Integrations: the provider accounts behind the stored (encrypted) tokens.
        repos = browser.get("/api/repo-host/repos")
        assert repos.status_code == 200, repos.text
        databases = browser.get("/api/integrations/db-host/projects/list")
        assert databases.status_code == 200, databases.text

    # An upload: S3 authorizes the PUT with the permissions of the function that signed the URL.
    body = b"\xff\xd8\xff" + b"0" * 1021
    upload = tool(
        gateway,
        token,
        "get_file_upload_url",
        project_id=project_id,
        filename="hero.jpg",
        content_type="image/jpeg",
        size_bytes=len(body),
    )
    put = httpx.put(upload["upload_url"], content=body, headers=upload["headers"], timeout=30)
    assert put.status_code == 200, put.text

    # A beacon: the collect route queues it; the aggregator (the SQS event source mapping) writes it.
    sent = httpx.post(
        f"{gateway}/api/analytics/collect",
        json={
            "site": project_id,
            "path": "/",
            "visitor": "visitor-000001",
            "session": "session-000001",
            "country": "FR",
        },
        headers={"Origin": "https://shop.example"},
        timeout=30,
    )
    assert sent.status_code == 204, sent.text
    day = datetime.now(UTC).date().isoformat()
    deadline = time.monotonic() + 60
    views = 0
    while time.monotonic() < deadline and views < 1:
        report = tool(
            gateway, token, "get_project_analytics", project_id=project_id, start_date=day, end_date=day
        )
        views = int(report["pageviews"])
        if views < 1:
            time.sleep(1)
    assert views == 1, report

    # A paid top-up: the checkout sandbox delivers the signed webhook to the billing function.
    before = tool(gateway, token, "get_credits")
    checkout = tool(gateway, token, "top_up_credits", amount=25)
    paid = httpx.post(checkout["checkout_url"], timeout=30)
    assert paid.status_code == 303, paid.text
    deadline = time.monotonic() + 30
    after = before
    while time.monotonic() < deadline and after == before:
        time.sleep(0.5)
        after = tool(gateway, token, "get_credits")
    assert after != before, (before, after)

    # An MCP client refreshes its tokens (the old access token goes), then revokes the grant (RFC 7009).
    client = client_tokens(gateway, EMAIL, PASSWORD, "IAM Refresher")
    refreshed = httpx.post(
        f"{gateway}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": client["refresh_token"],
            "client_id": client["client_id"],
            "resource": f"{gateway}/mcp",
        },
        timeout=30,
    )
    assert refreshed.status_code == 200, refreshed.text
    revoked = httpx.post(
        f"{gateway}/oauth/revoke",
        data={"token": refreshed.json()["refresh_token"], "client_id": client["client_id"]},
        timeout=30,
    )
    assert revoked.status_code == 200, revoked.text
    answer = mcp(gateway, refreshed.json()["access_token"], "tools/list")
    assert answer.status_code == 401, answer.text

    with signed_in(gateway, "demo@svc.local", "demo-password-123") as demo:
        # The shop's admin starts the search console and the card provider's connections: the hosted
        # backoffice reads the operator's secrets (GscClientSecretArn, CheckoutSecretKeyArn) to build them.
        open_backoffice(demo, stack.services["sign-in"].split(" ")[0])
        for path, field in (
            ("/api/gsc/connect", "authorize_url"),
            ("/api/payments/providers/card/connect", "url"),
        ):
            started = demo.post(f"{stack.services['backoffice']}{path}", json={})
            assert started.status_code == 200, (path, started.text)
            assert started.json()[field].startswith(stack.services["sandbox"]), started.text

    # The operator rotates the hand-off keys twice (`svc handoff-keys rotate`): once the newest key is a
    # minute old the platform signs with it, a key the command line made and sealed, which the accounts
    # function unseals with its own role (the first key it made itself, at the journeys' first sign-in). Its
    # keyring is cached for a minute: the sign-ins go on until one is signed with that key.
    made = [json.loads(cli_ok(stack, "handoff-keys", "rotate"))["rotated"] for _ in range(2)]
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as demo:
        deadline, kid = time.monotonic() + 150, None
        while kid not in made and time.monotonic() < deadline:
            if kid is not None:
                time.sleep(10)
            handoff = demo.get(stack.services["sign-in"].split(" ")[0])
            assert handoff.status_code == 303, handoff.text
            kid = _signing_kid(handoff.headers["location"])
        assert kid in made, (kid, made)

    _access_ends(stack, gateway, token, project_id)


def _access_ends(stack, gateway: str, token: str, project_id: str) -> None:
    """What a person ends: an MCP client revoked from the workspace, a provider disconnected there, and a
    deploy that cannot start (a Free plan's deploy slot is given back)."""
    revoked = client_tokens(gateway, EMAIL, PASSWORD, "IAM Revoked")
    with signed_in(gateway, EMAIL, PASSWORD) as browser:
        page = browser.get("/workspace/mcp").text
        grant = re.search(r'data-grant="([^"]+)">\s*<td class="client-name">IAM Revoked<', page)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert grant and csrf, page[:500]
        done = browser.post(
            "/workspace/mcp/revoke",
            data={"csrf": csrf.group(1), "grant_id": grant.group(1), "confirm": "yes"},
            headers={"Origin": gateway},
        )
        assert done.status_code == 303 and "revoked=1" in done.headers["location"], done.text[:300]
        refused = mcp(gateway, revoked["access_token"], "tools/list")
        assert refused.status_code == 401, refused.text

        page = browser.get("/workspace/connections").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf, page[:300]
        gone = browser.post(
            "/workspace/connections/disconnect",
            data={"csrf": csrf.group(1), "provider": "static_host", "confirm": "yes"},
            headers={"Origin": gateway},
        )
        assert gone.status_code == 303, gone.text[:300]
        assert connections(browser)["static_host"] is False

    # The operator moves the person to the Free plan: a deploy takes one of its slots, then cannot start
    # without the static host, and the slot is given back.
    cli_ok(stack, "users", "set-plan", "--email", EMAIL, "--plan", "free")
    answer = mcp(gateway, token, "tools/call", name="deploy_project", arguments={"project_id": project_id})
    result = answer.json()["result"]
    assert result["isError"] is True and "connect" in result["content"][0]["text"].lower(), result


def _until_ready(gateway: str, token: str, project_id: str) -> None:
    deadline, status = time.monotonic() + 180, {}
    while time.monotonic() < deadline and status.get("publish_status") not in ("ready", "failed"):
        time.sleep(1)
        status = tool(gateway, token, "get_project_status", project_id=project_id)
    assert status["publish_status"] == "ready", (status["publish_stage"], status["publish_error"])


def _until_running(gateway: str, token: str, project_id: str) -> None:
    """Wait until the run a press started has begun (its first step records it running): a press then reads
    the run instead of (re)starting the claimed one."""
    deadline, status = time.monotonic() + 60, ""
    while time.monotonic() < deadline and status != "running":
        time.sleep(0.5)
        status = tool(gateway, token, "get_project_status", project_id=project_id)["publish_status"]
    assert status == "running", status


def app_tool(gateway: str, token: str, name: str, **arguments) -> dict:
    """A tool call of an MCP client that renders views (the UI extension): app-only tools are its alone."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    ui = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"extensions": ui},
        "clientInfo": {"name": "iam"},
    }
    opened = httpx.post(
        f"{gateway}/mcp",
        headers=headers,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
    )
    session = opened.headers.get("mcp-session-id")
    assert session, opened.text
    call = {"name": name, "arguments": arguments}
    answer = httpx.post(
        f"{gateway}/mcp",
        headers={**headers, "Mcp-Session-Id": session},
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        timeout=30,
    )
    result = answer.json()["result"]
    assert result["isError"] is False, result
    return dict(json.loads(result["content"][0]["text"]))


def cli_ok(stack, *args: str) -> str:
    done = cli(stack, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _signing_kid(location: str) -> str | None:
    """The `kid` of the hand-off token a sign-in link carries."""
    for candidate in re.findall(r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", location):
        header = candidate.split(".", 1)[0]
        return str(json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"])
    return None
