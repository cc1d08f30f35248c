"""The admin's record forms against the real database (admin/editing.py): customers, discount codes and
blog posts written and changed by an editor, and an admin's shipping zones, methods and carriers; each error
beside its field, and a forged post of a role too low refused by the server with nothing written."""

from __future__ import annotations

import re

from adminhelpers import error_beside, forms, get, own_token, post, refused_by_role, submit, text

from svc_backoffice.domain import blog, commerce, shipping
from svc_backoffice.domain.models.commerce import CouponCreate, CustomerCreate
from svc_backoffice.domain.models.content import BlogPostCreate

# -- customers -------------------------------------------------------------------------------------------------
CUSTOMER = {
    "customer_email": "ana@example.com",
    "first_name": "Ana",
    "last_name": "Lima",
    "phone": "+33 6 12 34 56 78",
    "accepts_marketing": "on",
    "note": "Prefers mornings",
    "addr0_line1": "3 rue Neuve",
    "addr0_city": "Lyon",
    "addr0_postal_code": "69001",
    "addr0_country": "fr",
}


def test_an_editor_adds_a_customer_with_an_address_then_edits_them(as_role, db):
    editor = as_role("editor")
    assert "Add customer" in text(get(editor, "/customers"))
    created = submit(editor, "/customers/new", "/customers/new", CUSTOMER)
    assert created.status == 303
    customer = commerce.list_customers(db, _customers())["items"][0]
    assert created.location == f"/customers/{customer['id']}?notice=created"
    stored = commerce.get_customer(db, customer["id"])
    assert (stored["phone"], stored["accepts_marketing"], stored["note"]) == (
        "+33 6 12 34 56 78",
        True,
        "Prefers mornings",
    )
    assert stored["addresses"][0] | {} == {
        "name": "",
        "line1": "3 rue Neuve",
        "line2": "",
        "city": "Lyon",
        "postal_code": "69001",
        "region": "",
        "country": "FR",
        "phone": None,
    }
    page = text(get(editor, f"/customers/{customer['id']}"))
    assert "Ana Lima" in page and "3 rue Neuve" in page and "Edit customer" in page
    path = f"/customers/{customer['id']}/edit"
    form_page = get(editor, path)
    assert 'value="3 rue Neuve"' in form_page.body and "Add an address" in text(form_page)
    # Unticked, the marketing box sends nothing but its hidden twin: consent is withdrawn.
    changed = {**CUSTOMER, "first_name": "Anna", "accepts_marketing": "", "addr1_line1": "9 Main St"}
    changed |= {"addr1_city": "Leeds", "addr1_country": "GB"}
    assert submit(editor, path, path, changed).status == 303
    stored = commerce.get_customer(db, customer["id"])
    assert (stored["first_name"], stored["accepts_marketing"]) == ("Anna", False)
    assert [a["city"] for a in stored["addresses"]] == ["Lyon", "Leeds"]
    # A post of the contact alone leaves the addresses; emptying an address's boxes removes it.
    assert post(editor, path, {"phone": "+44 20 7946 0000"}, csrf=own_token(editor)).status == 303
    assert len(commerce.get_customer(db, customer["id"])["addresses"]) == 2
    emptied = {**changed, **{k: "" for k in changed if k.startswith("addr0_")}}
    assert submit(editor, path, path, emptied).status == 303
    assert [a["city"] for a in commerce.get_customer(db, customer["id"])["addresses"]] == ["Leeds"]


def _customers():
    from svc_backoffice.domain.models.commerce import CustomerListQuery

    return CustomerListQuery.model_validate({})


def test_customer_errors_are_beside_their_fields(as_role, db):
    editor = as_role("editor")
    commerce.create_customer(db, CustomerCreate(email="taken@example.com"))
    bad = submit(
        editor,
        "/customers/new",
        "/customers/new",
        {
            **CUSTOMER,
            "customer_email": "not-an-email",
            "phone": "call me",
            "addr0_city": "",
            "addr0_country": "France",
        },
    )
    assert bad.status == 400 and "Check the fields marked below." in text(bad)
    for name in ("customer_email", "phone", "addr0_city", "addr0_country"):
        assert error_beside(bad, name)
    assert 'value="3 rue Neuve"' in bad.body  # what was typed stays
    twice = submit(
        editor, "/customers/new", "/customers/new", {**CUSTOMER, "customer_email": "taken@example.com"}
    )
    assert (
        twice.status == 400
        and error_beside(twice, "customer_email") == "A customer with that email already exists."
    )
    assert commerce.list_customers(db, _customers())["items"][0]["email"] == "taken@example.com"
    assert len(commerce.list_customers(db, _customers())["items"]) == 1


def test_a_viewer_reads_a_customer_and_a_forged_edit_is_refused(as_role, db):
    customer = commerce.create_customer(db, CustomerCreate(email="bob@example.com", first_name="Bob"))
    viewer = as_role("viewer")
    assert "Edit customer" not in text(get(viewer, f"/customers/{customer['id']}"))
    assert "Add customer" not in text(get(viewer, "/customers"))
    path = f"/customers/{customer['id']}/edit"
    page = get(viewer, path)
    assert (
        page.status == 200
        and forms(page) == ["/auth/sign-out"]
        and "your role cannot change it" in text(page)
    )
    forged = post(viewer, path, {**CUSTOMER, "first_name": "Hacked"}, csrf=own_token(viewer))
    assert refused_by_role(forged, "viewer")
    assert refused_by_role(post(viewer, "/customers/new", CUSTOMER, csrf=own_token(viewer)), "viewer")
    assert commerce.get_customer(db, customer["id"])["first_name"] == "Bob"
    assert len(commerce.list_customers(db, _customers())["items"]) == 1


# -- discount codes --------------------------------------------------------------------------------------------
def test_an_editor_edits_a_discount_code_with_its_limits_and_dates(as_role, db):
    coupon = commerce.create_coupon(db, CouponCreate(code="SPRING10", kind="percent", value=10))
    editor = as_role("editor")
    path = f"/discounts/{coupon['id']}"
    assert f'href="{path}"' in get(editor, "/discounts").body
    assert get(editor, f"/coupons/{coupon['id']}").location == path  # the command palette's link
    page = get(editor, path)
    assert 'value="10"' in page.body and "Figures" in text(page) and "Live" in text(page)
    fields = {
        "code": "spring15",
        "kind": "fixed",
        "value": "7,50",
        "active": "on",
        "min_subtotal": "40",
        "usage_limit": "100",
        "starts_at": "2026-03-01T00:00",
        "ends_at": "2099-03-31T23:59",
    }
    assert submit(editor, path, path, fields).status == 303
    stored = commerce.get_coupon(db, coupon["id"])
    assert (stored["code"], stored["kind"], stored["value"], stored["min_subtotal_cents"]) == (
        "SPRING15",
        "fixed",
        750,
        4000,
    )
    assert stored["usage_limit"] == 100 and stored["ends_at"].year == 2099
    assert stored["starts_at"].isoformat() == "2026-03-01T00:00:00+00:00"  # the store's zone is UTC
    shown = get(editor, path)
    assert 'value="7.50"' in shown.body and 'value="2099-03-31T23:59"' in shown.body
    assert "0 of 100 (100 left)" in text(shown)
    # Turned off and without limits: the list says it is not live.
    off = {**fields, "active": "", "usage_limit": "", "starts_at": "", "ends_at": ""}
    assert submit(editor, path, path, off).status == 303
    stored = commerce.get_coupon(db, coupon["id"])
    assert (stored["active"], stored["usage_limit"], stored["ends_at"]) == (False, None, None)
    assert "Not live" in text(get(editor, "/discounts"))


def test_discount_errors_are_beside_their_fields(as_role, db):
    coupon = commerce.create_coupon(db, CouponCreate(code="KEEP", kind="percent", value=10))
    commerce.create_coupon(db, CouponCreate(code="TAKEN", kind="free_shipping"))
    editor = as_role("editor")
    path = f"/discounts/{coupon['id']}"
    base = {"code": "KEEP", "kind": "percent", "value": "10", "active": "on", "min_subtotal": "0"}
    backwards = submit(
        editor, path, path, {**base, "starts_at": "2030-01-02T00:00", "ends_at": "2030-01-01T00:00"}
    )
    assert backwards.status == 400 and "after" in error_beside(backwards, "ends_at")
    assert "1 to 100" in error_beside(submit(editor, path, path, {**base, "value": "150"}), "value")
    assert error_beside(submit(editor, path, path, {**base, "kind": "fixed", "value": "five"}), "value") == (
        "Enter an amount like 19.50."
    )
    assert error_beside(submit(editor, path, path, {**base, "usage_limit": "0"}), "usage_limit")
    assert error_beside(submit(editor, path, path, {**base, "ends_at": "next week"}), "ends_at").startswith(
        "Enter a date"
    )
    assert "already exists" in error_beside(submit(editor, path, path, {**base, "code": "taken"}), "code")
    assert commerce.get_coupon(db, coupon["id"])["code"] == "KEEP"


def test_a_viewer_cannot_edit_or_delete_a_discount_code(as_role, db):
    coupon = commerce.create_coupon(db, CouponCreate(code="KEEP", kind="percent", value=10))
    viewer = as_role("viewer")
    path = f"/discounts/{coupon['id']}"
    page = get(viewer, path)
    assert page.status == 200 and forms(page) == ["/auth/sign-out"] and "Delete" not in text(page)
    token = own_token(viewer)
    assert refused_by_role(
        post(viewer, path, {"code": "MINE", "kind": "percent", "value": "90"}, csrf=token), "viewer"
    )
    assert refused_by_role(post(viewer, f"{path}/delete", {}, csrf=token), "viewer")
    assert commerce.get_coupon(db, coupon["id"])["code"] == "KEEP"


# -- posts -----------------------------------------------------------------------------------------------------
def test_an_editor_writes_a_post_then_edits_its_text_and_listing(as_role, db):
    category = blog.create_category(db, _category("Care"))
    editor = as_role("editor")
    written = submit(
        editor,
        "/content/posts/new",
        "/content/posts/new",
        {
            "title": "Autumn care",
            "body": "First paragraph.",
            "tags": "autumn, skin",
            "category_id": str(category["id"]),
        },
    )
    assert written.status == 303
    post_id = blog.list_posts(db, _posts())["items"][0]["id"]
    path = f"/content/posts/{post_id}"
    assert written.location == f"{path}?notice=created"
    stored = blog.get_post(db, post_id)
    assert (stored["slug"], stored["tags"], stored["body"], stored["status"]) == (
        "autumn-care",
        ["autumn", "skin"],
        "First paragraph.",
        "draft",
    )
    page = get(editor, path)
    assert "First paragraph." in page.body and "Publish now" in text(page)
    fields = {
        "title": "Caring in autumn",
        "slug": "caring-in-autumn",
        "excerpt": "Five habits",
        "body": "New text.\n\nSecond paragraph.",
        "category_id": "",
        "tags": "autumn",
        "cover_image": "https://cdn.example/leaf.jpg",
        "seo_title": "Autumn skin care",
        "seo_description": "Five habits for the cold months.",
    }
    assert submit(editor, path, path, fields).status == 303
    stored = blog.get_post(db, post_id)
    assert (stored["title"], stored["slug"], stored["category_id"], stored["seo_title"]) == (
        "Caring in autumn",
        "caring-in-autumn",
        None,
        "Autumn skin care",
    )
    assert stored["body"] == "New text.\n\nSecond paragraph." and stored["cover_image"].endswith("leaf.jpg")
    # An empty address keeps the stored one.
    assert submit(editor, path, path, {**fields, "slug": ""}).status == 303
    assert blog.get_post(db, post_id)["slug"] == "caring-in-autumn"
    published = submit(editor, path, f"{path}/publish", {})
    assert published.location == f"{path}?notice=saved" and "Published" in text(get(editor, path))
    assert "Caring in autumn" in text(get(editor, "/content?status=published"))


def _category(name: str):
    from svc_backoffice.domain.models.content import BlogCategoryCreate

    return BlogCategoryCreate(name=name)


def _posts():
    from svc_backoffice.domain.models.content import BlogPostListQuery

    return BlogPostListQuery.model_validate({})


def test_post_errors_are_beside_their_fields(as_role, db, staff):
    blog.create_post(db, BlogPostCreate(title="Taken", slug="taken"), staff["owner"]["id"])
    mine = blog.create_post(db, BlogPostCreate(title="Mine"), staff["owner"]["id"])
    editor = as_role("editor")
    path = f"/content/posts/{mine['id']}"
    bad = submit(editor, path, path, {"title": "", "slug": "Not A Slug", "seo_title": "x" * 71})
    assert bad.status == 400
    for name in ("title", "slug", "seo_title"):
        assert error_beside(bad, name)
    assert "already exists" in error_beside(
        submit(editor, path, path, {"title": "Mine", "slug": "taken"}), "slug"
    )
    past = submit(editor, path, f"{path}/schedule", {"publish_at": "2001-01-01T09:00"})
    assert past.status == 400 and "in the future" in text(past)
    assert blog.get_post(db, mine["id"])["slug"] == "mine"


def test_a_viewer_reads_a_post_and_a_forged_edit_is_refused(as_role, db, staff):
    mine = blog.create_post(db, BlogPostCreate(title="Mine", body="Text"), staff["owner"]["id"])
    viewer = as_role("viewer")
    path = f"/content/posts/{mine['id']}"
    page = get(viewer, path)
    assert page.status == 200 and forms(page) == ["/auth/sign-out"] and "Publish now" not in text(page)
    assert "Write a post" not in text(get(viewer, "/content"))
    token = own_token(viewer)
    assert refused_by_role(post(viewer, path, {"title": "Hacked"}, csrf=token), "viewer")
    assert refused_by_role(post(viewer, f"{path}/publish", {}, csrf=token), "viewer")
    assert blog.get_post(db, mine["id"])["title"] == "Mine"


# -- shipping --------------------------------------------------------------------------------------------------
def test_an_admin_sets_up_a_zone_with_a_method_and_a_carrier(as_role, db):
    admin = as_role("admin")
    home = "/settings/shipping"
    assert "Add zone" in text(get(admin, home))
    zone = submit(
        admin,
        f"{home}/zones/new",
        f"{home}/zones/new",
        {"name": "Europe", "countries": "fr, de", "position": ""},
    )
    assert zone.status == 303
    [stored_zone] = shipping.list_zones(db)
    assert (stored_zone["countries"], stored_zone["position"]) == (["FR", "DE"], 0)
    carrier = submit(
        admin,
        f"{home}/carriers/new",
        f"{home}/carriers/new",
        {"name": "Colissimo", "code": "colissimo", "tracking_url": "https://track.example/", "active": "on"},
    )
    assert carrier.status == 303
    [stored_carrier] = shipping.list_carriers(db)
    new_method = get(admin, f"{home}/methods/new?zone_id={stored_zone['id']}")
    assert re.search(rf'<option value="{stored_zone["id"]}" selected>Europe</option>', new_method.body)
    method = {
        "name": "Standard",
        "zone_id": str(stored_zone["id"]),
        "kind": "flat",
        "carrier_id": str(stored_carrier["id"]),
        "price": "4.90",
        "free_over": "60",
        "min_days": "2",
        "max_days": "4",
        "position": "",
        "active": "on",
    }
    assert submit(admin, f"{home}/methods/new", f"{home}/methods/new", method).status == 303
    [stored_method] = shipping.list_methods(db)
    assert (stored_method["price_cents"], stored_method["free_over_cents"], stored_method["carrier_id"]) == (
        490,
        6000,
        stored_carrier["id"],
    )
    page = text(get(admin, home))
    assert "Europe FR, DE" in page and "Standard" in page and "Colissimo" in page and "2\u20134 days" in page
    assert "€4.90" in page and "free over €60.00" in page
    # Changed, then taken off checkout, then deleted.
    path = f"{home}/methods/{stored_method['id']}"
    assert (
        submit(admin, path, path, {**method, "price": "5.50", "carrier_id": "", "active": ""}).status == 303
    )
    stored_method = shipping.get_method(db, str(stored_method["id"]))
    assert (stored_method["price_cents"], stored_method["carrier_id"], stored_method["active"]) == (
        550,
        None,
        False,
    )
    assert "Not offered" in text(get(admin, home))
    assert submit(admin, path, f"{path}/delete", {"understood": "on"}).location == f"{home}?notice=removed"
    assert shipping.list_methods(db) == []


def test_shipping_errors_are_beside_their_fields(as_role, db):
    from svc_backoffice.domain.models.commerce import ShippingZoneCreate

    zone = shipping.create_zone(db, ShippingZoneCreate(name="Europe"))
    admin = as_role("admin")
    home = "/settings/shipping"
    method = {"name": "Standard", "zone_id": str(zone["id"]), "kind": "flat", "price": "4.90", "active": "on"}
    days = submit(
        admin, f"{home}/methods/new", f"{home}/methods/new", {**method, "min_days": "5", "max_days": "2"}
    )
    assert days.status == 400 and "at least" in error_beside(days, "max_days")
    free = submit(admin, f"{home}/methods/new", f"{home}/methods/new", {**method, "kind": "free"})
    assert "price_cents 0" in error_beside(free, "price")
    assert error_beside(
        submit(admin, f"{home}/methods/new", f"{home}/methods/new", {**method, "price": "4.9.0"}), "price"
    )
    zone_twice = submit(
        admin, f"{home}/zones/new", f"{home}/zones/new", {"name": "Europe", "countries": "France"}
    )
    assert error_beside(zone_twice, "countries")
    assert "already exists" in error_beside(
        submit(admin, f"{home}/zones/new", f"{home}/zones/new", {"name": "Europe"}), "name"
    )
    carrier = submit(
        admin,
        f"{home}/carriers/new",
        f"{home}/carriers/new",
        {"name": "X", "code": "Bad Code", "tracking_url": "http://x"},
    )
    assert error_beside(carrier, "code") and error_beside(carrier, "tracking_url")
    assert shipping.list_methods(db) == [] and shipping.list_carriers(db) == []


def test_an_editor_reads_shipping_and_a_forged_change_is_refused(as_role, db):
    from svc_backoffice.domain.models.commerce import ShippingZoneCreate

    zone = shipping.create_zone(db, ShippingZoneCreate(name="Europe"))
    for role in ("editor", "viewer"):
        member = as_role(role)
        page = get(member, "/settings/shipping")
        assert page.status == 200 and "Add zone" not in text(page) and "Add method" not in text(page)
        edit = get(member, f"/settings/shipping/zones/{zone['id']}")
        assert edit.status == 200 and forms(edit) == ["/auth/sign-out"]
        token = own_token(member)
        path = f"/settings/shipping/zones/{zone['id']}"
        assert refused_by_role(post(member, path, {"name": "Mine"}, csrf=token), role)
        assert refused_by_role(post(member, f"{path}/delete", {}, csrf=token), role)
        assert refused_by_role(
            post(member, "/settings/shipping/carriers/new", {"name": "X"}, csrf=token), role
        )
    assert shipping.get_zone(db, str(zone["id"]))["name"] == "Europe" and shipping.list_carriers(db) == []
