"""Collections: the list and a new collection; a collection's page (its title, description and whether the
storefront shows it; its products in the order the storefront lists them, each moved up or down or taken
out; products found by search and added at the end; the collection deleted); and, on a product's page, the
collections it is in. Every write calls the catalog's domain functions behind the role of the API route
that does the same."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin.forms import FormInvalid, written
from svc_backoffice.admin.pages import current_query, form, form_lists, page, router, see_other
from svc_backoffice.admin.removal import confirmed
from svc_backoffice.core.errors import Conflict, NotFound
from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog
from svc_backoffice.domain.models.catalog import CollectionCreate, CollectionUpdate, ProductListQuery
from svc_backoffice.edge.requests import path_id

REORDER = "POST /api/collections/[id]/products/reorder"
FOUND = 10  # products a search on the collection's page lists


def _list(status: int = 200, **context: Any) -> Response:
    return page(
        "collections.html",
        status,
        nav="products",
        title="Collections",
        collections=catalog.list_collections(database()),
        **context,
    )


@router.page("GET", "/products/collections")
def collection_list() -> Response:
    return _list()


@router.page("POST", "/products/collections", api="POST /api/collections")
def create_collection() -> Response:
    fields = form()
    data = {"title": fields.get("title", "").strip(), "published": fields.get("published") == "on"}
    try:
        created = written(CollectionCreate, data, catalog.create_collection)
    except FormInvalid as exc:
        return _list(400, values=fields, errors=exc.fields)
    except Conflict as exc:
        return _list(409, values=fields, errors={"title": exc.message})
    return see_other(f"/products/collections/{created['id']}", notice="created")


def _search(collection: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The products a search on the page found (those already in the collection left out)."""
    typed = current_query().get("q", "").strip()
    if not typed:
        return "", []
    try:
        query = ProductListQuery.model_validate(
            {"q": typed, "limit": str(FOUND), "sort": "title", "dir": "asc"}
        )
    except ValidationError:
        return typed, []
    inside = {str(p["id"]) for p in collection["products"]}
    return typed, [p for p in catalog.list_products(database(), query)["items"] if str(p["id"]) not in inside]


def _collection(collection_id: str, status: int = 200, **context: Any) -> Response:
    collection = catalog.get_collection(database(), collection_id)
    typed, found = _search(collection)
    values = {
        "title": collection["title"],
        "description": collection["description"],
        "published": "on" if collection["published"] else "",
    }
    return page(
        "collection.html",
        status,
        nav="products",
        title=collection["title"],
        collection=collection,
        typed=typed,
        found=found,
        **{"values": values, **context},
    )


@router.page("GET", "/products/collections/<id>")
def show_collection(id: str) -> Response:
    return _collection(path_id(id))


@router.page("POST", "/products/collections/<id>", api="PATCH /api/collections/[id]")
def update_collection(id: str) -> Response:
    collection_id = path_id(id)
    fields = form()
    data = {
        "title": fields.get("title", "").strip(),
        "description": fields.get("description", ""),
        "published": fields.get("published") == "on",
    }
    try:
        written(CollectionUpdate, data, lambda db, body: catalog.update_collection(db, collection_id, body))
    except FormInvalid as exc:
        return _collection(collection_id, 400, values=fields, errors=exc.fields)
    return see_other(f"/products/collections/{collection_id}", notice="saved")


@router.page("POST", "/products/collections/<id>/delete", api="DELETE /api/collections/[id]")
def delete_collection(id: str) -> Response:
    collection = catalog.get_collection(database(), path_id(id))
    return confirmed(
        lambda: catalog.delete_collection(database(), str(collection["id"])),
        what=f"the collection {collection['title']}",
        back="/products/collections",
        consequence="Its products stay.",
    )


@router.page("POST", "/products/collections/<id>/products", api=REORDER)
def change_products(id: str) -> Response:
    """One product added at the end (`add`), moved `up` or `down`, or taken out (`remove`); the whole order
    stored as the reorder route stores it."""
    collection_id = path_id(id)
    fields = form()
    action, product = fields.get("do", ""), fields.get("product", "")
    ids = [str(p["id"]) for p in catalog.get_collection(database(), collection_id)["products"]]
    try:
        product = path_id(product)
    except NotFound:
        return _collection(collection_id, 400)
    if action == "add" and product not in ids:
        catalog.get_product(database(), product)  # a product deleted meanwhile: the 404 page
        ids.append(product)
    elif action in ("up", "down", "remove") and product in ids:
        at = ids.index(product)
        if action == "remove":
            del ids[at]
        else:
            other = at - 1 if action == "up" else at + 1
            if 0 <= other < len(ids):
                ids[at], ids[other] = ids[other], ids[at]
    with database().transaction():
        catalog.reorder_collection_products(database(), collection_id, ids)
    notice = {"add": "added", "remove": "removed"}.get(action, "saved")
    return see_other(f"/products/collections/{collection_id}", at=f"p-{product}", notice=notice)


@router.page("POST", "/products/<id>/collections", api=REORDER)
def product_collections(id: str) -> Response:
    """The collections a product is in, as its page's checkboxes say."""
    product_id = path_id(id)
    chosen = []
    for value in form_lists().get("collection", []):
        try:
            chosen.append(path_id(value))
        except NotFound:
            continue
    with database().transaction():
        catalog.set_product_collections(database(), product_id, chosen)
    return see_other(f"/products/{product_id}", at="collections", notice="saved")
