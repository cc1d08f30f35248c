"""Deleting from the admin screens asks first (admin/removal.py): a Delete button leads to a page saying what
goes, with a box "I understand" to tick; nothing is deleted until it is ticked. Each kind of record the API
deletes and the screens had only behind a script's dialog: a discount code, a blog post, an integration, a
payment provider, a shipping zone (its methods with it), a method and a carrier; and a role too low is
refused by the server even with a valid token."""

from __future__ import annotations

import pytest
from adminhelpers import error_beside, forms, get, own_token, post, refused_by_role, submit, text

from svc_backoffice.domain import blog, catalog, commerce, integrations, payments, shipping
from svc_backoffice.domain.models.catalog import ProductCreate, ProductListQuery
from svc_backoffice.domain.models.commerce import (
    CarrierCreate,
    CouponCreate,
    PaymentProviderCreate,
    ShippingMethodCreate,
    ShippingZoneCreate,
)
from svc_backoffice.domain.models.content import BlogPostCreate, IntegrationCreate


def _zone(db):
    return shipping.create_zone(db, ShippingZoneCreate(name="Europe", countries=["FR"]))


# (role that deletes, the record's page, the list it returns to, how to make one, how many are left)
KINDS = {
    "coupon": (
        "editor",
        "/discounts",
        "/discounts",
        lambda db, staff: commerce.create_coupon(db, CouponCreate(code="GONE", kind="percent", value=5)),
        lambda db: len(commerce.list_coupons(db)),
    ),
    "post": (
        "editor",
        "/content/posts",
        "/content",
        lambda db, staff: blog.create_post(
            db, BlogPostCreate(title="Old news", body="x"), staff["owner"]["id"]
        ),
        lambda db: len(blog.list_posts(db, _posts())["items"]),
    ),
    "integration": (
        "admin",
        "/settings/integrations",
        "/settings/integrations",
        lambda db, staff: integrations.create_integration(db, IntegrationCreate(kind="mailer")),
        lambda db: len(integrations.list_integrations(db)),
    ),
    "product": (
        "editor",
        "/products",
        "/products",
        lambda db, staff: catalog.create_product(db, ProductCreate(title="Old candle")),
        lambda db: len(catalog.list_products(db, ProductListQuery.model_validate({}))["items"]),
    ),
    "provider": (
        "admin",
        "/settings/payments/providers",
        "/settings/payments",
        lambda db, staff: payments.create_provider(
            db, PaymentProviderCreate(kind="wallet-a", display_name="Wallet")
        ),
        lambda db: len(payments.list_providers(db)),
    ),
    "zone": (
        "admin",
        "/settings/shipping/zones",
        "/settings/shipping",
        lambda db, staff: _zone(db),
        lambda db: len(shipping.list_zones(db)),
    ),
    "method": (
        "admin",
        "/settings/shipping/methods",
        "/settings/shipping",
        lambda db, staff: shipping.create_method(
            db, ShippingMethodCreate(zone_id=_zone(db)["id"], name="Standard", price_cents=490)
        ),
        lambda db: len(shipping.list_methods(db)),
    ),
    "carrier": (
        "admin",
        "/settings/shipping/carriers",
        "/settings/shipping",
        lambda db, staff: shipping.create_carrier(db, CarrierCreate(name="Colissimo", code="colissimo")),
        lambda db: len(shipping.list_carriers(db)),
    ),
}


def _posts():
    from svc_backoffice.domain.models.content import BlogPostListQuery

    return BlogPostListQuery.model_validate({})


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_delete_asks_first_and_deletes_once_understood(kind, as_role, db, staff):
    role, path, back, make, count = KINDS[kind]
    member = as_role(role)
    record = make(db, staff)
    page_path = f"{path}/{record['id']}"
    delete = f"{page_path}/delete"
    assert delete in forms(get(member, page_path))  # the record's page has its Delete button
    asked = submit(member, page_path, delete, {})  # the button leads to the question, nothing deleted
    assert asked.status == 200 and "This cannot be undone" in text(asked) and count(db) == 1
    assert delete in forms(asked) and 'name="understood"' in asked.body and f'href="{back}"' in asked.body
    unticked = post(member, delete, {"understood": ""}, csrf=own_token(member))
    assert unticked.status == 400 and error_beside(unticked, "understood").startswith("Tick the box")
    assert count(db) == 1
    done = post(member, delete, {"understood": ["", "on"]}, csrf=own_token(member))
    assert done.status == 303 and done.location == f"{back}?notice=removed" and count(db) == 0


def test_a_zone_deleted_takes_its_methods_and_says_so_first(as_role, db):
    admin = as_role("admin")
    zone = _zone(db)
    shipping.create_method(db, ShippingMethodCreate(zone_id=zone["id"], name="Standard", price_cents=490))
    path = f"/settings/shipping/zones/{zone['id']}"
    asked = submit(admin, path, f"{path}/delete", {})
    assert "Delete the shipping zone Europe?" in text(asked)
    assert "Its shipping methods are deleted with it." in text(asked)
    submit(admin, path, f"{path}/delete", {"understood": "on"})
    assert shipping.list_zones(db) == [] and shipping.list_methods(db) == []


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_role_below_the_apis_is_refused_a_delete_even_understood(kind, as_role, db, staff):
    role, path, _back, make, count = KINDS[kind]
    below = {"editor": "viewer", "admin": "editor"}[role]
    member = as_role(below)
    record = make(db, staff)
    page_path = f"{path}/{record['id']}"
    page = get(member, page_path)
    assert f"{page_path}/delete" not in forms(page)
    refused = post(member, f"{page_path}/delete", {"understood": "on"}, csrf=own_token(member))
    assert refused_by_role(refused, below) and count(db) == 1
    forged = post(as_role(role), f"{page_path}/delete", {"understood": "on"}, csrf=None)
    assert forged.status == 403 and count(db) == 1
