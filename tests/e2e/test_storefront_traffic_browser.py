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
