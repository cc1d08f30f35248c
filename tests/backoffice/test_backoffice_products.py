"""Products over the catalog function against PostgreSQL: list filters and clamping, detail with relations,
create/update/delete, and the database's 409/422 answers."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest

DUPLICATE = "A product with that slug or SKU already exists."


def make(editor, **fields):
    answer = editor.post("/api/products", {"title": "Linen shirt", **fields})
    assert answer.status == 201, answer.body
    return answer.json()


def test_create_returns_the_product_with_relations(editor):
    product = make(editor, sku="LS-1", price_cents=4500, tags=["linen"], status="active")
    assert product["slug"] == "linen-shirt"
    assert product["stock_total"] == 0
    assert product["stock_state"] == "out"
    assert product["category"] is None
    assert product["attributes"] == product["collections"] == product["stock"] == []


def test_duplicate_sku_is_409(editor):
    make(editor, sku="DUP-1", slug="one")
    answer = editor.post("/api/products", {"title": "Other", "sku": "dup-1", "slug": "two"})
    assert (answer.status, answer.json()) == (409, {"error": DUPLICATE})


def test_duplicate_slug_on_update_is_409(editor):
    make(editor, slug="taken")
    other = make(editor, slug="free")
    answer = editor.patch(f"/api/products/{other['id']}", {"slug": "taken"})
    assert (answer.status, answer.json()) == (409, {"error": DUPLICATE})


def test_malformed_json_is_400(editor):
    answer = editor.post("/api/products", raw_body="{not json")
    assert (answer.status, answer.json()) == (400, {"error": "Invalid JSON"})


def test_invalid_body_is_400_with_flattened_issues(editor):
    answer = editor.post("/api/products", {"title": "", "price_cents": -1, "surprise": 1})
    assert answer.status == 400
    issues = answer.json()["error"]
    assert set(issues["fieldErrors"]) == {"title", "price_cents", "surprise"}
    assert issues["formErrors"] == []


def test_body_that_is_not_an_object_is_400(editor):
    assert editor.post("/api/products", [1, 2]).status == 400
    assert editor.post("/api/products").status == 400


def test_unknown_category_is_refused_by_the_database_with_422(editor):
    answer = editor.post("/api/products", {"title": "X", "category_id": str(uuid.uuid4())})
    assert (answer.status, answer.json()) == (422, {"error": "category_id: no such category."})


def test_get_by_id_returns_relations_or_404(editor, viewer, db):
    category = editor.post("/api/categories", {"name": "Shirts"}).json()
    attribute = editor.post("/api/attributes", {"name": "Material"}).json()
    product = make(
        editor, category_id=category["id"], attributes=[{"attribute_id": attribute["id"], "value": "linen"}]
    )
    editor.post("/api/collections", {"title": "Summer", "product_ids": [product["id"]]})
    editor.post("/api/inventory/adjust", {"product_id": product["id"], "delta": 7, "reason": "count"})
    answer = viewer.get(f"/api/products/{product['id']}")
    assert answer.status == 200
    got = answer.json()
    assert got["category"]["name"] == "Shirts"
    assert got["attributes"][0]["value"] == "linen"
    assert got["collections"][0]["title"] == "Summer"
    assert got["stock"][0]["quantity"] == 7
    assert got["recent_adjustments"][0]["reason"] == "count"
    assert got["stock_total"] == 7
    for missing in (str(uuid.uuid4()), "not-a-uuid"):
        answer = viewer.get(f"/api/products/{missing}")
        assert (answer.status, answer.json()) == (404, {"error": "Not found"})


def test_detail_costs_two_queries_with_the_gate(editor, viewer, db):
    product = make(editor)
    before = db.queries
    assert viewer.get(f"/api/products/{product['id']}").status == 200
    assert db.queries - before == 2


def test_update_and_delete(editor):
    product = make(editor, sku="U-1")
    answer = editor.patch(f"/api/products/{product['id']}", {"price_cents": 999, "status": "archived"})
    assert answer.status == 200
    assert (answer.json()["price_cents"], answer.json()["status"], answer.json()["sku"]) == (
        999,
        "archived",
        "U-1",
    )
    assert editor.patch(f"/api/products/{uuid.uuid4()}", {"price_cents": 1}).status == 404
    assert editor.patch(f"/api/products/{product['id']}", {"title": None}).status == 400
    assert editor.delete(f"/api/products/{product['id']}").json() == {"ok": True}
    assert editor.delete(f"/api/products/{product['id']}").status == 404


@pytest.mark.parametrize(
    ("params", "limit", "offset"),
    [
        ("limit=0", 1, 0),
        ("limit=101", 100, 0),
        ("limit=-5", 1, 0),
        ("offset=-3", 20, 0),
        ("", 20, 0),
        ("limit=3&offset=2", 3, 2),
        ("limit=+4&offset=0", 4, 0),
    ],
)
def test_list_clamps_limit_and_offset(viewer, editor, params, limit, offset):
    for i in range(4):
        make(editor, slug=f"p-{i}")
    page = viewer.get(f"/api/products?{params}").json()
    assert (page["limit"], page["offset"]) == (limit, offset)
    assert len(page["items"]) == min(limit, 4 - offset)


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ("limit=abc", {"limit": ["Value error, must be a whole number"]}),
        ("offset=1.5", {"offset": ["Value error, must be a whole number"]}),
        (
            "limit=&offset=x",
            {
                "limit": ["Value error, must be a whole number"],
                "offset": ["Value error, must be a whole number"],
            },
        ),
        (
            "sort=password",
            {"sort": ["Input should be 'created_at', 'updated_at', 'title', 'price' or 'stock'"]},
        ),
        ("dir=sideways", {"dir": ["Input should be 'asc' or 'desc'"]}),
    ],
)
def test_a_query_it_cannot_read_is_400_naming_the_parameter_and_allowed_values(viewer, params, errors):
    answer = viewer.get(f"/api/products?{params}")
    assert (answer.status, answer.json()) == (400, {"error": {"formErrors": [], "fieldErrors": errors}})


def test_list_filters_and_sorts(viewer, editor):
    shirts = editor.post("/api/categories", {"name": "Shirts"}).json()["id"]
    a = make(
        editor,
        title="Red linen shirt",
        slug="a",
        sku="SKU-A",
        status="active",
        price_cents=300,
        category_id=shirts,
    )
    b = make(editor, title="Blue cotton shirt", slug="b", status="draft", type="digital", price_cents=100)
    c = make(editor, title="Green hat", slug="c", status="active", price_cents=200, low_stock_threshold=5)
    editor.post("/api/inventory/adjust", {"product_id": c["id"], "delta": 3, "reason": "restock"})
    editor.post("/api/inventory/adjust", {"product_id": b["id"], "delta": 50, "reason": "restock"})

    def ids(query):
        answer = viewer.get(f"/api/products?{query}")
        assert answer.status == 200, answer.body
        return [p["id"] for p in answer.json()["items"]]

    assert ids("status=active&sort=price&dir=asc") == [c["id"], a["id"]]
    assert ids("type=digital") == [b["id"]]
    assert ids(f"category_id={shirts}") == [a["id"]]
    assert ids("out_of_stock=true") == [a["id"]]
    assert ids("low_stock=1") == [c["id"]]
    assert set(ids("q=shirt")) == {a["id"], b["id"]}
    assert ids("q=lin") == [a["id"]]
    assert ids("q=sku-a") == [a["id"]]
    assert ids("sort=title&dir=asc") == [b["id"], c["id"], a["id"]]
    assert ids("sort=stock&dir=desc") == [b["id"], c["id"], a["id"]]
    assert ids("sort=price&dir=desc") == [a["id"], c["id"], b["id"]]
    # Outside the allow-lists sort and dir fall back to created_at desc.
    assert viewer.get("/api/products?status=unknown").status == 400
    assert viewer.get("/api/products?category_id=nope").status == 400


def test_unexpected_failure_is_500_internal_error_with_a_request_id_and_no_detail(viewer, monkeypatch):
    from svc_backoffice.domain import catalog

    def boom(*_args, **_kwargs):
        raise RuntimeError("relation secret_table password=hunter2")

    monkeypatch.setattr(catalog, "list_products", boom)
    answer = viewer.get("/api/products")
    assert answer.status == 500
    assert answer.json()["error"] == "internal error"
    assert answer.json()["request_id"]
    assert "hunter2" not in answer.body and "Traceback" not in answer.body


@pytest.mark.parametrize(
    ("q", "found"),
    [
        ("Mug", {"Mug-2024", "Espresso cup"}),
        ("2024", {"Mug-2024"}),
        ("Mug-2024", {"Mug-2024"}),
        ("mug2024", {"Mug-2024"}),
        ("MUG", {"Mug-2024", "Espresso cup"}),
        ("mug-002", {"Espresso cup"}),
        ("MUG-00", {"Espresso cup"}),
        ("mug00", {"Espresso cup"}),
        ("002", {"Espresso cup"}),
        ("espresso mug", {"Espresso cup"}),
        ("2025", set()),
    ],
)
def test_search_finds_product_codes_by_their_parts_their_whole_and_prefixes(viewer, editor, q, found):
    make(editor, title="Mug-2024", slug="mug-2024")
    make(editor, title="Espresso cup", slug="espresso-cup", sku="MUG-002")
    make(editor, title="Linen shirt", slug="linen", sku="LS-1")
    listed = viewer.get(f"/api/products?q={quote(q)}")
    assert {p["title"] for p in listed.json()["items"]} == found
    searched = viewer.get(f"/api/search?q={quote(q)}").json()["results"]
    assert {r["title"] for r in searched if r["type"] == "product"} == found
