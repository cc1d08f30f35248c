"""The storefront of the template, built by the static_host sandbox from a pushed repository against a shop's
storefront API (the documented shape, served from test data), looked at in Chromium at 1280 and 375 px: pages
readable with no horizontal scroll, no request to another origin but the platform's beacon, one beacon per page
view, the cart, the closed checkout, the 404 page, and a home page under 100 KB."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from screenshots import shot
from stackproc import ROOT

from svc_local.providers import SandboxCredentials, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.domain.analytics import clean_path
from svc_shared.domain.bodies import BeaconRequest
from svc_shared.domain.publish_template import template_files, template_root

sys.path.insert(0, str(ROOT / "tests"))
from localhttp import Beacons, sandbox_hosts, serving
from storefront_double import ShopApi, serve

WIDTHS = (1280, 375)


@pytest.fixture(scope="module")
def platform() -> Iterator[str]:
    with serving(Beacons) as url:
        yield url


@pytest.fixture(scope="module")
def shop_api() -> Iterator[ShopApi]:
    with serve(ShopApi(12)) as shop:
        yield shop


@pytest.fixture(scope="module")
def storefront(shop_api: ShopApi, platform: str) -> Iterator[dict]:
    """The template pushed to a repository whose linked site deploys it on push."""
    with Sandbox(
        "127.0.0.1", 0, build_providers(None, SandboxCredentials.generate(), build_delay=0), quiet=True
    ) as box:
        github, netlify = sandbox_hosts(box.url)
        repo = github.create_repo("northside")
        owner, name = repo.full_name.split("/")
        site = netlify.create_site(name="northside", repo_path=repo.full_name, branch="main")
        netlify.set_env(
            site.account_id,
            site.id,
            {
                "BACKOFFICE_API_URL": shop_api.base,
                "SVC_PLATFORM_URL": platform,
                "SVC_PROJECT_ID": "p_northside",
            },
        )
        sha = github.commit_files(owner, name, "main", template_files(template_root()), "Shop template")
        deadline = time.monotonic() + 120
        while True:
            deploys = netlify.request("GET", f"/sites/{site.id}/deploys")
            if deploys and deploys[0]["state"] in ("ready", "error"):
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        log = netlify.request("GET", f"/builds/{deploys[0]['build_id']}/log")["log"]
        assert (deploys[0]["state"], deploys[0]["commit_ref"]) == ("ready", sha), log
        yield {"url": site.ssl_url, "log": log, "sandbox": box}


def test_product_pages_carry_name_price_and_description_in_the_html(storefront: dict):
    assert "Storefront built" in storefront["log"]
    page = httpx.get(f"{storefront['url']}products/ethiopia-guji/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    text = page.text
    assert "<title>Ethiopia Guji | Northside Roasters</title>" in text
    assert '<meta name="description" content="Ethiopia Guji, €14.50. Bright and sweet' in text
    assert "<h1>Ethiopia Guji</h1>" in text
    assert (
        "€14.50" in text and '<s class="price-was"><span class="sr">Regular price </span>€18.00</s>' in text
    )
    assert "Cup number 1: notes of cherry and cocoa." in text
    assert "In stock" in text
    sold_out = httpx.get(f"{storefront['url']}products/kenya-nyeri/").text
    assert "Kenya Nyeri &lt;AA&gt;" in sold_out and "<AA>" not in sold_out  # the shop's text is escaped
    assert '<button class="button" type="submit" disabled>Sold out</button>' in sold_out
    home = httpx.get(storefront["url"]).text
    assert "<h1>Northside Roasters</h1>" in home
    assert "Checkout is not open yet: this shop does not take payments yet." in home
    post = httpx.get(f"{storefront['url']}blog/how-we-roast/").text
    assert "<strong>twelve kilos</strong>" in post and "&lt;script&gt;alert(1)&lt;/script&gt;" in post
    missing = httpx.get(f"{storefront['url']}products/no-such-thing/")
    assert missing.status_code == 404 and "Page not found" in missing.text


def test_the_storefront_api_is_reached_on_the_sites_own_origin(storefront: dict):
    store = httpx.get(f"{storefront['url']}api/storefront/store")
    assert store.status_code == 200
    assert store.json()["name"] == "Northside Roasters"


@pytest.mark.parametrize("width", WIDTHS)
def test_pages_in_chromium(chromium, storefront: dict, platform: str, width: int):
    base = storefront["url"]
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    foreign: list[str] = []
    problems: list[str] = []
    page.on(
        "request",
        lambda r: None if r.url.startswith((base.split("/sites/")[0], platform)) else foreign.append(r.url),
    )
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    Beacons.received.clear()
    views = [
        ("home", ""),
        ("catalog", "products/"),
        ("category", "categories/coffee/"),
        ("product", "products/ethiopia-guji/"),
    ]
    for name, path in views:
        page.goto(base + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, name
        shot(page, f"storefront-{name}-{width}")
    page.get_by_label("Quantity").fill("2")
    page.get_by_role("button", name="Add to cart").click()
    page.get_by_role("link", name="View cart").click()
    page.wait_for_url(base + "cart/")
    assert page.locator("[data-cart-count]").inner_text() == "2"
    assert page.locator("[data-cart-subtotal]").inner_text() == "€29.00"
    assert page.get_by_role("link", name="Ethiopia Guji").is_visible()
    shot(page, f"storefront-cart-{width}")
    page.get_by_role("link", name="Check out").click()
    page.wait_for_url(base + "checkout/")
    assert page.locator("main [data-checkout-closed]").is_visible()  # no payments connected yet
    assert page.locator("[data-checkout-form]").is_hidden()
    shot(page, f"storefront-checkout-{width}")
    page.goto(base + "blog/how-we-roast/")
    shot(page, f"storefront-post-{width}")
    assert problems == []  # no script error, no refused resource (CSP) on any page so far
    page.goto(base + "nowhere/")  # (the browser logs its 404 status as an error)
    assert page.get_by_role("heading", name="Page not found").is_visible()
    shot(page, f"storefront-404-{width}")
    deadline = time.monotonic() + 10
    while len(Beacons.received) < 9 and time.monotonic() < deadline:
        time.sleep(0.1)
    paths = [b["path"] for b in Beacons.received]
    assert sorted(paths) == sorted(
        [
            "/",
            "/products/",
            "/categories/coffee/",
            "/products/ethiopia-guji/",
            "/cart/",
            "/checkout/",
            "/blog/how-we-roast/",
            "/nowhere/",
        ]
    )
    assert {b["site"] for b in Beacons.received} == {"p_northside"}
    for sent in Beacons.received:  # each is what the platform's beacon route accepts
        assert clean_path(BeaconRequest.model_validate(sent).path) == sent["path"]
    assert len({b["visitor"] for b in Beacons.received}) == 1
    assert foreign == []
    context.close()


def test_the_home_page_is_under_100_kb_transferred(chromium, storefront: dict):
    context = chromium.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    sizes: list[int] = []
    page.on(
        "requestfinished",
        lambda r: sizes.append(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"]),
    )
    page.goto(storefront["url"], wait_until="networkidle")
    assert 0 < sum(sizes) < 100 * 1024, sizes
    context.close()
