"""On the local stack: the demo store's live storefront, built by the site host from its repository against
the hosted backoffice's storefront API, sends a beacon per page view that the platform counts: the owner's
Traffic page shows a shopper's views within a minute."""

from __future__ import annotations

import time

import httpx
from stackproc import browser_sign_in

DEMO, PASSWORD = "demo@svc.local", "demo-password-123"


def test_a_shoppers_page_views_reach_the_shops_traffic(stack, chromium):
    gateway = stack.services["gateway"]
    project = stack.services["backoffice"].rsplit("/shops/", 1)[1]
    signed = httpx.post(
        f"{gateway}/login", data={"email": DEMO, "password": PASSWORD, "next": "/api/me"}, timeout=10
    )
    status = httpx.post(
        f"{gateway}/api/projects/{project}/provision",
        json={"action": "status"},
        cookies=signed.cookies,
        timeout=10,
    ).json()
    live = status["live_url"]
    deadline = time.monotonic() + 120
    while (home := httpx.get(live, timeout=10)).status_code != 200:
        assert time.monotonic() < deadline, home.text
        time.sleep(1)
    assert "/products/" in home.text  # the storefront, built from the shop's catalog

    shopper = chromium.new_context(viewport={"width": 375, "height": 800})
    page = shopper.new_page()
    page.goto(live)
    page.locator(".card a").first.click()
    page.wait_for_url("**/products/*/")
    page.goto(live + "cart/")
    page.wait_for_load_state("networkidle")
    shopper.close()

    context, traffic = browser_sign_in(
        DEMO, PASSWORD, chromium, gateway, f"/workspace/projects/{project}/traffic"
    )
    deadline = time.monotonic() + 90
    while int(traffic.locator("#pageviews").inner_text().replace(",", "")) < 3:
        assert time.monotonic() < deadline, "the storefront's page views were not counted"
        time.sleep(3)
        traffic.reload()
    assert int(traffic.locator("#visitors").inner_text()) >= 1
    assert "/cart/" in traffic.locator("#top-pages").inner_text()
    context.close()


def test_the_project_page_lists_the_deploys_and_the_live_one(stack, chromium):
    gateway = stack.services["gateway"]
    project = stack.services["backoffice"].rsplit("/shops/", 1)[1]
    context, page = browser_sign_in(DEMO, PASSWORD, chromium, gateway, f"/workspace/projects/{project}")
    if page.locator("#deploys").count() == 0:  # read with the owner's own Netlify connection
        assert (
            "The site's deploys cannot be read right now" in page.locator("#deploys-unreadable").inner_text()
        )
        page.goto(f"{gateway}/workspace/connections")
        static = page.locator("#card-static_host")
        with page.expect_popup() as popup_info:
            static.get_by_role("link", name="Connect Netlify").click()
        popup_info.value.wait_for_event("close")
        static.locator(".ok").wait_for()
    context.close()
    for width in (1280, 375):
        context, page = browser_sign_in(
            DEMO, PASSWORD, chromium, gateway, f"/workspace/projects/{project}", width=width
        )
        deploys = page.locator("#deploys")
        deploys.scroll_into_view_if_needed()
        assert deploys.get_by_text("Live now: commit").is_visible()
        assert page.locator("#deploy-list tr[data-live=true]").count() == 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        deploys.screenshot(path=f"/tmp/svc-project-deploys-{width}.png")
        context.close()
