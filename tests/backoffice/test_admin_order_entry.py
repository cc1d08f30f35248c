"""Orders > Create order against the real database: an editor takes an order by hand (lines of catalog
products named by SKU, priced from the catalog, the customer with that email linked, a shipping method, a
discount code, a delivery address) and lands on the order's page; each mistake beside its field, stock too
short or a code that does not apply said in words with nothing written; a viewer has no such control and the
server refuses a forged post."""

from __future__ import annotations

import re

from adminhelpers import error_beside, get, own_token, post, refused_by_role, submit, text

from svc_backoffice.domain import catalog, commerce, shipping
from svc_backoffice.domain.models.catalog import ProductCreate
from svc_backoffice.domain.models.commerce import (
    CouponCreate,
    CustomerCreate,
    OrderListQuery,
    ShippingMethodCreate,
    ShippingZoneCreate,
)

NEW = "/orders/new"


def _catalog(db):
    catalog.create_product(
        db,
        ProductCreate(title="Candle", sku="CAN-1", price_cents=1950, track_inventory=False, status="active"),
    )
    catalog.create_product(
        db, ProductCreate(title="Soap", sku="SOAP-2", price_cents=450, track_inventory=False, status="active")
    )


def _orders(db) -> list[dict]:
    return commerce.list_orders(db, OrderListQuery.model_validate({}))["items"]


def test_an_editor_creates_an_order_by_hand_for_a_customer(as_role, db):
    _catalog(db)
    ana = commerce.create_customer(db, CustomerCreate(email="ana@example.com", first_name="Ana"))
    zone = shipping.create_zone(db, ShippingZoneCreate(name="France", countries=["FR"]))
    method = shipping.create_method(
        db, ShippingMethodCreate(zone_id=zone["id"], name="Post", price_cents=500)
    )
    commerce.create_coupon(db, CouponCreate(code="TEN", kind="percent", value=10))
    editor = as_role("editor")
    assert f'href="{NEW}"' in get(editor, "/orders").body
    customer_page = get(editor, f"/customers/{ana['id']}")
    assert f"{NEW}?email=ana%40example.com" in customer_page.body
    form = get(editor, f"{NEW}?email=ana%40example.com")
    assert 'value="ana@example.com"' in form.body and "Post" in text(form)
    assert '<input id="sku0" name="sku0" type="text" value=""' in form.body and 'maxlength="64"' in form.body
    fields = {
        "email": "ANA@example.com",
        "sku0": "can-1",  # SKUs match as typed, without regard to case
        "qty0": "2",
        "sku1": "SOAP-2",
        "qty1": "1",
        "shipping_method_id": str(method["id"]),
        "coupon_code": "ten",
        "ship_name": "Ana Lima",
        "ship_line1": "3 rue Neuve",
        "ship_postal_code": "69001",
        "ship_city": "Lyon",
        "ship_country": "fr",
    }
    created = submit(editor, NEW, NEW, fields)
    assert created.status == 303, text(created)
    found = re.fullmatch(r"/orders/([0-9a-f-]{36})\?notice=created", created.location)
    assert found, created.location
    order = commerce.get_order(db, found.group(1))
    assert [(i["title"], i["quantity"], i["unit_price_cents"]) for i in order["items"]] == [
        ("Candle", 2, 1950),
        ("Soap", 1, 450),
    ]
    assert (order["subtotal_cents"], order["discount_cents"], order["shipping_cents"]) == (4350, 435, 500)
    assert str(order["customer_id"]) == str(ana["id"]) and order["shipping_address"]["country"] == "FR"
    page = text(get(editor, created.location))
    assert "Candle" in page and "€44.15" in page and "Ana Lima" in page


def test_order_entry_mistakes_are_beside_their_fields_and_nothing_is_written(as_role, db):
    _catalog(db)
    editor = as_role("editor")
    nothing = submit(editor, NEW, NEW, {"email": "ana@example.com"})
    assert nothing.status == 400 and error_beside(nothing, "sku0") == "Name at least one product by its SKU."
    bad = submit(
        editor,
        NEW,
        NEW,
        {
            "email": "not an email",
            "sku0": "NOPE",
            "qty0": "1",
            "sku1": "CAN-1",
            "qty1": "0",
            "ship_city": "Lyon",
        },
    )
    assert bad.status == 400
    assert error_beside(bad, "sku0") == "No product has this SKU."
    assert error_beside(bad, "email") == "Enter an email address, like ana@example.com."
    assert error_beside(bad, "qty1")
    assert error_beside(bad, "ship_line1") and error_beside(bad, "ship_country")
    assert 'value="NOPE"' in bad.body  # what was typed stays
    refused = submit(
        editor, NEW, NEW, {"email": "ana@example.com", "sku0": "CAN-1", "qty0": "1", "coupon_code": "NONE"}
    )
    assert refused.status == 422 and "does not apply" in error_beside(refused, "coupon_code")
    assert _orders(db) == []


def test_an_order_beyond_the_stock_is_refused_in_words(as_role, db):
    catalog.create_product(db, ProductCreate(title="Lamp", sku="LAMP", price_cents=9900, status="active"))
    short = submit(as_role("editor"), NEW, NEW, {"email": "ana@example.com", "sku0": "LAMP", "qty0": "3"})
    assert short.status == 409 and "stock" in text(short).lower()
    assert _orders(db) == []


def test_a_viewer_cannot_create_an_order_even_with_a_forged_post(as_role, db):
    _catalog(db)
    viewer = as_role("viewer")
    assert f'href="{NEW}"' not in get(viewer, "/orders").body
    assert refused_by_role(get(viewer, NEW), "viewer")
    fields = {"email": "ana@example.com", "sku0": "CAN-1", "qty0": "1"}
    assert refused_by_role(post(viewer, NEW, fields, csrf=own_token(viewer)), "viewer")
    assert post(as_role("editor"), NEW, fields, csrf=None).status == 403
    assert _orders(db) == []
