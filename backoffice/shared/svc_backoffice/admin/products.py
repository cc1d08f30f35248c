"""Products: the list (search, filters, sort and paging on the server), one form to create and edit, and
stock per location with adjustments and their reason. Every write calls the catalog's and the store's
domain functions, behind the role of the API route that does the same."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin import render
from svc_backoffice.admin.forms import FormInvalid, cents, converted, refused, whole, words, written
from svc_backoffice.admin.pages import current_query, form, page, router, see_other, signed_in
from svc_backoffice.admin.removal import confirmed
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, InvalidInput, Unprocessable
from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog, store
from svc_backoffice.domain.models.catalog import (
    InventoryAdjust,
    ProductCreate,
    ProductListQuery,
    ProductUpdate,
)
from svc_backoffice.edge.requests import path_id

PAGE_SIZE = 25
SORTS = {
    "newest": ("created_at", "desc"),
    "oldest": ("created_at", "asc"),
    "title": ("title", "asc"),
    "updated": ("updated_at", "desc"),
    "price-low": ("price", "asc"),
    "price-high": ("price", "desc"),
    "stock-low": ("stock", "asc"),
}
IMAGE_ROWS = 3  # image rows the form shows beyond the product's images
# Model fields and the form fields that carry them.
FIELD_NAMES = {"price_cents": "price", "compare_at_cents": "compare_at", "weight_grams": "weight"}


def _filters() -> dict[str, str]:
    """The list's filters as the page's query gives them (unknown values dropped)."""
    query = current_query()
    kept = {
        name: query.get(name, "").strip() for name in ("q", "status", "type", "category", "stock", "sort")
    }
    return {name: value for name, value in kept.items() if value}


def _list_query(filters: dict[str, str], offset: int) -> ProductListQuery:
    sort, direction = SORTS.get(filters.get("sort", ""), SORTS["newest"])
    params: dict[str, Any] = {"offset": str(offset), "limit": str(PAGE_SIZE), "sort": sort, "dir": direction}
    for name, target in (("q", "q"), ("status", "status"), ("type", "type"), ("category", "category_id")):
        if name in filters:
            params[target] = filters[name]
    if filters.get("stock") in ("out", "low"):
        params[f"{filters['stock']}_stock"] = "true"
    return ProductListQuery.model_validate(params)


@router.page("GET", "/products")
def product_list() -> Response:
    filters = _filters()
    problem = None
    try:
        offset = max(int(current_query().get("offset", "0") or 0), 0)
        query = _list_query(filters, offset)
    except (ValueError, ValidationError):
        problem, filters, query = say("admin.bad_filters"), {}, _list_query({}, 0)
    found = catalog.list_products(database(), query)
    anything = bool(found["items"]) or bool(filters) or query.offset > 0 or _any_product()
    return page(
        "products.html",
        nav="products",
        title="Products",
        found=found,
        filters=filters,
        problem=problem,
        anything=anything,
        categories=catalog.category_choices(database()),
        sorts=list(SORTS),
        page_size=PAGE_SIZE,
    )


def _any_product() -> bool:
    return database().one("SELECT 1 AS one FROM products LIMIT 1") is not None


def form_context(
    product: dict[str, Any] | None, values: dict[str, str], errors: FormInvalid | None
) -> dict[str, Any]:
    db = database()
    return {
        "nav": "products",
        "product": product,
        "values": values,
        "errors": errors.fields if errors else {},
        "form_error": errors.form if errors else None,
        "categories": catalog.category_choices(db),
        "attributes": catalog.list_attributes(db),
        "locations": store.list_locations(db),
        "collections": catalog.list_collections(db) if product else [],
        "image_rows": IMAGE_ROWS,
    }


def values_of(product: dict[str, Any]) -> dict[str, str]:
    """A product as its form shows it."""
    values = {
        "title": product["title"],
        "description": product["description"] or "",
        "price": render.amount(product["price_cents"]),
        "compare_at": render.amount(product["compare_at_cents"]),
        "sku": product["sku"] or "",
        "status": product["status"],
        "type": product["type"],
        "category": str(product["category_id"] or ""),
        "tags": ", ".join(product["tags"] or []),
        "seo_title": product["seo_title"] or "",
        "seo_description": product["seo_description"] or "",
        "weight": "" if product["weight_grams"] is None else str(product["weight_grams"]),
        "low_stock_threshold": str(product["low_stock_threshold"]),
        "track_inventory": "on" if product["track_inventory"] else "",
    }
    for attribute in product.get("attributes") or []:
        values[f"attr_{attribute['attribute_id']}"] = attribute["value"]
    for index, image in enumerate(product.get("images") or []):
        values[f"image_url_{index}"], values[f"image_alt_{index}"] = image["url"], image.get("alt", "")
    return values


def _data(fields: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The form as a product body (ProductCreate's fields), and the fields that could not be read."""
    data, errors = converted(
        fields,
        {
            "price_cents": ("price", lambda v: cents(v) or 0),
            "compare_at_cents": ("compare_at", cents),
            "weight_grams": ("weight", whole),
            "low_stock_threshold": ("low_stock_threshold", lambda v: whole(v) if v.strip() else 5),
        },
    )
    images = []
    for index in range(20 + IMAGE_ROWS):
        url = fields.get(f"image_url_{index}", "").strip()
        if url:
            images.append({"url": url, "alt": fields.get(f"image_alt_{index}", "").strip()})
    attributes = [
        {"attribute_id": name.removeprefix("attr_"), "value": value.strip()}
        for name, value in fields.items()
        if name.startswith("attr_") and value.strip()
    ]
    return {
        **data,
        "title": fields.get("title", "").strip(),
        "description": fields.get("description", ""),
        "sku": fields.get("sku", "").strip() or None,
        "status": fields.get("status", "draft"),
        "type": fields.get("type", "physical"),
        "category_id": fields.get("category", "") or None,
        "tags": words(fields.get("tags", "")),
        "seo_title": fields.get("seo_title", "").strip() or None,
        "seo_description": fields.get("seo_description", "").strip() or None,
        "track_inventory": fields.get("track_inventory") == "on",
        "attributes": attributes,
        # The new product's form carries image addresses; a product's page edits its images on their own
        # (admin/images.py), so its form leaves them as they are.
        **({"images": images} if any(name.startswith("image_url_") for name in fields) else {}),
    }, errors


def _names(data: dict[str, Any]) -> dict[str, str]:
    """Model error paths to form fields: images.N.* -> image_url_N, attributes.N -> attr_<id>."""
    names = dict(FIELD_NAMES, category_id="category")
    for index in range(len(data.get("images") or [])):
        names[f"images.{index}.url"] = f"image_url_{index}"
        names[f"images.{index}.alt"] = f"image_alt_{index}"
    for index, attribute in enumerate(data.get("attributes") or []):
        names[f"attributes.{index}.value"] = f"attr_{attribute['attribute_id']}"
    return names


@router.page("GET", "/products/new", api="POST /api/products")
def new_product() -> Response:
    values = {"status": "draft", "type": "physical", "track_inventory": "on", "low_stock_threshold": "5"}
    return page("product.html", title="Add product", **form_context(None, values, None))


@router.page("POST", "/products/new", api="POST /api/products")
def create_product() -> Response:
    fields = form()
    try:
        data, errors = _data(fields)
        created = written(ProductCreate, data, catalog.create_product, _names(data), errors)
    except (FormInvalid, InvalidInput, Conflict, Unprocessable) as exc:
        return page("product.html", 400, title="Add product", **form_context(None, fields, refused(exc)))
    return see_other(f"/products/{created['id']}", notice="created")


@router.page("GET", "/products/<id>")
def edit_product(id: str) -> Response:
    product = catalog.get_product(database(), path_id(id))
    return page("product.html", title=product["title"], **form_context(product, values_of(product), None))


@router.page("POST", "/products/<id>", api="PATCH /api/products/[id]")
def update_product(id: str) -> Response:
    product_id = path_id(id)
    product = catalog.get_product(database(), product_id)
    fields = form()
    try:
        data, errors = _data(fields)
        written(
            ProductUpdate,
            data,
            lambda db, body: catalog.update_product(db, product_id, body),
            _names(data),
            errors,
        )
    except (FormInvalid, InvalidInput, Conflict, Unprocessable) as exc:
        context = form_context(product, fields, refused(exc))
        return page("product.html", 400, title=product["title"], **context)
    return see_other(f"/products/{product_id}", notice="saved")


@router.page("POST", "/products/<id>/delete", api="DELETE /api/products/[id]")
def delete_product(id: str) -> Response:
    product = catalog.get_product(database(), path_id(id))
    return confirmed(
        lambda: catalog.delete_product(database(), str(product["id"])),
        what=str(product["title"]),
        back="/products",
        consequence="Its images and stock are deleted with it; orders keep their lines.",
    )


@router.page("POST", "/products/<id>/stock", api="POST /api/inventory/adjust")
def adjust_stock(id: str) -> Response:
    product_id = path_id(id)
    product = catalog.get_product(database(), product_id)
    fields = form()
    staff = signed_in()
    try:
        data, errors = converted(fields, {"delta": ("delta", whole)})
        written(
            InventoryAdjust,
            {
                "product_id": product_id,
                "location_id": fields.get("location") or None,
                "delta": data.get("delta") or 0,
                "reason": fields.get("reason", ""),
            },
            lambda db, body: store.adjust_inventory(db, body, staff),
            {"location_id": "location"},
            errors,
        )
    except (FormInvalid, InvalidInput, Unprocessable) as exc:
        context = form_context(product, values_of(product), None)
        problem = refused(exc, "delta")
        return page(
            "product.html",
            400,
            title=product["title"],
            **context,
            stock_errors=problem.fields,
            stock_values=fields,
        )
    return see_other(f"/products/{product_id}", notice="stock_adjusted")
