"""Products screens against the real database: the list with search, filters, sort and paging on the server;
one form to create and edit (money typed as 19.50 stored as 1950 cents, errors next to their fields); stock
adjustments with their reason; a viewer sees no control and a forged post changes nothing."""

from __future__ import annotations

import re
from html import unescape

import pytest
from adminhelpers import csrf_of, forms, get, post, submit, text

from svc_backoffice.domain import catalog
from svc_backoffice.domain.models.catalog import ProductCreate


def _product(db, title: str, **fields):
    return catalog.create_product(db, ProductCreate(title=title, **fields))


def _id_of(answer) -> str:
    found = re.search(r"/products/([0-9a-f-]{36})", answer.location or "")
    assert found, answer.location
    return found.group(1)


def test_an_editor_creates_a_product_by_filling_the_form(as_role, db):
    editor = as_role("editor")
    fields = {
        "title": "Calendula night balm",
        "description": "Rich balm for dry skin.",
        "price": "19.50",
        "compare_at": "24",
        "sku": "BALM-01",
        "status": "active",
        "type": "physical",
        "tags": "skin, night ,balm",
        "seo_title": "Night balm",
        "weight": "120",
        "low_stock_threshold": "3",
        "track_inventory": "on",
        "image_url_0": "https://cdn.example/balm.jpg",
        "image_alt_0": "A jar of balm",
    }
    answer = submit(editor, "/products/new", "/products/new", fields)
    assert answer.status == 303 and answer.location.endswith("?notice=created")
    product = catalog.get_product(db, _id_of(answer))
    assert (product["price_cents"], product["compare_at_cents"]) == (1950, 2400)
    assert product["tags"] == ["skin", "night", "balm"] and product["weight_grams"] == 120
    assert product["images"] == [{"url": "https://cdn.example/balm.jpg", "alt": "A jar of balm"}]
    page = get(editor, f"/products/{product['id']}?notice=created")
    assert "Created." in text(page) and 'value="19.50"' in page.body


def test_errors_are_shown_next_to_their_fields_and_nothing_is_created(as_role, db):
    answer = submit(
        as_role("editor"),
        "/products/new",
        "/products/new",
        {"title": "", "price": "19.5.0", "weight": "heavy"},
    )
    assert answer.status == 400
    assert re.search(r'id="price-error">Enter an amount like 19.50.<', answer.body)
    assert re.search(r'id="weight-error">Enter a whole number.<', answer.body)
    assert 'value="19.5.0"' in answer.body  # what was typed stays in the form
    title = submit(as_role("editor"), "/products/new", "/products/new", {"title": "", "price": "1"})
    assert re.search(r'id="title-error">String should have at least 1 character.<', title.body)
    assert db.one("SELECT count(*) AS n FROM products")["n"] == 0


def test_a_duplicate_sku_is_refused_in_words(as_role, db):
    _product(db, "First", sku="DUP-1")
    answer = submit(as_role("editor"), "/products/new", "/products/new", {"title": "Second", "sku": "DUP-1"})
    assert answer.status == 400 and "A product with that slug or SKU already exists." in text(answer)


def test_editing_keeps_what_the_form_shows_and_changes_what_is_typed(as_role, db):
    product = _product(db, "Mug", price_cents=1200, tags=["kitchen"])
    editor = as_role("editor")
    page = get(editor, f"/products/{product['id']}")
    assert 'value="12.00"' in page.body and 'value="kitchen"' in page.body
    fields = {"title": "Big mug", "price": "12,5", "status": "active", "type": "physical", "tags": "kitchen"}
    answer = post(editor, f"/products/{product['id']}", fields, csrf=csrf_of(page))
    assert answer.status == 303
    saved = catalog.get_product(db, product["id"])
    assert (saved["title"], saved["price_cents"], saved["status"]) == ("Big mug", 1250, "active")


def test_the_list_searches_filters_sorts_and_pages_on_the_server(as_role, db):
    for n in range(30):
        _product(db, f"Candle {n:02d}", price_cents=100 * n, status="active" if n % 2 else "draft")
    _product(db, "Linen towel", sku="TOWEL-9", status="active")
    viewer = as_role("viewer")
    found = text(get(viewer, "/products?q=linen"))
    assert "Linen towel" in found and "Candle" not in found
    assert "Linen towel" in text(get(viewer, "/products?q=TOWEL-9"))
    drafts = text(get(viewer, "/products?status=draft&sort=price-high"))
    assert "Candle 28" in drafts and "Candle 29" not in drafts
    assert drafts.index("Candle 28") < drafts.index("Candle 26")
    first = get(viewer, "/products?sort=title")
    assert "Next →" in text(first) and "Candle 00" in text(first) and "Linen towel" not in text(first)
    assert "Linen towel" in text(get(viewer, "/products?sort=title&offset=25"))
    following = re.search(r'href="[^"]*(/products\?[^"]*)" rel="next"', first.body)
    assert following, "the first page has no link to the next"
    second = text(get(viewer, unescape(following.group(1))))  # the sort kept, the offset moved on
    assert "Linen towel" in second and "Candle 00" not in second and "← Previous" in second
    assert "No product matches these filters" in text(get(viewer, "/products?q=zzzz"))
    assert "not valid" in text(get(viewer, "/products?status=nonsense"))


def test_stock_filters_list_low_and_out_of_stock_products(as_role, db, staff):
    from svc_backoffice.access import auth
    from svc_backoffice.domain import store
    from svc_backoffice.domain.models.catalog import InventoryAdjust

    low = _product(db, "Low one", low_stock_threshold=5)
    _product(db, "Empty one")
    owner = auth.Staff(staff["owner"]["id"], "owner@shop.example", "owner")
    store.adjust_inventory(db, InventoryAdjust(product_id=low["id"], delta=2, reason="count"), owner)
    viewer = as_role("viewer")
    assert "Low one" in text(get(viewer, "/products?stock=low")) and "Empty one" not in text(
        get(viewer, "/products?stock=low")
    )
    assert "Empty one" in text(get(viewer, "/products?stock=out"))


def test_an_empty_catalog_says_what_to_do_next(as_role, db):
    assert "Add your first product" in text(get(as_role("editor"), "/products"))


def test_stock_is_adjusted_with_its_reason(as_role, db):
    product = _product(db, "Soap")
    editor = as_role("editor")
    path = f"/products/{product['id']}"
    answer = submit(editor, path, f"{path}/stock", {"delta": "+12", "reason": "Delivery received"})
    assert answer.status == 303
    page = text(get(editor, path))
    assert "Total: 12" in page and "+12 Delivery received" in page
    too_many = submit(editor, path, f"{path}/stock", {"delta": "-20", "reason": "Broken"})
    assert too_many.status == 400 and catalog.get_product(db, product["id"])["stock_total"] == 12
    no_reason = submit(editor, path, f"{path}/stock", {"delta": "5", "reason": ""})
    assert no_reason.status == 400 and 'id="reason-error"' in no_reason.body


def test_a_viewer_sees_the_product_without_any_control_and_cannot_post(as_role, db):
    product = _product(db, "Tea", price_cents=500)
    viewer, editor = as_role("viewer"), as_role("editor")
    path = f"/products/{product['id']}"
    page = get(viewer, path)
    assert page.status == 200 and "your role cannot change it" in text(page)
    assert forms(page) == ["/auth/sign-out"]  # sign-out is the page's only form that posts
    assert ">Save<" not in page.body and "Add product" not in text(get(viewer, "/products"))
    # The server refuses what a hidden control would have done, even with a valid token of the viewer.
    refused = post(viewer, path, {"title": "Hacked"}, csrf=csrf_of(get(editor, path)))
    assert refused.status == 403
    own_token = re.search(r'name="csrf" value="([0-9a-f]+)"', get(viewer, "/products/new").body)
    assert own_token is None and get(viewer, "/products/new").status == 403
    assert catalog.get_product(db, product["id"])["title"] == "Tea"


@pytest.mark.parametrize(
    ("csrf", "headers"),
    [
        (None, {}),
        ("0" * 40, {}),
        ("own", {"Origin": "https://evil.example"}),
        ("own", {"Sec-Fetch-Site": "cross-site"}),
    ],
)
def test_a_forged_form_post_is_refused_in_words(as_role, db, csrf, headers):
    product = _product(db, "Tea")
    editor = as_role("editor")
    path = f"/products/{product['id']}"
    token = csrf_of(get(editor, path)) if csrf == "own" else csrf
    answer = post(editor, path, {"title": "Forged"}, csrf=token, **headers)
    assert answer.status == 403 and answer.headers["Content-Type"].startswith("text/html")
    assert catalog.get_product(db, product["id"])["title"] == "Tea"


def test_a_token_of_one_session_is_refused_in_another(as_role, db):
    product = _product(db, "Tea")
    path = f"/products/{product['id']}"
    other = csrf_of(get(as_role("owner2"), path))
    assert post(as_role("editor"), path, {"title": "X"}, csrf=other).status == 403


def test_an_unknown_product_is_a_404_page(as_role, db):
    assert get(as_role("viewer"), "/products/00000000-0000-0000-0000-000000000000").status == 404
    assert get(as_role("viewer"), "/products/not-an-id").status == 404


def test_categories_are_added_and_reordered(as_role, db):
    editor = as_role("editor")
    for name in ("Face", "Body", "Hair"):
        assert submit(editor, "/products/categories", "/products/categories", {"name": name}).status == 303
    names = [c["name"] for c in catalog.list_categories(db)]
    assert names == ["Face", "Body", "Hair"]
    hair = next(c for c in catalog.list_categories(db) if c["name"] == "Hair")
    assert (
        submit(editor, "/products/categories", f"/products/categories/{hair['id']}/move", {"to": "up"}).status
        == 303
    )
    assert [c["name"] for c in catalog.list_categories(db)] == ["Face", "Hair", "Body"]
    page = get(editor, "/products/categories").body  # an editor sees each name in its rename field
    assert page.index('value="Hair"') < page.index('value="Body"')
    empty = submit(editor, "/products/categories", "/products/categories", {"name": ""})
    assert empty.status == 400 and 'id="name-error"' in empty.body


def test_a_viewer_sees_categories_without_moving_them(as_role, db):
    submit(as_role("editor"), "/products/categories", "/products/categories", {"name": "Face"})
    page = get(as_role("viewer"), "/products/categories")
    assert "Face" in text(page) and forms(page) == ["/auth/sign-out"]
    token = csrf_of(get(as_role("editor"), "/products/categories"))
    assert post(as_role("viewer"), "/products/categories", {"name": "X"}, csrf=token).status == 403
