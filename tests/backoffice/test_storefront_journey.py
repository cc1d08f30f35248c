"""Issue 36's journey on a hosted shop, over HTTP end to end: the template pushed to a repository whose site
the static_host sandbox builds (the real storefront build against the shop's storefront API); the merchant
connects Stripe and adds an active product with stock through the backoffice API; the backoffice's build hook
rebuilds the site and the live storefront lists the product within 60 s; a shopper in Chromium adds it to the
cart, checks out through the site's proxy, pays on the card provider's page and lands on a confirmation naming
the order; the backoffice shows the order paid and the stock one lower; every page view sent a beacon. A photo
uploaded on the product's admin page is then on the live storefront, copied onto the site."""

from __future__ import annotations

import base64
import re
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from adminhelpers import PAGE, csrf_of, multipart
from bohelpers import LambdaContext, build_event
from imagefiles import png
from localhttp import Beacons, sandbox_hosts, serving
from storefronthelpers import StoreShop, connect_card, fresh_database, make_shop, use_stripe

from svc_backoffice.hosting import shops as hosting
from svc_shared.domain.publish_template import template_files, template_root

pytestmark = pytest.mark.usefixtures("hosted_env")
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def shop_url() -> Iterator[str]:
    yield from fresh_database("bo_sf_journey")


@pytest.fixture(scope="module")
def platform() -> Iterator[str]:
    with serving(Beacons) as url:
        yield url


@pytest.fixture
def published(hosted_env, shop_url, front, stripe_sandbox, creds, platform) -> dict:
    """What publishing leaves: a repository with the template, a site linked to it (its URL and build hook
    given to the hosted shop), the site's variables, and the first deploy live."""
    box = stripe_sandbox
    github, netlify = sandbox_hosts(box.url)
    name = f"journey-{uuid.uuid4().hex[:6]}"
    repo = github.create_repo(name)
    site = netlify.create_site(name=name, repo_path=repo.full_name, branch="main")
    live = (site.ssl_url or "").rstrip("/")
    use_stripe(hosted_env, box, creds)
    store = make_shop(
        hosted_env, shop_url, base=front.url, storefront_url=live, build_hook_url=site.deploy_hook
    )
    front.shops[store.shop.id] = store.shop
    netlify.set_env(
        site.account_id,
        site.id,
        {
            "BACKOFFICE_API_URL": store.shop.base_url,
            "SVC_PLATFORM_URL": platform,
            "SVC_PROJECT_ID": store.shop.id,
        },
    )
    owner, repo_name = repo.full_name.split("/")
    github.commit_files(owner, repo_name, "main", template_files(template_root()), "Shop template")
    deadline = time.monotonic() + 120
    while not netlify.deploys(site.id) or netlify.deploys(site.id)[0].state not in ("ready", "error"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    first = netlify.deploys(site.id)[0]
    assert first.state == "ready", netlify.build_log(first.build_id or "")
    return {"store": store, "live": live, "netlify": netlify, "site": site, "sandbox": box}


def merchant_adds_a_product(store: StoreShop, title: str, stock: int) -> tuple[str, str]:
    made = store.call(
        "POST",
        "/api/products",
        cookie=store.admin_cookie,
        body={"title": title, "status": "active", "price_cents": 1890, "description": "Roasted this week."},
    )
    assert made.status == 201, made.body
    product = made.json()
    adjusted = store.call(
        "POST",
        "/api/inventory/adjust",
        cookie=store.admin_cookie,
        body={"product_id": product["id"], "delta": stock, "reason": "Received"},
    )
    assert adjusted.status == 201, adjusted.body
    return str(product["id"]), str(product["slug"])


def test_a_product_added_in_the_backoffice_is_bought_on_the_live_storefront(published, front):
    from playwright.sync_api import sync_playwright

    store, live, box = published["store"], published["live"], published["sandbox"]
    connect_card(store, box)
    store.shipping(country="FR", price=490)
    Beacons.received.clear()

    added_at = time.monotonic()
    product_id, slug = merchant_adds_a_product(store, "House Blend", stock=5)
    while httpx.get(f"{live}/products/{slug}/").status_code != 200:
        assert time.monotonic() - added_at < 60, "the storefront did not list the new product within 60 s"
        time.sleep(0.5)
    listed = httpx.get(f"{live}/products/").text
    assert "House Blend" in listed and "€18.90" in listed

    # A photo uploaded on the product's admin page reaches the live storefront, copied onto the site.
    photo = png(48, 32, (120, 72, 40))
    token = csrf_of(store.call("GET", f"/products/{product_id}", cookie=store.admin_cookie, headers=PAGE))
    body, kind = multipart(
        {"csrf": token, "image_alt": "A bag of House Blend"}, {"image_file": ("bag.png", "image/png", photo)}
    )
    event = build_event(
        "POST",
        f"/products/{product_id}/images",
        raw_body=base64.b64encode(body).decode(),
        headers={"Content-Type": kind, "Cookie": store.admin_cookie, **PAGE},
    )
    event["isBase64Encoded"] = True
    assert hosting.handle(event, LambdaContext(), store.shop)["statusCode"] == 303
    uploaded_at = time.monotonic()
    while 'alt="A bag of House Blend"' not in (shown := httpx.get(f"{live}/products/{slug}/").text):
        assert time.monotonic() - uploaded_at < 60, (
            "the storefront did not show the uploaded image within 60 s"
        )
        time.sleep(0.5)
    src = re.search(r'<img src="([^"]+)" alt="A bag of House Blend"', shown)
    assert src and src.group(1).startswith(urlsplit(live).path + "/images/")  # on the site, not the shop's
    assert httpx.get(urljoin(live, src.group(1))).content == photo

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 375, "height": 800})
        page.goto(f"{live}/")
        page.get_by_role("link", name="House Blend").first.click()
        page.wait_for_url(f"{live}/products/{slug}/")
        page.get_by_role("button", name="Add to cart").click()
        page.get_by_role("link", name="View cart").click()
        page.get_by_role("link", name="Check out").click()
        page.wait_for_url(f"{live}/checkout/")
        page.get_by_label("Email").fill("ana@example.com")
        page.get_by_label("Full name").fill("Ana Diaz")
        page.get_by_label("Address", exact=True).fill("1 Rue de la Paix")
        page.get_by_label("City").fill("Lyon")
        page.get_by_label("Postal code").fill("69001")
        page.get_by_label("Country code (e.g. FR)").fill("FR")
        page.get_by_label("Country code (e.g. FR)").press("Tab")
        page.get_by_text("Standard").wait_for()
        page.get_by_role("button", name="Continue to payment").click()
        page.wait_for_url(f"{box.url}/stripe/pay/**")
        page.locator("#pay").click()
        page.wait_for_url(f"{live}/order/?token=*")
        page.get_by_text("Your payment was received.").wait_for(timeout=30_000)
        confirmation = page.locator("[data-order-status]").inner_text()
        page.screenshot(path="/tmp/svc-storefront-confirmation-375.png", full_page=True)
        browser.close()

    (order,) = store.call("GET", "/api/orders", cookie=store.admin_cookie).json()["items"]
    assert confirmation == f"Order #{order['number']}: Your payment was received."
    assert (order["status"], order["email"], order["total_cents"]) == ("paid", "ana@example.com", 1890 + 490)
    assert store.stock(product_id) == 4
    paths = {b["path"] for b in Beacons.received}
    assert {"/", f"/products/{slug}/", "/cart/", "/checkout/", "/order/"} <= paths
    assert {b["site"] for b in Beacons.received} == {store.shop.id}
