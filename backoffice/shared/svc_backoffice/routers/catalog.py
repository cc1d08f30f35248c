"""Catalog routes: products, categories, attributes, collections."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import body, path_id
from svc_backoffice.edge.web import json_response

products = ApiRouter("/api/products", reader="viewer", writer="editor")
products.lists(
    catalog.list_products, query="ProductListQuery", summary="List products with filters, sort and paging"
)
products.creates(catalog.create_product, body="ProductCreate", also="409 422", summary="Create a product")
products.reads(catalog.get_product, summary="A product with its relations")
products.updates(catalog.update_product, body="ProductUpdate", also="409 422", summary="Update a product")
products.deletes(catalog.delete_product, summary="Delete a product")

categories = ApiRouter("/api/categories", reader="viewer", writer="editor")
categories.lists(catalog.list_categories, summary="Category tree in display order")
categories.creates(
    catalog.create_category, body="CategoryCreate", also="409 422", summary="Create a category"
)
categories.updates(
    catalog.update_category, body="CategoryUpdate", also="409 422", summary="Update a category"
)
categories.deletes(catalog.delete_category, summary="Delete a category (products keep no category)")
categories.reorders(catalog.reorder_categories, summary="Set category positions from an ordered id list")

attributes = ApiRouter("/api/attributes", reader="viewer", writer="editor")
attributes.lists(catalog.list_attributes, summary="Product attributes")
attributes.creates(
    catalog.create_attribute, body="AttributeCreate", also="409", summary="Create an attribute"
)
attributes.updates(
    catalog.update_attribute, body="AttributeUpdate", also="409", summary="Update an attribute"
)
attributes.deletes(catalog.delete_attribute, summary="Delete an attribute and its values")

collections = ApiRouter("/api/collections", reader="viewer", writer="editor")
collections.lists(catalog.list_collections, summary="Collections with product counts")
collections.creates(
    catalog.create_collection, body="CollectionCreate", also="409 422", summary="Create a collection"
)
collections.reads(catalog.get_collection, summary="A collection with its products in order")
collections.updates(
    catalog.update_collection, body="CollectionUpdate", also="409 422", summary="Update a collection"
)
collections.deletes(catalog.delete_collection, summary="Delete a collection")


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
