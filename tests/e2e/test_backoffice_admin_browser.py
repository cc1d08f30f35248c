"""The backoffice's admin screens in headless Chromium on a shop published by clicking, opened from the
workspace (the hand-off): as owner, create a product by filling its form, find it with the command palette,
adjust its stock, move an order to its next status, invite a viewer, add and edit a customer, a discount code
and a shipping method, write and publish a post, connect Google Search Console and Stripe with its webhook secret; as that viewer, the same pages with
no control to change anything and a forged form post refused; every page of the navigation with its CSP,
in words (never JSON) and without sideways scrolling at 375 px."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import httpx
import pytest
from imagefiles import png
from playwright.sync_api import expect
from screenshots import shot
from stackproc import browser_sign_in, create_user, new_merchant
from test_workspace_browser import open_backoffice, publish_by_clicking
from test_workspace_more_browser import connect_all

EMAIL, PASSWORD = "admin-screens@example.com", "admin-screens-pass-1"
VIEWER = "admin-viewer@example.com"
NAV = ("Home", "Orders", "Products", "Customers", "Discounts", "Content", "Settings")

signed_in_page = functools.partial(browser_sign_in, EMAIL, PASSWORD)


@pytest.fixture(scope="module")
def shop(chromium, stack) -> Iterator[dict]:
    """A shop published by clicking and its backoffice opened from the workspace, as its owner."""
    merchant = new_merchant(stack, EMAIL, PASSWORD)
    gateway = merchant["gateway"]
    httpx.post(f"{merchant['sandbox']}/__admin/supabase/settings", json={"project_ready_delay": 0.3})
    context, page = signed_in_page(chromium, gateway, "/", width=1280)
    try:
        connect_all(page, gateway)
        project = publish_by_clicking(page, gateway, "Clean skincare")
        backoffice = open_backoffice(page, gateway, project)
        backoffice.set_viewport_size({"width": 1280, "height": 900})
        yield {
            "gateway": gateway,
            "project": project,
            "base": f"{gateway}/shops/{project}",
            "page": backoffice,
        }
    finally:
        context.close()


def adding(page, url: str, link: str) -> None:
    """Opens the list at `url` and follows its `link` to an empty form."""
    page.goto(url)
    page.get_by_role("link", name=link).first.click()


def submitted(page, fields: dict[str, str], lands: str | None = None, button: str = "Save") -> None:
    """Types each of `fields` (by id) into the page's form, presses its first `button`, then waits to land on
    `lands` (a URL pattern) when given."""
    for name, value in fields.items():
        page.fill(f"#{name}", value)
    page.get_by_role("button", name=button).first.click()
    if lands:
        page.wait_for_url(lands)


def csp_violations(page) -> list[str]:
    found: list[str] = []
    page.on(
        "console",
        lambda message: found.append(message.text) if "Content Security Policy" in message.text else None,
    )
    return found


def test_the_owner_runs_the_shop_from_the_admin_screens(shop, stack):
    page, base = shop["page"], shop["base"]
    violations = csp_violations(page)
    assert page.locator("#role").inner_text() == "owner"
    assert page.locator("h1").inner_text() == "Home"

    # Create a product by filling the form; the price typed as 19.50 is stored as 1950 cents.
    page.get_by_role("link", name="Products", exact=True).click()
    page.get_by_role("link", name="Add product").first.click()
    page.fill("#title", "Calendula night balm")
    page.fill("#description", "A rich balm for dry skin, made with calendula.")
    page.fill("#price", "19.50")
    page.fill("#compare_at", "24")
    page.fill("#sku", "BALM-01")
    page.select_option("#status", "active")
    page.fill("#tags", "skin, night")
    page.fill("#image_url_0", "https://images.example/balm.jpg")
    page.locator("button[data-suggest=image_alt_0]").click()
    # (the page's CSP forbids eval, so wait with a locator rather than a JavaScript predicate)
    expect(page.locator("#image_alt_0")).not_to_have_value("")
    page.get_by_role("button", name="Save").first.click()
    page.wait_for_url(f"{base}/products/*")
    assert "Created." in page.locator(".notice").inner_text()
    product_id = page.url.split("/products/", 1)[1].split("?", 1)[0]
    stored = page.request.get(f"{base}/api/products/{product_id}").json()
    assert (stored["price_cents"], stored["compare_at_cents"]) == (1950, 2400)
    assert stored["images"][0]["alt"]  # the suggestion filled the alt text
    shot(page, "backoffice-product")

    # Find it with the command palette (/), and by the list's search.
    page.goto(f"{base}/")
    page.keyboard.press("/")
    page.locator("#palette-q").fill("calendula")
    page.locator("#palette-results a").first.wait_for()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/products/{product_id}")
    page.goto(f"{base}/products?q=balm")
    assert page.get_by_role("link", name="Calendula night balm").is_visible()

    # Adjust its stock with a reason.
    page.goto(f"{base}/products/{product_id}")
    page.fill("#delta", "12")
    page.fill("#reason", "First delivery")
    page.get_by_role("button", name="Adjust stock").click()
    page.wait_for_url(f"{base}/products/{product_id}?notice=stock_adjusted")
    assert page.locator("#stock-total").inner_text() == "12"

    # An order (as the storefront would place it), seen and moved to its next status.
    answer = page.request.post(
        f"{base}/api/orders",
        data={
            "email": "ana@example.com",
            "items": [{"product_id": product_id, "quantity": 2}],
            "shipping_cents": 490,
        },
    )
    assert answer.status == 201, answer.text()
    order = answer.json()
    page.goto(f"{base}/orders")
    page.get_by_role("link", name=f"#{order['number']}").click()
    assert "€39.00" in page.inner_text("main") and "€43.90" in page.inner_text("#order-total")
    page.get_by_role("button", name="Mark as paid").click()
    page.wait_for_url(f"{base}/orders/{order['id']}?notice=status_changed")
    assert page.locator("#order-status").inner_text() == "Paid"
    assert page.get_by_role("button", name="Start processing").is_visible()
    assert page.get_by_role("button", name="Mark as paid").count() == 0
    page.fill("#tracking_number", "LA123456789FR")
    page.get_by_role("button", name="Save tracking").click()
    page.wait_for_url("**notice=tracking_saved")
    shot(page, "backoffice-order")

    # Invite a staff member as viewer.
    page.goto(f"{base}/settings/staff")
    page.fill("#invite_email", VIEWER)
    page.select_option("#invite_role", "viewer")
    page.get_by_role("button", name="Send invitation").click()
    page.wait_for_url("**notice=invited")
    assert VIEWER in page.inner_text("table")

    # A catalogue worth looking at for the screenshots: more products, one of them running low.
    for title, price, status, stock in (
        ("Rosehip face oil", 2400, "active", 30),
        ("Oat milk cleanser", 1650, "active", 3),
        ("Clay mask", 1900, "draft", 0),
        ("Shea body butter", 2200, "active", 14),
        ("Travel kit", 3900, "archived", 0),
    ):
        made = page.request.post(
            f"{base}/api/products", data={"title": title, "price_cents": price, "status": status}
        )
        assert made.status == 201, made.text()
        if stock:
            moved = page.request.post(
                f"{base}/api/inventory/adjust",
                data={"product_id": made.json()["id"], "delta": stock, "reason": "Count"},
            )
            assert moved.status == 201, moved.text()
    page.goto(f"{base}/")
    assert page.inner_text("#today-revenue") == "€43.90"  # paid today: counted in today's sales
    page.goto(f"{base}/settings")
    shot(page, "backoffice-settings")
    page.goto(f"{base}/products")
    shot(page, "backoffice-products")
    page.goto(f"{base}/")
    assert page.inner_text("#to-fulfil") == "1"
    shot(page, "backoffice-home")
    assert violations == []


def test_the_owner_uploads_an_image_and_arranges_a_collection_with_the_keyboard(shop, tmp_path):
    page, base = shop["page"], shop["base"]
    violations = csp_violations(page)
    page.goto(f"{base}/products?q=balm")
    page.get_by_role("link", name="Calendula night balm").click()
    product_url = page.url.split("?", 1)[0]

    # Upload a photo from the computer with its alt text; it is shown (drawn by the browser) and moved first.
    photo = tmp_path / "balm.png"
    photo.write_bytes(png(40, 30, (90, 140, 60)))
    page.set_input_files("#image_file", str(photo))
    page.fill("#image_alt", "An open jar of balm")
    page.get_by_role("button", name="Add image").click()
    page.wait_for_url(f"{product_url}?notice=image_added")
    uploaded = page.locator("#images img").nth(1)
    assert uploaded.get_attribute("alt") == "An open jar of balm"
    assert "/media/" in (uploaded.get_attribute("src") or "")
    expect(uploaded).to_have_js_property("naturalWidth", 40)
    page.get_by_role("button", name="Move image 2 up").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{product_url}?notice=image_saved")
    assert page.locator("#images img").first.get_attribute("alt") == "An open jar of balm"
    shot(page, "backoffice-product-images")
    served = page.request.get(page.locator("#images img").first.get_attribute("src") or "")
    assert served.status == 200 and served.headers["content-type"] == "image/png"
    assert served.body() == photo.read_bytes()

    # Categories: two added, the second moved up and renamed (every page of the navigation is then checked
    # at 375 px with them in it).
    page.goto(f"{base}/products/categories")
    for name in ("Face care", "Body care and bath"):
        page.fill("#name", name)
        page.get_by_role("button", name="Add category").click()
        page.wait_for_url(f"{base}/products/categories?notice=created")
    page.get_by_role("button", name="Move Body care and bath up").click()
    page.wait_for_url(f"{base}/products/categories?notice=saved")
    renamed = page.locator("#category-order li").first.locator("input[id^=name_]")
    renamed.fill("Body and bath")
    renamed.press("Enter")
    page.wait_for_url(f"{base}/products/categories?notice=saved")
    values = page.locator("#category-order input[id^=name_]")
    assert [values.nth(i).input_value() for i in range(2)] == ["Body and bath", "Face care"]
    shot(page, "backoffice-categories")

    # A collection: created, products found and added, and one moved up with the keyboard alone.
    page.goto(f"{base}/products/collections")
    page.fill("#title", "Night routine")
    page.get_by_label("Show it on the storefront").check()
    page.get_by_role("button", name="Add collection").click()
    page.wait_for_url(f"{base}/products/collections/*?notice=created")
    collection_url = page.url.split("?", 1)[0]
    for typed, title in (("balm", "Calendula night balm"), ("rosehip", "Rosehip face oil")):
        page.fill("#q", typed)
        page.get_by_role("button", name="Find").click()
        page.get_by_role("button", name=f"Add {title}").click()
        page.wait_for_url(f"{collection_url}?notice=added#p-*")
    order = page.locator("#collection-order > li > a")
    assert order.all_inner_texts() == ["Calendula night balm", "Rosehip face oil"]
    page.get_by_role("button", name="Move Rosehip face oil up").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{collection_url}?notice=saved#p-*")
    assert order.all_inner_texts() == ["Rosehip face oil", "Calendula night balm"]
    page.keyboard.press("Tab")  # focus continues from the moved row
    focused = page.evaluate("document.activeElement.closest('li') && document.activeElement.closest('li').id")
    assert focused == page.url.rsplit("#", 1)[1]
    shot(page, "backoffice-collection")
    slug = page.request.get(f"{base}/api/collections/{collection_url.rsplit('/', 1)[1]}").json()["slug"]
    listed = page.request.get(f"{base}/api/storefront/products?collection={slug}").json()
    assert [p["title"] for p in listed["items"]] == ["Rosehip face oil", "Calendula night balm"]
    assert "/media/" in listed["items"][1]["image"]["url"]  # the storefront's card shows the upload
    assert violations == []


def test_a_viewer_sees_the_same_pages_with_no_control_and_a_forged_post_is_refused(shop, chromium, stack):
    gateway, project, base = shop["gateway"], shop["project"], shop["base"]
    create_user(stack, VIEWER, "admin-viewer-pass-1")
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{gateway}/backoffice/sso?project={project}")
        submitted(page, {"email": VIEWER, "password": "admin-viewer-pass-1"}, f"{base}/**", button="Sign in")
        assert page.locator("#role").inner_text() == "viewer"
        page.goto(f"{base}/products")
        assert page.get_by_role("link", name="Add product").count() == 0
        page.get_by_role("link", name="Calendula night balm").click()
        assert "your role cannot change it" in page.inner_text("main")
        assert page.get_by_role("button", name="Save").count() == 0
        assert page.get_by_role("button", name="Adjust stock").count() == 0
        assert page.locator("#title").get_attribute("readonly") is not None
        assert page.locator("#images img").count() == 2 and page.locator("#image_file").count() == 0
        assert page.get_by_role("button", name="Remove image 1").count() == 0
        page.goto(f"{base}/products/collections")
        page.get_by_role("link", name="Night routine").click()
        assert page.locator("#collection-order li").count() == 2
        assert page.locator("main form").count() == 0  # no move, take out, add, rename or delete
        page.goto(f"{base}/orders")
        page.locator("table a").first.click()
        assert page.locator(".pagehead form").count() == 0  # no status action
        assert page.get_by_role("button", name="Save tracking").count() == 0
        # A forged form post: refused in words, nothing changed.
        target = f"{base}/products/new"
        forged = page.request.post(target, form={"title": "Forged", "price": "1.00"})
        assert forged.status == 403 and forged.headers["content-type"].startswith("text/html")
        assert "Not sent" in forged.text() or "Not allowed" in forged.text()
        listed = page.request.get(f"{base}/api/products?q=forged").json()
        assert listed["items"] == []
        page.goto(f"{base}/settings/staff")
        assert "Your role (viewer) cannot do this" in page.inner_text("main")
    finally:
        context.close()


def test_the_owner_edits_customers_discounts_shipping_and_posts_and_connects_the_search_console(shop):
    page, base = shop["page"], shop["base"]
    page.set_viewport_size({"width": 1280, "height": 900})
    violations = csp_violations(page)

    # A customer added with an address, then edited; a mistake is said beside its field.
    adding(page, f"{base}/customers", "Add customer")
    lea = {"customer_email": "lea@example", "first_name": "Léa", "last_name": "Martin"}
    home = {"addr0_line1": "12 quai des Tanneurs", "addr0_postal_code": "67000", "addr0_city": "Strasbourg"}
    submitted(page, {**lea, **home, "addr0_country": "fr"})
    assert page.locator("#customer_email-error").is_visible()
    submitted(page, {"customer_email": "lea@example.com"}, f"{base}/customers/*?notice=created")
    assert "12 quai des Tanneurs" in page.inner_text("main")
    page.get_by_role("link", name="Edit customer").click()
    page.fill("#last_name", "Martin-Weber")
    page.check("#accepts_marketing")
    shot(page, "backoffice-customer-form")
    submitted(page, {}, f"{base}/customers/*?notice=saved")
    assert page.locator("h1").inner_text() == "Léa Martin-Weber"
    assert "Accepts email" in page.inner_text("main")

    # A discount code created, then edited: an amount off, a minimum order and an end date.
    adding(page, f"{base}/discounts", "Create discount")
    page.select_option("#kind", "percent")
    submitted(page, {"code": "welcome10", "value": "10"}, f"{base}/discounts/*?notice=created")
    assert page.locator("h1").inner_text() == "WELCOME10"
    page.select_option("#kind", "fixed")
    submitted(
        page,
        {"value": "5,50", "min_subtotal": "30", "ends_at": "2099-12-31T23:59"},
        f"{base}/discounts/*?notice=saved",
    )
    assert page.locator("#value").input_value() == "5.50"
    assert "Live" in page.inner_text("#figures")
    shot(page, "backoffice-discount")
    page.goto(f"{base}/discounts")
    assert "€5.50 off over €30.00" in page.inner_text("table")

    # A shipping zone with a method, the method's price then changed.
    adding(page, f"{base}/settings/shipping", "Add zone")
    submitted(page, {"name": "France", "countries": "fr"}, f"{base}/settings/shipping/zones/*?notice=created")
    adding(page, f"{base}/settings/shipping", "Add method")
    submitted(page, {"name": "Colissimo home", "price": "4.90", "min_days": "3", "max_days": "2"})
    assert "at least" in page.inner_text("#max_days-error")
    submitted(page, {"max_days": "4"}, f"{base}/settings/shipping/methods/*?notice=created")
    submitted(page, {"price": "5.90"}, f"{base}/settings/shipping/methods/*?notice=saved")
    page.goto(f"{base}/settings/shipping")
    listed = page.inner_text("main")
    assert "Colissimo home" in listed and "€5.90" in listed and "3\u20134 days" in listed
    shot(page, "backoffice-shipping")

    # A post written, then published from its page.
    adding(page, f"{base}/content", "Write a post")
    post = {"title": "Caring for dry skin in winter", "excerpt": "Five habits for the cold months."}
    text = {"body": "Cold air dries the skin.\n\nA balm at night helps.", "tags": "winter, skin"}
    submitted(
        page, {**post, **text, "seo_title": "Dry skin in winter"}, f"{base}/content/posts/*?notice=created"
    )
    assert page.locator("#slug").input_value() == "caring-for-dry-skin-in-winter"
    page.get_by_role("button", name="Publish now").click()
    page.wait_for_url(f"{base}/content/posts/*?notice=saved")
    assert "Published" in page.inner_text("#publishing")
    shot(page, "backoffice-post")

    # Google Search Console connected through the provider's consent page, back on the Integrations tab.
    page.goto(f"{base}/settings/integrations")
    page.get_by_role("button", name="Connect Google Search Console").click()
    page.wait_for_url(f"{base}/settings/integrations?gsc=*")
    assert "Google Search Console is connected." in page.inner_text("#search-console"), page.url
    assert page.get_by_role("button", name="Disconnect").is_visible()
    shot(page, "backoffice-integrations")

    # Stripe connected, then its webhook signing secret replaced beside it: shown as set, never shown back.
    page.goto(f"{base}/settings/payments")
    page.get_by_role("button", name="Connect Stripe").click()
    page.locator("#allow").click()  # the provider's own consent page
    page.wait_for_url(f"{base}/settings/payments?card=*")
    # Connecting registered the store's webhook with Stripe and kept its secret; it can be replaced.
    assert page.inner_text("#card-secret-state").startswith("Set"), page.url
    assert page.locator("#webhook_secret").input_value() == ""
    secret = "whsec_" + "b4ckoff1ce" * 3
    submitted(
        page, {"webhook_secret": secret}, f"{base}/settings/payments/providers/*?notice=saved", "Save secret"
    )
    page.goto(f"{base}/settings/payments")
    assert "Set" in page.inner_text("#card-secret-state") and secret not in page.content()
    shot(page, "backoffice-payments")
    assert violations == []


@pytest.mark.parametrize("width", [1280, 375])
def test_every_page_of_the_navigation_is_html_with_its_csp_and_no_sideways_scroll(shop, chromium, width):
    page = shop["page"]
    page.set_viewport_size({"width": width, "height": 800})
    violations = csp_violations(page)
    page.goto(f"{shop['base']}/")
    hrefs = page.eval_on_selector_all("#side a", "links => links.map(a => a.getAttribute('href'))")
    assert [page.locator("#side a").nth(i).inner_text() for i in range(len(hrefs))] == list(NAV)
    extra = [
        "/products/new",
        "/products/categories",
        "/products/collections",
        "/products/attributes",
        "/products/attributes/new",
        "/orders/new",
        "/settings/locations",
        "/settings/locations/new",
        "/content/categories",
        "/settings/staff",
        "/settings/payments",
        "/settings/shipping",
        "/settings/shipping/zones/new",
        "/settings/shipping/methods/new",
        "/settings/shipping/carriers/new",
        "/settings/payments/providers/new",
        "/settings/integrations",
        "/settings/integrations/new",
        "/customers/new",
        "/discounts/new",
        "/content/posts/new",
        "/search?q=balm",
        "/no-such-page",
    ]
    for href in [*hrefs, *(f"/shops/{shop['project']}{path}" for path in extra)]:
        answer = page.goto(f"{shop['gateway']}{href}")
        assert answer is not None
        assert answer.headers["content-type"].startswith("text/html"), href
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, href
        assert not page.inner_text("body").lstrip().startswith("{"), href
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), (href, width)
    if width == 375:
        page.goto(f"{shop['base']}/")
        assert page.locator("#side").is_hidden()
        page.get_by_role("button", name="Menu").click()
        assert page.locator("#side").get_by_role("link", name="Orders").is_visible()
        shot(page, "backoffice-home-375")
        page.goto(f"{shop['base']}/products")
        shot(page, "backoffice-products-375")
        page.locator("table a").first.click()
        shot(page, "backoffice-product-375")
        page.goto(f"{shop['base']}/products/collections")
        page.locator("#collection-list a").first.click()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        shot(page, "backoffice-collection-375")
        page.goto(f"{shop['base']}/discounts")
        page.locator("table button", has_text="Delete").first.click()  # asks first, on a page of its own
        page.get_by_label("I understand this cannot be undone").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        shot(page, "backoffice-delete-asks-375")
        page.get_by_role("link", name="Keep it").click()
        page.locator("table a").first.click()
        shot(page, "backoffice-discount-375")
        page.goto(f"{shop['base']}/settings/shipping")
        page.locator("#main section a").first.click()
        shot(page, "backoffice-shipping-zone-375")
    assert violations == []
    page.set_viewport_size({"width": 1280, "height": 900})
