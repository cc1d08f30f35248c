"""Catalog routes: products, categories, attributes, collections."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import catalog
from svc_backoffice.db import database
from svc_backoffice.models import (
    AttributeCreate,
    AttributeUpdate,
    CategoryCreate,
    CategoryUpdate,
    CollectionCreate,
    CollectionUpdate,
    ProductCreate,
    ProductListQuery,
    ProductUpdate,
    ReorderBody,
)
from svc_backoffice.web import ApiRouter, body, json_response, path_id, query

OK = {"ok": True}

products = ApiRouter("/api/products")


@products.api("GET")
def list_products() -> Response:
    return json_response(200, catalog.list_products(database(), query(products, ProductListQuery)))


@products.api("POST")
def create_product() -> Response:
    return json_response(201, catalog.create_product(database(), body(products, ProductCreate)))


@products.api("GET", "/<id>")
def get_product(id: str) -> Response:
    return json_response(200, catalog.get_product(database(), path_id(id)))


@products.api("PATCH", "/<id>")
def update_product(id: str) -> Response:
    product_id = path_id(id)
    return json_response(200, catalog.update_product(database(), product_id, body(products, ProductUpdate)))


@products.api("DELETE", "/<id>")
def delete_product(id: str) -> Response:
    catalog.delete_product(database(), path_id(id))
    return json_response(200, OK)


categories = ApiRouter("/api/categories")


@categories.api("GET")
def list_categories() -> Response:
    return json_response(200, {"items": catalog.list_categories(database())})


@categories.api("POST")
def create_category() -> Response:
    return json_response(201, catalog.create_category(database(), body(categories, CategoryCreate)))


@categories.api("PATCH", "/<id>")
def update_category(id: str) -> Response:
    category_id = path_id(id)
    return json_response(
        200, catalog.update_category(database(), category_id, body(categories, CategoryUpdate))
    )


@categories.api("DELETE", "/<id>")
def delete_category(id: str) -> Response:
    catalog.delete_category(database(), path_id(id))
    return json_response(200, OK)


@categories.api("POST", "/reorder")
def reorder_categories() -> Response:
    catalog.reorder_categories(database(), body(categories, ReorderBody).ids)
    return json_response(200, OK)


attributes = ApiRouter("/api/attributes")


@attributes.api("GET")
def list_attributes() -> Response:
    return json_response(200, {"items": catalog.list_attributes(database())})


@attributes.api("POST")
def create_attribute() -> Response:
    return json_response(201, catalog.create_attribute(database(), body(attributes, AttributeCreate)))


@attributes.api("PATCH", "/<id>")
def update_attribute(id: str) -> Response:
    attribute_id = path_id(id)
    return json_response(
        200, catalog.update_attribute(database(), attribute_id, body(attributes, AttributeUpdate))
    )


@attributes.api("DELETE", "/<id>")
def delete_attribute(id: str) -> Response:
    catalog.delete_attribute(database(), path_id(id))
    return json_response(200, OK)


collections = ApiRouter("/api/collections")


@collections.api("GET")
def list_collections() -> Response:
    return json_response(200, {"items": catalog.list_collections(database())})


@collections.api("POST")
def create_collection() -> Response:
    return json_response(201, catalog.create_collection(database(), body(collections, CollectionCreate)))


@collections.api("GET", "/<id>")
def get_collection(id: str) -> Response:
    return json_response(200, catalog.get_collection(database(), path_id(id)))


@collections.api("PATCH", "/<id>")
def update_collection(id: str) -> Response:
    collection_id = path_id(id)
    return json_response(
        200, catalog.update_collection(database(), collection_id, body(collections, CollectionUpdate))
    )


@collections.api("DELETE", "/<id>")
def delete_collection(id: str) -> Response:
    catalog.delete_collection(database(), path_id(id))
    return json_response(200, OK)


@collections.api("POST", "/<id>/products/reorder")
def reorder_collection_products(id: str) -> Response:
    collection_id = path_id(id)
    ids = body(collections, ReorderBody).ids
    return json_response(200, catalog.reorder_collection_products(database(), collection_id, ids))


ROUTERS = (products, categories, attributes, collections)
