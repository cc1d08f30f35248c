"""Partial updates (the `Partial` request models): a field left out keeps its stored value, even where the
create model has a default; a field sent keeps the create model's constraints; null is refused where the
field cannot be null; the fields an update must name are still required; and the OpenAPI document says so
(no field required but those, no default)."""

from __future__ import annotations

import json
from pathlib import Path

BACKOFFICE = Path(__file__).resolve().parents[2] / "backoffice"


def test_a_field_left_out_keeps_its_value_even_where_creating_has_a_default(editor):
    created = editor.post(
        "/api/products",
        {
            "title": "Linen shirt",
            "status": "active",
            "type": "digital",
            "price_cents": 4500,
            "tags": ["linen"],
        },
    )
    assert created.status == 201, created.body
    product = created.json()
    answer = editor.patch(f"/api/products/{product['id']}", {"description": "Soft."})
    assert answer.status == 200, answer.body
    changed = answer.json()
    assert changed["description"] == "Soft."
    kept = (
        "title",
        "slug",
        "status",
        "type",
        "price_cents",
        "tags",
        "track_inventory",
        "low_stock_threshold",
    )
    assert {name: changed[name] for name in kept} == {name: product[name] for name in kept}


def test_a_field_sent_keeps_its_constraints_and_null_only_where_allowed(editor):
    product = editor.post("/api/products", {"title": "Mug", "sku": "MUG-1"}).json()
    url = f"/api/products/{product['id']}"
    for body in ({"title": ""}, {"title": None}, {"slug": None}, {"slug": "Not A Slug"}, {"price_cents": -1}):
        answer = editor.patch(url, body)
        assert answer.status == 400, body
        assert list(answer.json()["error"]["fieldErrors"]) == list(body)
    assert editor.patch(url, {"nope": 1}).status == 400
    answer = editor.patch(url, {"sku": None})  # a product may lose its SKU
    assert (answer.status, answer.json()["sku"]) == (200, None)


def test_the_fields_an_update_must_name_are_still_required(as_role):
    answer = as_role("admin").patch("/api/staff", {"role": "viewer"})
    assert (answer.status, answer.json()["error"]["fieldErrors"]) == (400, {"id": ["Field required"]})


def test_the_openapi_document_requires_and_defaults_nothing_in_an_update():
    schemas = json.loads((BACKOFFICE / "openapi.json").read_text())["components"]["schemas"]
    updates = {name: schema for name, schema in schemas.items() if name.endswith("Update")}
    assert len(updates) >= 15
    required = {name: schema.get("required") for name, schema in updates.items() if schema.get("required")}
    assert required == {"BlogCommentUpdate": ["status"], "StaffUpdate": ["id"]}
    defaults = sorted(
        f"{name}.{field}"
        for name, schema in updates.items()
        for field, spec in schema["properties"].items()
        if "default" in spec
    )
    assert defaults == []
