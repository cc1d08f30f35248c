"""Categories (with reorder), attributes and collections (with products/reorder)."""

from __future__ import annotations

import uuid


def test_categories_crud_and_reorder(editor, viewer):
    a = editor.post("/api/categories", {"name": "Shirts"}).json()
    b = editor.post("/api/categories", {"name": "Hats", "parent_id": a["id"]}).json()
    assert (a["slug"], b["parent_id"]) == ("shirts", a["id"])
    assert editor.post("/api/categories", {"name": "Shirts again", "slug": "shirts"}).status == 409
    assert editor.post("/api/categories", {"name": "Bad", "slug": "Not A Slug"}).status == 400
    assert editor.post("/api/categories/reorder", {"ids": [b["id"], a["id"]]}).json() == {"ok": True}
    assert [c["id"] for c in viewer.get("/api/categories").json()["items"]] == [b["id"], a["id"]]
    unknown = editor.post("/api/categories/reorder", {"ids": [a["id"], str(uuid.uuid4())]})
    assert unknown.status == 422
    assert editor.post("/api/categories/reorder", {"ids": [a["id"], a["id"]]}).status == 400
    assert editor.post("/api/categories/reorder", {"ids": []}).status == 400
    # A category cannot be its own parent: the database's check answers 422.
    assert editor.patch(f"/api/categories/{a['id']}", {"parent_id": a["id"]}).status == 422
    assert editor.patch(f"/api/categories/{a['id']}", {"name": "Tops"}).json()["name"] == "Tops"
    assert editor.patch(f"/api/categories/{uuid.uuid4()}", {"name": "x"}).status == 404
    assert editor.delete(f"/api/categories/{a['id']}").json() == {"ok": True}
    assert editor.delete(f"/api/categories/{a['id']}").status == 404


def test_attributes_crud(editor, viewer):
    size = editor.post("/api/attributes", {"name": "Size", "kind": "select", "options": ["S", "M"]})
    assert size.status == 201
    attribute = size.json()
    assert viewer.get("/api/attributes").json()["items"][0]["options"] == ["S", "M"]
    assert editor.post("/api/attributes", {"name": "Size"}).status == 409
    # Options only make sense for select attributes (database check).
    assert editor.post("/api/attributes", {"name": "Colour", "options": ["red"]}).status == 422
    assert editor.patch(f"/api/attributes/{attribute['id']}", {"name": "Fit"}).json()["name"] == "Fit"
    assert editor.patch(f"/api/attributes/{uuid.uuid4()}", {"name": "x"}).status == 404
    assert editor.patch(f"/api/attributes/{attribute['id']}", {"kind": "bogus"}).status == 400
    assert editor.delete(f"/api/attributes/{attribute['id']}").status == 200
    assert editor.delete(f"/api/attributes/{attribute['id']}").status == 404


def test_collections_crud_and_product_order(editor, viewer):
    p1 = editor.post("/api/products", {"title": "One"}).json()["id"]
    p2 = editor.post("/api/products", {"title": "Two"}).json()["id"]
    created = editor.post("/api/collections", {"title": "Summer", "product_ids": [p1, p2]})
    assert created.status == 201
    collection = created.json()
    assert [p["id"] for p in collection["products"]] == [p1, p2]
    cid = collection["id"]
    reordered = editor.post(f"/api/collections/{cid}/products/reorder", {"ids": [p2, p1]})
    assert [p["id"] for p in reordered.json()["products"]] == [p2, p1]
    assert [p["id"] for p in viewer.get(f"/api/collections/{cid}").json()["products"]] == [p2, p1]
    assert viewer.get("/api/collections").json()["items"][0]["product_count"] == 2
    missing = editor.post(f"/api/collections/{uuid.uuid4()}/products/reorder", {"ids": [p1]})
    assert missing.status == 404
    assert editor.post(f"/api/collections/{cid}/products/reorder", {"ids": [str(uuid.uuid4())]}).status == 422
    assert editor.post("/api/collections", {"title": "Summer"}).status == 409
    assert editor.patch(f"/api/collections/{cid}", {"published": True}).json()["published"] is True
    assert editor.patch(f"/api/collections/{uuid.uuid4()}", {"published": True}).status == 404
    assert viewer.get(f"/api/collections/{uuid.uuid4()}").status == 404
    assert editor.delete(f"/api/collections/{cid}").status == 200
    assert editor.delete(f"/api/collections/{cid}").status == 404
