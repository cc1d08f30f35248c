"""The workspace's traffic, credits and settings in headless Chromium against the running local stack, by
clicking only: beacons go through the collect route and the queue into the chart; a top-up goes through the
Stripe sandbox's hosted page and its signed webhook; visibility and remix; and the fixes: the project page
completes itself when a publish is ready, the link forms step aside while it runs (and go to Settings), every page has an icon,
and a failed same-tab (GitHub) connection comes back to its card."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from oauthflow import access_token
from stackproc import browser_sign_in, new_merchant
from test_workspace_browser import shot, tool

EMAIL, PASSWORD = "more-workspace@example.com", "more-workspace-pass-1"


@pytest.fixture(scope="module")
def merchant(stack):
    return new_merchant(stack, EMAIL, PASSWORD)


signed_in_page = functools.partial(browser_sign_in, EMAIL, PASSWORD)


def connect_all(page, gateway: str) -> None:
    page.goto(f"{gateway}/workspace/connections")
    for provider, name in (("db_host", "Supabase"), ("static_host", "Netlify")):
        card = page.locator(f"#card-{provider}")
        if card.get_attribute("data-connected") == "yes":
            continue
        with page.expect_popup() as popup_info:
            card.get_by_role("link", name=f"Connect {name}").click()
        popup_info.value.wait_for_event("close")
        card.locator(".ok").wait_for()
    repo = page.locator("#card-repo_host")
    if repo.get_attribute("data-connected") != "yes":
        repo.get_by_role("link", name="Connect GitHub").click()
        page.locator("#card-repo_host .ok").wait_for()


def new_shop(page, gateway: str, template: str) -> str:
    page.goto(f"{gateway}/?new=1")
    page.get_by_label(template, exact=False).check()
    page.click("#create-project")
    page.wait_for_url(f"{gateway}/workspace/projects/*")
    return page.url.rsplit("/", 1)[1]


@contextmanager
def shop_page(chromium, gateway: str, template: str) -> Iterator[tuple[object, str]]:
    """The merchant signed in with every provider connected and a new shop of `template`: (its page, its
    project id); the browser is closed afterwards."""
    context, page = signed_in_page(chromium, gateway, "/")
    try:
        connect_all(page, gateway)
        yield page, new_shop(page, gateway, template)
    finally:
        context.close()


def test_a_failed_same_tab_connection_comes_back_to_its_card(chromium, merchant):
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    context, page = signed_in_page(chromium, gateway, "/workspace/connections")
    httpx.post(
        f"{sandbox}/__admin/faults",
        json={"method": "POST", "path": "/github/login/oauth/access_token", "status": 400, "times": 1},
    )
    try:
        page.locator("#card-repo_host").get_by_role("link", name="Connect GitHub").click()
        page.wait_for_url(f"{gateway}/workspace/connections?failed=repo_host*")
        error = page.locator("#card-repo_host .error")
        assert error.is_visible() and error.inner_text() == "Connecting GitHub did not finish. Try again."
        assert page.locator("#card-repo_host").get_attribute("data-connected") == "no"
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
        context.close()


def test_publish_completes_the_page_without_a_reload_and_no_page_misses_its_icon(chromium, merchant):
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})
    context, page = signed_in_page(chromium, gateway, "/")
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    try:
        connect_all(page, gateway)
        new_shop(page, gateway, "Coffee roastery")
        assert page.locator("#repo").inner_text() == "None yet"
        assert page.locator("#setup").is_visible()
        page.click("#publish-button")
        page.locator("#setup").wait_for(state="hidden")  # the link forms step aside while it runs
        page.locator("li[data-stage=ready][data-state=done]").wait_for(timeout=180_000)
        page.get_by_role("link", name="Open backoffice").wait_for()
        assert (
            page.locator("#repo").inner_text().startswith("svc-") or "/" in page.locator("#repo").inner_text()
        )
        assert page.locator("#commit code").inner_text()
        page.locator("#setup").wait_for(state="detached")  # published: the link forms are on Settings now
        for path in ("/", "/workspace/connections", "/workspace/mcp", "/workspace/billing"):
            page.goto(f"{gateway}{path}")
            page.wait_for_load_state("networkidle")
        assert missing == [], missing
        assert httpx.get(f"{gateway}/favicon.ico").headers["content-type"] == "image/svg+xml"
    finally:
        context.close()


def test_traffic_shows_beacons_from_the_queue_in_a_server_drawn_chart(chromium, merchant):
    gateway = merchant["gateway"]
    with shop_page(chromium, gateway, "Independent bookshop") as (page, project_id):
        # The shop's visitors: beacons through the collect route and the queue, as the live site sends them.
        with httpx.Client(timeout=30) as client:
            for n in range(24):
                answer = client.post(
                    f"{gateway}/api/analytics/collect",
                    json={
                        "site": project_id,
                        "path": "/books/novels" if n % 3 else "/",
                        "visitor": f"reader-{n % 9:04d}",
                        "session": f"visit-{n % 12:04d}",
                        "referrer": "https://news.example/books" if n % 2 else "",
                        "country": "FR" if n % 4 else "CA",
                    },
                    headers={"Origin": "https://shop.example"},
                )
                assert answer.status_code == 204, answer.text
        page.get_by_role("link", name="Traffic").click()
        page.wait_for_url(f"{gateway}/workspace/projects/{project_id}/traffic")
        deadline = time.monotonic() + 60
        while page.locator("#pageviews").inner_text() != "24" and time.monotonic() < deadline:
            time.sleep(2)
            page.reload()
        assert page.locator("#pageviews").inner_text() == "24"
        # The page shows what the MCP tools answer (estimates of unique visitors and sessions alike).
        token = access_token(gateway, EMAIL, PASSWORD, "Traffic Client")
        start = (datetime.now(UTC).date() - timedelta(days=29)).isoformat()
        today = datetime.now(UTC).date().isoformat()
        report = tool(
            gateway, token, "get_project_analytics", project_id=project_id, start_date=start, end_date=today
        )
        assert page.locator("#visitors").inner_text() == str(report["unique_visitors"])
        assert abs(report["unique_visitors"] - 9) <= 1
        trend = tool(gateway, token, "get_project_analytics_trend", project_id=project_id)
        assert page.locator("#live-sessions").inner_text() == str(trend["unique_sessions"])
        today = datetime.now(UTC).date().isoformat()
        assert (
            page.locator(f"#traffic-chart rect[data-day='{today}']").get_attribute("data-pageviews") == "24"
        )
        assert page.locator("#traffic-chart rect.bar").count() == 30
        assert (
            page.locator("#top-pages tr", has_text="/books/novels").locator("td").nth(1).inner_text() == "16"
        )
        assert "news.example" in page.locator("#referrers").inner_text()
        assert "CA" in page.locator("#countries").inner_text()
        assert abs(int(page.locator("#live-sessions").inner_text()) - 12) <= 1
        shot(page, "traffic")

        # The range picker: a week by its link, then two dates past the 90-day limit, explained in words.
        page.get_by_role("link", name="Last 7 days").click()
        page.locator("#traffic-chart rect.bar").nth(6).wait_for()
        assert page.locator("#traffic-chart rect.bar").count() == 7
        start = (datetime.now(UTC).date() - timedelta(days=90)).isoformat()
        page.fill("#range-start", start)
        page.fill("#range-end", today)
        page.get_by_role("button", name="Show").click()
        page.locator("#range-problem").wait_for()
        assert "at most 90 days" in page.locator("#range-problem").inner_text()

        page.set_viewport_size({"width": 375, "height": 800})
        page.reload()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_top_up_through_the_hosted_checkout_shows_pending_then_the_credit(chromium, merchant):
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    webhook = httpx.get(f"{sandbox}/__admin/stripe/webhook").json()
    context, page = signed_in_page(chromium, gateway, "/")
    try:
        page.locator("#credits a").click()
        page.wait_for_url(f"{gateway}/workspace/billing")
        before = int(page.locator("#balance").inner_text().split()[0].replace(",", ""))
        page.fill("#amount", "4")
        page.click("#top-up")
        assert page.locator("#amount-error").inner_text() == "Amount must be between $5 and $1000."
        # The payment's webhook is held back: the page says pending until it arrives.
        httpx.post(f"{sandbox}/__admin/stripe/webhook", json={"url": "http://127.0.0.1:9/held"})
        page.fill("#amount", "25")
        page.click("#top-up")
        page.wait_for_url(f"{sandbox}/stripe/pay/*")
        assert "Pay 25.00 USD" in page.content()
        page.click("#pay")
        page.wait_for_url(f"{gateway}/workspace/billing?checkout=success*")
        assert "pending" in page.locator("#checkout-status").inner_text()
        shot(page, "credits-pending")
        httpx.post(f"{sandbox}/__admin/stripe/webhook", json={"url": webhook["url"]})
        events = httpx.get(f"{sandbox}/__admin/stripe/events").json()["events"]
        latest = max(events, key=lambda e: e["created"])
        assert httpx.post(f"{sandbox}/__admin/stripe/events/{latest['id']}/deliver").status_code == 201
        # The page redraws itself once the credit is there, without a reload.
        page.locator("#checkout-status", has_text="2,500 credits added").wait_for(timeout=20_000)
        assert page.locator("#balance").inner_text() == f"{before + 2500:,} credits"
    finally:
        httpx.post(f"{sandbox}/__admin/stripe/webhook", json={"url": webhook["url"]})
        context.close()


def test_visibility_and_remix_by_clicking(chromium, merchant):
    gateway = merchant["gateway"]
    with shop_page(chromium, gateway, "Outdoor gear") as (page, _project_id):
        page.get_by_role("link", name="Settings").click()
        assert page.locator("#visibility-now").inner_text() == "Private"
        assert page.get_by_label("Public").is_disabled()
        page.get_by_label("Workspace:", exact=False).check()
        page.keyboard.press("Tab")
        page.click("#save-visibility")
        page.locator("#visibility-now", has_text="Workspace").wait_for()
        assert "Members of its workspace can see it now." in page.content()
        page.click("#remix")
        page.wait_for_url(f"{gateway}/workspace/projects/*?done=remixed")
        assert page.locator("h1").inner_text() == "Outdoor gear (remix)"
        assert "Not published" in page.locator("#publish-words").inner_text()
