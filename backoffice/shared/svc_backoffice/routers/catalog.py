"""Catalog routes: products, categories, attributes, collections."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import catalog
from svc_backoffice.db import database
from svc_backoffice.web import ApiRouter, body, json_response, path_id, query

OK = {"ok": True}

products = ApiRouter("/api/products")


@products.api(
    "GET",
    role="viewer",
    query="ProductListQuery",
    answers="200 302 400 500",
    summary="List products with filters, sort and paging",
)
def list_products() -> Response:
    return json_response(200, catalog.list_products(database(), query(products)))


@products.api(
    "POST",
    role="editor",
    body="ProductCreate",
    answers="201 302 400 409 422 500",
    summary="Create a product",
)
def create_product() -> Response:
    return json_response(201, catalog.create_product(database(), body(products)))


@products.api(
    "GET",
    "/<id>",
    role="viewer",
    answers="200 302 404 500",
    summary="A product with its relations",
)
def get_product(id: str) -> Response:
    return json_response(200, catalog.get_product(database(), path_id(id)))


@products.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="ProductUpdate",
    answers="200 302 400 404 409 422 500",
    summary="Update a product",
)
def update_product(id: str) -> Response:
    product_id = path_id(id)
    return json_response(200, catalog.update_product(database(), product_id, body(products)))


@products.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete a product",
)
def delete_product(id: str) -> Response:
    catalog.delete_product(database(), path_id(id))
    return json_response(200, OK)


categories = ApiRouter("/api/categories")


@categories.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Category tree in display order",
)
def list_categories() -> Response:
    return json_response(200, {"items": catalog.list_categories(database())})


@categories.api(
    "POST",
    role="editor",
    body="CategoryCreate",
    answers="201 302 400 409 422 500",
    summary="Create a category",
)
def create_category() -> Response:
    return json_response(201, catalog.create_category(database(), body(categories)))


@categories.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="CategoryUpdate",
    answers="200 302 400 404 409 422 500",
    summary="Update a category",
)
def update_category(id: str) -> Response:
    category_id = path_id(id)
    return json_response(200, catalog.update_category(database(), category_id, body(categories)))


@categories.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete a category (products keep no category)",
)
def delete_category(id: str) -> Response:
    catalog.delete_category(database(), path_id(id))
    return json_response(200, OK)


@categories.api(
    "POST",
    "/reorder",
    role="editor",
    body="ReorderBody",
    answers="200 302 400 422 500",
    summary="Set category positions from an ordered id list",
)
def reorder_categories() -> Response:
    catalog.reorder_categories(database(), body(categories).ids)
    return json_response(200, OK)


attributes = ApiRouter("/api/attributes")


@attributes.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Product attributes",
)
def list_attributes() -> Response:
    return json_response(200, {"items": catalog.list_attributes(database())})


@attributes.api(
    "POST",
    role="editor",
    body="AttributeCreate",
    answers="201 302 400 409 500",
    summary="Create an attribute",
)
def create_attribute() -> Response:
    return json_response(201, catalog.create_attribute(database(), body(attributes)))


@attributes.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="AttributeUpdate",
    answers="200 302 400 404 409 500",
    summary="Update an attribute",
)
def update_attribute(id: str) -> Response:
    attribute_id = path_id(id)
    return json_response(200, catalog.update_attribute(database(), attribute_id, body(attributes)))


@attributes.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete an attribute and its values",
)
def delete_attribute(id: str) -> Response:
    catalog.delete_attribute(database(), path_id(id))
    return json_response(200, OK)


collections = ApiRouter("/api/collections")


@collections.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Collections with product counts",
)
def list_collections() -> Response:
    return json_response(200, {"items": catalog.list_collections(database())})


@collections.api(
    "POST",
    role="editor",
    body="CollectionCreate",
    answers="201 302 400 409 422 500",
    summary="Create a collection",
)
def create_collection() -> Response:
    return json_response(201, catalog.create_collection(database(), body(collections)))


@collections.api(
    "GET",
    "/<id>",
    role="viewer",
    answers="200 302 404 500",
    summary="A collection with its products in order",
)
def get_collection(id: str) -> Response:
    return json_response(200, catalog.get_collection(database(), path_id(id)))


@collections.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="CollectionUpdate",
    answers="200 302 400 404 409 422 500",
    summary="Update a collection",
)
def update_collection(id: str) -> Response:
    collection_id = path_id(id)
    return json_response(200, catalog.update_collection(database(), collection_id, body(collections)))


@collections.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete a collection",
)
def delete_collection(id: str) -> Response:
    catalog.delete_collection(database(), path_id(id))
    return json_response(200, OK)


@collections.api(
    "POST",
    "/<id>/products/reorder",
    role="editor",
    body="ReorderBody",
    answers="200 302 400 404 422 500",
    summary="Set the collection's products and their order",
)
def reorder_collection_products(id: str) -> Response:
    collection_id = path_id(id)
    ids = body(collections).ids
    return json_response(200, catalog.reorder_collection_products(database(), collection_id, ids))


ROUTERS = (products, categories, attributes, collections)
