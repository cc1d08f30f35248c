"""Stock locations and inventory adjustments."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def product(editor):
    return editor.post("/api/products", {"title": "Mug", "low_stock_threshold": 2}).json()


def test_adjust_writes_the_delta_and_reports_the_new_stock(editor, viewer, product):
    answer = editor.post(
        "/api/inventory/adjust", {"product_id": product["id"], "delta": 5, "reason": "delivery"}
    )
    assert answer.status == 201
    assert (answer.json()["quantity_after"], answer.json()["stock_total"]) == (5, 5)
    answer = editor.post(
        "/api/inventory/adjust", {"product_id": product["id"], "delta": -4, "reason": "sold"}
    )
    assert (answer.json()["quantity_after"], answer.json()["stock_total"]) == (1, 1)
    assert viewer.get(f"/api/products/{product['id']}").json()["stock_state"] == "low"


@pytest.mark.parametrize(
    "body",
    [
        {"delta": 0, "reason": "zero"},
        {"delta": 1, "reason": "x" * 201},
        {"delta": 1, "reason": ""},
        {"delta": 1.5, "reason": "r"},
        {"delta": "1", "reason": "r"},
        {"delta": True, "reason": "r"},
        {"reason": "r"},
        {"delta": 1},
        {"delta": 1, "reason": "   "},
    ],
)
def test_invalid_adjustments_are_400(editor, product, body):
    answer = editor.post("/api/inventory/adjust", {"product_id": product["id"], **body})
    assert answer.status == 400
    assert "fieldErrors" in answer.json()["error"]


def test_reason_of_200_characters_is_accepted(editor, product):
    body = {"product_id": product["id"], "delta": 1, "reason": "x" * 200}
    assert editor.post("/api/inventory/adjust", body).status == 201


def test_overselling_is_refused_by_the_database_with_422(editor, product):
    answer = editor.post(
        "/api/inventory/adjust", {"product_id": product["id"], "delta": -1, "reason": "oops"}
    )
    assert (answer.status, answer.json()) == (
        422,
        {"error": "Not enough stock: the quantity at a location cannot go below zero."},
    )


def test_unknown_product_or_location_is_404(editor, product):
    unknown = str(uuid.uuid4())
    assert (
        editor.post("/api/inventory/adjust", {"product_id": unknown, "delta": 1, "reason": "r"}).status == 404
    )
    body = {"product_id": product["id"], "location_id": unknown, "delta": 1, "reason": "r"}
    assert editor.post("/api/inventory/adjust", body).status == 404


def test_locations_crud(as_role, editor, product):
    admin = as_role("admin")
    assert [loc["code"] for loc in admin.get("/api/inventory/locations").json()["items"]] == ["MAIN"]
    created = admin.post("/api/inventory/locations", {"name": "Shop", "code": "SHOP", "is_default": True})
    assert created.status == 201
    shop = created.json()
    items = admin.get("/api/inventory/locations").json()["items"]
    assert [(loc["code"], loc["is_default"]) for loc in items] == [("SHOP", True), ("MAIN", False)]
    assert admin.post("/api/inventory/locations", {"name": "Shop", "code": "SHOP2"}).status == 409
    assert admin.post("/api/inventory/locations", {"name": "Bad", "code": "bad code"}).status == 400
    patched = admin.patch(f"/api/inventory/locations/{shop['id']}", {"address": "1 Main St"})
    assert patched.json()["address"] == "1 Main St"
    assert admin.patch(f"/api/inventory/locations/{uuid.uuid4()}", {"name": "x"}).status == 404
    # The default location cannot be deleted, nor one holding stock (database rules: 409, in words).
    refused = admin.delete(f"/api/inventory/locations/{shop['id']}")
    assert (refused.status, refused.json()) == (
        409,
        {"error": "The default stock location cannot be deleted."},
    )
    main = next(loc for loc in items if loc["code"] == "MAIN")
    editor.post(
        "/api/inventory/adjust",
        {"product_id": product["id"], "location_id": main["id"], "delta": 1, "reason": "r"},
    )
    in_use = admin.delete(f"/api/inventory/locations/{main['id']}")
    assert (in_use.status, in_use.json()) == (
        409,
        {"error": "This stock location holds stock: move it or deactivate the location instead."},
    )
    spare = admin.post("/api/inventory/locations", {"name": "Spare", "code": "SPARE"}).json()
    assert admin.delete(f"/api/inventory/locations/{spare['id']}").json() == {"ok": True}
    assert admin.delete(f"/api/inventory/locations/{spare['id']}").status == 404
