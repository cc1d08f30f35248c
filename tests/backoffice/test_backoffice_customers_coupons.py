"""Customers and coupons against PostgreSQL, with coupon redemption figures."""

from __future__ import annotations

import uuid

import pytest


def test_customer_crud_and_search(editor, viewer):
    answer = editor.post(
        "/api/customers",
        {
            "email": "ada@shop.example",
            "first_name": "Ada",
            "last_name": "Lovelace",
            "addresses": [{"line1": "1 Analytical St", "city": "London", "country": "GB"}],
        },
    )
    assert answer.status == 201
    ada = answer.json()
    assert (ada["orders_count"], ada["total_spent_cents"], ada["recent_orders"]) == (0, 0, [])
    dup = editor.post("/api/customers", {"email": "ADA@shop.example"})
    assert (dup.status, dup.json()) == (409, {"error": "A customer with that email already exists."})
    editor.post("/api/customers", {"email": "bob@shop.example", "first_name": "Bob"})
    assert [c["email"] for c in viewer.get("/api/customers?q=lovelace").json()["items"]] == [
        "ada@shop.example"
    ]
    assert len(viewer.get("/api/customers?limit=500").json()["items"]) == 2
    patched = editor.patch(
        f"/api/customers/{ada['id']}", {"phone": "+44 20 7946 0000", "accepts_marketing": True}
    )
    assert (patched.status, patched.json()["accepts_marketing"]) == (200, True)
    assert editor.patch(f"/api/customers/{ada['id']}", {"email": "bob@shop.example"}).status == 409
    assert editor.patch(f"/api/customers/{ada['id']}", {"phone": "call me"}).status == 400
    assert editor.patch(f"/api/customers/{uuid.uuid4()}", {"first_name": "x"}).status == 404
    assert viewer.get(f"/api/customers/{uuid.uuid4()}").status == 404
    order = editor.post(
        "/api/orders",
        {
            "email": "ada@shop.example",
            "customer_id": ada["id"],
            "items": [{"title": "Gear", "quantity": 1, "unit_price_cents": 900}],
        },
    ).json()
    editor.post(f"/api/orders/{order['id']}/transition", {"to": "paid"})
    detail = viewer.get(f"/api/customers/{ada['id']}").json()
    assert (detail["orders_count"], detail["total_spent_cents"]) == (1, 900)
    assert detail["recent_orders"][0]["number"] == order["number"]


@pytest.mark.parametrize(
    "body",
    [
        {"code": "NEG", "kind": "fixed", "value": -100},
        {"code": "NEG", "kind": "fixed", "value": 100, "min_subtotal_cents": -1},
        {
            "code": "DATES",
            "kind": "fixed",
            "value": 100,
            "starts_at": "2030-02-01T00:00:00Z",
            "ends_at": "2030-01-01T00:00:00Z",
        },
        {"code": "PCT", "kind": "percent", "value": 150},
        {"code": "FIX", "kind": "fixed", "value": 0},
        {"code": "lower", "kind": "fixed", "value": 1},
        {"code": "NAIVE", "kind": "fixed", "value": 1, "starts_at": "2030-01-01T00:00:00"},
        {"code": "LIMIT", "kind": "fixed", "value": 1, "usage_limit": 0},
        {"code": "KIND", "kind": "bogo"},
    ],
)
def test_invalid_coupons_are_400(editor, body):
    answer = editor.post("/api/coupons", body)
    assert answer.status == 400
    assert "fieldErrors" in answer.json()["error"]
    assert editor.get("/api/coupons").json()["items"] == []


def test_coupon_crud_and_database_rules(editor, viewer):
    created = editor.post(
        "/api/coupons",
        {
            "code": "SPRING",
            "kind": "percent",
            "value": 15,
            "starts_at": "2030-03-01T00:00:00Z",
            "ends_at": "2030-06-01T00:00:00Z",
        },
    )
    assert created.status == 201
    coupon = created.json()
    dup = editor.post("/api/coupons", {"code": "SPRING", "kind": "free_shipping"})
    assert (dup.status, dup.json()) == (409, {"error": "A coupon with that code already exists."})
    # A PATCH that reverses the stored dates is the database's refusal (422), and changes nothing.
    reversed_dates = editor.patch(f"/api/coupons/{coupon['id']}", {"ends_at": "2030-01-01T00:00:00Z"})
    assert reversed_dates.status == 422
    assert reversed_dates.json() == {"error": "ends_at: must be after starts_at."}
    assert editor.patch(f"/api/coupons/{coupon['id']}", {"kind": "percent", "value": 101}).status == 400
    assert editor.patch(f"/api/coupons/{coupon['id']}", {"value": 250}).status == 422
    assert viewer.get(f"/api/coupons/{coupon['id']}").json()["ends_at"].startswith("2030-06-01")
    assert editor.patch(f"/api/coupons/{coupon['id']}", {"active": False}).json()["active"] is False
    assert editor.patch(f"/api/coupons/{uuid.uuid4()}", {"active": False}).status == 404
    assert viewer.get(f"/api/coupons/{uuid.uuid4()}").status == 404
    assert editor.delete(f"/api/coupons/{coupon['id']}").json() == {"ok": True}
    assert editor.delete(f"/api/coupons/{coupon['id']}").status == 404


def test_coupon_stats_count_redemptions(editor, viewer):
    coupon = editor.post(
        "/api/coupons", {"code": "FIVER", "kind": "fixed", "value": 500, "usage_limit": 3}
    ).json()
    for _ in range(2):
        answer = editor.post(
            "/api/orders",
            {
                "email": "c@shop.example",
                "coupon_code": "FIVER",
                "items": [{"title": "A", "quantity": 1, "unit_price_cents": 2000}],
            },
        )
        assert answer.status == 201
    stats = viewer.get(f"/api/coupons/{coupon['id']}/stats")
    assert stats.status == 200
    figures = stats.json()
    assert (figures["redemptions"], figures["used_count"], figures["remaining"]) == (2, 2, 1)
    assert (figures["discount_total_cents"], figures["revenue_cents"], figures["live"]) == (1000, 3000, True)
    assert viewer.get(f"/api/coupons/{uuid.uuid4()}/stats").status == 404


@pytest.mark.parametrize(
    "email",
    [
        "ann\x01@example.com",
        "ann@exa\x7fmple.com",
        "ann\t@example.com",
        "a" * 65 + "@example.com",
        "ann@" + "d" * 247 + ".com",
        "ann@@example.com",
        "@example.com",
        "ann@example",
    ],
)
def test_a_customer_email_with_control_characters_or_out_of_shape_is_400(editor, email):
    answer = editor.post("/api/customers", {"email": email})
    assert answer.status == 400
    assert list(answer.json()["error"]["fieldErrors"]) == ["email"]


def test_the_longest_valid_email_is_accepted(editor):
    email = "a" * 64 + "@" + "d" * 185 + ".com"
    assert len(email) == 254
    assert editor.post("/api/customers", {"email": email}).status == 201
