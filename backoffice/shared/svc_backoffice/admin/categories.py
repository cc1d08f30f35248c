"""Product categories: the list in display order, a new category, renaming and deleting one (its products
keep no category), and moving one up or down (the order the storefront shows them in), through the
catalog's domain functions behind the API routes' roles."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.forms import FormInvalid, validated
from svc_backoffice.admin.pages import form, page, router, see_other
from svc_backoffice.core.errors import Conflict
from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog
from svc_backoffice.domain.models.catalog import CategoryCreate, CategoryUpdate
from svc_backoffice.edge.requests import path_id


def _categories(status: int = 200, **context: object) -> Response:
    return page(
        "categories.html",
        status,
        nav="products",
        title="Categories",
        categories=catalog.list_categories(database()),
        **{"values": {}, "errors": {}, **context},
    )


@router.page("GET", "/products/categories")
def category_list() -> Response:
    return _categories()


@router.page("POST", "/products/categories", api="POST /api/categories")
def create_category() -> Response:
    fields = form()
    position = len(catalog.list_categories(database()))
    try:
        body = validated(CategoryCreate, {"name": fields.get("name", "").strip(), "position": position})
        with database().transaction():
            catalog.create_category(database(), body)
    except FormInvalid as exc:
        return _categories(400, values=fields, errors=exc.fields)
    except Conflict as exc:
        return _categories(409, values=fields, errors={"name": exc.message})
    return see_other("/products/categories", notice="created")


@router.page("POST", "/products/categories/<id>/move", api="POST /api/categories/reorder")
def move_category(id: str) -> Response:
    """Swap the category with its neighbour above (`up`) or below, and store the whole order."""
    moved = path_id(id)
    ids = [str(c["id"]) for c in catalog.list_categories(database())]
    if moved in ids:
        at = ids.index(moved)
        other = at - 1 if form().get("to") == "up" else at + 1
        if 0 <= other < len(ids):
            ids[at], ids[other] = ids[other], ids[at]
            catalog.reorder_categories(database(), ids)
    return see_other("/products/categories", notice="saved")


@router.page("POST", "/products/categories/<id>", api="PATCH /api/categories/[id]")
def rename_category(id: str) -> Response:
    """A new name (the slug, in the storefront's addresses, stays: links to the category keep working)."""
    category_id = path_id(id)
    fields = form()
    name_field = f"name_{category_id}"  # each row's own field, so an error shows beside the right one
    typed = fields.get(name_field, "")
    try:
        body = validated(CategoryUpdate, {"name": typed.strip()}, {"name": name_field})
        with database().transaction():
            catalog.update_category(database(), category_id, body)
    except FormInvalid as exc:
        return _categories(400, values={name_field: typed}, errors=exc.fields)
    except Conflict as exc:
        return _categories(409, values={name_field: typed}, errors={name_field: exc.message})
    return see_other("/products/categories", notice="saved")


@router.page("POST", "/products/categories/<id>/delete", api="DELETE /api/categories/[id]")
def delete_category(id: str) -> Response:
    catalog.delete_category(database(), path_id(id))
    return see_other("/products/categories", notice="removed")
