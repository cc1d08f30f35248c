"""Categories renamed and deleted, and collections, against the real database: a collection created, renamed
and published; products found by search and added, moved up and down and taken out, in the order the
storefront then lists them; a product put in collections from its own page; a viewer sees all of it without
a control, and the server refuses a forged post."""

from __future__ import annotations

import re

from adminhelpers import csrf_of, forms, get, own_token, post, submit, text

from svc_backoffice.domain import catalog
from svc_backoffice.domain.models.catalog import CollectionCreate, ProductCreate
from svc_backoffice.storefront import catalog as storefront
from svc_backoffice.storefront.models import ProductsQuery

LIST = "/products/collections"


def _products(db, *titles: str) -> list[dict]:
    return [
        catalog.create_product(db, ProductCreate(title=t, status="active", sku=f"SKU-{t[:3].upper()}"))
        for t in titles
    ]


def _collection(editor, title: str = "Gifts", published: bool = True) -> str:
    answer = submit(editor, LIST, LIST, {"title": title, **({"published": "on"} if published else {})})
    assert answer.status == 303, text(answer)
    found = re.search(r"/products/collections/([0-9a-f-]{36})\?notice=created$", answer.location)
    assert found, answer.location
    return found.group(1)


def _order(db, collection_id: str) -> list[str]:
    return [p["title"] for p in catalog.get_collection(db, collection_id)["products"]]


def test_a_category_is_renamed_and_deleted_its_products_kept(as_role, db):
    editor = as_role("editor")
    submit(editor, "/products/categories", "/products/categories", {"name": "Face"})
    face = catalog.list_categories(db)[0]
    cream = catalog.create_product(db, ProductCreate(title="Cream", category_id=face["id"]))
    path = f"/products/categories/{face['id']}"
    renamed = submit(editor, "/products/categories", path, {f"name_{face['id']}": "Face care"})
    assert renamed.status == 303
    [now] = catalog.list_categories(db)
    assert (now["name"], now["slug"]) == ("Face care", face["slug"])  # the storefront's address stays
    empty = submit(editor, "/products/categories", path, {f"name_{face['id']}": " "})
    assert empty.status == 400 and f'id="name_{face["id"]}-error"' in empty.body
    assert submit(editor, "/products/categories", f"{path}/delete", {"understood": "on"}).status == 303
    assert catalog.list_categories(db) == [] and catalog.get_product(db, cream["id"])["category_id"] is None


def test_a_collection_is_created_renamed_and_its_products_arranged(as_role, db):
    editor = as_role("editor")
    _products(db, "Candle", "Soap", "Towel")
    empty = submit(editor, LIST, LIST, {"title": ""})
    assert empty.status == 400 and 'id="title-error"' in empty.body
    collection_id = _collection(editor)
    page_path = f"{LIST}/{collection_id}"
    found = get(editor, f"{page_path}?q=soap")
    assert found.status == 200 and "Soap" in text(found) and "Candle" not in found.body.split('id="add"')[1]
    change = f"{page_path}/products"
    ids = {p["title"]: str(p["id"]) for p in catalog.list_products(db, _all())["items"]}
    for title in ("Candle", "Soap", "Towel"):
        added = submit(editor, page_path, change, {"do": "add", "product": ids[title]})
        assert added.status == 303 and added.location.endswith(f"notice=added#p-{ids[title]}")
    assert _order(db, collection_id) == ["Candle", "Soap", "Towel"]
    assert submit(editor, page_path, change, {"do": "up", "product": ids["Towel"]}).status == 303
    assert submit(editor, page_path, change, {"do": "up", "product": ids["Towel"]}).status == 303
    assert submit(editor, page_path, change, {"do": "down", "product": ids["Candle"]}).status == 303
    assert _order(db, collection_id) == ["Towel", "Soap", "Candle"]
    assert submit(editor, page_path, change, {"do": "remove", "product": ids["Soap"]}).status == 303
    assert _order(db, collection_id) == ["Towel", "Candle"]
    page = text(get(editor, page_path))
    assert page.index("Towel") < page.index("Candle") and "Move Towel up" not in get(editor, page_path).body
    slug = catalog.get_collection(db, collection_id)["slug"]
    listed = storefront.products(db, ProductsQuery.model_validate({"collection": slug}))
    assert [p["title"] for p in listed["items"]] == ["Towel", "Candle"]
    fields = {"title": "Gifts for her", "description": "Chosen with care.", "published": "on"}
    assert submit(editor, page_path, page_path, fields).status == 303
    assert catalog.get_collection(db, collection_id)["title"] == "Gifts for her"
    asked = submit(editor, page_path, f"{page_path}/delete", {})
    assert "Delete the collection Gifts for her?" in text(asked) and "Its products stay." in text(asked)
    assert submit(editor, page_path, f"{page_path}/delete", {"understood": "on"}).status == 303
    assert catalog.list_collections(db) == [] and len(catalog.list_products(db, _all())["items"]) == 3


def test_a_product_is_put_in_collections_from_its_page(as_role, db):
    editor = as_role("editor")
    [candle] = _products(db, "Candle")
    gifts = catalog.create_collection(db, CollectionCreate(title="Gifts", published=True))
    sale = catalog.create_collection(db, CollectionCreate(title="Sale"))
    path = f"/products/{candle['id']}"
    page = get(editor, path)
    assert "Sale (not on the storefront)" in text(page)
    assert (
        submit(
            editor, path, f"{path}/collections", {"collection": [str(gifts["id"]), str(sale["id"])]}
        ).status
        == 303
    )
    assert [c["title"] for c in catalog.get_product(db, candle["id"])["collections"]] == ["Gifts", "Sale"]
    assert submit(editor, path, f"{path}/collections", {"collection": [str(sale["id"])]}).status == 303
    assert [c["title"] for c in catalog.get_product(db, candle["id"])["collections"]] == ["Sale"]


def test_a_viewer_sees_collections_and_categories_without_a_control_and_cannot_post(as_role, db):
    editor, viewer = as_role("editor"), as_role("viewer")
    [candle] = _products(db, "Candle")
    collection_id = _collection(editor)
    page_path = f"{LIST}/{collection_id}"
    submit(editor, page_path, f"{page_path}/products", {"do": "add", "product": str(candle["id"])})
    submit(editor, "/products/categories", "/products/categories", {"name": "Face"})
    for path in (LIST, page_path, "/products/categories", f"/products/{candle['id']}"):
        page = get(viewer, path)
        assert page.status == 200 and forms(page) == ["/auth/sign-out"], path
    assert "Candle" in text(get(viewer, page_path)) and "Gifts" in text(
        get(viewer, f"/products/{candle['id']}")
    )
    token = own_token(viewer)  # a valid token of the viewer's own session: the role is what refuses
    for action, fields in (
        (LIST, {"title": "Forged"}),
        (f"{page_path}/products", {"do": "remove", "product": str(candle["id"])}),
        (f"{page_path}/delete", {}),
        (f"/products/{candle['id']}/collections", {}),
    ):
        refused = post(viewer, action, fields, csrf=token)
        assert refused.status == 403 and "Your role (viewer) cannot do this" in text(refused), action
    forged = post(editor, f"{page_path}/delete", {}, csrf=None)
    assert forged.status == 403 and _order(db, collection_id) == ["Candle"]
    assert len(catalog.list_collections(db)) == 1
    face = catalog.list_categories(db)[0]
    refused = post(viewer, f"/products/categories/{face['id']}/delete", {}, csrf=token)
    assert refused.status == 403 and len(catalog.list_categories(db)) == 1


def test_an_unknown_collection_is_a_404_page(as_role, db):
    assert get(as_role("viewer"), f"{LIST}/00000000-0000-0000-0000-000000000000").status == 404
    token = csrf_of(get(as_role("editor"), LIST))
    answer = post(
        as_role("editor"),
        f"{LIST}/00000000-0000-0000-0000-000000000000/products",
        {"do": "up", "product": "x"},
        csrf=token,
    )
    assert answer.status == 404 and "Page not found" in text(answer)


def _all():
    from svc_backoffice.domain.models.catalog import ProductListQuery

    return ProductListQuery.model_validate({"limit": "100"})
