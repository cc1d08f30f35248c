"""The MCP Apps views in headless Chromium, hosted as a web client hosts them: the official host-side
bridge (AppBridge of the pinned @modelcontextprotocol/ext-apps) over the official MCP client, connected to the
running local stack's /mcp with a token from the real OAuth flow (held by the host page's relay, never by the
page or a view), each view in a sandbox proxy on another origin under the CSP it declares. The project card
renders a create_project result; the publish view follows a run through get_project_status, shows an injected
failure in the spec's words and recovers by Retry; the traffic view draws beacons sent through the queue."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from appshost import SandboxServer, build_host_bundle, host_relay
from localhttp import live_site_status
from oauthflow import access_token
from playwright.sync_api import expect
from stackproc import ROOT, create_user, launch_chromium
from test_journeys import connect, signed_in
from test_workspace_browser import tool

EMAIL, PASSWORD = "apps-host@example.com", "apps-host-pass-1"
SCREENSHOTS = ROOT / "docs" / "screenshots"
REPO_STAGE_MESSAGE = (
    "La configuration du dépôt GitHub a échoué. Vérifiez la connexion GitHub puis relancez la publication."
)


@pytest.fixture(scope="module")
def host(stack, gateway) -> Iterator[dict]:
    create_user(stack, EMAIL, PASSWORD)
    with signed_in(gateway, EMAIL, PASSWORD) as browser:
        for provider in ("repo_host", "db_host", "static_host"):
            connect(browser, provider)
    token = access_token(gateway, EMAIL, PASSWORD, "Apps Host")
    from playwright.sync_api import sync_playwright

    with (
        host_relay(gateway, token, build_host_bundle()) as relay,
        SandboxServer() as sandbox,
        sync_playwright() as playwright,
    ):
        chromium = launch_chromium(playwright)
        try:
            yield {
                "chromium": chromium,
                "page_url": f"{relay.url()}/host.html",
                "sandbox": sandbox.url(),
                "gateway": gateway,
                "token": token,
                "provider_sandbox": stack.services["sandbox"],
            }
        finally:
            chromium.close()


def open_host(host: dict, tasks: bool = False):
    """The host page, connected; `tasks`: a host that follows tasks (and tells its views so)."""
    context = host["chromium"].new_context(viewport={"width": 620, "height": 800})
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.on("pageerror", lambda error: console.append(f"page error: {error}"))
    page.goto(host["page_url"])
    page.wait_for_function("typeof window.svcConnect === 'function'")
    connected = page.evaluate("options => svcConnect(options)", {"tasks": tasks})
    # The host declared the extension: the server advertises it and lists the app-only tools to the host.
    assert connected["capabilities"]["extensions"] == {
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}
    }
    assert {"resume_publish", "get_project_traffic_daily"} <= set(connected["tools"])
    return context, page, console


def show(page, host: dict, name: str, arguments: dict) -> dict:
    return page.evaluate(
        "([name, args, sandbox]) => svcShow(name, args, sandbox)", [name, arguments, host["sandbox"]]
    )


def view(page, name: str):
    return page.frame_locator(f"#view-{name}").frame_locator("iframe")


def no_csp_violation(console: list[str]) -> None:
    """Nothing the views do is refused by the CSP they declare, and no script error."""
    assert not [m for m in console if "Content Security Policy" in m or "page error" in m], console


def shot(page, name: str, selector: str) -> None:
    folder = SCREENSHOTS if os.environ.get("SVC_UPDATE_SCREENSHOTS") == "1" else Path(tempfile.gettempdir())
    page.locator(selector).screenshot(path=str(folder / f"{name}.png"))


def test_the_project_card_renders_a_create_project_result(host):
    context, page, console = open_host(host)
    try:
        shown = show(page, host, "create_project", {"prompt": "Hand-dyed wool yarn for knitters, warm tone"})
        assert shown["uri"] == "ui://svc/project-card.html" and shown["csp"] == {}
        created = shown["result"]["structuredContent"]
        card = view(page, "create_project")
        assert card.locator("h1").inner_text() == created["name"]
        # The card completed itself by calling get_project_status through the host.
        card.locator("[data-field=repo]", has_text="none yet").wait_for()
        assert card.locator("[data-field=publish]").inner_text() == "Not published"
        assert card.locator("[data-field=live]").inner_text() == "not live yet"
        card.get_by_role("link", name="Open in workspace").click()
        page.wait_for_function("svcHost.openedLinks.length === 1")
        assert page.evaluate("svcHost.openedLinks") == [created["workspace_url"]]
        # Only its host frame speaks for the host: a message from any other window (here the view's own) is not
        # taken, whatever it says. The forged style change goes first, the host's theme change after it.
        inner = next(f for f in page.frames if f.url == "about:srcdoc")
        inner.evaluate(
            """() => window.postMessage({jsonrpc: "2.0", method: "ui/notifications/host-context-changed",
                params: {styles: {variables: {"--forged": "red"}}}}, "*")"""
        )
        page.evaluate("svcHost.bridges.create_project.sendHostContextChange({theme: 'dark'})")
        # (Looked at through a locator: the view's CSP refuses the eval a polled wait_for_function needs.)
        expect(inner.locator("html")).to_have_attribute("data-theme", "dark")
        assert inner.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--forged')") == ""
        page.evaluate("svcHost.bridges.create_project.sendHostContextChange({theme: 'light'})")
        expect(inner.locator("html")).to_have_attribute("data-theme", "light")
        page.wait_for_timeout(300)  # the view's last size change
        shot(page, "app-project-card", "#view-create_project")
        no_csp_violation(console)
    finally:
        context.close()


@pytest.mark.parametrize("tasks", [False, True], ids=["host-without-tasks", "host-with-tasks"])
def test_the_publish_view_follows_the_run_shows_the_failure_and_recovers_by_retry(host, tasks):
    """Without tasks the Retry resumes the publish and the view polls the project; in a host that follows tasks
    it runs resume_publish as a task and follows tasks/get to its end, then shows tasks/result."""
    gateway, provider_sandbox = host["gateway"], host["provider_sandbox"]
    httpx.post(f"{provider_sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})
    created = tool(
        gateway, host["token"], "create_project", prompt="Cast-iron pans restored by hand, calm tone"
    )
    project_id = created["project_id"]
    context, page, console = open_host(host, tasks)
    # A lasting failure at the template push: the run stops there with the spec's message.
    httpx.post(
        f"{provider_sandbox}/__admin/faults",
        json={"method": "POST", "path": "/github/api/repos/*/*/git/commits", "status": 500, "times": 50},
    )
    try:
        show(page, host, "resume_publish", {"project_id": project_id})
        publish = view(page, "resume_publish")
        publish.locator("li[data-stage=db_creating][data-state=done]").wait_for(timeout=60_000)
        error = publish.locator("#error")
        error.wait_for(state="visible", timeout=90_000)
        assert error.inner_text() == REPO_STAGE_MESSAGE
        assert (
            publish.locator("li[data-stage=repo_host_pushing_template]").get_attribute("data-state")
            == "failed"
        )
        assert publish.locator("li[data-stage=repo_host_creating_repo]").get_attribute("data-state") == "done"
        assert publish.locator("li[data-stage=ready]").get_attribute("data-state") == "pending"
        page.wait_for_timeout(300)
        shot(page, "app-publish-failed", "#view-resume_publish")

        httpx.delete(f"{provider_sandbox}/__admin/faults")
        # The push now takes 5 s: longer than a poll of either kind, so the view shows the run at that step.
        httpx.post(
            f"{provider_sandbox}/__admin/faults",
            json={
                "method": "POST",
                "path": "/github/api/repos/*/*/git/commits",
                "delay_ms": 5000,
                "times": 1,
            },
        )
        pressed = page.evaluate("svcHost.relayed.length")
        publish.get_by_role("button", name="Retry").click()
        publish.locator("li[data-stage=repo_host_pushing_template][data-state=current]").wait_for(
            timeout=60_000
        )
        if tasks:
            publish.locator(
                "#status", has_text="Publishing, step 5 of 6: pushing the store's code."
            ).wait_for()
        publish.locator("li[data-stage=ready][data-state=done]").wait_for(timeout=120_000)
        live = publish.locator("#live a")
        assert live.inner_text().startswith("http")
        assert live_site_status(live.get_attribute("href")) == 200
        assert publish.locator("#failure").is_hidden()
        relayed = page.evaluate("n => svcHost.relayed.slice(n)", pressed)
        methods = [(r["method"], r.get("name"), r["task"]) for r in relayed]
        if tasks:
            # One task-augmented call, tasks/get until it ended, one tasks/result; the project is not polled.
            assert methods[0] == ("tools/call", "resume_publish", True)
            assert {m for m, _, _ in methods[1:-1]} == {"tasks/get"}
            assert methods[-1] == ("tasks/result", None, True)
            assert publish.locator("#status").inner_text() == (
                f"Published: the shop is live at {live.get_attribute('href')}."
            )
        else:
            assert methods[0] == ("tools/call", "resume_publish", False)
            assert set(methods[1:]) == {("tools/call", "get_project_status", False)}
        page.wait_for_timeout(300)
        shot(page, "app-publish-ready" + ("-task" if tasks else ""), "#view-resume_publish")
        no_csp_violation(console)
    finally:
        httpx.delete(f"{provider_sandbox}/__admin/faults")
        context.close()


def test_the_traffic_view_draws_the_beacons_sent_through_the_queue(host):
    gateway = host["gateway"]
    created = tool(
        gateway, host["token"], "create_project", prompt="Sourdough starters by post, cheerful tone"
    )
    project_id = created["project_id"]
    beacons = [
        {"path": "/", "visitor": "visitor-1", "country": "FR", "referrer": "https://news.example.org/"},
        {"path": "/products/rye", "visitor": "visitor-1", "country": "FR", "referrer": ""},
        {"path": "/", "visitor": "visitor-2", "country": "DE", "referrer": "https://news.example.org/"},
        {"path": "/products/rye", "visitor": "visitor-3", "country": "DE", "referrer": ""},
        {"path": "/products/spelt", "visitor": "visitor-4", "country": "NL", "referrer": ""},
    ]
    with httpx.Client(timeout=10) as visitor:
        for n, beacon in enumerate(beacons):
            answer = visitor.post(
                f"{gateway}/api/analytics/collect",
                json={"site": project_id, "session": f"session-{n}", **beacon},
                headers={"Origin": "https://shop.example"},
            )
            assert answer.status_code == 204
    today = datetime.now(UTC).date()
    window = {
        "project_id": project_id,
        "start_date": (today - timedelta(days=6)).isoformat(),
        "end_date": today.isoformat(),
    }
    deadline = time.monotonic() + 60  # through the queue and the aggregator
    while tool(gateway, host["token"], "get_project_analytics", **window)["pageviews"] < len(beacons):
        assert time.monotonic() < deadline, "the beacons never reached the report"
        time.sleep(1)

    context, page, console = open_host(host)
    try:
        show(page, host, "get_project_analytics", window)
        traffic = view(page, "get_project_analytics")
        bar = traffic.locator(f"rect[data-date='{today.isoformat()}']")
        bar.wait_for()
        assert bar.get_attribute("data-pageviews") == "5"
        assert traffic.locator("rect").count() == 7
        assert float(bar.get_attribute("height")) > 0
        assert (
            traffic.locator(f"rect[data-date='{(today - timedelta(days=1)).isoformat()}']").get_attribute(
                "data-pageviews"
            )
            == "0"
        )
        assert traffic.locator("#pageviews").inner_text() == "5"
        assert traffic.locator("#visitors").inner_text() == "4"
        pages = traffic.locator("#pages tr")
        assert pages.nth(0).inner_text().split() == ["/", "2"] or pages.nth(0).inner_text().split() == [
            "/products/rye",
            "2",
        ]
        assert "FR" in traffic.locator("#countries").inner_text()
        assert "news.example.org" in traffic.locator("#referrers").inner_text()
        page.wait_for_timeout(300)
        shot(page, "app-traffic", "#view-get_project_analytics")
        no_csp_violation(console)
    finally:
        context.close()
